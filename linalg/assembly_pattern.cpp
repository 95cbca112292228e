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
  if (nodes_per_element > std::numeric_limits<std::uint8_t>::max()) {
    fail("nodes_per_element must be ≤ 255 (slots are stored in bytes), got " + std::to_string(nodes_per_element));
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

  // Block positions. In dof column c·d + cj of node c come the node's own components cj..d-1,
  // then d rows for each later neighbour, in order: the neighbour of rank t ≥ 1 starts at
  // offset (d - cj) + (t - 1)·d. The rank is found once per node pair.
  const std::size_t pairs = k * (k + 1) / 2;
  landing_order_.resize(at(element_count) * k);
  block_positions_.resize(at(element_count) * pairs * at(d));
  Offset* out = block_positions_.data();
  for (std::size_t e = 0; e < at(element_count); ++e) {
    const Index* nodes = element_nodes_.data() + e * k;
    std::uint8_t* order = landing_order_.data() + e * k;
    std::iota(order, order + k, std::uint8_t{0});
    std::stable_sort(order, order + k, [&](std::uint8_t a, std::uint8_t b) { return nodes[a] < nodes[b]; });
    for (std::size_t j = 0; j < k; ++j) {
      const Index lo = nodes[order[j]];
      const auto first = adjacency.rows.begin() + adjacency.ptr[at(lo)];
      const auto last = adjacency.rows.begin() + adjacency.ptr[at(lo) + 1];
      for (std::size_t i = j; i < k; ++i) {
        const Offset rank = std::lower_bound(first, last, nodes[order[i]]) - first;  // 0: the node itself
        for (Index cj = 0; cj < d; ++cj) {
          const Offset offset = rank == 0 ? 0 : (d - cj) + (rank - 1) * d;
          *out++ = lower.col_ptr[at(std::int64_t{lo} * d + cj)] + offset;
        }
      }
    }
  }
}

std::span<const std::uint8_t> AssemblyPattern::landing_order(Index element) const {
  check_element(element);
  return {landing_order_.data() + at(element) * at(nodes_per_element_), at(nodes_per_element_)};
}

std::span<const Offset> AssemblyPattern::block_positions(Index element) const {
  check_element(element);
  const std::size_t count = block_positions_.size() / at(std::max<Index>(element_count_, 1));
  return {block_positions_.data() + at(element) * count, count};
}

void AssemblyPattern::check_element(Index element) const {
  if (element < 0 || element >= element_count_) {
    fail("element " + std::to_string(element) + " outside 0.." + std::to_string(element_count_ - 1));
  }
}

std::span<const Index> AssemblyPattern::element_nodes(Index element) const {
  check_element(element);
  return {element_nodes_.data() + at(element) * at(nodes_per_element_), at(nodes_per_element_)};
}

SymmetricCscMatrix AssemblyPattern::zero_matrix() const {
  SymmetricCscMatrix matrix = pattern_;
  matrix.lower.values.assign(matrix.lower.row_idx.size(), 0.0);
  return matrix;
}

void AssemblyPattern::check_scatter_arguments(Index element, std::span<const double> values) const {
  check_element(element);
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

// The hot path: one pass over the element's node blocks in landing order, each block column
// added as a contiguous run of rows.
void AssemblyPattern::scatter_add_unchecked(Index element, const double* element_matrix, Index ld,
                                            std::span<double> values) const {
  const auto d = at(dofs_per_node_);
  const auto k = at(nodes_per_element_);
  const auto stride = at(ld);
  const Index* nodes = element_nodes_.data() + at(element) * k;
  const std::uint8_t* order = landing_order_.data() + at(element) * k;
  const Offset* position = block_positions_.data() + at(element) * (k * (k + 1) / 2) * d;
  // Kₑ(a, b) of the column-major element matrix.
  auto entry = [&](std::size_t a, std::size_t b) { return element_matrix[b * stride + a]; };
  double* out = values.data();
  for (std::size_t j = 0; j < k; ++j) {
    const std::size_t column_slot = order[j];
    for (std::size_t i = j; i < k; ++i) {
      const std::size_t row_slot = order[i];
      if (nodes[row_slot] != nodes[column_slot]) {
        for (std::size_t c = 0; c < d; ++c) {
          double* target = out + *position++;
          for (std::size_t r = 0; r < d; ++r) target[r] += entry(d * row_slot + r, d * column_slot + c);
        }
        continue;
      }
      // A node's diagonal block: its lower triangle, from the slot's own block and, where the
      // element repeats the node in two slots, from both blocks coupling them.
      for (std::size_t c = 0; c < d; ++c) {
        double* target = out + *position++;
        for (std::size_t r = c; r < d; ++r) {
          double value = entry(d * row_slot + r, d * column_slot + c);
          if (row_slot != column_slot) value += entry(d * column_slot + r, d * row_slot + c);
          target[r - c] += value;
        }
      }
    }
  }
}

std::size_t AssemblyPattern::bytes() const {
  return block_positions_.capacity() * sizeof(Offset) + landing_order_.capacity() +
         element_nodes_.capacity() * sizeof(Index) +
         pattern_.lower.col_ptr.capacity() * sizeof(Offset) +
         pattern_.lower.row_idx.capacity() * sizeof(Index);
}

}  // namespace cholsim::linalg
