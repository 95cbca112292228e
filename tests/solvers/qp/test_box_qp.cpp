// The projected Newton box QP (solvers/qp/box_qp) against the Goldfarb–Idnani active-set solver
// with the bounds as inequalities, and on a semi-definite H where only Tᵀx is unique.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "solvers/qp/active_set.hpp"
#include "solvers/qp/box_qp.hpp"

namespace cholsim::solvers::qp {
namespace {

linalg::DenseMatrix gram(const linalg::DenseMatrix& a) {  // A Aᵀ
  linalg::DenseMatrix h(a.rows(), a.rows());
  for (Index i = 0; i < a.rows(); ++i) {
    for (Index j = 0; j < a.rows(); ++j) {
      for (Index k = 0; k < a.cols(); ++k) h(i, j) += a(i, k) * a(j, k);
    }
  }
  return h;
}

TEST(BoxQp, MatchesTheActiveSetSolverOnDefiniteProblems) {
  std::mt19937 random(7);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 20; ++trial) {
    const Index n = 12;
    linalg::DenseMatrix a(n, n + 3);
    for (double& v : a.storage()) v = normal(random);
    const linalg::DenseMatrix h = gram(a);
    std::vector<double> f(n), lower(n), upper(n);
    for (Index i = 0; i < n; ++i) {
      f[static_cast<std::size_t>(i)] = 5.0 * normal(random);
      lower[static_cast<std::size_t>(i)] = -std::abs(normal(random));
      upper[static_cast<std::size_t>(i)] = std::abs(normal(random));
    }
    const BoxQpResult box = solve_box_qp(h, f, lower, upper);
    ASSERT_TRUE(box.converged);

    QpProblem problem;
    linalg::Triplets hessian, rows;
    for (Index j = 0; j < n; ++j) {
      for (Index i = j; i < n; ++i) hessian.add(i, j, h(i, j));
      rows.add(2 * j, j, 1.0);
      rows.add(2 * j + 1, j, -1.0);
      problem.inequality_rhs.push_back(lower[static_cast<std::size_t>(j)]);
      problem.inequality_rhs.push_back(-upper[static_cast<std::size_t>(j)]);
    }
    problem.hessian = linalg::symmetric_from_triplets(n, hessian);
    problem.linear = f;
    problem.inequality = linalg::csc_from_triplets(2 * n, n, rows);
    const QpSolution reference = solve_active_set(problem);
    ASSERT_EQ(reference.status, QpStatus::optimal);
    for (Index i = 0; i < n; ++i) EXPECT_NEAR(box.x[static_cast<std::size_t>(i)], reference.x[static_cast<std::size_t>(i)], 1e-8);
  }
}

TEST(BoxQp, SemidefiniteProblemsGiveTheUniqueForce) {
  // H = T Tᵀ with more rows than columns (friction rows > body DOFs): x is not unique but Tᵀx
  // is; two different starts must agree on it, and the KKT conditions must hold.
  std::mt19937 random(11);
  std::normal_distribution<double> normal;
  const Index n = 16, dofs = 6;
  linalg::DenseMatrix t(n, dofs);
  for (double& v : t.storage()) v = normal(random);
  const linalg::DenseMatrix h = gram(t);
  std::vector<double> f(n), lower(n, -0.3), upper(n, 0.3), start(n);
  for (Index i = 0; i < n; ++i) {
    f[static_cast<std::size_t>(i)] = 3.0 * normal(random);
    start[static_cast<std::size_t>(i)] = 0.3 * std::sin(static_cast<double>(i));
  }
  const BoxQpResult a = solve_box_qp(h, f, lower, upper), b = solve_box_qp(h, f, lower, upper, start);
  ASSERT_TRUE(a.converged);
  ASSERT_TRUE(b.converged);
  for (Index k = 0; k < dofs; ++k) {
    double fa = 0.0, fb = 0.0;
    for (Index i = 0; i < n; ++i) {
      fa += t(i, k) * a.x[static_cast<std::size_t>(i)];
      fb += t(i, k) * b.x[static_cast<std::size_t>(i)];
    }
    EXPECT_NEAR(fa, fb, 1e-8);
  }
  for (Index i = 0; i < n; ++i) {  // KKT: interior variables have zero gradient
    double g = -f[static_cast<std::size_t>(i)];
    for (Index j = 0; j < n; ++j) g += h(i, j) * a.x[static_cast<std::size_t>(j)];
    const double x = a.x[static_cast<std::size_t>(i)];
    if (x > -0.3 + 1e-9 && x < 0.3 - 1e-9) {
      EXPECT_NEAR(g, 0.0, 1e-8);
    } else if (x <= -0.3 + 1e-9) {
      EXPECT_GE(g, -1e-8);
    } else {
      EXPECT_LE(g, 1e-8);
    }
  }
}

TEST(BoxQp, BadInputIsRefused) {
  linalg::DenseMatrix h(2, 2);
  h(0, 0) = h(1, 1) = 1.0;
  const std::vector<double> f{1.0, 2.0}, lower{0.0, 1.0}, upper{1.0, 0.0};
  EXPECT_THROW(solve_box_qp(h, f, lower, upper), std::invalid_argument);
  const std::vector<double> nan_f{std::nan(""), 1.0}, ok{1.0, 1.0}, zero{0.0, 0.0};
  EXPECT_THROW(solve_box_qp(h, nan_f, zero, ok), std::invalid_argument);
  EXPECT_THROW(solve_box_qp(h, std::vector<double>{1.0}, zero, ok), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::solvers::qp
