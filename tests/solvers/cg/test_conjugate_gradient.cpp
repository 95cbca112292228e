#include "solvers/cg/conjugate_gradient.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "linalg/generators.hpp"

namespace cholsim::solvers {
namespace {

double relative_residual(const linalg::SymmetricCscMatrix& a, const std::vector<double>& b,
                         const std::vector<double>& x) {
  std::vector<double> ax(b.size());
  linalg::symmetric_multiply(a, x, ax);
  double r = 0.0, nb = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    r += (b[i] - ax[i]) * (b[i] - ax[i]);
    nb += b[i] * b[i];
  }
  return std::sqrt(r / nb);
}

TEST(ConjugateGradient, JacobiSolvesElasticityToTolerance) {
  const auto a = linalg::elasticity_matrix({.nx = 4, .ny = 3, .nz = 3});
  std::vector<double> b(static_cast<std::size_t>(a.size()));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(0.37 * static_cast<double>(i)) + 0.1;
  std::vector<double> x(b.size(), 0.0);
  const auto result = conjugate_gradient(symmetric_operator(a), jacobi_preconditioner(a), b, x,
                                         {.relative_tolerance = 1e-10});
  EXPECT_TRUE(result.converged);
  EXPECT_GT(result.iterations, 1);
  EXPECT_LT(relative_residual(a, b, x), 1e-9);
}

TEST(ConjugateGradient, WarmStartAtTheSolutionTakesNoIteration) {
  const auto a = linalg::laplacian_2d(6, 5);
  std::vector<double> b(static_cast<std::size_t>(a.size()), 1.0);
  std::vector<double> x(b.size(), 0.0);
  (void)conjugate_gradient(symmetric_operator(a), jacobi_preconditioner(a), b, x,
                           {.relative_tolerance = 1e-13});
  const auto again = conjugate_gradient(symmetric_operator(a), jacobi_preconditioner(a), b, x,
                                        {.relative_tolerance = 1e-12});
  EXPECT_EQ(again.iterations, 0);
  EXPECT_TRUE(again.converged);
}

TEST(ConjugateGradient, IterationLimitIsReportedAsNotConverged) {
  const auto a = linalg::laplacian_2d(20, 20);
  std::vector<double> b(static_cast<std::size_t>(a.size()), 1.0);
  std::vector<double> x(b.size(), 0.0);
  const auto result = conjugate_gradient(symmetric_operator(a), jacobi_preconditioner(a), b, x,
                                         {.relative_tolerance = 1e-12, .max_iterations = 3});
  EXPECT_FALSE(result.converged);
  EXPECT_EQ(result.iterations, 3);
  EXPECT_GT(result.relative_residual, 1e-12);
}

TEST(ConjugateGradient, IndefiniteOperatorIsRejected) {
  const LinearOperator negative = [](std::span<const double> x, std::span<double> y) {
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = -x[i];
  };
  const Preconditioner identity = [](std::span<const double> r, std::span<double> z) {
    for (std::size_t i = 0; i < r.size(); ++i) z[i] = r[i];
  };
  std::vector<double> b(4, 1.0), x(4, 0.0);
  EXPECT_THROW((void)conjugate_gradient(negative, identity, b, x), std::runtime_error);
}

TEST(ConjugateGradient, JacobiRejectsANonPositiveDiagonal) {
  auto a = linalg::laplacian_2d(3, 3);
  a.lower.values[static_cast<std::size_t>(a.lower.col_ptr[4])] = 0.0;  // diagonal of column 4
  try {
    (void)jacobi_preconditioner(a);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("column 4"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace cholsim::solvers
