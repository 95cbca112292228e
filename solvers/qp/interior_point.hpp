#pragma once
// Mehrotra predictor–corrector primal–dual interior point method for the convex QPs of
// qp_problem.hpp (Mehrotra, SIAM J. Optim. 2(4), 1992; Nocedal & Wright, Numerical
// Optimization, 2nd ed., §16.6 for QPs), with two linear-algebra back ends behind one loop.
//
//   auto result = qp::solve_interior_point(problem);             // QpBackend::automatic
//   if (result.solution.status != qp::QpStatus::optimal) { ... result.solution.message ... }
//
// Every iteration solves the Newton system of the KKT conditions with the slacks and z
// eliminated: K·dx − Eᵀdy = r₁, E·dx = r₂ with K = H + CᵀDC, D = diag(z/s). Its matrix is
// K_ρ = K + ρEᵀE + δI (the exact augmentation ρEᵀE makes it definite whenever the KKT
// matrix is nonsingular; δ ≈ 1e-12 is removed by iterative refinement), the equality
// multipliers come from the dense p×p system E·K_ρ⁻¹·Eᵀ.
//
// Back ends (QpBackend):
//  * schur_reduced — EOL cloth's QP (seed 002 eq. 2.12) constrains a few percent of the
//    unknowns. Once per solve, H is factored partially with the constrained columns as the
//    Schur set (factor/schur/, seed 004 §4.3): x₁ is eliminated exactly, leaving the
//    m-dimensional QP  min ½x₂ᵀSx₂ − b̃₂ᵀx₂  with the same constraints and multipliers
//    (S = H22 − L21L21ᵀ, b̃₂ the forward phase of b). The iterations run on it alone: each
//    adds C₂ᵀDC₂ to S through SchurSystem's low-rank update and refactors densely (m³/3);
//    the backward phase recovers x₁ at the end. Needs H11 (the unconstrained block) positive
//    definite — otherwise numerical_failure naming the column.
//  * sparse — the same iterations on the sparse K_ρ, whose pattern is fixed: analyzed and
//    factored once with retained update blocks, then refactorized per iteration with only the
//    inequality-constrained columns marked as changed (seed 000 §4.3). For large m. Its
//    equality rows cost p sparse solves per iteration (K_ρ⁻¹Eᵀ), the Schur-reduced ones p
//    dense m×m solves.
//  * automatic — sparse when m > automatic_schur_limit (default 2000: the dense m³/3
//    refactor stays below ~3 GFlop) or m > n/2 (S would be a dense copy of most of H);
//    schur_reduced up to m = 200; between, the cheaper per iteration by flops: m³/3 against
//    6× the flops of factoring H (from an analysis of H; interior_point.cpp says why 6).
//
// Infeasible and unbounded problems are detected from the iterates (Farkas certificates):
// a multiplier direction (ŷ, ẑ ≥ 0) with Eᵀŷ + Cᵀẑ ≈ 0 and eᵀŷ + cᵀẑ > 0 proves primal
// infeasibility; a direction d with Hd ≈ 0, Ed ≈ 0, Cd ≥ 0 and bᵀd > 0 proves that the
// objective is unbounded below on the (nonempty) feasible set.
#include <span>
#include <vector>

#include "solvers/qp/qp_problem.hpp"

namespace cholsim::solvers::qp {

enum class QpBackend { automatic, schur_reduced, sparse };

std::string_view to_string(QpBackend backend);

struct InteriorPointOptions {
  /// Optimal when every scaled KKT residual (kkt_residuals) of the working problem is below
  /// this.
  double tolerance = 1e-10;
  int max_iterations = 100;
  /// 0 (off) or a looser tolerance: when an iterate got within it and the iterations then
  /// diverge (the worst scaled residual rises 1000-fold above the best), reach max_iterations
  /// or fail numerically, the best such iterate is returned as optimal, the message saying at
  /// which residual. Degenerate QPs — EOL cloth on a wire, its contact and material-area rows
  /// nearly dependent — can get to 2e-7 and then take a Newton step that throws the iterate
  /// back to 0.2, needing a hundred more iterations.
  double acceptable_tolerance = 0.0;
  QpBackend backend = QpBackend::automatic;
  /// automatic picks schur_reduced up to this many constrained columns (file comment).
  Index automatic_schur_limit = 2000;
  /// Threads of the factorizations (sparse and dense); 0: all hardware threads.
  int threads = 0;
  /// The relative size below which a certificate's residuals count as zero (the direction
  /// normalized to ∞-norm 1 and the data to its largest entry): infeasible then means that no
  /// x with ‖x‖ below about 1/certificate_tolerance is feasible.
  double certificate_tolerance = 1e-9;
  /// Optional x (size n) that shifts the starting point; empty for Mehrotra's cold start.
  std::vector<double> warm_start = {};
};

/// One iteration's figures, for studying convergence. The last record holds the final
/// iterate's μ and residual only (no step was taken from it).
struct InteriorPointIteration {
  double complementarity = 0.0;  ///< μ = sᵀz/q before the step
  double residual = 0.0;         ///< worst scaled KKT residual before the step
  double centering = 0.0;        ///< σ = (μ_affine/μ)³
  double step = 0.0;             ///< α, the step length taken
  int refinement_steps = 0;      ///< iterative refinement of the corrector solve
};

struct InteriorPointStats {
  QpBackend backend = QpBackend::automatic;  ///< the one used (never automatic)
  Index variables = 0;                       ///< n
  Index schur_size = 0;                      ///< m, constrained columns (schur_reduced; 0 for sparse)
  int iterations = 0;
  double analyze_seconds = 0.0;              ///< symbolic analysis (ordering) once per solve
  /// schur_reduced: the one-off partial factorization (L11, L21 and S) and the forward and
  /// backward phases; sparse: the first factorization of K_ρ.
  double setup_factorization_seconds = 0.0;
  double phase_seconds = 0.0;                ///< schur_reduced: forward + backward phase
  double refactor_seconds = 0.0;             ///< all per-iteration refactorizations of K_ρ
  double max_refactor_seconds = 0.0;         ///< the slowest of them
  int refactorizations = 0;                  ///< including retries with a larger δ
  double solve_seconds = 0.0;                ///< all solves with K_ρ (triangular substitutions)
  double total_seconds = 0.0;
  double equality_penalty = 0.0;             ///< ρ of K_ρ
  double regularization = 0.0;               ///< the last δ used
  KktResiduals residuals;                    ///< of the returned solution, original problem
  std::vector<InteriorPointIteration> history;
};

struct InteriorPointResult {
  QpSolution solution;
  InteriorPointStats stats;
};

/// Solves `problem` (check_problem first: malformed input throws std::invalid_argument, as
/// does a warm start of the wrong size). Numerical outcomes — infeasible, unbounded,
/// iteration_limit, numerical_failure — come back in solution.status with a message.
InteriorPointResult solve_interior_point(const QpProblem& problem, const InteriorPointOptions& options = {});

}  // namespace cholsim::solvers::qp
