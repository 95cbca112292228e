#pragma once
// Approximate minimum degree ordering (Amestoy, Davis & Duff 1996, "An approximate minimum
// degree ordering algorithm", SIAM J. Matrix Anal. Appl. 17(4); Davis 2006, "Direct Methods
// for Sparse Linear Systems", ch. 7).
//
// Eliminates, one supervariable at a time, the variable whose approximate external degree is
// smallest. The elimination graph is never formed: a quotient graph holds the eliminated
// variables as elements (cliques) next to the remaining variables, and degrees are bounded
// from above with the paper's |Le \ Lp| sets instead of computed exactly. Indistinguishable
// variables are merged into supervariables (hashing), and rows denser than
// max(16, 10·√n) are taken out before the ordering and placed last (the paper's §5 rule:
// they would make every degree update expensive and are eliminated last anyway).
//
// Ties between equal degrees are broken as SuiteSparse AMD breaks them and the variables of
// each pivot element are placed as it places them, so on graphs without dense rows the fill is
// SuiteSparse AMD's exactly (tests/factor/analysis/test_minimum_degree.cpp). With dense rows
// ours starts from the degrees of the graph actually ordered, without the dense neighbours
// SuiteSparse still counts there: slightly less fill on the whole.
#include <span>
#include <vector>

#include "factor/analysis/ordering.hpp"
#include "linalg/csc_matrix.hpp"

namespace cholsim::factor {

struct MinimumDegreeOptions {
  /// Vertices of degree > max(16, dense_row_factor·√n) are "dense": ordered last, outside
  /// the minimum degree search. The paper's and SuiteSparse AMD's default α is 10; a
  /// negative value disables the rule.
  double dense_row_factor = 10.0;
  /// Absorb every element whose variables all lie in the new pivot element, not only those
  /// adjacent to the pivot (the paper's "aggressive absorption"): it keeps the quotient graph
  /// smaller and the degree bounds tighter.
  bool aggressive_absorption = true;
  /// Workspace beyond the graph's own lists, as a fraction of its edge count: room for new
  /// elements between garbage collections (the paper's 1.2·nnz: 0.2). Less saves memory
  /// and costs more collections; the ordering does not depend on it.
  double elbow_room = 0.2;
};

/// A fill-reducing order of the vertices of a symmetric graph (`graph` as adjacency_graph
/// builds it: both directions, sorted unique neighbours; self loops are ignored).
/// Returns perm[new] = old over the graph's vertices.
std::vector<Index> approximate_minimum_degree(const AdjacencyGraph& graph,
                                              const MinimumDegreeOptions& options = {});

/// Approximate minimum degree under constraint sets (as SuiteSparse CAMD poses it): vertex v
/// is eliminated only after every vertex of a set below constraint_sets[v]; within a set the
/// minimum degree rule chooses, with degrees that already count the fill of the sets before.
/// Supervariables and mass elimination stay within a set. `graph` as for
/// approximate_minimum_degree, without self loops (adjacency_graph's); it is consumed.
/// Returns perm[new] = old.
std::vector<Index> constrained_minimum_degree(AdjacencyGraph graph, std::span<const Index> constraint_sets,
                                              const MinimumDegreeOptions& options = {});

/// Approximate minimum degree of the graph of a symmetric matrix (lower storage, pattern
/// only), on the compressed node graph with `dofs_per_node` DOFs a node exactly like
/// nested_dissection_ordering: each node's DOFs stay consecutive. Requires size % k == 0.
std::vector<Index> minimum_degree_ordering(const linalg::SymmetricCscMatrix& pattern,
                                           Index dofs_per_node = 1,
                                           const MinimumDegreeOptions& options = {});

}  // namespace cholsim::factor
