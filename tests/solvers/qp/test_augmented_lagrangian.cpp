#include "solvers/qp/augmented_lagrangian.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "solvers/qp/interior_point.hpp"
#include "solvers/qp/ipopt_reference.hpp"
#include "solvers/qp/primal_dual_active_set.hpp"
#include "solvers/qp/qp_test_problems.hpp"

namespace cholsim::solvers::qp {
namespace {

using reference::max_relative_difference;

/// Without polishing: the multipliers converge, not the active set method's exact solve.
constexpr AugmentedLagrangianOptions kUnpolished{.polish_threshold = 0.0, .threads = 1};
constexpr AugmentedLagrangianOptions kPolished{.threads = 1};

void expect_reaches_the_kkt_point(const test_problems::TestQp& test, const QpSolution& solution, double tolerance) {
  ASSERT_EQ(solution.status, QpStatus::optimal) << solution.message;
  EXPECT_LE(kkt_residuals(test.problem, solution).worst(), tolerance);
  EXPECT_LE(max_relative_difference(solution.x, test.reference.x), 1e-7);
}

TEST(AugmentedLagrangian, BoundRowsConvergeToTheKktPoint) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    const auto test = test_problems::random_qp(80, 0, 60, seed, {.entries_per_row = 1});
    AugmentedLagrangianStats stats;
    expect_reaches_the_kkt_point(test, solve_augmented_lagrangian(test.problem, kUnpolished, {}, &stats), 1e-10);
    EXPECT_FALSE(stats.polished);
    EXPECT_EQ(stats.polish_attempts, 0);
    EXPECT_GE(stats.newton_steps, 1);
  }
}

// Rows of several columns enter through the Woodbury identity, equalities are always held.
TEST(AugmentedLagrangian, GeneralRowsAndEqualitiesConvergeToTheKktPoint) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    const auto test = test_problems::random_qp(60, 3, 20, seed, {.entries_per_row = 3, .active_fraction = 0.3});
    const QpSolution solution = solve_augmented_lagrangian(test.problem, kUnpolished);
    expect_reaches_the_kkt_point(test, solution, 1e-10);
    EXPECT_LE(max_relative_difference(solution.equality_multipliers, test.reference.equality_multipliers), 1e-6);
    EXPECT_LE(max_relative_difference(solution.inequality_multipliers, test.reference.inequality_multipliers), 1e-6);
  }
}

// Polishing hands the identified active set to the active set method, whose exact solve gives
// the KKT conditions to rounding and multipliers exactly zero off the active set.
TEST(AugmentedLagrangian, PolishingEndsWithTheActiveSetMethodsExactSolve) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    const auto test = test_problems::random_qp(60, 3, 20, seed, {.entries_per_row = 3, .active_fraction = 0.3});
    AugmentedLagrangianStats stats;
    const QpSolution solution = solve_augmented_lagrangian(test.problem, kPolished, {}, &stats);
    expect_reaches_the_kkt_point(test, solution, 1e-12);
    EXPECT_TRUE(stats.polished);
    EXPECT_GE(stats.polish_iterations, 1);
    for (std::size_t i = 0; i < solution.inequality_multipliers.size(); ++i) {
      if (test.reference.inequality_multipliers[i] == 0.0) {
        EXPECT_EQ(solution.inequality_multipliers[i], 0.0) << i;
      }
    }
  }
}

// The 3 × 3 problem on which the primal–dual active set method's plain full switch cycles
// (test_primal_dual_active_set.cpp): a descent method with an exact line search cannot.
TEST(AugmentedLagrangian, SolvesTheQpOnWhichThePlainFullSwitchCycles) {
  const QpProblem problem = test_problems::full_switch_cycle_qp();
  ASSERT_NE(solve_primal_dual_active_set(problem, {.max_iterations = 30, .stall_iterations = 1000}).status,
            QpStatus::optimal)
      << "the plain full switch settled: the test no longer shows a cycle";

  const QpSolution solution = solve_augmented_lagrangian(problem, kUnpolished);
  ASSERT_EQ(solution.status, QpStatus::optimal) << solution.message;
  EXPECT_LE(kkt_residuals(problem, solution).worst(), 1e-10);
  const InteriorPointResult interior = solve_interior_point(problem, {.threads = 1});
  ASSERT_EQ(interior.solution.status, QpStatus::optimal);
  EXPECT_LE(max_relative_difference(solution.x, interior.solution.x), 1e-8);
}

// H singular on constrained columns: the proximal term keeps every Newton matrix positive
// definite, and the answer is still the KKT point.
TEST(AugmentedLagrangian, SemidefiniteHessiansAreSolvedThroughTheProximalTerm) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    const auto test = test_problems::random_qp(
        60, 0, 40, seed, {.hessian = test_problems::HessianShape::semidefinite, .entries_per_row = 1});
    expect_reaches_the_kkt_point(test, solve_augmented_lagrangian(test.problem, kUnpolished), 1e-10);
  }
}

// Redundant active rows (LICQ fails): x⋆ and the objective are unique, the multipliers are not.
TEST(AugmentedLagrangian, DegenerateProblemsReachTheUniqueMinimizer) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    const auto test = test_problems::degenerate_qp(50, 2, 20, seed);
    const QpSolution solution = solve_augmented_lagrangian(test.problem, kPolished);
    expect_reaches_the_kkt_point(test, solution, 1e-10);
    EXPECT_NEAR(objective(test.problem, solution.x), objective(test.problem, test.reference.x),
                1e-9 * (1.0 + std::abs(objective(test.problem, test.reference.x))));
  }
}

TEST(AugmentedLagrangian, AgreesWithTheInteriorPointMethodOnAClothLikeQp) {
  const auto test = test_problems::cloth_like_qp(10, 10, 20, 5, {.equality_nodes = 3});
  const QpSolution solution = solve_augmented_lagrangian(test.problem, kUnpolished);
  ASSERT_EQ(solution.status, QpStatus::optimal) << solution.message;
  const InteriorPointResult interior = solve_interior_point(test.problem, {.threads = 1});
  ASSERT_EQ(interior.solution.status, QpStatus::optimal) << interior.solution.message;
  EXPECT_LE(kkt_residuals(test.problem, solution).worst(), 1e-10);
  EXPECT_LE(max_relative_difference(solution.x, interior.solution.x), 1e-7);
}

TEST(AugmentedLagrangian, AWarmStartNearTheSolutionTakesFewerNewtonSteps) {
  const auto test = test_problems::random_qp(80, 0, 60, 4, {.entries_per_row = 1});
  AugmentedLagrangianStats cold, warm;
  ASSERT_EQ(solve_augmented_lagrangian(test.problem, kUnpolished, {}, &cold).status, QpStatus::optimal);
  const QpSolution solution = solve_augmented_lagrangian(test.problem, kUnpolished, test.reference.x, &warm);
  expect_reaches_the_kkt_point(test, solution, 1e-10);
  EXPECT_LT(warm.newton_steps, cold.newton_steps);
}

TEST(AugmentedLagrangian, InfeasibleProblemsAreNeverReportedOptimal) {
  for (const auto kind : {test_problems::InfeasibleKind::inequalities, test_problems::InfeasibleKind::equalities,
                          test_problems::InfeasibleKind::mixed}) {
    const auto test = test_problems::infeasible_qp(20, 5, kind);
    const QpSolution solution = solve_augmented_lagrangian(test.problem, kPolished);
    EXPECT_NE(solution.status, QpStatus::optimal);
    EXPECT_FALSE(solution.message.empty());
  }
}

TEST(AugmentedLagrangian, TheSolverKeepsTheAnalysisWhileThePatternRepeats) {
  const auto first = test_problems::random_qp(80, 0, 60, 3, {.entries_per_row = 1});
  auto second = first;
  for (double& b : second.problem.linear) b *= 1.1;  // same pattern, another QP
  AugmentedLagrangianSolver solver(kUnpolished);
  AugmentedLagrangianStats stats;
  ASSERT_EQ(solver.solve(first.problem, {}, &stats).status, QpStatus::optimal);
  EXPECT_GT(stats.analyze_seconds, 0.0);
  const QpSolution again = solver.solve(second.problem, {}, &stats);
  ASSERT_EQ(again.status, QpStatus::optimal) << again.message;
  EXPECT_EQ(stats.analyze_seconds, 0.0);
  EXPECT_LE(kkt_residuals(second.problem, again).worst(), 1e-10);
}

TEST(AugmentedLagrangian, AStartOfTheWrongSizeThrows) {
  const auto test = test_problems::random_qp(10, 0, 5, 1, {.entries_per_row = 1});
  const std::vector<double> start(4, 0.0);
  EXPECT_THROW(solve_augmented_lagrangian(test.problem, {}, start), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::solvers::qp
