#pragma once
// The primal–dual active set method (Bergounioux, Ito & Kunisch, SIAM J. Control Optim. 37(4),
// 1999; as a semismooth Newton method: Hintermüller, Ito & Kunisch, SIAM J. Optim. 13(3), 2002)
// for the sparse QPs of qp_problem.hpp whose inequality rows are mostly simple bounds — a contact
// row of EOL cloth in the per-vertex frames of fem/cloth/velocity_coordinates touches one column.
//
//   auto solution = qp::solve_primal_dual_active_set(problem, {}, previous_active);
//   if (solution.status != qp::QpStatus::optimal) solution = qp::solve_interior_point(problem).solution;
//
// Each iteration takes a guess W of the active inequality rows, solves the QP with W's rows (and
// every equality row) held as equalities, and updates the guess from the answer:
//   W ← {i ∈ W : zᵢ ≥ 0} ∪ {i ∉ W : (Cx − c)ᵢ < 0}.
// When W repeats, x is feasible, z ≥ 0 and complementary: an exact KKT point (checked with
// kkt_residuals before it is reported optimal). On contact QPs it needs a handful of solves where
// the interior point method needs 12–17 factorizations (docs/benchmarks.md, issue 20), fewer
// still from the previous time step's active set. Its convergence is guaranteed only for
// M-matrix-like problems: it can cycle, so it gives up early (iteration_limit) and callers keep
// the interior point method as the fallback.
//
// Linear algebra: an active bound row fixes its column, x_j = cᵢ/Cᵢⱼ; the matrix of the
// equality-constrained QP is H with the fixed columns and rows replaced by the identity scaled by
// H_jj. Its pattern is H's whatever W is, so it is analyzed once a solve and a new guess
// refactorizes only the supernodes of the columns whose status changed (retained update blocks,
// seed 000 §4.3). The other held rows — rows of several columns, and equalities — enter through
// their multipliers: G·z_G = c̃_G − C_G·K_F⁻¹r with G = C_G·K_F⁻¹·C_Gᵀ dense, one blocked solve.
// H_FF must be positive definite for every guess tried; a semi-definite H whose null space a
// guess leaves free ends the solve as numerical_failure (the interior point method regularizes).
#include <memory>
#include <span>
#include <vector>

#include "solvers/qp/qp_problem.hpp"

namespace cholsim::factor {
class Symbolic;
}

namespace cholsim::solvers::qp {

struct PrimalDualActiveSetOptions {
  /// Give up (iteration_limit) after this many guesses: EDGE cloth's QPs settle in 2–6 from the
  /// previous step's active set, WIRE's in up to 15; a guess costs a partial refactorization and
  /// a solve, a tenth to a twentieth of the interior point method.
  int max_iterations = 15;
  /// Give up when the number of rows entering or leaving W has not fallen below its smallest so
  /// far for this many iterations (cycling).
  int stall_iterations = 3;
  /// A row outside W enters when (Cx − c)ᵢ < −feasibility_tolerance·(1 + |cᵢ| + Σⱼ|Cᵢⱼxⱼ|).
  double feasibility_tolerance = 1e-12;
  /// Optimal only if the worst scaled KKT residual (kkt_residuals) is below this.
  double tolerance = 1e-10;
  /// Threads of the sparse factorization; 0: all hardware threads.
  int threads = 0;
};

struct PrimalDualActiveSetStats {
  int iterations = 0;            ///< guesses solved
  Index changed_columns = 0;     ///< columns refactorized for a changed status, summed (not the first)
  double analyze_seconds = 0.0;  ///< symbolic analysis of H's pattern (0 when reused)
  bool reused_analysis = false;  ///< the solver's analysis of an earlier, same-pattern H served
  double factor_seconds = 0.0;   ///< the first factorization and every refactorization
  double solve_seconds = 0.0;    ///< substitutions and the dense multiplier system
  double total_seconds = 0.0;
  /// The final guess, one flag per inequality row: pass it as the next similar solve's start.
  std::vector<char> active;
};

/// Keeps the analysis of H's pattern between solves: a simulator's step QPs share it while the
/// mesh does not change (the ordering is most of the analysis: 14 of 17 ms at n = 4,948).
class PrimalDualActiveSetSolver {
 public:
  explicit PrimalDualActiveSetSolver(PrimalDualActiveSetOptions options = {});
  /// solve_primal_dual_active_set with the kept analysis when H's pattern matches it.
  QpSolution solve(const QpProblem& problem, std::span<const char> initial_active = {},
                   PrimalDualActiveSetStats* stats = nullptr);
  [[nodiscard]] const PrimalDualActiveSetOptions& options() const { return options_; }

 private:
  PrimalDualActiveSetOptions options_;
  std::shared_ptr<const factor::Symbolic> analysis_;
};

/// Solves `problem` (check_problem first: malformed input throws std::invalid_argument, as does
/// an `initial_active` of a size other than 0 or q). `initial_active`: one flag per inequality
/// row, 1 for a row guessed active (empty: none). Returns optimal with exact multipliers, or
/// iteration_limit (W did not settle) or numerical_failure (a guess' matrix not positive
/// definite, dependent held rows, KKT check failed) with a message and x the last iterate.
QpSolution solve_primal_dual_active_set(const QpProblem& problem, const PrimalDualActiveSetOptions& options = {},
                                        std::span<const char> initial_active = {},
                                        PrimalDualActiveSetStats* stats = nullptr);

}  // namespace cholsim::solvers::qp
