#include "solvers/qp/qp_problem.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "qp_test_problems.hpp"

namespace cholsim::solvers::qp {
namespace {

using test_problems::HessianShape;
using test_problems::random_qp;

/// Expects check_problem to throw with a message containing `fragment`.
void expect_rejected(const QpProblem& problem, const std::string& fragment) {
  try {
    check_problem(problem);
    FAIL() << "check_problem accepted a problem with: " << fragment;
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(QpProblem, GeneratedProblemsAreValidWithTheirKktPointExact) {
  for (const auto shape : {HessianShape::banded_definite, HessianShape::semidefinite}) {
    const auto generated = random_qp(60, 4, 30, 7, {.hessian = shape, .constrained_count = 20});
    EXPECT_NO_THROW(check_problem(generated.problem));
    EXPECT_LT(kkt_residuals(generated.problem, generated.reference).worst(), 1e-14);
  }
  const auto cloth = test_problems::cloth_like_qp(8, 6, 5, 3, {.equality_nodes = 1});
  EXPECT_NO_THROW(check_problem(cloth.problem));
  EXPECT_EQ(cloth.problem.variable_count(), 3 * 8 * 6);
  EXPECT_EQ(constrained_columns(cloth.problem).size(), 15u);
  EXPECT_LT(kkt_residuals(cloth.problem, cloth.reference).worst(), 1e-14);
  const auto degenerate = test_problems::degenerate_qp(30, 2, 12, 5);
  EXPECT_GT(degenerate.problem.inequality_count(), 12);
  EXPECT_LT(kkt_residuals(degenerate.problem, degenerate.reference).worst(), 1e-14);
}

TEST(QpProblem, ResidualsSeeEachViolatedCondition) {
  const auto generated = random_qp(20, 2, 10, 11);
  const QpProblem& problem = generated.problem;
  const auto perturbed_worst = [&](auto perturb) {
    QpSolution solution = generated.reference;
    perturb(solution);
    return kkt_residuals(problem, solution);
  };
  EXPECT_GT(perturbed_worst([](QpSolution& s) { s.x[3] += 1e-3; }).stationarity, 1e-5);
  EXPECT_GT(perturbed_worst([](QpSolution& s) { s.equality_multipliers[0] += 1e-3; }).stationarity, 1e-5);
  // Shifting every x along a direction that keeps stationarity is not possible in general, so
  // the constraint residuals are tested with a shifted right-hand side instead.
  QpProblem shifted = problem;
  shifted.equality_rhs[1] += 1e-3;
  EXPECT_GT(kkt_residuals(shifted, generated.reference).equality, 1e-5);
  shifted = problem;
  shifted.inequality_rhs[0] += 1.0;  // makes row 0 violated by at least ~1 (its slack ≤ 1)
  const auto violated = kkt_residuals(shifted, generated.reference);
  EXPECT_GT(violated.inequality + violated.complementarity, 1e-3);
  EXPECT_GT(perturbed_worst([](QpSolution& s) { s.inequality_multipliers[0] = -0.5; }).dual_sign, 0.1);
  EXPECT_TRUE(std::isnan(
      perturbed_worst([](QpSolution& s) { s.x[0] = std::numeric_limits<double>::quiet_NaN(); }).worst()));
}

TEST(QpProblem, ObjectiveMatchesTheQuadraticForm) {
  const auto generated = random_qp(15, 0, 0, 3);
  const QpProblem& problem = generated.problem;
  std::vector<double> x(15);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::cos(static_cast<double>(i));
  // Dense ½xᵀHx − bᵀx from the stored lower triangle.
  const auto& lower = problem.hessian.lower;
  double expected = 0.0;
  for (Index j = 0; j < lower.cols; ++j) {
    for (auto k = lower.col_ptr[static_cast<std::size_t>(j)]; k < lower.col_ptr[static_cast<std::size_t>(j) + 1]; ++k) {
      const auto i = static_cast<std::size_t>(lower.row_idx[static_cast<std::size_t>(k)]);
      const double v = lower.values[static_cast<std::size_t>(k)];
      expected += (i == static_cast<std::size_t>(j) ? 0.5 : 1.0) * v * x[i] * x[static_cast<std::size_t>(j)];
    }
  }
  for (std::size_t i = 0; i < x.size(); ++i) expected -= problem.linear[i] * x[i];
  EXPECT_NEAR(objective(problem, x), expected, 1e-12 * (1.0 + std::abs(expected)));
}

TEST(QpProblem, ConstrainedColumnsAreTheUnionOfBothMatrices) {
  const auto generated = random_qp(40, 3, 8, 2, {.constrained_count = 10});
  const auto columns = constrained_columns(generated.problem);
  EXPECT_LE(columns.size(), 10u);
  EXPECT_TRUE(std::is_sorted(columns.begin(), columns.end()));
  std::vector<char> touched(40, 0);
  for (const auto* a : {&generated.problem.equality, &generated.problem.inequality}) {
    for (Index j = 0; j < a->cols; ++j) {
      if (a->col_ptr[static_cast<std::size_t>(j) + 1] > a->col_ptr[static_cast<std::size_t>(j)]) touched[static_cast<std::size_t>(j)] = 1;
    }
  }
  for (Index j = 0; j < 40; ++j) {
    EXPECT_EQ(std::binary_search(columns.begin(), columns.end(), j), touched[static_cast<std::size_t>(j)] != 0) << j;
  }
  EXPECT_TRUE(constrained_columns(random_qp(5, 0, 0, 1).problem).empty());
}

TEST(QpProblem, CheckProblemNamesTheDefect) {
  const QpProblem valid = random_qp(10, 2, 3, 4).problem;
  QpProblem bad = valid;
  bad.linear.pop_back();
  expect_rejected(bad, "linear term b has 9 entries, expected 10");
  bad = valid;
  bad.equality_rhs.push_back(0.0);
  expect_rejected(bad, "equality matrix E is 2×10, expected 3×10");
  bad = valid;
  bad.inequality.cols = 9;
  expect_rejected(bad, "inequality matrix C is 3×9");
  bad = valid;
  bad.inequality.values[0] = std::numeric_limits<double>::quiet_NaN();
  expect_rejected(bad, "inequality matrix C holds nan");
  bad = valid;
  bad.hessian.lower.values[2] = std::numeric_limits<double>::infinity();
  expect_rejected(bad, "hessian H holds inf at position 2");
  bad = valid;
  bad.inequality_rhs[1] = std::numeric_limits<double>::infinity();
  expect_rejected(bad, "inequality right-hand side c holds inf at position 1");
  bad = valid;
  std::swap(bad.equality.row_idx[0], bad.equality.row_idx[1]);
  if (bad.equality.col_ptr[1] >= 2) expect_rejected(bad, "equality matrix E is malformed");
  bad = valid;
  bad.hessian.lower.values.pop_back();
  expect_rejected(bad, "hessian H is malformed");
  bad = valid;
  bad.hessian.lower.values.clear();
  expect_rejected(bad, "hessian H has a pattern but no values");
  // Constraints may be absent: default-constructed matrices with empty right-hand sides.
  QpProblem unconstrained = valid;
  unconstrained.equality = {};
  unconstrained.equality_rhs.clear();
  unconstrained.inequality = {};
  unconstrained.inequality_rhs.clear();
  EXPECT_NO_THROW(check_problem(unconstrained));
}

TEST(QpProblem, StatusNames) {
  EXPECT_EQ(to_string(QpStatus::optimal), "optimal");
  EXPECT_EQ(to_string(QpStatus::infeasible), "infeasible");
  EXPECT_EQ(to_string(QpStatus::unbounded), "unbounded");
  EXPECT_EQ(to_string(QpStatus::iteration_limit), "iteration_limit");
  EXPECT_EQ(to_string(QpStatus::numerical_failure), "numerical_failure");
}

}  // namespace
}  // namespace cholsim::solvers::qp
