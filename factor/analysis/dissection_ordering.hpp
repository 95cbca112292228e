#pragma once
// Nested dissection with a constrained minimum degree inside it (Pellegrini, Roman & Amestoy
// 2000, "Hybridizing nested dissection and halo approximate minimum degree"; CHOLMOD's NESDIS
// with CAMD): METIS finds the vertex separators, recursively, and the whole graph is then
// ordered by the constrained minimum degree with each part of the dissection a constraint set,
// in postorder (both halves before their separator).
//
// Why not METIS_NodeND alone: it orders each leaf part by minimum degree on the leaf's own
// graph, blind to the separators around it (the halo), and each separator in whatever order
// the dissection left it. Here a leaf's minimum degree sees its halo through the quotient
// graph, and separators are ordered by degree as well.
#include <vector>

#include "factor/analysis/ordering.hpp"
#include "linalg/csc_matrix.hpp"

namespace cholsim::factor {

/// Per vertex of `graph`, the postorder number of its part of a nested dissection by METIS
/// vertex separators, parts being split until they have at most `leaf_vertices` vertices.
std::vector<Index> dissection_parts(const AdjacencyGraph& graph, Index leaf_vertices);

/// Parts of at most this many vertices are not split further. METIS_NodeND stops at 120 and
/// orders the rest by minimum degree; the constrained minimum degree orders a part knowing its
/// surroundings, so smaller parts pay: on five bench matrices nnz(L) fell by 0.2–0.9 % from 128
/// to 64 and by 0.05–0.75 % more at 32 (0.35 % on average), each halving costing one more level
/// of separators, about 15 % of the ordering's time (docs/benchmarks.md, issue 23, stop 58).
inline constexpr Index kDissectionLeafVertices = 64;

/// The ordering: dissection_parts as the constraint sets of constrained_minimum_degree on the
/// node graph (`dofs_per_node` DOFs a node, kept consecutive). Returns perm[new] = old.
std::vector<Index> dissection_minimum_degree_ordering(const linalg::SymmetricCscMatrix& pattern,
                                                      Index dofs_per_node = 1,
                                                      Index leaf_vertices = kDissectionLeafVertices);

}  // namespace cholsim::factor
