#pragma once
// The analysis side of a partial factorization (seed 004 §4.2–4.3): a constrained ordering
// that eliminates every unknown except a chosen Schur set and places that set last, and the
// supernode partition that keeps the Schur set in one dense supernode of its own.
//
// With the Schur set last, P·A·Pᵀ = [A11 A12; A21 A22] and the multifrontal factorization
// of A11 leaves the assembled front of the last supernode equal to the Schur complement
// S = A22 − L21·L21ᵀ (seed 004 eq. 14) — a partial factorization needs no extra pass.
#include <cstdint>
#include <span>
#include <vector>

#include "factor/analysis/ordering.hpp"
#include "factor/analysis/supernode_partition.hpp"
#include "linalg/csc_matrix.hpp"

namespace cholsim::factor {

/// Checks a Schur set against a matrix of size n: every index in [0, n), no duplicates.
/// Throws std::invalid_argument naming the position and value of the first bad entry.
void check_schur_set(std::span<const Index> schur_set, Index n);

/// A connected Schur set: the DOFs of `node_count` nodes of the graph of `pattern` (nodes of
/// `dofs_per_node` consecutive DOFs, as in nested_dissection_ordering), grown breadth-first
/// from `seed_node` through nodes with allowed[node] != 0 (empty: every node) — e.g. a
/// patch of the surface, seed 004's collision-prone region (§4.2). Nodes in BFS order, each
/// node's DOFs consecutive; fewer nodes when the reachable part is smaller.
std::vector<Index> connected_patch(const linalg::SymmetricCscMatrix& pattern, Index dofs_per_node,
                                   Index seed_node, Index node_count, std::span<const char> allowed = {});

/// perm[new] = old with the unknowns outside `schur_set` first, ordered by `method` on
/// their own induced graph (auto, amd, metis: fill_reducing_ordering of the graph without
/// the Schur set, `automatic` choosing by the flops of eliminating that rest; natural:
/// increasing; given: `given_permutation` with the Schur set removed), then the Schur set
/// in the order given — the order of S's rows and columns. The result's method and flops
/// describe the rest's ordering.
/// With dofs_per_node = k > 1 and a fill-reducing method the Schur set must consist of
/// whole nodes (all k DOFs), so that the rest can still be ordered as a node graph;
/// otherwise std::invalid_argument.
FillReducingOrdering constrained_ordering(const linalg::SymmetricCscMatrix& pattern,
                                        std::span<const Index> schur_set, OrderingMethod method,
                                        Index dofs_per_node,
                                        std::span<const Index> given_permutation);

/// Structural nonzeros of the Cholesky factor of P·A·Pᵀ (diagonal included), perm[new] = old:
/// the fill of an ordering without building any supernodes.
std::int64_t factor_nonzeros(const linalg::SymmetricCscMatrix& pattern, std::span<const Index> perm);

/// A postorder of the elimination forest `parent` of a matrix whose last n − eliminated
/// columns form the Schur set, that keeps those columns last and in their order: the
/// eliminated columns are postordered among themselves (their forest is the elimination tree
/// of A11), trees not attached to the Schur set first, so that the Schur supernode's subtree
/// is contiguous as the supernodal tree requires. post[k] = the k-th column.
std::vector<Index> schur_last_postorder(std::span<const Index> parent, Index eliminated);

/// Supernodes of a postordered matrix (schur_last_postorder) whose columns [eliminated, n)
/// form the Schur set: fundamental supernodes and amalgamation among the eliminated columns
/// only, then the Schur set as one last, dense supernode that nothing is merged into (its
/// front is S, kept whole for the dense refactorization of seed 004 §4.4).
SupernodePartition schur_supernode_partition(std::span<const Index> parent,
                                             std::span<const Index> counts, Index eliminated,
                                             const AmalgamationOptions& amalgamation);

}  // namespace cholsim::factor
