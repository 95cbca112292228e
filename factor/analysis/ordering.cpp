#include "factor/analysis/ordering.hpp"

#include <metis.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>

#include "factor/analysis/column_counts.hpp"
#include "factor/analysis/dissection_ordering.hpp"
#include "factor/analysis/minimum_degree.hpp"

namespace cholsim::factor {

OrderingMethod parse_ordering_method(std::string_view name) {
  if (name == "auto" || name == "automatic") return OrderingMethod::automatic;
  if (name == "amd" || name == "minimum_degree") return OrderingMethod::minimum_degree;
  if (name == "metis" || name == "nested_dissection" || name == "nd") {
    return OrderingMethod::nested_dissection;
  }
  if (name == "nd-camd") return OrderingMethod::dissection_minimum_degree;
  if (name == "natural") return OrderingMethod::natural;
  if (name == "given") return OrderingMethod::given;
  throw std::invalid_argument("unknown ordering '" + std::string(name) +
                              "'; expected auto, amd, metis, nd-camd, natural or given");
}

std::string_view to_string(OrderingMethod method) {
  switch (method) {
    case OrderingMethod::automatic: return "auto";
    case OrderingMethod::minimum_degree: return "amd";
    case OrderingMethod::nested_dissection: return "metis";
    case OrderingMethod::dissection_minimum_degree: return "nd-camd";
    case OrderingMethod::natural: return "natural";
    case OrderingMethod::given: return "given";
  }
  return "unknown";
}

namespace {

// The graph in two passes over the lower triangle, counting then filling, that visit each
// vertex pair (vr, vc), vr > vc, once. With k > 1 DOFs a node, node vc's k columns are walked
// together and a mark skips the node rows the group has already produced: a 3×3 block holds
// up to 9 entries, and collecting them all to sort them out had made the node graph slower to
// build than the 9 times larger scalar one. Nodes come from a table, not a division (an idiv
// per entry was 18 % of the construction; perf). The scalar graph (k = 1, kCompressed false)
// needs neither: a column's rows are distinct and are their own vertices.
template <bool kCompressed>
AdjacencyGraph build_adjacency_graph(const linalg::CscMatrix& l, Index k, Offset spare_capacity) {
  const Index vertices = l.cols / k;
  std::vector<Index> node_of_dof;
  std::vector<Index> seen_in_group;
  if constexpr (kCompressed) {
    node_of_dof.resize(static_cast<std::size_t>(l.cols));
    for (Index dof = 0; dof < l.cols; ++dof) node_of_dof[dof] = dof / k;
    seen_in_group.assign(static_cast<std::size_t>(vertices), -1);
  }
  const auto for_each_lower_neighbor = [&](Index vc, auto&& visit) {
    for (Index c = vc * k; c < (vc + 1) * k; ++c) {
      for (Offset p = l.col_ptr[c]; p < l.col_ptr[c + 1]; ++p) {
        Index vr = l.row_idx[p];
        if constexpr (kCompressed) {
          vr = node_of_dof[vr];
          if (vr == vc || seen_in_group[vr] == vc) continue;
          seen_in_group[vr] = vc;
        } else {
          if (vr == vc) continue;
        }
        visit(vr);
      }
    }
  };
  // Column group vc's own count and fill go through a local, which the compiler cannot do
  // itself: start[vr] might alias start[vc] as far as it knows.
  std::vector<Offset> start(static_cast<std::size_t>(vertices) + 1, 0);
  for (Index vc = 0; vc < vertices; ++vc) {
    Offset own = 0;
    for_each_lower_neighbor(vc, [&](Index vr) {
      ++start[vr + 1];
      ++own;
    });
    start[vc + 1] += own;
  }
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<Index> raw;
  raw.reserve(static_cast<std::size_t>(start[vertices] + std::max<Offset>(spare_capacity, 0)));
  raw.resize(static_cast<std::size_t>(start[vertices]));
  if constexpr (kCompressed) std::fill(seen_in_group.begin(), seen_in_group.end(), -1);
  std::vector<Offset> next(start.begin(), start.end() - 1);
  for (Index vc = 0; vc < vertices; ++vc) {
    Offset own = next[vc];
    for_each_lower_neighbor(vc, [&](Index vr) {
      raw[next[vr]++] = vc;
      raw[own++] = vr;
    });
    next[vc] = own;
  }
  // A list arrives sorted when its own group's rows do (lower neighbours in group order, then
  // the group's rows): always for the scalar graph, nearly always for FEM node graphs, whose
  // k columns share one node pattern. The others are sorted here.
  AdjacencyGraph graph;
  graph.offsets.assign(static_cast<std::size_t>(vertices) + 1, 0);
  for (Index v = 0; v < vertices; ++v) {
    const auto begin = raw.begin() + start[v];
    const auto end = raw.begin() + start[v + 1];
    if (std::adjacent_find(begin, end, std::greater_equal<>()) != end) std::sort(begin, end);
    graph.offsets[v + 1] = static_cast<Index>(start[v + 1]);
  }
  graph.neighbors = std::move(raw);
  return graph;
}

}  // namespace

AdjacencyGraph adjacency_graph(const linalg::SymmetricCscMatrix& pattern, Index dofs_per_node,
                               Offset spare_capacity) {
  const Index n = pattern.size();
  if (dofs_per_node < 1 || n % dofs_per_node != 0) {
    throw std::invalid_argument("adjacency_graph: size " + std::to_string(n) +
                                " is not a multiple of dofs_per_node " +
                                std::to_string(dofs_per_node));
  }
  if (dofs_per_node == 1) return build_adjacency_graph<false>(pattern.lower, 1, spare_capacity);
  return build_adjacency_graph<true>(pattern.lower, dofs_per_node, spare_capacity);
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
  // METIS's perm follows our convention (perm[new] = old).
  return expand_node_ordering(node_perm, dofs_per_node);
}

std::vector<Index> expand_node_ordering(std::span<const Index> node_perm, Index dofs_per_node) {
  const auto nodes = static_cast<Index>(node_perm.size());
  std::vector<Index> perm(static_cast<std::size_t>(nodes) * static_cast<std::size_t>(dofs_per_node));
  for (Index v = 0; v < nodes; ++v) {
    for (Index d = 0; d < dofs_per_node; ++d) perm[v * dofs_per_node + d] = node_perm[v] * dofs_per_node + d;
  }
  return perm;
}

namespace {

struct OrderingCost {
  double flops = 0.0;                // Σⱼ cⱼ²
  std::int64_t factor_nonzeros = 0;  // Σⱼ cⱼ
};

OrderingCost predicted_cost(const linalg::SymmetricCscMatrix& pattern, std::span<const Index> perm) {
  OrderingCost cost;
  for (const Index count : ordered_column_counts(pattern, perm)) {
    cost.flops += static_cast<double>(count) * static_cast<double>(count);
    cost.factor_nonzeros += count;
  }
  return cost;
}

// The automatic rule's test (kDissectionTrialFlopsPerEntry in ordering.hpp says why these).
bool minimum_degree_is_good_enough(const OrderingCost& cost, std::int64_t stored_entries_of_a) {
  if (cost.flops >= kDissectionTrialFlops) return false;
  const double lnz = static_cast<double>(cost.factor_nonzeros);
  return cost.flops < kDissectionTrialFlopsPerEntry * lnz ||
         lnz < kDissectionTrialFillRatio * static_cast<double>(stored_entries_of_a);
}

FillReducingOrdering automatic_ordering(const linalg::SymmetricCscMatrix& pattern, Index dofs_per_node) {
  FillReducingOrdering result{minimum_degree_ordering(pattern, dofs_per_node),
                              OrderingMethod::minimum_degree};
  const OrderingCost amd_cost = predicted_cost(pattern, result.permutation);
  result.minimum_degree_flops = amd_cost.flops;
  if (minimum_degree_is_good_enough(amd_cost, pattern.nnz_lower())) return result;
  std::vector<Index> dissection = dissection_minimum_degree_ordering(pattern, dofs_per_node);
  result.nested_dissection_flops = predicted_cost(pattern, dissection).flops;
  if (result.nested_dissection_flops < result.minimum_degree_flops) {
    result.permutation = std::move(dissection);
    result.method = OrderingMethod::dissection_minimum_degree;
  }
  return result;
}

}  // namespace

FillReducingOrdering fill_reducing_ordering(const linalg::SymmetricCscMatrix& pattern,
                                            OrderingMethod method, Index dofs_per_node) {
  switch (method) {
    case OrderingMethod::automatic:
      return automatic_ordering(pattern, dofs_per_node);
    case OrderingMethod::minimum_degree:
      return {minimum_degree_ordering(pattern, dofs_per_node), method};
    case OrderingMethod::nested_dissection:
      return {nested_dissection_ordering(pattern, dofs_per_node), method};
    case OrderingMethod::dissection_minimum_degree:
      return {dissection_minimum_degree_ordering(pattern, dofs_per_node), method};
    case OrderingMethod::natural: {
      std::vector<Index> identity(static_cast<std::size_t>(pattern.size()));
      std::iota(identity.begin(), identity.end(), 0);
      return {std::move(identity), method};
    }
    case OrderingMethod::given:
      break;
  }
  throw std::invalid_argument("fill_reducing_ordering: ordering '" + std::string(to_string(method)) +
                              "' needs the caller's permutation");
}

}  // namespace cholsim::factor
