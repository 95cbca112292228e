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
// M-matrix-like problems: the full switch can cycle. When the number of infeasibilities stops
// falling, fewer rows switch (stall_iterations), down to one at a time — finite for bound rows and
// a positive definite H, but possibly slow — so callers set max_iterations and keep the interior point
// method as the fallback.
//
// Linear algebra: an active bound row fixes its column, x_j = cᵢ/Cᵢⱼ; the matrix of the
// equality-constrained QP is H with the fixed columns and rows replaced by the identity scaled by
// H_jj. Its pattern is H's whatever W is, so it is analyzed once a solve and a new guess
// refactorizes only the supernodes of the columns whose status changed (retained update blocks,
// seed 000 §4.3). The other held rows — rows of several columns, and equalities — enter through
// their multipliers: G·z_G = c̃_G − C_G·K_F⁻¹r with G = C_G·K_F⁻¹·C_Gᵀ dense, one blocked solve.
// A semi-definite H whose null space a guess leaves free is factored as H_FF + δI (δ = 1e-10 of
// H's largest entry) with iterative refinement, as the interior point method does; the final
// KKT check decides whether the answer stands.
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "factor/analysis/ordering.hpp"
#include "solvers/qp/qp_problem.hpp"

namespace cholsim::factor {
class Symbolic;
}

namespace cholsim::solvers::qp {

struct PrimalDualActiveSetOptions {
  /// Give up (iteration_limit) after this many guesses; a guess costs a partial
  /// refactorization and a solve, a tenth to a twentieth of the interior point method (EDGE
  /// cloth's QPs settle in 4.3 on average from the previous step's active set, docs/benchmarks.md,
  /// issue 20).
  int max_iterations = 10;
  /// Every infeasibility (a held row with z < 0, a violated row outside W) switches while
  /// their number falls below its least so far, and for this many guesses more; past that,
  /// half as many as before switch each time, those of the largest row indices, down to one,
  /// and a new least doubles that number again (Júdice & Pires' block principal pivoting with
  /// Murty's rule, finite for bound rows and a positive definite H). 0: halve at once — on
  /// EDGE cloth's QPs the full switch after a setback mostly cycles (docs/benchmarks.md,
  /// issue 20).
  int stall_iterations = 0;
  /// A row outside W enters when (Cx − c)ᵢ < −feasibility_tolerance·(1 + |cᵢ| + Σⱼ|Cᵢⱼxⱼ|).
  double feasibility_tolerance = 1e-12;
  /// Optimal only if the worst scaled KKT residual (kkt_residuals) is below this.
  double tolerance = 1e-10;
  /// 0 (off) or a looser tolerance a settled guess is accepted at, the message saying at which
  /// residual: with δI added (a semi-definite H) refinement can stall at 1e-9 on WIRE's QPs
  /// (the interior point method's acceptable_tolerance serves the same purpose).
  double acceptable_tolerance = 0.0;
  /// Threads of the sparse factorization; 0: all hardware threads.
  int threads = 0;
  /// The fill-reducing ordering of H's pattern. Minimum degree: a simulator's QPs change
  /// pattern whenever its mesh does (EDGE cloth: nearly every step), and `automatic`'s METIS
  /// trial took 14 of 17 ms of the analysis of a 4,948-column cloth QP to keep AMD's ordering.
  factor::OrderingMethod ordering = factor::OrderingMethod::minimum_degree;
};

struct PrimalDualActiveSetStats {
  int iterations = 0;            ///< guesses solved
  int partial_switches = 0;      ///< guesses after which only some infeasibilities switched (the safeguard)
  Index changed_columns = 0;     ///< columns refactorized for a changed status, summed (not the first)
  double analyze_seconds = 0.0;  ///< symbolic analysis of H's pattern (0 when reused)
  bool reused_analysis = false;  ///< the solver's analysis of an earlier, same-pattern H served
  double factor_seconds = 0.0;   ///< the first factorization and every refactorization
  double solve_seconds = 0.0;    ///< substitutions and the dense multiplier system
  double total_seconds = 0.0;
  int regularized = 0;  ///< 1 when a guess' H_FF was not positive definite and δI was added
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
  /// PrimalDualActiveSetOptions::max_iterations of the next solves (a caller with a fallback
  /// sets it from what the fallback costs).
  void set_max_iterations(int iterations) { options_.max_iterations = iterations; }
  /// Hands over an analysis of the same pattern made elsewhere (the augmented Lagrangian
  /// method's, which polishes with this solver): used when it matches the next H, like its own.
  void use_analysis(std::shared_ptr<const factor::Symbolic> analysis) { analysis_ = std::move(analysis); }

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
