#pragma once
// The two multigrid solvers seed 001 §10.4 compares (Fig. 14, 15), on a VCycle's finest level:
//  * MGPCG (§7): CG preconditioned by one cycle per iteration (flexible CG, for the K-cycle);
//  * MG: V-cycles as a stationary iteration x ← x + M⁻¹(b − A·x);
// and the V-cycle's convergence factor, the number that says whether a hierarchy (transfers,
// coarse operators, damping) is working.
#include <span>
#include <stdexcept>
#include <vector>

#include "solvers/cg/cg_spectrum.hpp"
#include "solvers/multigrid/v_cycle.hpp"

namespace cholsim::solvers {

struct MultigridSolveOptions {
  /// Stop when ‖b − A·x‖₂ ≤ relative_tolerance·‖b‖₂.
  double relative_tolerance = 1e-6;
  /// V-cycles at most (seed 001 §10.2 caps MGPCG at 3 per Newton step, 20 for the spike).
  int max_iterations = 100;
  /// MGPCG only: when the cycle turns out indefinite (rᵀM⁻¹r ≤ 0, a smoother diverging because
  /// damping·λmax(B⁻¹A) ≥ 2), halve the cycle's damping and start again from x = 0, at most this
  /// many times; the halved damping stays on the cycle. 0: throw IndefiniteCycle at once.
  int max_damping_halvings = 0;
};

struct MultigridSolveResult {
  int iterations = 0;             ///< V-cycles applied
  double relative_residual = 0;   ///< ‖b − A·x‖/‖b‖ at exit
  bool converged = false;
  /// ‖b − A·x‖/‖b‖ before the first iteration (entry 0) and after each (entry k), for
  /// convergence plots like §10.4's Fig. 14. For MGPCG, the CG recurrence's residual.
  std::vector<double> residual_history;
  /// MGPCG only: the extreme Ritz values of M⁻¹A from CG's coefficients (cg_spectrum.hpp).
  /// They bound the V-cycle's factor as MG from below (stationary_factor()) after far fewer
  /// cycles than vcycle_convergence_factor's power iteration needs.
  SpectrumBounds spectrum;
  /// MGPCG only: how often the damping was halved (MultigridSolveOptions::max_damping_halvings).
  int damping_halvings = 0;
};

/// MGPCG met rᵀM⁻¹r ≤ 0: the cycle is not positive definite — its smoother diverges
/// (damping·λmax(B⁻¹A) ≥ 2 somewhere) or R ≠ Pᵀ. A smaller damping (VCycle::set_damping) is
/// the caller's remedy for the first.
struct IndefiniteCycle : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Solves level(0)'s A·x = b by MGPCG from the given x (a warm start). Throws
/// std::invalid_argument on sizes, std::logic_error for an unsymmetric cycle (pre_sweeps !=
/// post_sweeps), IndefiniteCycle when rᵀM⁻¹r is not positive once options.max_damping_halvings
/// are spent, and std::runtime_error when pᵀAp is not (an operator that is not SPD), naming the
/// iteration.
MultigridSolveResult multigrid_pcg(VCycle& cycle, std::span<const double> b, std::span<double> x,
                                   const MultigridSolveOptions& options);

/// Solves level(0)'s A·x = b by repeated V-cycles x ← x + M⁻¹(b − A·x) from the given x.
MultigridSolveResult multigrid_iterations(VCycle& cycle, std::span<const double> b, std::span<double> x,
                                          const MultigridSolveOptions& options);

/// The V-cycle's convergence factor as a stationary iteration: the A-norm spectral radius of
/// the error propagation E = I − M⁻¹A, by power iteration e ← E·e from a random start
/// (seeded), reported as the geometric mean of ‖e_{k+1}‖_A/‖e_k‖_A over the last
/// iterations/4 steps (at least 1). E is A-self-adjoint for a symmetric cycle, so the ratios
/// grow monotonically towards the factor, slowly where E's largest eigenvalues cluster: for a
/// 3D Poisson cycle whose factor is 0.503, 20 cycles say 0.47–0.49, 100 say 0.4995, 200 say
/// 0.5034; for the octree armadillo 20 cycles said 0.80–0.85 where 60 say 0.92–0.94
/// (docs/benchmarks.md, issue 24). MGPCG's MultigridSolveResult::spectrum gives the same bound
/// from one solve.
double vcycle_convergence_factor(VCycle& cycle, int iterations = 200, unsigned seed = 1);

}  // namespace cholsim::solvers
