#pragma once
// Which supernodes a change of A touches (seed 000 §4.3–4.4).
//
// An entry (i, j) of A, i and j in elimination numbering, is assembled by the supernode that
// holds column min(i, j). A change of A is therefore a set of supernodes; the incremental
// refactorization recomputes them and their ancestors. Callers describe a change in the
// form they have: user columns (a plain matrix), supernodes (a scheduler's decision, §4.4),
// or element DOF lists (a simulator's changed elements).
#include <span>
#include <vector>

#include "factor/analysis/symbolic.hpp"

namespace cholsim::factor {

/// The supernode holding elimination column `column` (binary search over first columns).
Index supernode_of_column(const Symbolic& symbolic, Index column);

/// What changed in A since the last (re)factorization.
class ChangedEntries {
 public:
  /// Every entry of these columns — and, by symmetry, rows — may have changed (user numbering).
  static ChangedEntries columns(std::vector<Index> user_columns);
  /// The entries assembled by these supernodes changed.
  static ChangedEntries supernodes(std::vector<Index> supernodes);
  /// The element blocks of these elements changed: `element_dofs` holds the user DOFs of each
  /// element back to back, `dofs_per_element` of them per element (12 for a 3-D linear tet).
  static ChangedEntries elements(std::vector<Index> element_dofs, Index dofs_per_element);
  /// Everything changed: refactorize recomputes the whole factor.
  static ChangedEntries all();

  /// marked[s] = 1 for every supernode holding a changed entry; not yet closed under
  /// ancestors. Throws std::invalid_argument for an index out of range.
  [[nodiscard]] std::vector<char> marked_supernodes(const Symbolic& symbolic) const;

 private:
  enum class Kind { columns, supernodes, element_dofs, all };
  ChangedEntries(Kind kind, std::vector<Index> indices, Index group);
  Kind kind_;
  std::vector<Index> indices_;
  Index dofs_per_element_;
};

/// For every element of a mesh, the supernodes its element block lands in, built once per
/// pattern (assembly is pattern-stable). Turns "these elements changed" into a marked set and
/// per-element errors into per-supernode badness (seed 000 §4.4: "the badness of a supernode
/// is the maximum error over all the elements in that supernode").
class ElementSupernodeMap {
 public:
  /// `element_dofs`: user DOFs of each element back to back, `dofs_per_element` per element.
  /// Throws std::invalid_argument for a bad size or a DOF out of range.
  ElementSupernodeMap(const Symbolic& symbolic, std::span<const Index> element_dofs, Index dofs_per_element);

  [[nodiscard]] Index element_count() const { return static_cast<Index>(offsets_.size()) - 1; }
  /// The distinct supernodes element e's entries land in, increasing.
  [[nodiscard]] std::span<const Index> supernodes(Index element) const {
    return {supernodes_.data() + offsets_[element], supernodes_.data() + offsets_[element + 1]};
  }
  /// Sets marked[s] = 1 for every supernode of the given elements.
  void mark(std::span<const Index> elements, std::span<char> marked) const;
  /// badness[s] = max of element_error over the elements landing in s (0 where none does).
  [[nodiscard]] std::vector<double> supernode_badness(std::span<const double> element_error) const;

 private:
  Index supernode_count_ = 0;
  std::vector<Index> offsets_;
  std::vector<Index> supernodes_;
};

}  // namespace cholsim::factor
