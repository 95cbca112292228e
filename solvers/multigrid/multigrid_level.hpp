#pragma once
// One level of a geometric multigrid hierarchy, described only by callbacks and arrays so
// that a matrix-free level (seed 001's octree elasticity, §7.3–7.4) and an assembled one plug
// in the same way. solvers/ knows nothing of the mesh that produced a level.
#include <functional>
#include <span>
#include <vector>

#include "linalg/index_types.hpp"
#include "solvers/cg/conjugate_gradient.hpp"

namespace cholsim::solvers {

/// y = T·x between two levels; overwrites the output.
using GridTransfer = std::function<void(std::span<const double> from, std::span<double> to)>;

/// Level 0 is the finest. The coarsest level has no transfers.
struct MultigridLevel {
  linalg::Index unknowns = 0;
  /// y = A_l·x (overwrites y). A_l must be symmetric positive definite.
  LinearOperator apply;
  /// diag(A_l), `unknowns` positive values: the damped-Jacobi smoother's D (seed 001 §7.4
  /// computes it matrix-free). Needed with Smoother::damped_jacobi.
  std::vector<double> diagonal;
  /// The 3×3 diagonal blocks of A_l, one per node of 3 consecutive unknowns, 9 values each,
  /// row-major: 3·unknowns values. Needed with Smoother::block_jacobi_3x3; empty otherwise.
  std::vector<double> block_diagonal;
  /// coarse = R·fine and fine = P·coarse with the next coarser level. R must be exactly Pᵀ
  /// (seed 001 §7.2: both loop over the fine nodes with the same weights) or the V-cycle is
  /// not symmetric and cannot precondition CG (§7, Tatebe 1993). Empty on the coarsest level.
  GridTransfer restrict_to_coarser;
  GridTransfer prolong_from_coarser;
};

/// How far R is from Pᵀ between `fine` and a coarser level of `coarse_unknowns` unknowns:
/// |⟨R·u, v⟩ − ⟨u, P·v⟩| / (‖u‖·‖P·v‖ + ‖R·u‖·‖v‖) for random u, v (seeded). Rounding gives
/// ~1e-16; a pair that is not a transpose pair gives about 1/√unknowns or more (random
/// vectors are nearly orthogonal, which shrinks the inner products). A check for whoever writes
/// transfers (the octree's §7.2 weights), cheap enough for a debug build to run once.
double restriction_transpose_defect(const MultigridLevel& fine, linalg::Index coarse_unknowns,
                                    unsigned seed = 1);

}  // namespace cholsim::solvers
