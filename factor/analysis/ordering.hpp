#pragma once
// Fill-reducing orderings: the first, swappable step of the analysis.
//
// Every ordering returns a permutation `perm` with perm[new] = old (CHOLMOD/METIS convention):
// column `new` of P·A·Pᵀ is column perm[new] of A.
#include <span>
#include <string_view>
#include <vector>

#include "linalg/csc_matrix.hpp"

namespace cholsim::factor {

using linalg::Index;
using linalg::Offset;

enum class OrderingMethod {
  nested_dissection,  ///< METIS_NodeND (default)
  natural,            ///< identity
  given,              ///< a permutation supplied by the caller
};

/// Parses "metis"/"nested_dissection"/"nd", "natural", "given"; throws on anything else.
OrderingMethod parse_ordering_method(std::string_view name);
std::string_view to_string(OrderingMethod method);

/// METIS nested dissection of the graph of a symmetric matrix (lower storage, pattern only).
///
/// With `dofs_per_node` = k > 1 (FEM: 3) the k×k blocks are compressed into one graph vertex
/// per node, the node graph is ordered and each node's k DOFs are placed consecutively. This
/// is faster (a graph k² times smaller) and the consecutive DOFs seed larger supernodes.
/// Requires size % k == 0. Graphs without edges get the natural order (METIS rejects them).
std::vector<Index> nested_dissection_ordering(const linalg::SymmetricCscMatrix& pattern,
                                              Index dofs_per_node = 1);

/// The adjacency of the graph of a symmetric matrix (both directions, no self loops), with
/// `dofs_per_node` DOFs compressed into one vertex. Used by the METIS call; exposed for tests.
struct AdjacencyGraph {
  std::vector<Index> offsets;    ///< size vertices + 1
  std::vector<Index> neighbors;  ///< sorted, unique within each vertex
  [[nodiscard]] Index vertex_count() const { return static_cast<Index>(offsets.size()) - 1; }
};
AdjacencyGraph adjacency_graph(const linalg::SymmetricCscMatrix& pattern, Index dofs_per_node);

}  // namespace cholsim::factor
