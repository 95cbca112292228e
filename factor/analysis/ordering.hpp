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
  automatic,          ///< "auto": AMD, or ND-CAMD where AMD is expensive and ND-CAMD cheaper (below)
  minimum_degree,     ///< approximate minimum degree (minimum_degree.hpp)
  nested_dissection,  ///< METIS_NodeND
  /// "nd-camd": METIS vertex separators, constrained AMD inside them (dissection_ordering.hpp)
  dissection_minimum_degree,
  natural,            ///< identity
  given,              ///< a permutation supplied by the caller
};

/// Parses "auto"/"automatic", "amd"/"minimum_degree", "metis"/"nested_dissection"/"nd",
/// "nd-camd", "natural", "given"; throws std::invalid_argument listing them on anything else.
OrderingMethod parse_ordering_method(std::string_view name);
std::string_view to_string(OrderingMethod method);

/// A fill-reducing ordering and how it was chosen.
struct FillReducingOrdering {
  std::vector<Index> permutation;  ///< perm[new] = old
  /// The method that produced it: never `automatic`, which picks one of the others.
  OrderingMethod method = OrderingMethod::natural;
  /// Predicted factorization flops Σⱼ cⱼ² (cⱼ: column counts of L, CHOLMOD's measure) of
  /// each candidate the automatic rule tried — AMD and the nested dissection, ND-CAMD —; 0 for
  /// a candidate it did not run.
  double minimum_degree_flops = 0.0;
  double nested_dissection_flops = 0.0;
};

/// When `automatic` also runs the nested dissection (ND-CAMD). Either test suffices:
///
/// * AMD's predicted flops per factor entry (Σcⱼ² / Σcⱼ) and its fill nnz(L)/nnz(A lower)
///   both reach kDissectionTrialFlopsPerEntry and kDissectionTrialFillRatio: AMD's fronts are large,
///   where nested dissection tends to win. CHOLMOD's default strategy has the same test with
///   500 and 5 (cholmod_core.h, nmethods = 0), tuned for one factorization per analysis;
///   cholsim's simulations refactor one pattern every time step, so an extra METIS run is
///   amortized, and between 100 and 500 — 2D grids, shells, tet meshes — METIS saved 10–15 %
///   of nnz(L) on three of five bench matrices (docs/benchmarks.md, bench_ordering).
/// * AMD's predicted factorization reaches kDissectionTrialFlops on its own: it is big enough
///   for one METIS run to be repaid by the refactorizations of a simulation (measured on
///   bench_ordering's matrices, one core: METIS takes 2–22 ms per GFlop of AMD's predicted
///   factorization on 3D stencils and FEM meshes, 430–810 ms on 2D grids with or without
///   dense rows, i.e. up to a few factorizations there). The first test misses matrices with dense
///   rows: their entries inflate nnz(A) and cost the same under either ordering (they go last
///   in both), so AMD's fill ratio looks small while METIS still saves a fifth of the flops
///   on the rest (2D 200² + 20 dense rows: 0.136 against 0.171 GFlop, nnz(L) 1.727M against
///   1.882M).
///
/// Below both, the factorization is small or AMD's fronts are: AMD alone.
inline constexpr double kDissectionTrialFlopsPerEntry = 100.0;
inline constexpr double kDissectionTrialFillRatio = 5.0;
inline constexpr double kDissectionTrialFlops = 1e8;

/// Orders the pattern with `method` (anything but `given`, which needs the caller's
/// permutation: std::invalid_argument), nodes of `dofs_per_node` DOFs kept consecutive.
///
/// `automatic`: approximate minimum degree first — fast, and on small fronts as good as
/// nested dissection; where its predicted factorization is expensive (the thresholds above)
/// ND-CAMD runs as well, and the candidate with fewer predicted flops is kept. ND-CAMD rather
/// than METIS_NodeND: on nine of the ten bench matrices it gave 1.7–6.3 % less nnz(L) and
/// 0.8–9.9 % fewer flops than METIS's own nested dissection (on the tenth, a grid with one
/// dense row, METIS's separators happened to be 1 % better), for 1.1–1.3× its time
/// (docs/benchmarks.md, issue 23, stop 58).
FillReducingOrdering fill_reducing_ordering(const linalg::SymmetricCscMatrix& pattern,
                                            OrderingMethod method, Index dofs_per_node);

/// The DOF permutation of a node permutation (perm[new] = old over nodes): node v's
/// `dofs_per_node` DOFs v·k … v·k + k − 1 stay consecutive, in order.
std::vector<Index> expand_node_ordering(std::span<const Index> node_perm, Index dofs_per_node);

/// METIS nested dissection of the graph of a symmetric matrix (lower storage, pattern only).
///
/// With `dofs_per_node` = k > 1 (FEM: 3) the k×k blocks are compressed into one graph vertex
/// per node, the node graph is ordered and each node's k DOFs are placed consecutively. This
/// is faster (a graph k² times smaller) and the consecutive DOFs seed larger supernodes.
/// Requires size % k == 0. Graphs without edges get the natural order (METIS rejects them).
std::vector<Index> nested_dissection_ordering(const linalg::SymmetricCscMatrix& pattern,
                                              Index dofs_per_node = 1);

/// The adjacency of the graph of a symmetric matrix (both directions, no self loops), with
/// `dofs_per_node` DOFs compressed into one vertex. The input of METIS and of the minimum
/// degree ordering. `spare_capacity` more entries are reserved in `neighbors` beyond its
/// size, for a consumer that grows the lists in place (the minimum degree ordering's elbow
/// room) without reallocating and copying them.
struct AdjacencyGraph {
  std::vector<Index> offsets;    ///< size vertices + 1
  std::vector<Index> neighbors;  ///< sorted, unique within each vertex
  [[nodiscard]] Index vertex_count() const { return static_cast<Index>(offsets.size()) - 1; }
};
AdjacencyGraph adjacency_graph(const linalg::SymmetricCscMatrix& pattern, Index dofs_per_node,
                               Offset spare_capacity = 0);

}  // namespace cholsim::factor
