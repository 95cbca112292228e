#pragma once
// Newton and quasi-Newton solvers for one NonlinearProblem per call, with the linear systems
// solved by a fresh, frozen, extrapolated or incrementally refactorized Cholesky factor
// (seed 002 §5.4.2.3 and §5.5, Algorithms 5.3–5.5; seed 000 §4.3–4.4 for the refactorized one).
//
//   NewtonSolver solver(NewtonMethod::hybrid_extrapolated, options);
//   for each time step:
//     NewtonStatistics s = solver.solve(problem, x, {.start = x_k, .velocity = v_k,
//                                                    .time_step = h});
//
// Methods (names as in the thesis' figures, plus ours):
//  * newton_direct       NEWTON-D : factorize ∇²E every iteration, direct solve.
//  * newton_iterative    NEWTON-I : Jacobi-preconditioned CG on ∇²E every iteration.
//  * newton_frozen       NEWTON-L0: CG on ∇²E preconditioned by the frozen factor L₀ of the
//                                   step start's Hessian A(x_k).
//  * newton_extrapolated NEWTON-L1: the same preconditioned by L̃ = L + h·L̇ (eq. 5.4), L̇ from
//                                   A(x_k) and Ȧ = problem.hessian_rate(x_k, v_k).
//  * hybrid_frozen       HYBRID-L0: quasi-Newton with L₀ (direct solves, Alg. 5.3); after
//  * hybrid_extrapolated HYBRID-L1:   `quasi_newton_iterations` iterations or a failed line
//                                     search, Newton preconditioned by the same factor
//                                     (Alg. 5.4) from where quasi-Newton stopped.
//  * newton_refactored   NEWTON-R ★: one factor kept for the whole simulation with retained
//                                   update blocks; every iteration compares ∇²E(x) with the
//                                   values last factored column by column and refactorizes
//                                   (Factor::refactorize) only the supernodes of columns that
//                                   changed by more than `refactor_tolerance`, then CG on
//                                   ∇²E preconditioned by it. Tolerance 0 is NEWTON-D.
//  * hybrid_refactored   HYBRID-R ★: the factor brought up to date the same way at the
//                                   solve's start, quasi-Newton with it, refreshed again (at
//                                   the cost of the blocks that moved) when an iteration
//                                   reduces ‖∇E‖ by less than `refresh_ratio` and the run's
//                                   measured costs say a fresh factor gets to the tolerance
//                                   sooner (refresh_costs.hpp), or after
//                                   `quasi_newton_iterations` with one factor; NEWTON-R once a
//                                   current factor is still slow.
//
// Convergence (thesis §5.5): ‖∇E(x)‖₂ ≤ max(absolute_tolerance, relative_tolerance·‖∇E(x₀)‖₂)
// with x₀ the initial guess. Every direction goes through an Armijo backtracking line search
// on E; a direction that is not a descent direction, or a line search that cannot lower E
// after `line_search_halvings` halvings, counts as a failed line search.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "solvers/nonlinear/nonlinear_problem.hpp"

namespace cholsim::solvers {

enum class NewtonMethod {
  newton_direct,
  newton_iterative,
  newton_frozen,
  newton_extrapolated,
  hybrid_frozen,
  hybrid_extrapolated,
  newton_refactored,
  hybrid_refactored,
};

/// "newton-d", "newton-i", "newton-l0", "newton-l1", "hybrid-l0", "hybrid-l1", "newton-r",
/// "hybrid-r".
std::string_view method_name(NewtonMethod method);
/// The inverse of method_name (case-insensitive); throws std::invalid_argument listing the
/// accepted names.
NewtonMethod parse_method(std::string_view name);

struct NewtonOptions {
  double relative_tolerance = 1e-6;  ///< thesis §5.5
  double absolute_tolerance = 1e-6;  ///< thesis §5.5, in the units of ∇E
  /// PCG stops at ‖r‖ ≤ pcg_tolerance·‖∇E‖ (thesis: 1e-2, chosen so the nonlinear iteration
  /// count does not creep up).
  double pcg_tolerance = 1e-2;
  std::int64_t pcg_max_iterations = 1000;
  /// Nonlinear iterations per solve, both phases together; reaching it returns
  /// converged = false (never throws).
  int max_iterations = 200;
  /// Hybrid methods: switch to Newton after this many quasi-Newton iterations (HYBRID-R: after
  /// this many with one factor it refreshes the factor instead).
  int quasi_newton_iterations = 40;
  int line_search_halvings = 30;
  double armijo_constant = 1e-4;
  /// Frozen and extrapolated factors: refactor (and recompute L̇) every this many solve()
  /// calls (thesis §5.5.2.3 used 2 with the Baraff integrator); 1 = every call.
  int refactor_every = 1;
  /// NEWTON-R / HYBRID-R: a column is refactorized when some entry changed by more than
  /// refactor_tolerance·√(A_ii·A_jj) of the values last factored (0: any change).
  double refactor_tolerance = 0.05;
  /// HYBRID-R: a quasi-Newton iteration that reduces ‖∇E‖ by less than this factor brings the
  /// factor up to date at the new iterate (only the blocks that moved are refactorized) where
  /// that is predicted to pay (RefreshCosts); a failed quasi-Newton line search does the same
  /// once before handing over to Newton.
  double refresh_ratio = 0.5;
  /// NEWTON-R / HYBRID-R fall back to NEWTON-D where it is faster: every
  /// `direct_probe_every`-th solve() runs the other way than the preferred one, and the
  /// solves after it run the way whose solves took less time (an average of the recent
  /// ones of each way). Refactorizing pays where a factorization dominates the Newton step;
  /// on small meshes, where it does not, the selective assembly and the PCG iterations an
  /// approximate factor needs cost more than the refactorization saves (seed 002 ch. 5's
  /// 21K-tet armadillo variants: NEWTON-R 0.81–0.92× NEWTON-D). 0: never fall back, so that
  /// the method's iterates do not depend on timings.
  int direct_probe_every = 8;
  int threads = 2;  ///< factorizations and element work
  /// Unknowns per mesh node, for the fill-reducing ordering of the Hessian's pattern
  /// (factor::AnalyzeOptions::dofs_per_node): 3 for FEM elasticity, 1 orders the scalar graph.
  /// Must divide the problem's size.
  Index dofs_per_node = 1;
};

/// What one solve() did.
struct NewtonStatistics {
  bool converged = false;
  int iterations = 0;             ///< nonlinear iterations, both phases
  int quasi_newton_iterations = 0;
  int newton_iterations = 0;
  bool switched_to_newton = false;  ///< hybrid: the quasi-Newton phase gave up
  std::int64_t pcg_iterations = 0;
  int factorizations = 0;         ///< full numeric factorizations (L, or L with L̇)
  int derivative_factorizations = 0;  ///< of those, with L̇
  int refactorizations = 0;       ///< incremental refactorizations (…-R)
  double refactorized_flop_fraction = 0.0;  ///< mean share of a full factorization's flops per refactorization
  int failed_line_searches = 0;
  /// …-L1: solves that used the frozen L because L̃ = L + Δt·L̇ had a diagonal ≤ 0 (the
  /// extrapolation overshooting, seed 002 Fig. 5.2b).
  int extrapolation_fallbacks = 0;
  double initial_gradient_norm = 0.0;
  double final_gradient_norm = 0.0;
  // Wall time split (seconds).
  double factor_seconds = 0.0;      ///< factorize / refactorize (L̇ included)
  double solve_seconds = 0.0;       ///< triangular solves and PCG
  double assembly_seconds = 0.0;    ///< hessian() and hessian_rate()
  double evaluation_seconds = 0.0;  ///< energy() and gradient()
  double total_seconds = 0.0;
  std::string failure;  ///< empty, or why the last factorization/solve failed
  /// …-R: this solve ran as NEWTON-D (NewtonOptions::direct_probe_every).
  bool solved_directly = false;
};

class NewtonSolver {
 public:
  /// Throws std::invalid_argument for options out of range (negative counts, refactor_every
  /// or dofs_per_node below 1, a negative refactor_tolerance, a pcg_tolerance ≤ 0).
  explicit NewtonSolver(NewtonMethod method, NewtonOptions options = {});
  ~NewtonSolver();
  NewtonSolver(NewtonSolver&&) noexcept;
  NewtonSolver& operator=(NewtonSolver&&) noexcept;

  /// The time step a solve belongs to: where it starts (x_k, also the frozen and extrapolated
  /// factors' reference point), the velocity there (for Ȧ) and how far ahead the solution lies.
  struct StepContext {
    /// Empty: the initial guess. `time_step` is the time from `start` to the solution, so a
    /// factor kept over several calls is extrapolated by the sum of their time steps.
    std::span<const double> start{};
    std::span<const double> velocity{};  ///< empty: zero
    double time_step = 0.0;
    /// > 0 overrides options().max_iterations for this call (the Baraff integrator takes 1).
    int iteration_limit = 0;
  };

  /// Minimizes problem's E from the initial guess in `x` (overwritten with the solution). The
  /// problem's pattern must stay the same object from call to call (the analysis is kept).
  /// Throws std::invalid_argument on size mismatches; a Hessian that cannot be factored
  /// (not positive definite) ends the solve with converged = false and `failure` set.
  NewtonStatistics solve(NonlinearProblem& problem, std::span<double> x, const StepContext& step);

  [[nodiscard]] NewtonMethod method() const;
  [[nodiscard]] const NewtonOptions& options() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cholsim::solvers
