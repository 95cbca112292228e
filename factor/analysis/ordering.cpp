#include "factor/analysis/ordering.hpp"

#include <metis.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace cholsim::factor {

OrderingMethod parse_ordering_method(std::string_view name) {
  if (name == "metis" || name == "nested_dissection" || name == "nd") {
    return OrderingMethod::nested_dissection;
  }
  if (name == "natural") return OrderingMethod::natural;
  if (name == "given") return OrderingMethod::given;
  throw std::invalid_argument("unknown ordering '" + std::string(name) +
                              "'; expected metis, natural or given");
}

std::string_view to_string(OrderingMethod method) {
  switch (method) {
    case OrderingMethod::nested_dissection: return "metis";
    case OrderingMethod::natural: return "natural";
    case OrderingMethod::given: return "given";
  }
  return "unknown";
}

AdjacencyGraph adjacency_graph(const linalg::SymmetricCscMatrix& pattern, Index dofs_per_node) {
  const Index n = pattern.size();
  if (dofs_per_node < 1 || n % dofs_per_node != 0) {
    throw std::invalid_argument("adjacency_graph: size " + std::to_string(n) +
                                " is not a multiple of dofs_per_node " +
                                std::to_string(dofs_per_node));
  }
  const Index vertices = n / dofs_per_node;
  const linalg::CscMatrix& l = pattern.lower;
  // Count both directions of every off-diagonal block entry (duplicates removed afterwards).
  std::vector<Index> degree(static_cast<std::size_t>(vertices) + 1, 0);
  for (Index c = 0; c < n; ++c) {
    const Index vc = c / dofs_per_node;
    for (Offset p = l.col_ptr[c]; p < l.col_ptr[c + 1]; ++p) {
      const Index vr = l.row_idx[p] / dofs_per_node;
      if (vr != vc) {
        ++degree[vr + 1];
        ++degree[vc + 1];
      }
    }
  }
  std::vector<Offset> start(static_cast<std::size_t>(vertices) + 1, 0);
  for (Index v = 0; v < vertices; ++v) start[v + 1] = start[v] + degree[v + 1];
  std::vector<Index> raw(static_cast<std::size_t>(start[vertices]));
  std::vector<Offset> next(start.begin(), start.end() - 1);
  for (Index c = 0; c < n; ++c) {
    const Index vc = c / dofs_per_node;
    for (Offset p = l.col_ptr[c]; p < l.col_ptr[c + 1]; ++p) {
      const Index vr = l.row_idx[p] / dofs_per_node;
      if (vr != vc) {
        raw[next[vr]++] = vc;
        raw[next[vc]++] = vr;
      }
    }
  }
  AdjacencyGraph graph;
  graph.offsets.assign(static_cast<std::size_t>(vertices) + 1, 0);
  graph.neighbors.reserve(raw.size());
  for (Index v = 0; v < vertices; ++v) {
    auto begin = raw.begin() + start[v];
    auto end = raw.begin() + start[v + 1];
    std::sort(begin, end);
    end = std::unique(begin, end);
    graph.neighbors.insert(graph.neighbors.end(), begin, end);
    graph.offsets[v + 1] = static_cast<Index>(graph.neighbors.size());
  }
  return graph;
}

std::vector<Index> nested_dissection_ordering(const linalg::SymmetricCscMatrix& pattern,
                                              Index dofs_per_node) {
  AdjacencyGraph graph = adjacency_graph(pattern, dofs_per_node);
  idx_t vertices = graph.vertex_count();
  std::vector<idx_t> node_perm(static_cast<std::size_t>(vertices));
  std::iota(node_perm.begin(), node_perm.end(), 0);
  if (vertices > 1 && !graph.neighbors.empty()) {
    static_assert(sizeof(idx_t) == sizeof(Index), "METIS must be built with 32-bit idx_t");
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_NUMBERING] = 0;
    std::vector<idx_t> node_iperm(static_cast<std::size_t>(vertices));
    const int status = METIS_NodeND(&vertices, graph.offsets.data(), graph.neighbors.data(),
                                    nullptr, options, node_perm.data(), node_iperm.data());
    if (status != METIS_OK) {
      throw std::runtime_error("METIS_NodeND failed with status " + std::to_string(status));
    }
  }
  // METIS's perm follows our convention (perm[new] = old); expand nodes to their DOFs.
  std::vector<Index> perm(static_cast<std::size_t>(pattern.size()));
  for (Index v = 0; v < vertices; ++v) {
    for (Index d = 0; d < dofs_per_node; ++d) {
      perm[v * dofs_per_node + d] = node_perm[v] * dofs_per_node + d;
    }
  }
  return perm;
}

}  // namespace cholsim::factor
