#pragma once
// The proximal augmented Lagrangian method for the QPs of qp_problem.hpp, its inner problems
// solved by a semismooth Newton method with an exact line search (Hermans, Themelis & Patrinos,
// "QPALM", Math. Prog. Comp. 14, 2022; the proximal method of multipliers: Rockafellar, Math.
// Oper. Res. 1(2), 1976).
//
//   auto solution = qp::solve_augmented_lagrangian(problem);
//
// Why a third method: the primal–dual active set method (primal_dual_active_set.hpp) switches
// every infeasible row at once and has no merit function, so on QPs far from an M-matrix — EOL
// cloth on a wire, whose H is nearly singular along the EOL vertices' material velocities — it
// can wander from a poor first guess through guesses with huge objectives and never settle
// (docs/benchmarks.md, issue 20); from the optimal active set the same QPs settle at once. This
// method minimizes, for multipliers λ and penalties σ held fixed, the augmented Lagrangian
//
//   φ(x) = ½xᵀHx − bᵀx + ½Σⱼρⱼ(xⱼ − x̂ⱼ)² + Σ_equalities (−λᵣgᵣ + ½σᵣgᵣ²)
//          + Σ_inequalities (1/2σᵣ)(max(0, λᵣ − σᵣgᵣ)² − λᵣ²),       gᵣ = Aᵣx − aᵣ,
//
// a convex, piecewise quadratic, continuously differentiable function. Each Newton step solves
// (H + diag ρ + Σ_{r∈J} σᵣAᵣᵀAᵣ)·d = −∇φ with J the equalities and the inequalities with
// λᵣ − σᵣgᵣ > 0, then takes the exact minimizer of φ along d (the derivative along d is
// piecewise linear and nondecreasing: a sweep over its breakpoints). A descent method on a
// strongly convex function cannot cycle. Between inner problems the multipliers take their
// first-order update λ ← max(0, λ − σg), the penalties of rows whose violation did not fall to
// a quarter grow tenfold, and the proximal centre x̂ moves to x.
//
// Linear algebra as in the active set method: a row of one column adds σᵣAᵣⱼ² to that column's
// diagonal, so the matrix keeps H's pattern, is analyzed once and a new J refactorizes only the
// supernodes of the columns whose diagonal changed (retained update blocks, seed 000 §4.3); rows
// of several columns enter through the Woodbury identity with one blocked solve and a small
// dense Cholesky factorization.
#include <memory>
#include <span>
#include <vector>

#include "factor/analysis/ordering.hpp"
#include "solvers/qp/primal_dual_active_set.hpp"
#include "solvers/qp/qp_problem.hpp"

namespace cholsim::factor {
class Symbolic;
}

namespace cholsim::solvers::qp {

struct AugmentedLagrangianOptions {
  /// Newton steps over all inner problems; each is a partial refactorization and a solve.
  int max_newton_steps = 100;
  /// Multiplier updates; an update without a Newton step before it still counts.
  int max_outer_iterations = 30;
  /// Optimal when the worst scaled KKT residual (kkt_residuals) is at most this.
  double tolerance = 1e-10;
  /// 0 (off) or a looser residual accepted, with a message, when the tolerance is not reached.
  double acceptable_tolerance = 0.0;
  /// First penalty of each row, relative: σᵣ‖Aᵣ‖² = initial_penalty × the mean diagonal of H
  /// over the row's columns, so that a held row dominates the curvature of its columns.
  double initial_penalty = 1e4;
  /// Penalties never grow beyond this multiple of their first value.
  double max_penalty_growth = 1e6;
  /// ρⱼ = proximal_weight × Hⱼⱼ (and at least proximal_weight × the mean diagonal): keeps every
  /// Newton matrix positive definite where H is only semi-definite.
  double proximal_weight = 1e-8;
  /// Polishing: once the worst scaled KKT residual is at most polish_threshold, the primal–dual
  /// active set method starts from the rows with a positive multiplier, with at most
  /// polish_iterations guesses, and its answer is returned when it settles (exact multipliers,
  /// zero off the active set); otherwise the iterations go on and polishing is tried again
  /// each time the residual has fallen a hundredfold. The active set is identified long before
  /// the multipliers converge (docs/benchmarks.md, issue 20). 0: never.
  double polish_threshold = 1e-5;
  int polish_iterations = 5;
  /// Threads of the sparse factorization; 0: all hardware threads.
  int threads = 0;
  /// The fill-reducing ordering of H's pattern (minimum degree, as the active set method).
  factor::OrderingMethod ordering = factor::OrderingMethod::minimum_degree;
};

struct AugmentedLagrangianStats {
  int outer_iterations = 0;      ///< multiplier updates
  int newton_steps = 0;          ///< factorizations or refactorizations and solves
  int polish_attempts = 0;       ///< primal–dual active set runs started from the multipliers' support
  int polish_iterations = 0;     ///< their guesses, summed
  bool polished = false;         ///< the answer is the active set method's
  Index changed_columns = 0;     ///< columns refactorized for a changed diagonal, summed
  double analyze_seconds = 0.0;  ///< symbolic analysis of H's pattern (0 when reused)
  double factor_seconds = 0.0;
  double solve_seconds = 0.0;
  double total_seconds = 0.0;
  /// Per inequality row: 1 where the final multiplier is positive (an active set method's guess).
  std::vector<char> active;
};

/// Keeps the analysis of H's pattern between solves of QPs with the same H pattern.
class AugmentedLagrangianSolver {
 public:
  explicit AugmentedLagrangianSolver(AugmentedLagrangianOptions options = {});
  /// Solves `problem` (check_problem first) from `start` (size n; empty: x = 0). Returns
  /// optimal with x, y, z, or iteration_limit / numerical_failure with a message and the last x.
  QpSolution solve(const QpProblem& problem, std::span<const double> start = {},
                   AugmentedLagrangianStats* stats = nullptr);
  [[nodiscard]] const AugmentedLagrangianOptions& options() const { return options_; }

 private:
  AugmentedLagrangianOptions options_;
  std::shared_ptr<const factor::Symbolic> analysis_;
  PrimalDualActiveSetSolver polisher_;
};

QpSolution solve_augmented_lagrangian(const QpProblem& problem, const AugmentedLagrangianOptions& options = {},
                                      std::span<const double> start = {}, AugmentedLagrangianStats* stats = nullptr);

}  // namespace cholsim::solvers::qp
