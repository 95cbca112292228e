#pragma once
// Pattern-stable assembly of symmetric finite-element matrices (DESIGN.md "Assembly is
// pattern-stable"; STYLE.md habit 5: precomputed scatter maps for assembly).
//
// An AssemblyPattern is built once from element connectivity. It owns the lower-triangle
// sparsity pattern of Σₑ Pₑᵀ·Kₑ·Pₑ (every node pair that shares an element couples all of
// their dof components) and, for every element and node pair, the positions in the values
// array where the pair's d×d block lands (one per block column: a column holds all d
// components of a coupled node contiguously). Assembling new values for the same mesh is then
// a pure scatter, with no search and no allocation, so the factorization sees the same
// pattern (and the same `Symbolic`) for a whole simulation.
//
// Numbering: the local dof of component c at local node s is s·d + c; the global dof of
// component c at node v is v·d + c (d = dofs_per_node).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "linalg/csc_matrix.hpp"
#include "linalg/dense_matrix.hpp"
#include "linalg/index_types.hpp"

namespace cholsim::linalg {

class AssemblyPattern {
 public:
  AssemblyPattern() = default;

  /// Builds the pattern and the per-element scatter positions.
  ///  * node_count: nodes in the mesh (≥ 0); the matrix has node_count·dofs_per_node rows.
  ///  * dofs_per_node: d ≥ 1 (3 for elasticity, 1 for a scalar field).
  ///  * nodes_per_element: k ≥ 1 (4 for a linear tet); every element has the same k.
  ///  * element_nodes: flat connectivity, element e's nodes at [e·k, e·k + k); a node may
  ///    appear more than once in an element (its contributions are summed).
  /// Throws std::invalid_argument on bad sizes or a node outside 0..node_count-1 (naming the
  /// element and the slot).
  AssemblyPattern(Index node_count, Index dofs_per_node, Index nodes_per_element,
                  std::span<const Index> element_nodes);

  [[nodiscard]] Index node_count() const { return node_count_; }
  [[nodiscard]] Index dofs_per_node() const { return dofs_per_node_; }
  [[nodiscard]] Index nodes_per_element() const { return nodes_per_element_; }
  [[nodiscard]] Index element_count() const { return element_count_; }
  /// Rows (= columns) of the assembled matrix: node_count·dofs_per_node.
  [[nodiscard]] Index size() const { return pattern_.size(); }
  /// Rows (= columns) of one element matrix: m = nodes_per_element·dofs_per_node.
  [[nodiscard]] Index element_dofs() const { return nodes_per_element_ * dofs_per_node_; }
  /// Lower-triangle entries of one element matrix, m·(m+1)/2 (78 for a tet with 3 dofs).
  [[nodiscard]] Index element_entries() const { return element_entries_; }
  [[nodiscard]] Offset nnz_lower() const { return pattern_.nnz_lower(); }

  /// The nodes of element e (nodes_per_element of them, in the order given).
  [[nodiscard]] std::span<const Index> element_nodes(Index element) const;

  /// The assembled matrix's pattern (lower triangle, sorted rows, no values).
  [[nodiscard]] const SymmetricCscMatrix& pattern() const { return pattern_; }

  /// A copy of the pattern with every value zero: the matrix scatter_add assembles into.
  [[nodiscard]] SymmetricCscMatrix zero_matrix() const;

  /// Element e's local node slots in increasing global node order ("landing order"): slot
  /// landing_order(e)[j] holds the j-th smallest global node of the element, so for i ≥ j the
  /// node block of slots (landing_order[i], landing_order[j]) lands in the global lower triangle.
  [[nodiscard]] std::span<const std::uint8_t> landing_order(Index element) const;

  /// Where element e's node blocks land, d positions per node pair: for the pairs (i, j) of
  /// landing order, j = 0..k-1 and i = j..k-1 in that order, and for each component c of the
  /// column node, the position in the values array of the block's first entry in global column
  /// d·(node of slot j) + c — row d·(node of slot i) when the nodes differ, the diagonal row
  /// d·node + c when they are the same node. The block's other rows follow contiguously (a
  /// column holds every component of each coupled node, in order).
  [[nodiscard]] std::span<const Offset> block_positions(Index element) const;

  /// values += the lower triangle of Pₑᵀ·Kₑ·Pₑ for element e, where Kₑ is the m×m element
  /// matrix (column-major) and `values` belongs to a matrix with this pattern.
  ///
  /// Each global lower entry (I, J), I ≥ J, receives Kₑ(a, b) for every local pair with
  /// gₐ = I and g_b = J — exactly what symmetric_from_triplets(all entries of Kₑ,
  /// UpperEntries::drop) would sum. So for a symmetric Kₑ, an upper local entry that lands in
  /// the global lower triangle (local node order differs from global order) is read from its
  /// symmetric twin, and a repeated node's coupling with itself is counted from both sides.
  /// Throws std::invalid_argument on a wrong element number, matrix shape or values length.
  void scatter_add(Index element, ConstDenseView element_matrix, std::span<double> values) const;

  /// As above with a contiguous column-major m×m element matrix (leading dimension m).
  void scatter_add(Index element, const double* element_matrix, std::span<double> values) const;

  /// Bytes held by the pattern, the block positions and the connectivity copy.
  [[nodiscard]] std::size_t bytes() const;

 private:
  void check_element(Index element) const;
  void check_scatter_arguments(Index element, std::span<const double> values) const;
  void scatter_add_unchecked(Index element, const double* element_matrix, Index ld,
                             std::span<double> values) const;

  Index node_count_ = 0;
  Index dofs_per_node_ = 1;
  Index nodes_per_element_ = 1;
  Index element_count_ = 0;
  Index element_entries_ = 1;
  std::vector<Index> element_nodes_;  ///< flat connectivity, element_count·k
  SymmetricCscMatrix pattern_;        ///< values empty
  /// Per element, its k slots in landing order (k ≤ 255) and the d·k(k+1)/2 block positions:
  /// scattering then moves whole block columns with no per-entry test of which global
  /// triangle an entry falls in (a data-dependent branch that mispredicts on most entries).
  std::vector<std::uint8_t> landing_order_;
  std::vector<Offset> block_positions_;
};

}  // namespace cholsim::linalg
