#include "solvers/qp/primal_dual_active_set.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "solvers/qp/interior_point.hpp"
#include "solvers/qp/ipopt_reference.hpp"
#include "solvers/qp/qp_test_problems.hpp"

namespace cholsim::solvers::qp {
namespace {

using reference::max_relative_difference;

/// One flag per inequality row: 1 where the generator's KKT point has a positive multiplier.
std::vector<char> active_rows_of(const QpSolution& solution) {
  std::vector<char> active(solution.inequality_multipliers.size(), 0);
  for (std::size_t i = 0; i < active.size(); ++i) active[i] = solution.inequality_multipliers[i] > 0.0 ? 1 : 0;
  return active;
}

// Optimal, the KKT conditions to rounding (the method solves the final guess exactly), and the
// generator's x⋆ (unique: H positive definite).
void expect_settles_on_the_kkt_point(const test_problems::TestQp& test, const QpSolution& solution) {
  ASSERT_EQ(solution.status, QpStatus::optimal) << solution.message;
  EXPECT_LE(kkt_residuals(test.problem, solution).worst(), 1e-12);
  EXPECT_LE(max_relative_difference(solution.x, test.reference.x), 1e-9);
}

TEST(PrimalDualActiveSet, BoundConstrainedProblemsSettleOnTheKktPoint) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    const auto test = test_problems::random_qp(80, 0, 60, seed, {.entries_per_row = 1});
    PrimalDualActiveSetStats stats;
    expect_settles_on_the_kkt_point(test, solve_primal_dual_active_set(test.problem, {.threads = 1}, {}, &stats));
    EXPECT_GE(stats.iterations, 2);  // the empty guess is wrong: rows had to enter
    EXPECT_EQ(stats.active, active_rows_of(test.reference));
  }
}

TEST(PrimalDualActiveSet, GeneralRowsAndEqualitiesEnterThroughTheirMultipliers) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    const auto test = test_problems::random_qp(60, 3, 20, seed, {.entries_per_row = 3, .active_fraction = 0.3});
    const QpSolution solution = solve_primal_dual_active_set(test.problem, {.max_iterations = 30, .threads = 1});
    expect_settles_on_the_kkt_point(test, solution);
    EXPECT_LE(max_relative_difference(solution.equality_multipliers, test.reference.equality_multipliers), 1e-8);
  }
}

TEST(PrimalDualActiveSet, AgreesWithTheInteriorPointMethodOnAClothLikeQp) {
  const auto test = test_problems::cloth_like_qp(10, 10, 20, 5, {});
  const QpSolution active_set = solve_primal_dual_active_set(test.problem, {.max_iterations = 30, .threads = 1});
  ASSERT_EQ(active_set.status, QpStatus::optimal) << active_set.message;
  const InteriorPointResult interior = solve_interior_point(test.problem, {.threads = 1});
  ASSERT_EQ(interior.solution.status, QpStatus::optimal) << interior.solution.message;
  EXPECT_LE(kkt_residuals(test.problem, active_set).worst(), 1e-12);
  EXPECT_LE(max_relative_difference(active_set.x, interior.solution.x), 1e-7);
  EXPECT_LE(objective(test.problem, active_set.x), objective(test.problem, interior.solution.x) + 1e-12);
}

TEST(PrimalDualActiveSet, StartedFromTheOptimalActiveSetItSettlesInOneGuess) {
  const auto test = test_problems::random_qp(80, 0, 60, 9, {.entries_per_row = 1});
  PrimalDualActiveSetStats stats;
  expect_settles_on_the_kkt_point(
      test, solve_primal_dual_active_set(test.problem, {.threads = 1}, active_rows_of(test.reference), &stats));
  EXPECT_EQ(stats.iterations, 1);
}

TEST(PrimalDualActiveSet, TheSolverKeepsTheAnalysisWhileThePatternRepeats) {
  const auto first = test_problems::random_qp(80, 0, 60, 3, {.entries_per_row = 1});
  auto second = first;
  for (double& b : second.problem.linear) b *= 1.1;  // same pattern, another QP
  PrimalDualActiveSetSolver solver({.threads = 1});
  PrimalDualActiveSetStats stats;
  ASSERT_EQ(solver.solve(first.problem, {}, &stats).status, QpStatus::optimal);
  EXPECT_FALSE(stats.reused_analysis);
  EXPECT_GT(stats.analyze_seconds, 0.0);
  const QpSolution again = solver.solve(second.problem, {}, &stats);
  ASSERT_EQ(again.status, QpStatus::optimal) << again.message;
  EXPECT_TRUE(stats.reused_analysis);
  EXPECT_EQ(stats.analyze_seconds, 0.0);
  EXPECT_LE(kkt_residuals(second.problem, again).worst(), 1e-12);
  const auto other = test_problems::random_qp(81, 0, 60, 3, {.entries_per_row = 1});  // another pattern
  ASSERT_EQ(solver.solve(other.problem, {}, &stats).status, QpStatus::optimal);
  EXPECT_FALSE(stats.reused_analysis);
}

TEST(PrimalDualActiveSet, InfeasibleProblemsAreNeverReportedOptimal) {
  for (const auto kind : {test_problems::InfeasibleKind::inequalities, test_problems::InfeasibleKind::mixed}) {
    const auto test = test_problems::infeasible_qp(20, 5, kind);
    const QpSolution solution = solve_primal_dual_active_set(test.problem, {.threads = 1});
    EXPECT_NE(solution.status, QpStatus::optimal);
    EXPECT_FALSE(solution.message.empty());
  }
}

// H singular on constrained columns whose rows fix them at the optimum: a guess that leaves such a
// column free is factored with δI, refined, and the settled answer is still the KKT point.
TEST(PrimalDualActiveSet, SemidefiniteHessiansAreSolvedThroughTheRegularizedGuesses) {
  int regularized = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    const auto test = test_problems::random_qp(
        60, 0, 40, seed, {.hessian = test_problems::HessianShape::semidefinite, .entries_per_row = 1});
    PrimalDualActiveSetStats stats;
    const QpSolution solution = solve_primal_dual_active_set(test.problem, {.threads = 1}, {}, &stats);
    ASSERT_EQ(solution.status, QpStatus::optimal) << solution.message;
    EXPECT_LE(kkt_residuals(test.problem, solution).worst(), 1e-10);
    EXPECT_LE(max_relative_difference(solution.x, test.reference.x), 1e-7);
    regularized += stats.regularized;
  }
  EXPECT_GT(regularized, 0) << "no guess needed δI: the test no longer covers it";
}

// On full_switch_cycle_qp the plain full switch cycles through three guesses; the safeguard's
// single switches end it.
TEST(PrimalDualActiveSet, TheSafeguardEndsACycleOfThePlainFullSwitch) {
  const QpProblem problem = test_problems::full_switch_cycle_qp();

  const QpSolution plain = solve_primal_dual_active_set(problem, {.max_iterations = 30, .stall_iterations = 1000});
  EXPECT_NE(plain.status, QpStatus::optimal) << "the plain full switch settled: the test no longer shows a cycle";
  PrimalDualActiveSetStats stats;
  const QpSolution safeguarded = solve_primal_dual_active_set(problem, {.max_iterations = 30}, {}, &stats);
  ASSERT_EQ(safeguarded.status, QpStatus::optimal) << safeguarded.message;
  EXPECT_LE(kkt_residuals(problem, safeguarded).worst(), 1e-12);
  EXPECT_GT(stats.partial_switches, 0);
}

TEST(PrimalDualActiveSet, AGuessOfTheWrongSizeThrows) {
  const auto test = test_problems::random_qp(10, 0, 5, 1, {.entries_per_row = 1});
  const std::vector<char> guess(4, 0);
  EXPECT_THROW(solve_primal_dual_active_set(test.problem, {}, guess), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::solvers::qp
