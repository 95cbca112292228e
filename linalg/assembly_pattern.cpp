#include "linalg/assembly_pattern.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace cholsim::linalg {
namespace {

constexpr std::int64_t max_index = std::numeric_limits<Index>::max();

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("AssemblyPattern: " + what);
}

std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

// Node-level lower adjacency: for node c, the sorted nodes v ≥ c that share an element with c,
// always including c itself (so every dof has its diagonal entry, even a node no element
// uses: it then shows up as an explicit zero pivot rather than a missing column).
struct NodeAdjacency {
  std::vector<Offset> ptr;  ///< size node_count + 1
  std::vector<Index> rows;  ///< sorted within each node, first entry is the node itself
};

NodeAdjacency lower_node_adjacency(Index node_count, Index nodes_per_element,
                                   std::span<const Index> element_nodes) {
  const auto k = at(nodes_per_element);
  const std::size_t element_count = element_nodes.size() / k;

  // Elements incident to each node (an element repeating a node is listed twice: harmless,
  // the marker below removes the duplicate neighbours).
  std::vector<Offset> incidence_ptr(at(node_count) + 1, 0);
  for (Index v : element_nodes) ++incidence_ptr[at(v) + 1];
  std::partial_sum(incidence_ptr.begin(), incidence_ptr.end(), incidence_ptr.begin());
  std::vector<Index> incidence(element_nodes.size());
  {
    std::vector<Offset> next(incidence_ptr.begin(), incidence_ptr.end() - 1);
    for (std::size_t e = 0; e < element_count; ++e) {
      for (std::size_t s = 0; s < k; ++s) {
        incidence[at(next[at(element_nodes[e * k + s])]++)] = static_cast<Index>(e);
      }
    }
  }

  NodeAdjacency adjacency;
  adjacency.ptr.assign(at(node_count) + 1, 0);
  adjacency.rows.reserve(element_nodes.size() * 4);
  std::vector<Index> marker(at(node_count), -1);
  for (Index c = 0; c < node_count; ++c) {
    const auto begin = adjacency.rows.size();
    adjacency.rows.push_back(c);
    marker[at(c)] = c;
    for (Offset p = incidence_ptr[at(c)]; p < incidence_ptr[at(c) + 1]; ++p) {
      const auto e = at(incidence[at(p)]);
      for (std::size_t s = 0; s < k; ++s) {
        const Index v = element_nodes[e * k + s];
        if (v > c && marker[at(v)] != c) {
          marker[at(v)] = c;
          adjacency.rows.push_back(v);
        }
      }
    }
    std::sort(adjacency.rows.begin() + static_cast<std::ptrdiff_t>(begin + 1), adjacency.rows.end());
    adjacency.ptr[at(c) + 1] = static_cast<Offset>(adjacency.rows.size());
  }
  return adjacency;
}

}  // namespace

AssemblyPattern::AssemblyPattern(Index node_count, Index dofs_per_node, Index nodes_per_element,
                                 std::span<const Index> element_nodes)
    : node_count_(node_count), dofs_per_node_(dofs_per_node),
      nodes_per_element_(nodes_per_element) {
  if (node_count < 0) fail("negative node count " + std::to_string(node_count));
  if (dofs_per_node < 1) fail("dofs_per_node must be ≥ 1, got " + std::to_string(dofs_per_node));
  if (nodes_per_element < 1) {
    fail("nodes_per_element must be ≥ 1, got " + std::to_string(nodes_per_element));
  }
  if (element_nodes.size() % at(nodes_per_element) != 0) {
    fail("connectivity length " + std::to_string(element_nodes.size()) +
         " is not a multiple of nodes_per_element " + std::to_string(nodes_per_element));
  }
  const std::int64_t dof_count = std::int64_t{node_count} * dofs_per_node;
  const std::int64_t element_dof_count = std::int64_t{nodes_per_element} * dofs_per_node;
  const std::int64_t entries = element_dof_count * (element_dof_count + 1) / 2;
  const auto element_count = static_cast<std::int64_t>(element_nodes.size() / at(nodes_per_element));
  if (dof_count > max_index) fail("node_count·dofs_per_node overflows the index type");
  if (entries > max_index) fail("element matrix too large for the index type");
  if (element_count > max_index) fail("too many elements for the index type");
  element_count_ = static_cast<Index>(element_count);
  element_entries_ = static_cast<Index>(entries);

  const auto k = at(nodes_per_element);
  for (std::size_t q = 0; q < element_nodes.size(); ++q) {
    const Index v = element_nodes[q];
    if (v < 0 || v >= node_count) {
      fail("element " + std::to_string(q / k) + " slot " + std::to_string(q % k) + " has node " +
           std::to_string(v) + ", outside 0.." + std::to_string(node_count - 1));
    }
  }
  element_nodes_.assign(element_nodes.begin(), element_nodes.end());

  // Dof pattern from the node pattern: dof column J = c·d + cj holds, for the node itself,
  // components cj..d-1, then all d components of every later neighbour, in order.
  const NodeAdjacency adjacency = lower_node_adjacency(node_count, nodes_per_element, element_nodes);
  const Index d = dofs_per_node;
  CscMatrix& lower = pattern_.lower;
  lower.rows = static_cast<Index>(dof_count);
  lower.cols = static_cast<Index>(dof_count);
  lower.col_ptr.assign(at(dof_count) + 1, 0);
  for (Index c = 0; c < node_count; ++c) {
    const Offset neighbours = adjacency.ptr[at(c) + 1] - adjacency.ptr[at(c)];
    for (Index cj = 0; cj < d; ++cj) {
      const std::int64_t column = std::int64_t{c} * d + cj;
      lower.col_ptr[at(column) + 1] = lower.col_ptr[at(column)] + neighbours * d - cj;
    }
  }
  lower.row_idx.resize(at(lower.col_ptr.back()));
  for (Index c = 0; c < node_count; ++c) {
    for (Index cj = 0; cj < d; ++cj) {
      auto write = at(lower.col_ptr[at(std::int64_t{c} * d + cj)]);
      for (Offset p = adjacency.ptr[at(c)]; p < adjacency.ptr[at(c) + 1]; ++p) {
        const Index v = adjacency.rows[at(p)];
        for (Index ci = (v == c ? cj : 0); ci < d; ++ci) lower.row_idx[write++] = v * d + ci;
      }
    }
  }

  // Positions. For global lower entry (I, J) with nodes (vI, vJ) and components (ci, cj), its
  // offset inside column J is ci - cj when vI = vJ, else (d - cj) + (t - 1)·d + ci where t is
  // the rank of vI among column vJ's neighbours. The rank is found once per node pair.
  positions_.resize(at(element_count) * at(entries));
  std::vector<Offset> neighbour_rank(k * k, 0);
  Offset* out = positions_.data();
  for (std::size_t e = 0; e < at(element_count); ++e) {
    const Index* nodes = element_nodes_.data() + e * k;
    for (std::size_t q = 0; q < k; ++q) {
      for (std::size_t p = q; p < k; ++p) {
        const Index hi = std::max(nodes[p], nodes[q]);
        const Index lo = std::min(nodes[p], nodes[q]);
        const auto first = adjacency.rows.begin() + adjacency.ptr[at(lo)];
        const auto last = adjacency.rows.begin() + adjacency.ptr[at(lo) + 1];
        neighbour_rank[p * k + q] = std::lower_bound(first, last, hi) - first;
      }
    }
    // Same loop order as scatter_add_unchecked: local column (node_b, cb), rows below it.
    for (Index node_b = 0; node_b < nodes_per_element; ++node_b) {
      for (Index cb = 0; cb < d; ++cb) {
        const Index gb = nodes[node_b] * d + cb;
        for (Index node_a = node_b; node_a < nodes_per_element; ++node_a) {
          const Offset rank = neighbour_rank[at(node_a) * k + at(node_b)];
          for (Index ca = (node_a == node_b ? cb : 0); ca < d; ++ca) {
            const Index ga = nodes[node_a] * d + ca;
            const bool a_below = ga >= gb;
            const Index column = a_below ? gb : ga;
            const Index ci = a_below ? ca : cb;
            const Index cj = a_below ? cb : ca;
            const Offset offset = rank == 0 ? ci - cj : (d - cj) + (rank - 1) * d + ci;
            *out++ = lower.col_ptr[at(column)] + offset;
          }
        }
      }
    }
  }
}

std::span<const Index> AssemblyPattern::element_nodes(Index element) const {
  if (element < 0 || element >= element_count_) {
    fail("element " + std::to_string(element) + " outside 0.." + std::to_string(element_count_ - 1));
  }
  return {element_nodes_.data() + at(element) * at(nodes_per_element_), at(nodes_per_element_)};
}

SymmetricCscMatrix AssemblyPattern::zero_matrix() const {
  SymmetricCscMatrix matrix = pattern_;
  matrix.lower.values.assign(matrix.lower.row_idx.size(), 0.0);
  return matrix;
}

std::span<const Offset> AssemblyPattern::element_positions(Index element) const {
  if (element < 0 || element >= element_count_) {
    fail("element " + std::to_string(element) + " outside 0.." + std::to_string(element_count_ - 1));
  }
  return {positions_.data() + at(element) * at(element_entries_), at(element_entries_)};
}

void AssemblyPattern::check_scatter_arguments(Index element, std::span<const double> values) const {
  if (element < 0 || element >= element_count_) {
    fail("scatter_add: element " + std::to_string(element) + " outside 0.." +
         std::to_string(element_count_ - 1));
  }
  if (values.size() != pattern_.lower.row_idx.size()) {
    fail("scatter_add: values has length " + std::to_string(values.size()) + ", pattern has " +
         std::to_string(pattern_.lower.row_idx.size()) + " entries");
  }
}

void AssemblyPattern::scatter_add(Index element, ConstDenseView element_matrix,
                                  std::span<double> values) const {
  check_scatter_arguments(element, values);
  const Index m = element_dofs();
  if (element_matrix.rows != m || element_matrix.cols != m || element_matrix.ld < m) {
    fail("scatter_add: element matrix is " + std::to_string(element_matrix.rows) + "x" +
         std::to_string(element_matrix.cols) + " (ld " + std::to_string(element_matrix.ld) +
         "), expected " + std::to_string(m) + "x" + std::to_string(m));
  }
  scatter_add_unchecked(element, element_matrix.data, element_matrix.ld, values);
}

void AssemblyPattern::scatter_add(Index element, const double* element_matrix,
                                  std::span<double> values) const {
  check_scatter_arguments(element, values);
  if (element_matrix == nullptr) fail("scatter_add: null element matrix");
  scatter_add_unchecked(element, element_matrix, element_dofs(), values);
}

// The hot path: one pass over the element's lower entries and their stored positions.
void AssemblyPattern::scatter_add_unchecked(Index element, const double* element_matrix, Index ld,
                                            std::span<double> values) const {
  const Index d = dofs_per_node_;
  const Index k = nodes_per_element_;
  const auto stride = at(ld);
  const Index* nodes = element_nodes_.data() + at(element) * at(k);
  const Offset* position = positions_.data() + at(element) * at(element_entries_);
  double* out = values.data();
  for (Index node_b = 0; node_b < k; ++node_b) {
    for (Index cb = 0; cb < d; ++cb) {
      const Index b = node_b * d + cb;
      const Index gb = nodes[node_b] * d + cb;
      const double* column_b = element_matrix + at(b) * stride;
      for (Index node_a = node_b; node_a < k; ++node_a) {
        for (Index ca = (node_a == node_b ? cb : 0); ca < d; ++ca) {
          const Index a = node_a * d + ca;
          const Index ga = nodes[node_a] * d + ca;
          double value = column_b[a];  // Kₑ(a, b)
          if (ga < gb) {
            value = element_matrix[at(b) + at(a) * stride];  // its twin Kₑ(b, a) lands lower
          } else if (ga == gb && a != b) {
            // A repeated node couples a dof with itself from both sides of the diagonal.
            value += element_matrix[at(b) + at(a) * stride];
          }
          out[*position++] += value;
        }
      }
    }
  }
}

std::size_t AssemblyPattern::bytes() const {
  return positions_.capacity() * sizeof(Offset) + element_nodes_.capacity() * sizeof(Index) +
         pattern_.lower.col_ptr.capacity() * sizeof(Offset) +
         pattern_.lower.row_idx.capacity() * sizeof(Index);
}

}  // namespace cholsim::linalg
