#pragma once
// The smoothers of the V-cycle: damped point Jacobi (seed 001 §7: "damped Jacobi for smoothing
// and also as the solver on the coarsest level, because it parallelizes well") and damped 3×3
// block Jacobi, which inverts each node's coupling of its x, y, z unknowns (elasticity).
//
// Both are x ← x + ω·B⁻¹·(b − A·x) with B = D or the block diagonal: B is symmetric, so
// a sweep is self-adjoint in the A inner product and the same sweep serves as pre- and
// post-smoother of a symmetric V-cycle. Loops are parallel over unknowns (or nodes) with
// linalg::parallel_chunks and allocate nothing.
#include <span>

#include "solvers/multigrid/multigrid_level.hpp"

namespace cholsim::solvers {

enum class Smoother {
  damped_jacobi,     ///< B = diag(A): MultigridLevel::diagonal
  block_jacobi_3x3,  ///< B = the 3×3 node blocks: MultigridLevel::block_diagonal
};

/// x ← x + damping·B⁻¹·(b − a_times_x), where a_times_x holds A·x.
void jacobi_correction(Smoother smoother, const MultigridLevel& level, double damping,
                       std::span<const double> b, std::span<const double> a_times_x,
                       std::span<double> x, int threads);

/// x ← damping·B⁻¹·b: the first sweep from x = 0, which needs no A·x.
void jacobi_from_zero(Smoother smoother, const MultigridLevel& level, double damping,
                      std::span<const double> b, std::span<double> x, int threads);

/// True when `level` has the arrays `smoother` needs, of the right sizes (values unchecked).
bool has_smoother_data(Smoother smoother, const MultigridLevel& level);

/// Throws std::invalid_argument naming `level_index` and the entry unless `level` carries
/// what `smoother` needs: `unknowns` positive diagonal values, or 3·unknowns block values
/// (unknowns a multiple of 3) whose blocks are symmetric with positive determinant and
/// diagonal.
void check_smoother_data(Smoother smoother, const MultigridLevel& level, int level_index);

}  // namespace cholsim::solvers
