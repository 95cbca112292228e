#pragma once
// The global step's linear algebra for projective dynamics with collision springs (seed 004
// §4.3–4.5): the Schur path of Algorithm 1 and the baselines that solve the whole polluted
// system K + ΔK (a sparse refactorization, Jacobi-PCG, or CG preconditioned by the
// collision-free factor of K). Each is driven the same way, so they follow one trajectory:
//
//   solver->begin_outer(b_outer, times);           // Schur: forward substitution (eq. 16)
//   for (j < J) solver->solve_inner(b_inner, springs, x, stats);  // Schur: S + ΔS, potrf, potrs
//   solver->end_outer(x, times);                   // Schur: backward substitution (eq. 18)
//
// b_outer holds the outer iteration's right-hand side (collision-safe elements, attachments,
// Dirichlet couplings, inertia), b_inner what the inner iteration adds on N_c (collision-prone
// elements and the collision springs' targets); both free × 3, x too.
#include <memory>
#include <span>

#include "fem/pd/projective_dynamics.hpp"

namespace cholsim::fem {

class PdGlobalSolver {
 public:
  virtual ~PdGlobalSolver() = default;
  virtual void begin_outer(linalg::ConstDenseView b_outer, PdPhaseTimes& times) = 0;
  /// Solves (K + Σ k·wwᵀ)·x = b_outer + b_inner for the springs (whose free nodes must lie in
  /// N_c for the Schur path); writes at least the N_c rows of x (all rows for the baselines,
  /// which also read x as their warm start).
  virtual void solve_inner(linalg::ConstDenseView b_inner, std::span<const SpringRow> springs, linalg::DenseView x,
                           PdFrameStats& stats) = 0;
  /// Completes x after the last inner iteration.
  virtual void end_outer(linalg::DenseView x, PdPhaseTimes& times) = 0;
};

/// The solver options.solver names, factored for `model` (and partitioned on `prone_nodes`,
/// N_c, for the Schur path); fills setup's analysis and factorization figures. Throws
/// std::runtime_error when K is not positive definite.
std::unique_ptr<PdGlobalSolver> make_pd_global_solver(const PdModel& model, std::span<const Index> prone_nodes,
                                                      const PdOptions& options, PdSetupStats& setup);

}  // namespace cholsim::fem
