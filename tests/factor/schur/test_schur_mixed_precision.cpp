// SchurSystem's mixed-precision CPU path (single-precision factor, refinement in double)
// against the double path, on a well-conditioned and on a badly conditioned S + W·C·Wᵀ.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "factor/schur/schur_system.hpp"

namespace cholsim::factor {
namespace {

// A symmetric positive definite matrix with eigenvalues spread over `condition`.
linalg::DenseMatrix spd_with_condition(Index m, double condition, std::mt19937& random) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  // Q from Gram–Schmidt of a random matrix, A = Q·diag(λ)·Qᵀ.
  linalg::DenseMatrix q(m, m);
  for (Index j = 0; j < m; ++j) {
    for (Index i = 0; i < m; ++i) q(i, j) = uniform(random);
    for (Index k = 0; k < j; ++k) {
      double dot = 0.0;
      for (Index i = 0; i < m; ++i) dot += q(i, j) * q(i, k);
      for (Index i = 0; i < m; ++i) q(i, j) -= dot * q(i, k);
    }
    double norm = 0.0;
    for (Index i = 0; i < m; ++i) norm += q(i, j) * q(i, j);
    for (Index i = 0; i < m; ++i) q(i, j) /= std::sqrt(norm);
  }
  linalg::DenseMatrix a(m, m);
  for (Index k = 0; k < m; ++k) {
    const double lambda = std::pow(condition, -static_cast<double>(k) / static_cast<double>(m - 1));
    for (Index j = 0; j < m; ++j) {
      for (Index i = 0; i < m; ++i) a(i, j) += lambda * q(i, k) * q(j, k);
    }
  }
  return a;
}

double solve_difference(double condition) {
  std::mt19937 random(3);
  const Index m = 80;
  const linalg::DenseMatrix s = spd_with_condition(m, condition, random);
  linalg::Triplets triplets;
  for (Index q = 0; q < 12; ++q) {
    for (int k = 0; k < 4; ++k) triplets.add(static_cast<Index>(random() % m), q, 0.25);
  }
  const linalg::CscMatrix w = linalg::csc_from_triplets(m, 12, triplets);
  const std::vector<double> c(12, 10.0);
  linalg::DenseMatrix b(m, 3);
  for (Index j = 0; j < 3; ++j) {
    for (Index i = 0; i < m; ++i) b(i, j) = std::uniform_real_distribution<double>(-1.0, 1.0)(random);
  }
  std::vector<linalg::DenseMatrix> solutions;
  for (SchurPrecision precision : {SchurPrecision::double_precision, SchurPrecision::mixed}) {
    SchurSystemOptions options;
    options.precision = precision;
    SchurSystem system(s.view(), {}, options);
    system.add_low_rank(w, c);
    EXPECT_TRUE(system.refactor().ok());
    linalg::DenseMatrix x = b;
    system.solve(x.view());
    solutions.push_back(x);
  }
  double worst = 0.0;
  double scale = 0.0;
  for (Index j = 0; j < 3; ++j) {
    for (Index i = 0; i < m; ++i) {
      worst = std::max(worst, std::abs(solutions[0](i, j) - solutions[1](i, j)));
      scale = std::max(scale, std::abs(solutions[0](i, j)));
    }
  }
  return worst / scale;
}

TEST(SchurMixedPrecision, RefinedSingleFactorMatchesTheDoubleFactor) {
  // Well conditioned: refinement reaches double accuracy.
  EXPECT_LE(solve_difference(1e3), 1e-13);
  // κ = 1e6: single precision alone would keep only one or two digits; refined, still close
  // to double (both are then limited by κ·ε_double).
  EXPECT_LE(solve_difference(1e6), 1e-9);
  // κ = 1e10 ≫ 1/ε_single: the single factor is useless and the path falls back to dpotrf.
  EXPECT_LE(solve_difference(1e10), 1e-5);
}

}  // namespace
}  // namespace cholsim::factor
