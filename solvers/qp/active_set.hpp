#pragma once
// The dual active-set method of Goldfarb & Idnani (1983, "A numerically stable dual method for
// solving strictly convex quadratic programs", Math. Programming 27) for small, dense QPs in the
// form of qp_problem.hpp.
//
// It starts at the unconstrained minimum x = H⁻¹b and adds violated inequalities one at a time
// (the most violated first), dropping active ones whose multiplier would turn negative, so every
// iterate is optimal for the constraints it holds active while the primal infeasibility shrinks.
// The active set is kept as a QR factorization of L⁻¹N (H = LLᵀ, N the active normals) in the
// product form J = L⁻ᵀQ of the paper, updated by Givens rotations. Equalities are always
// active and never dropped.
//
// Requirements and costs: H must be positive definite (a strictly convex QP) — for a merely
// semi-definite H the solver reports QpStatus::numerical_failure and names the failing pivot;
// use the interior-point back end there. It holds H, J and R densely: O(n²) memory, O(n³) for
// the Cholesky factor and O(n²) per added or dropped constraint, so it suits n up to a few
// hundred. Its strength is the warm start: a sequence of similar QPs (a simulator's time
// steps) restarts from the previous active set and needs only the changes.
#include <vector>

#include "solvers/qp/qp_problem.hpp"

namespace cholsim::solvers::qp {

struct ActiveSetOptions {
  /// Stop with QpStatus::iteration_limit after this many primal or dual steps (each step of the
  /// paper's Step 2: one full step that adds a constraint or one partial step that drops one).
  int max_iterations = 10'000;
  /// Inequality i counts as violated when (Cx − c)ᵢ < −feasibility_tolerance·(1 + |cᵢ| +
  /// Σⱼ|Cᵢⱼxⱼ|): relative to the size of the terms, so the test is scale invariant.
  double feasibility_tolerance = 1e-10;
  /// A constraint normal nᵢ counts as linearly dependent on the active ones when the part of
  /// L⁻¹nᵢ orthogonal to them is below dependence_tolerance·‖L⁻¹nᵢ‖ (the sine of the angle).
  double dependence_tolerance = 1e-10;
};

/// The active set of a previous solve: indices of inequality rows (0 ≤ i < q).
struct ActiveSetWarmStart {
  std::vector<Index> active_inequalities;
};

struct ActiveSetStats {
  int iterations = 0;               ///< primal or dual steps (the paper's Step 2)
  int constraints_added = 0;        ///< factorization updates that added a row (equalities too)
  int constraints_dropped = 0;      ///< factorization updates that dropped an inequality
  int warm_start_kept = 0;          ///< warm-start inequalities that stayed in the start set
  int dependent_rows_skipped = 0;   ///< equality or warm-start rows skipped as dependent
  double seconds = 0.0;             ///< wall time of the solve, factorization included
  /// The inequalities active at exit, in the order they were added: pass it as the warm start
  /// of the next, similar solve.
  ActiveSetWarmStart final_active_set;
};

/// Solves the strictly convex QP `problem` (H positive definite) by the Goldfarb–Idnani dual
/// active-set method. With `warm_start`, its inequalities (after the equalities, in order) form
/// the starting active set: rows that are linearly dependent on those before them are skipped,
/// then rows with negative multipliers are dropped (the most negative first) until the start is
/// dual feasible. Returns QpStatus::optimal, infeasible (a violated row that no step can satisfy:
/// the paper's Step 2(c)(i): no primal or dual step is possible; the message names the row), iteration_limit
/// (x is the last iterate) or numerical_failure (H not positive definite). Multipliers follow
/// qp_problem.hpp's convention. Throws std::invalid_argument for a malformed problem
/// (check_problem) or a warm-start index outside 0..q−1. Fills `stats` when given.
QpSolution solve_active_set(const QpProblem& problem, const ActiveSetOptions& options = {},
                            const ActiveSetWarmStart* warm_start = nullptr,
                            ActiveSetStats* stats = nullptr);

}  // namespace cholsim::solvers::qp
