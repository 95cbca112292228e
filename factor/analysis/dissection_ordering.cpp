#include "factor/analysis/dissection_ordering.hpp"

#include <metis.h>

#include <stdexcept>
#include <string>

#include "factor/analysis/minimum_degree.hpp"

namespace cholsim::factor {
namespace {

// The subgraph induced by `vertices` (global numbers), in local numbers.
AdjacencyGraph induced_subgraph(const AdjacencyGraph& graph, const std::vector<Index>& vertices,
                                std::vector<Index>& local_of) {
  for (std::size_t k = 0; k < vertices.size(); ++k) local_of[static_cast<std::size_t>(vertices[k])] = static_cast<Index>(k);
  AdjacencyGraph sub;
  sub.offsets.reserve(vertices.size() + 1);
  sub.offsets.push_back(0);
  for (const Index v : vertices) {
    for (Index p = graph.offsets[v]; p < graph.offsets[v + 1]; ++p) {
      const Index local = local_of[static_cast<std::size_t>(graph.neighbors[p])];
      if (local >= 0) sub.neighbors.push_back(local);
    }
    sub.offsets.push_back(static_cast<Index>(sub.neighbors.size()));
  }
  for (const Index v : vertices) local_of[static_cast<std::size_t>(v)] = -1;
  return sub;
}

class Dissection {
 public:
  Dissection(const AdjacencyGraph& graph, Index leaf_vertices)
      : graph_(graph), leaf_vertices_(leaf_vertices),
        parts_(static_cast<std::size_t>(graph.vertex_count()), -1),
        local_of_(static_cast<std::size_t>(graph.vertex_count()), -1) {}

  std::vector<Index> run() {
    std::vector<Index> all(static_cast<std::size_t>(graph_.vertex_count()));
    for (Index v = 0; v < graph_.vertex_count(); ++v) all[static_cast<std::size_t>(v)] = v;
    dissect(std::move(all));
    return std::move(parts_);
  }

 private:
  void make_part(const std::vector<Index>& vertices) {
    if (vertices.empty()) return;
    for (const Index v : vertices) parts_[static_cast<std::size_t>(v)] = next_part_;
    ++next_part_;
  }

  void dissect(std::vector<Index> vertices) {
    if (static_cast<Index>(vertices.size()) <= leaf_vertices_) {
      make_part(vertices);
      return;
    }
    AdjacencyGraph sub = induced_subgraph(graph_, vertices, local_of_);
    if (sub.neighbors.empty()) {
      make_part(vertices);
      return;
    }
    idx_t count = sub.vertex_count();
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_NUMBERING] = 0;
    idx_t separator_size = 0;
    std::vector<idx_t> side(static_cast<std::size_t>(count));
    const int status = METIS_ComputeVertexSeparator(&count, sub.offsets.data(), sub.neighbors.data(), nullptr,
                                                    options, &separator_size, side.data());
    if (status != METIS_OK) throw std::runtime_error("METIS_ComputeVertexSeparator failed with status " + std::to_string(status));
    std::vector<Index> halves[3];
    for (std::size_t k = 0; k < vertices.size(); ++k) halves[side[k]].push_back(vertices[k]);
    if (halves[0].empty() || halves[1].empty()) {  // no split: a leaf after all
      make_part(vertices);
      return;
    }
    vertices = {};
    sub = {};
    dissect(std::move(halves[0]));
    dissect(std::move(halves[1]));
    make_part(halves[2]);
  }

  const AdjacencyGraph& graph_;
  Index leaf_vertices_;
  std::vector<Index> parts_;
  std::vector<Index> local_of_;
  Index next_part_ = 0;
};

}  // namespace

std::vector<Index> dissection_parts(const AdjacencyGraph& graph, Index leaf_vertices) {
  return Dissection(graph, leaf_vertices).run();
}

std::vector<Index> dissection_minimum_degree_ordering(const linalg::SymmetricCscMatrix& pattern,
                                                      Index dofs_per_node, Index leaf_vertices) {
  // Room for the minimum degree's elbow reserved up front, as minimum_degree_ordering does.
  // Dense vertices stay in the dissection (the minimum degree still orders them last): taking
  // them out first changed nnz(L) by +0.6 % and +4 % on the two arrowheads of the bench, the
  // separators found without them being no better.
  const MinimumDegreeOptions options;
  const auto spare =
      static_cast<Offset>(options.elbow_room * 2.0 * static_cast<double>(pattern.nnz_lower())) + pattern.size();
  AdjacencyGraph graph = adjacency_graph(pattern, dofs_per_node, spare);
  const std::vector<Index> parts = dissection_parts(graph, leaf_vertices);
  return expand_node_ordering(constrained_minimum_degree(std::move(graph), parts, options), dofs_per_node);
}

}  // namespace cholsim::factor
