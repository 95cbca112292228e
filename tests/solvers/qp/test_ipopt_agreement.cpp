// The QP back ends against Ipopt, an independent interior-point code: same x and objective
// everywhere, same multipliers where they are unique (active gradients independent and strict
// complementarity).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "solvers/qp/active_set.hpp"
#include "solvers/qp/interior_point.hpp"
#include "solvers/qp/ipopt_reference.hpp"
#include "solvers/qp/qp_test_problems.hpp"

namespace cholsim::solvers::qp {
namespace {

using reference::max_relative_difference;
using reference::solve_with_ipopt;

constexpr double agreement = 1e-6;

void expect_same_point(const QpProblem& problem, const QpSolution& solution, const QpSolution& ipopt,
                       double x_agreement = agreement) {
  ASSERT_EQ(solution.status, QpStatus::optimal) << solution.message;
  ASSERT_EQ(ipopt.status, QpStatus::optimal) << ipopt.message;
  EXPECT_LE(max_relative_difference(solution.x, ipopt.x), x_agreement);
  const double objective_value = objective(problem, solution.x);
  EXPECT_NEAR(objective_value, objective(problem, ipopt.x), agreement * (1.0 + std::abs(objective_value)));
}

void expect_same_multipliers(const QpSolution& solution, const QpSolution& ipopt) {
  EXPECT_LE(max_relative_difference(solution.equality_multipliers, ipopt.equality_multipliers), agreement);
  EXPECT_LE(max_relative_difference(solution.inequality_multipliers, ipopt.inequality_multipliers), agreement);
}

TEST(QpIpoptReference, ItsAnswerMeetsKktInOurSignConvention) {
  // Checks the conversion of Ipopt's multipliers: a wrong sign breaks stationarity.
  const auto test = test_problems::random_qp(30, 5, 30, 3);
  const QpSolution ipopt = solve_with_ipopt(test.problem);
  ASSERT_EQ(ipopt.status, QpStatus::optimal) << ipopt.message;
  EXPECT_LE(kkt_residuals(test.problem, ipopt).worst(), 1e-8);
  EXPECT_LE(max_relative_difference(ipopt.x, test.reference.x), agreement);
  expect_same_multipliers(ipopt, test.reference);
}

TEST(QpIpoptAgreement, ActiveSetOnRandomDefiniteProblems) {
  for (const Index equalities : {0, 5}) {
    for (std::uint64_t seed = 11; seed <= 13; ++seed) {
      const auto test = test_problems::random_qp(40, equalities, 40, seed);
      const QpSolution ipopt = solve_with_ipopt(test.problem);
      const QpSolution active_set = solve_active_set(test.problem);
      expect_same_point(test.problem, active_set, ipopt);
      expect_same_multipliers(active_set, ipopt);
    }
  }
}

TEST(QpIpoptAgreement, ActiveSetOnClothLikeProblem) {
  const auto test = test_problems::cloth_like_qp(6, 6, 8, 2, {.equality_nodes = 1});
  const QpSolution ipopt = solve_with_ipopt(test.problem);
  const QpSolution active_set = solve_active_set(test.problem);
  expect_same_point(test.problem, active_set, ipopt);
  expect_same_multipliers(active_set, ipopt);
}

// Redundant and weakly active rows: the multipliers are not unique, x and the objective are.
// Without strict complementarity an interior point's x is off by about √μ, so Ipopt runs to
// tol 1e-14 here (x to ~4e-8; at its default 1e-12, ~5e-7).
constexpr reference::IpoptReferenceOptions degenerate_ipopt{.tolerance = 1e-14};

TEST(QpIpoptAgreement, ActiveSetOnDegenerateProblemsAgreesOnXAndObjective) {
  for (std::uint64_t seed = 21; seed <= 23; ++seed) {
    const auto test = test_problems::degenerate_qp(30, 3, 30, seed);
    expect_same_point(test.problem, solve_active_set(test.problem),
                      solve_with_ipopt(test.problem, degenerate_ipopt));
  }
}

constexpr test_problems::InfeasibleKind infeasible_kinds[] = {
    test_problems::InfeasibleKind::inequalities, test_problems::InfeasibleKind::equalities,
    test_problems::InfeasibleKind::mixed};

TEST(QpIpoptAgreement, ActiveSetAndIpoptBothReportInfeasibleProblems) {
  for (const auto kind : infeasible_kinds) {
    const auto test = test_problems::infeasible_qp(12, 6, kind);
    EXPECT_EQ(solve_with_ipopt(test.problem).status, QpStatus::infeasible);
    EXPECT_EQ(solve_active_set(test.problem).status, QpStatus::infeasible);
  }
}

// The interior-point solver, each back end, on the same kinds of problem plus positive
// semi-definite H (which the active-set method does not take).
class QpIpoptAgreementInteriorPoint : public ::testing::TestWithParam<QpBackend> {
 protected:
  [[nodiscard]] QpSolution solve(const QpProblem& problem) const {
    InteriorPointOptions options;
    options.backend = GetParam();
    return solve_interior_point(problem, options).solution;
  }
};

TEST_P(QpIpoptAgreementInteriorPoint, RandomDefiniteAndSemidefiniteProblems) {
  for (const auto hessian : {test_problems::HessianShape::banded_definite, test_problems::HessianShape::semidefinite}) {
    for (std::uint64_t seed = 31; seed <= 32; ++seed) {
      // 4 + 12 active rows on 30 constrained columns: independent, so the multipliers are unique.
      const auto test = test_problems::random_qp(60, 4, 24, seed, {.hessian = hessian, .constrained_count = 30});
      const QpSolution ipopt = solve_with_ipopt(test.problem);
      const QpSolution interior_point = solve(test.problem);
      expect_same_point(test.problem, interior_point, ipopt);
      expect_same_multipliers(interior_point, ipopt);
    }
  }
}

TEST_P(QpIpoptAgreementInteriorPoint, ClothLikeProblem) {
  const auto test = test_problems::cloth_like_qp(6, 6, 8, 4, {.equality_nodes = 1});
  const QpSolution ipopt = solve_with_ipopt(test.problem);
  const QpSolution interior_point = solve(test.problem);
  expect_same_point(test.problem, interior_point, ipopt);
  expect_same_multipliers(interior_point, ipopt);
}

TEST_P(QpIpoptAgreementInteriorPoint, DegenerateProblemsAgreeOnXAndObjective) {
  // The same √μ effect: at its default tolerance 1e-10 the interior-point x is off by ~5e-6 on
  // the weakly active rows (and tighter tolerances end in numerical_failure), so x is compared
  // to 1e-5 here; the objective, first order in μ, still to 1e-6.
  for (std::uint64_t seed = 21; seed <= 22; ++seed) {
    const auto test = test_problems::degenerate_qp(30, 3, 30, seed);
    expect_same_point(test.problem, solve(test.problem), solve_with_ipopt(test.problem, degenerate_ipopt), 1e-5);
  }
}

TEST_P(QpIpoptAgreementInteriorPoint, InfeasibleProblemsReportedAsIpoptDoes) {
  for (const auto kind : infeasible_kinds) {
    const auto test = test_problems::infeasible_qp(12, 6, kind);
    EXPECT_EQ(solve_with_ipopt(test.problem).status, QpStatus::infeasible);
    EXPECT_EQ(solve(test.problem).status, QpStatus::infeasible);
  }
}

INSTANTIATE_TEST_SUITE_P(QpBackends, QpIpoptAgreementInteriorPoint,
                         ::testing::Values(QpBackend::schur_reduced, QpBackend::sparse),
                         [](const ::testing::TestParamInfo<QpBackend>& info) {
                           return std::string(to_string(info.param));
                         });

}  // namespace
}  // namespace cholsim::solvers::qp
