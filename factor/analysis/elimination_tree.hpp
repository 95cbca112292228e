#pragma once
// Elimination tree and postorder of a symmetric pattern (Liu 1986; seed 000 §3.2).
#include <span>
#include <vector>

#include "linalg/csc_matrix.hpp"

namespace cholsim::factor {

using linalg::Index;

/// parent[j] of every column in the elimination tree of the (lower-stored) pattern; -1 for
/// roots. Liu's algorithm with path compression, O(nnz · α(n)).
std::vector<Index> elimination_tree(const linalg::SymmetricCscMatrix& pattern);

/// A postorder of a forest given by parent pointers: post[k] = the k-th node visited.
/// Children are visited in increasing index order, so a tree that is already postordered
/// gives the identity.
std::vector<Index> postorder(std::span<const Index> parent);

}  // namespace cholsim::factor
