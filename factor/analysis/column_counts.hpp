#pragma once
// Column counts of the Cholesky factor without forming it (Gilbert, Ng, Peyton 1994).
#include <span>
#include <vector>

#include "linalg/csc_matrix.hpp"

namespace cholsim::factor {

using linalg::Index;

/// counts[j] = number of nonzeros in column j of L (diagonal included) for the lower-stored
/// `pattern`, its elimination tree `parent` and a postorder `post` of that tree.
///
/// Nearly O(nnz(A)): column j's count is the number of row subtrees containing j, found by
/// crediting every "leaf" entry of the skeleton matrix and debiting least common ancestors
/// of consecutive leaves (computed with a path-compressed disjoint-set forest).
std::vector<Index> column_counts(const linalg::SymmetricCscMatrix& pattern,
                                 std::span<const Index> parent, std::span<const Index> post);

/// Column counts of the factor of P·A·Pᵀ (perm[new] = old; counts in the new numbering):
/// the fill and flops of a candidate ordering without any supernodes (values are ignored).
std::vector<Index> ordered_column_counts(const linalg::SymmetricCscMatrix& pattern,
                                         std::span<const Index> perm);

}  // namespace cholsim::factor
