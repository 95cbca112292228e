#pragma once
// Generators of test QPs for the solvers of solvers/qp/.
//
// Every feasible, bounded problem is built backwards from a KKT point: pick x⋆, the
// multipliers y⋆ and z⋆ ≥ 0 and the slacks (zero where a constraint is active, z⋆ = 0
// where it is not), then set e = E x⋆, c = C x⋆ − slack and b = H x⋆ − Eᵀy⋆ − Cᵀz⋆. So
// x⋆ is optimal by construction (the KKT conditions of a convex QP are sufficient), and
// `reference` is an independent check of any solver: its objective is the optimal value
// whatever H's rank, and with H positive definite (or the null space of H fixed by the
// constraints) and strict complementarity, x⋆ is the unique minimizer.
#include <cstdint>

#include "solvers/qp/qp_problem.hpp"

namespace cholsim::solvers::qp::test_problems {

struct TestQp {
  QpProblem problem;
  /// A KKT point of `problem` (status optimal), or an empty solution (status infeasible /
  /// unbounded) for the problems that have none.
  QpSolution reference;
};

enum class HessianShape {
  /// Banded, strictly diagonally dominant with a positive diagonal: positive definite.
  banded_definite,
  /// The same with some constrained columns (rows and columns) zeroed, their diagonal kept
  /// as explicit zeros: positive semi-definite and singular. Only constrained columns are
  /// zeroed, so the unconstrained block H11 stays positive definite (the Schur-reduced
  /// solver factors it): at most a quarter of them, chosen among the pivot columns of the
  /// equality rows and strictly active inequalities, whose diagonally dominant pivots fix
  /// that null space — x⋆ stays the unique minimizer.
  semidefinite,
};

struct RandomQpOptions {
  HessianShape hessian = HessianShape::banded_definite;
  Index bandwidth = 3;            ///< off-diagonals of H on each side of the diagonal
  Index entries_per_row = 3;      ///< nonzeros per constraint row (at most constrained_count)
  /// Columns the constraints may touch, drawn at random: 0 means all n. Their number
  /// bounds the Schur size of the Schur-reduced back end.
  Index constrained_count = 0;
  double active_fraction = 0.5;   ///< inequalities with zero slack at x⋆
  /// Of the active inequalities, the fraction with z⋆ = 0 (weakly active: no strict
  /// complementarity, a degenerate optimum).
  double weakly_active_fraction = 0.0;
};

/// A random QP with n variables, p equality rows (full row rank: each row has its own
/// dominant pivot column, so p ≤ constrained columns) and q inequality rows, with its
/// constructed KKT point. The active inequalities get pivot columns too while columns last,
/// so with p + active ≤ constrained columns the active rows are linearly independent (LICQ)
/// and the multipliers unique. Deterministic in `seed`. Throws std::invalid_argument for
/// impossible sizes.
TestQp random_qp(Index n, Index p, Index q, std::uint64_t seed, const RandomQpOptions& options = {});

/// random_qp plus redundant constraints at the optimum: duplicates of active inequality
/// rows, the sum of two active rows, and a weakly active fraction of one half. The KKT
/// point is kept (the redundant rows get zero multipliers); the multipliers are no longer
/// unique (LICQ fails), x⋆ and the objective still are (H positive definite).
TestQp degenerate_qp(Index n, Index p, Index q, std::uint64_t seed);

enum class InfeasibleKind {
  inequalities,  ///< x_j ≥ 1 and −x_j ≥ 0
  equalities,    ///< two copies of an equality row with different right-hand sides
  mixed,         ///< x_j = 0 and x_j ≥ 1
};

/// A random QP (n ≥ 4) with an inconsistent pair of constraints added on one constrained
/// column; reference.status is infeasible.
TestQp infeasible_qp(Index n, std::uint64_t seed, InfeasibleKind kind = InfeasibleKind::inequalities);

/// A random QP (n ≥ 4) whose H has a zero row and column j that appears only in the
/// inequality x_j ≥ −1, with b_j = 1: the objective −x_j + … decreases without bound along
/// +e_j, which the constraints do not block. reference.status is unbounded.
TestQp unbounded_qp(Index n, std::uint64_t seed);

struct ClothQpOptions {
  Index equality_nodes = 0;       ///< constrained nodes held by equalities (pinned: 3 rows each)
  double active_fraction = 0.5;   ///< contact inequalities active at x⋆
  double time_step = 1.0 / 60.0;  ///< h of H = M + h²K (seed 002 eq. 2.12)
};

/// The shape of EOL cloth's velocity QP (seed 002 eq. 2.12): a grid of nx × ny nodes with
/// 3 DOFs each (n = 3·nx·ny), H = M + h²K with a lumped mass and edge springs (block
/// banded, positive definite), and `constrained_nodes` nodes drawn at random — a few
/// percent — carrying the constraints: one contact inequality nᵀv_node ≥ c each (a random
/// unit normal), the first equality_nodes of them pinned instead (v_node = given). All
/// other DOFs are unconstrained. The Schur set has 3·constrained_nodes columns.
TestQp cloth_like_qp(Index nx, Index ny, Index constrained_nodes, std::uint64_t seed,
                     const ClothQpOptions& options = {});

/// min ½xᵀHx − bᵀx s.t. x ≥ 0 with H positive definite (eigenvalues ≈ 0.5, 4.4, 31) but no
/// M-matrix: from the empty guess the primal–dual active set method's plain full switch cycles
/// through three guesses (found by searching small integer problems).
QpProblem full_switch_cycle_qp();

}  // namespace cholsim::solvers::qp::test_problems
