#include "solvers/qp/active_set.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "solvers/qp/ipopt_reference.hpp"
#include "solvers/qp/qp_test_problems.hpp"

namespace cholsim::solvers::qp {
namespace {

using reference::max_relative_difference;

constexpr double kkt_tolerance = 1e-8;

// The solution is optimal, meets the KKT conditions and has the x of the generator's KKT point
// (unique: H is positive definite).
void expect_solves(const test_problems::TestQp& test, const QpSolution& solution) {
  ASSERT_EQ(solution.status, QpStatus::optimal) << solution.message;
  const KktResiduals residuals = kkt_residuals(test.problem, solution);
  EXPECT_LE(residuals.worst(), kkt_tolerance)
      << "stationarity " << residuals.stationarity << ", equality " << residuals.equality
      << ", inequality " << residuals.inequality << ", dual sign " << residuals.dual_sign
      << ", complementarity " << residuals.complementarity;
  EXPECT_LE(max_relative_difference(solution.x, test.reference.x), 1e-8);
}

/// The same problem with b and c moved by up to `size` (relative to 1 + |entry|): the next QP of
/// a sequence, as in a simulator's next time step.
QpProblem perturbed(QpProblem problem, double size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (double& value : problem.linear) value += size * unit(rng) * (1.0 + std::abs(value));
  for (double& value : problem.inequality_rhs) value += size * unit(rng) * (1.0 + std::abs(value));
  return problem;
}

/// Projection-like QP: H tridiagonal (3 on the diagonal, −1 beside it), the unconstrained
/// minimum H⁻¹b at distance ‖b‖ = `distance` in a random direction, and q random halfspaces
/// aᵢᵀx ≤ 1 (written −aᵢᵀx ≥ −1) around the origin, with optionally the equality Σⱼxⱼ = 0.
/// Many rows are violated at the start and inactive at the end, so the dual method takes
/// partial steps that drop rows — the random KKT-point problems rarely need any.
QpProblem polytope_qp(Index n, Index q, double distance, bool with_equality, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  QpProblem problem;
  linalg::Triplets hessian;
  for (Index i = 0; i < n; ++i) {
    hessian.add(i, i, 3.0);
    if (i + 1 < n) hessian.add(i + 1, i, -1.0);
  }
  problem.hessian = linalg::symmetric_from_triplets(n, hessian);
  problem.linear.resize(static_cast<std::size_t>(n));
  double squared_norm = 0.0;
  for (double& value : problem.linear) {
    value = normal(rng);
    squared_norm += value * value;
  }
  for (double& value : problem.linear) value *= distance / std::sqrt(squared_norm);
  linalg::Triplets halfspaces;
  for (Index row = 0; row < q; ++row) {
    for (Index column = 0; column < n; ++column) halfspaces.add(row, column, -normal(rng));
  }
  problem.inequality = linalg::csc_from_triplets(q, n, halfspaces);
  problem.inequality_rhs.assign(static_cast<std::size_t>(q), -1.0);
  linalg::Triplets sum;
  for (Index column = 0; column < n && with_equality; ++column) sum.add(0, column, 1.0);
  problem.equality = linalg::csc_from_triplets(with_equality ? 1 : 0, n, sum);
  problem.equality_rhs.assign(with_equality ? 1U : 0U, 0.0);
  return problem;
}

TEST(QpActiveSet, HandBuiltPartialStepDropsTheFirstRow) {
  // Project 0 onto {x₁ + x₂ ≥ 4, x₁ ≥ 2.5, x₂ ≥ 2.5}: the first row is the most violated and is
  // added first, then x₂ ≥ 2.5 lies in the span of the two active rows and the dual step drops
  // it (GI Step 2(c)(ii), a step in the dual space only). Answer x = (2.5, 2.5), z = (0, 2.5, 2.5).
  QpProblem problem;
  linalg::Triplets identity;
  identity.add(0, 0, 1.0);
  identity.add(1, 1, 1.0);
  problem.hessian = linalg::symmetric_from_triplets(2, identity);
  problem.linear = {0.0, 0.0};
  linalg::Triplets rows;
  rows.add(0, 0, 1.0);
  rows.add(0, 1, 1.0);
  rows.add(1, 0, 1.0);
  rows.add(2, 1, 1.0);
  problem.inequality = linalg::csc_from_triplets(3, 2, rows);
  problem.inequality_rhs = {4.0, 2.5, 2.5};
  problem.equality = linalg::csc_from_triplets(0, 2, {});
  ActiveSetStats stats;
  const QpSolution solution = solve_active_set(problem, {}, nullptr, &stats);
  ASSERT_EQ(solution.status, QpStatus::optimal) << solution.message;
  EXPECT_EQ(stats.constraints_dropped, 1);
  EXPECT_LE(max_relative_difference(solution.x, std::vector<double>{2.5, 2.5}), 1e-14);
  EXPECT_LE(max_relative_difference(solution.inequality_multipliers, std::vector<double>{0.0, 2.5, 2.5}), 1e-14);
}

TEST(QpActiveSet, PolytopeProblemsWithManyDropsMeetKkt) {
  int drops = 0;
  for (const bool with_equality : {false, true}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      const QpProblem problem = polytope_qp(20, 120, 20.0, with_equality, seed);
      ActiveSetStats stats;
      const QpSolution solution = solve_active_set(problem, {}, nullptr, &stats);
      ASSERT_EQ(solution.status, QpStatus::optimal) << solution.message;
      EXPECT_LE(kkt_residuals(problem, solution).worst(), kkt_tolerance);
      drops += stats.constraints_dropped;
    }
  }
  EXPECT_GT(drops, 8) << "the problems should exercise the partial steps";
}

TEST(QpActiveSet, WarmStartedSequenceOfMovingProblemsStaysOptimalInFewerIterations) {
  // A simulator-like sequence: the unconstrained minimum turns a little each step, so the
  // active set changes by a few rows between consecutive solves.
  QpProblem problem = polytope_qp(20, 120, 20.0, true, 9);
  const std::vector<double> start = problem.linear;
  ActiveSetWarmStart previous;
  int warm_iterations = 0;
  int cold_iterations = 0;
  for (int step = 0; step < 10; ++step) {
    const double angle = 0.03 * step;
    for (std::size_t i = 0; i + 1 < start.size(); i += 2) {
      problem.linear[i] = std::cos(angle) * start[i] - std::sin(angle) * start[i + 1];
      problem.linear[i + 1] = std::sin(angle) * start[i] + std::cos(angle) * start[i + 1];
    }
    ActiveSetStats cold_stats;
    ActiveSetStats warm_stats;
    const QpSolution cold = solve_active_set(problem, {}, nullptr, &cold_stats);
    const QpSolution warm = solve_active_set(problem, {}, step > 0 ? &previous : nullptr, &warm_stats);
    ASSERT_EQ(warm.status, QpStatus::optimal) << "step " << step << ": " << warm.message;
    EXPECT_LE(kkt_residuals(problem, warm).worst(), kkt_tolerance) << "step " << step;
    EXPECT_LE(max_relative_difference(warm.x, cold.x), 1e-10) << "step " << step;
    previous = warm_stats.final_active_set;
    warm_iterations += warm_stats.iterations;
    cold_iterations += cold_stats.iterations;
  }
  EXPECT_LT(2 * warm_iterations, cold_iterations);
}

TEST(QpActiveSet, RandomDefiniteProblemsMeetKktWithAndWithoutEqualities) {
  for (const Index equalities : {0, 6}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      const auto test = test_problems::random_qp(40, equalities, 50, seed);
      ActiveSetStats stats;
      expect_solves(test, solve_active_set(test.problem, {}, nullptr, &stats));
      EXPECT_EQ(stats.final_active_set.active_inequalities.size(),
                static_cast<std::size_t>(std::count_if(
                    test.reference.inequality_multipliers.begin(),
                    test.reference.inequality_multipliers.end(), [](double z) { return z > 0.0; })))
          << "with strict complementarity the active set is the rows with z⋆ > 0";
    }
  }
}

TEST(QpActiveSet, WeaklyActiveAndRedundantRowsStillMeetKkt) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const auto degenerate = test_problems::degenerate_qp(30, 3, 30, seed);
    expect_solves(degenerate, solve_active_set(degenerate.problem));
    const auto weak = test_problems::random_qp(30, 2, 40, seed, {.weakly_active_fraction = 0.5});
    expect_solves(weak, solve_active_set(weak.problem));
  }
}

TEST(QpActiveSet, EqualityOnlyProblemsAreSolvedWithoutIterations) {
  const auto test = test_problems::random_qp(30, 10, 0, 7);
  ActiveSetStats stats;
  expect_solves(test, solve_active_set(test.problem, {}, nullptr, &stats));
  EXPECT_EQ(stats.iterations, 0);
  EXPECT_EQ(stats.constraints_added, 10);
}

TEST(QpActiveSet, ConsistentDuplicateEqualityIsSkippedAsDependent) {
  auto test = test_problems::random_qp(20, 3, 10, 11);
  // Append twice row 0 of E (with twice its right-hand side): consistent but dependent.
  linalg::Triplets entries;
  const auto& e = test.problem.equality;
  for (Index column = 0; column < e.cols; ++column) {
    for (auto k = e.col_ptr[static_cast<std::size_t>(column)]; k < e.col_ptr[static_cast<std::size_t>(column) + 1]; ++k) {
      const Index row = e.row_idx[static_cast<std::size_t>(k)];
      entries.add(row, column, e.values[static_cast<std::size_t>(k)]);
      if (row == 0) entries.add(e.rows, column, 2.0 * e.values[static_cast<std::size_t>(k)]);
    }
  }
  test.problem.equality = linalg::csc_from_triplets(e.rows + 1, e.cols, entries);
  test.problem.equality_rhs.push_back(2.0 * test.problem.equality_rhs[0]);
  test.reference.equality_multipliers.push_back(0.0);
  ActiveSetStats stats;
  expect_solves(test, solve_active_set(test.problem, {}, nullptr, &stats));
  EXPECT_EQ(stats.dependent_rows_skipped, 1);
}

TEST(QpActiveSet, ClothLikeVelocityQpMeetsKkt) {
  const auto test = test_problems::cloth_like_qp(8, 8, 12, 3, {.equality_nodes = 2});
  expect_solves(test, solve_active_set(test.problem));
}

TEST(QpActiveSet, InfeasibleProblemsAreReported) {
  for (const auto kind : {test_problems::InfeasibleKind::inequalities,
                          test_problems::InfeasibleKind::equalities,
                          test_problems::InfeasibleKind::mixed}) {
    const auto test = test_problems::infeasible_qp(20, 5, kind);
    const QpSolution solution = solve_active_set(test.problem);
    EXPECT_EQ(solution.status, QpStatus::infeasible) << to_string(solution.status);
    EXPECT_FALSE(solution.message.empty());
  }
}

TEST(QpActiveSet, SemidefiniteHessianIsANumericalFailureWithAMessage) {
  const auto test = test_problems::random_qp(20, 4, 10, 2, {.hessian = test_problems::HessianShape::semidefinite});
  const QpSolution solution = solve_active_set(test.problem);
  EXPECT_EQ(solution.status, QpStatus::numerical_failure);
  EXPECT_NE(solution.message.find("not positive definite"), std::string::npos) << solution.message;
}

TEST(QpActiveSet, WarmStartFromThePreviousSolveIsFasterAndGivesTheSameAnswer) {
  const auto test = test_problems::random_qp(60, 5, 80, 21);
  ActiveSetStats previous;
  ASSERT_EQ(solve_active_set(test.problem, {}, nullptr, &previous).status, QpStatus::optimal);
  for (const double size : {1e-4, 1e-2}) {
    const QpProblem next = perturbed(test.problem, size, 5);
    ActiveSetStats cold_stats;
    ActiveSetStats warm_stats;
    const QpSolution cold = solve_active_set(next, {}, nullptr, &cold_stats);
    const QpSolution warm = solve_active_set(next, {}, &previous.final_active_set, &warm_stats);
    ASSERT_EQ(cold.status, QpStatus::optimal) << cold.message;
    ASSERT_EQ(warm.status, QpStatus::optimal) << warm.message;
    EXPECT_LE(kkt_residuals(next, warm).worst(), kkt_tolerance);
    EXPECT_LE(max_relative_difference(warm.x, cold.x), 1e-10);
    EXPECT_LE(max_relative_difference(warm.inequality_multipliers, cold.inequality_multipliers), 1e-8);
    EXPECT_LT(warm_stats.iterations, cold_stats.iterations) << "perturbation " << size;
    EXPECT_LE(warm_stats.constraints_added + warm_stats.constraints_dropped,
              cold_stats.constraints_added + cold_stats.constraints_dropped);
    EXPECT_GT(warm_stats.warm_start_kept, 0);
  }
}

TEST(QpActiveSet, WarmStartFromAWrongActiveSetStillSolves) {
  // Every inequality as the start: more rows than variables, so dependent ones are skipped and
  // those with negative multipliers dropped before the dual iteration starts.
  const auto test = test_problems::random_qp(25, 3, 40, 8);
  ActiveSetWarmStart everything;
  for (Index i = 39; i >= 0; --i) everything.active_inequalities.push_back(i);
  ActiveSetStats stats;
  expect_solves(test, solve_active_set(test.problem, {}, &everything, &stats));
  EXPECT_GT(stats.dependent_rows_skipped, 0);
  EXPECT_GT(stats.constraints_dropped, 0);
}

TEST(QpActiveSet, IterationLimitIsReported) {
  const auto test = test_problems::random_qp(30, 0, 40, 4);
  ActiveSetStats stats;
  const QpSolution solution = solve_active_set(test.problem, {.max_iterations = 2}, nullptr, &stats);
  EXPECT_EQ(solution.status, QpStatus::iteration_limit);
  EXPECT_EQ(stats.iterations, 2);
  EXPECT_EQ(solution.x.size(), 30U);
}

TEST(QpActiveSet, BadInputThrows) {
  const auto test = test_problems::random_qp(10, 2, 5, 1);
  const ActiveSetWarmStart out_of_range{{0, 5}};
  EXPECT_THROW((void)solve_active_set(test.problem, {}, &out_of_range), std::invalid_argument);
  QpProblem short_linear = test.problem;
  short_linear.linear.pop_back();
  EXPECT_THROW((void)solve_active_set(short_linear), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::solvers::qp
