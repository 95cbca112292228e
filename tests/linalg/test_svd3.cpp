// svd3 properties on every class of input the FEM kernels meet: reconstruction to 1e-12·‖F‖,
// orthonormal proper-rotation factors, the ordering σ1 ≥ σ2 ≥ |σ3|, and the sign of σ3
// carrying det F (Irving et al. 2004 inversion convention).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <string>

#include "linalg/polar_decomposition.hpp"
#include "linalg/svd3.hpp"
#include "tests/linalg/mat3_test_helpers.hpp"

namespace cholsim::linalg {
namespace {

/// Every property of the documented convention; returns the decomposition for extra checks.
Svd3 expect_valid_svd(const Mat3& f, const std::string& label) {
  Svd3Stats stats;
  const Svd3 svd = svd3(f, &stats);
  const Vec3& sigma = svd.singular_values;
  SCOPED_TRACE(label);
  EXPECT_TRUE(stats.converged);
  EXPECT_LE(stats.sweeps, 8);
  const Mat3 reconstructed = svd.u * Mat3::diagonal(sigma) * transpose(svd.v);
  EXPECT_LE(frobenius_norm(reconstructed - f), 1e-12 * frobenius_norm(f));
  EXPECT_LT(max_abs_difference(transpose_times(svd.u, svd.u), Mat3::identity()), 1e-14);
  EXPECT_LT(max_abs_difference(transpose_times(svd.v, svd.v), Mat3::identity()), 1e-14);
  EXPECT_NEAR(determinant(svd.u), 1.0, 1e-14);
  EXPECT_NEAR(determinant(svd.v), 1.0, 1e-14);
  EXPECT_GE(sigma.x, sigma.y);
  EXPECT_GE(sigma.y, std::abs(sigma.z));
  EXPECT_GE(sigma.y, 0.0);
  // det F = σ1σ2σ3 (U, V rotations): the sign of σ3 is the orientation of F.
  const double det = determinant(f);
  EXPECT_NEAR(sigma.x * sigma.y * sigma.z, det, 1e-13 * std::pow(frobenius_norm(f), 3));
  if (std::abs(det) > 1e-10 * std::pow(frobenius_norm(f), 3)) {
    EXPECT_EQ(std::signbit(sigma.z), det < 0.0);
  }
  return svd;
}

TEST(Svd3, RandomMatrices) {
  std::mt19937_64 rng(21);
  for (int trial = 0; trial < 2000; ++trial) {
    const double scale = std::pow(10.0, (trial % 13) - 6);  // 1e-6 … 1e6
    expect_valid_svd(random_mat3(rng, scale), "random " + std::to_string(trial));
  }
}

TEST(Svd3, InvertedMatricesHaveNegativeSmallestSingularValue) {
  std::mt19937_64 rng(22);
  int inverted = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Mat3 f = random_mat3(rng);
    if (determinant(f) > 0.0) f = -f;  // det(−F) = −det F
    if (std::abs(determinant(f)) < 1e-8) continue;
    const Svd3 svd = expect_valid_svd(f, "inverted " + std::to_string(trial));
    EXPECT_LT(svd.singular_values.z, 0.0);
    ++inverted;
  }
  EXPECT_GT(inverted, 1900);
}

TEST(Svd3, IllConditionedMatricesKeepReconstructionAndOrthogonality) {
  // One-sided Jacobi never forms FᵀF, so tiny singular values do not spoil U (an
  // eigen-decomposition of FᵀF would leave ~√ε·σ1 errors when σ2, σ3 ~ √ε·σ1).
  std::mt19937_64 rng(23);
  const Vec3 spectra[] = {{1.0, 1e-8, 1e-8}, {1.0, 1e-8, -1e-16}, {1.0, 1.0, 1e-15}, {1e3, 1e-5, 1e-13}};
  for (const Vec3& sigma : spectra) {
    for (int trial = 0; trial < 200; ++trial) {
      const Mat3 f = random_rotation_matrix(rng) * Mat3::diagonal(sigma) * transpose(random_rotation_matrix(rng));
      const Svd3 svd = expect_valid_svd(f, "ill-conditioned " + std::to_string(trial));
      EXPECT_NEAR(svd.singular_values.x, sigma.x, 1e-14 * sigma.x);
      EXPECT_NEAR(svd.singular_values.y, sigma.y, 1e-14 * sigma.x);
    }
  }
}

TEST(Svd3, RotationsHaveUnitSingularValues) {
  std::mt19937_64 rng(24);
  for (int trial = 0; trial < 500; ++trial) {
    const Mat3 r = random_rotation_matrix(rng);
    const Svd3 svd = expect_valid_svd(r, "rotation " + std::to_string(trial));
    EXPECT_LT(norm(svd.singular_values - Vec3{1.0, 1.0, 1.0}), 1e-14);
    EXPECT_LT(max_abs_difference(svd.u * transpose(svd.v), r), 1e-14);
  }
}

TEST(Svd3, DiagonalWithRepeatedValues) {
  const Vec3 diagonals[] = {{2, 2, 2}, {1, 3, 3}, {3, 3, 1}, {5, 1, 5}, {-2, 2, 2}, {2, -2, -2}, {0, 4, 4}};
  for (const Vec3& d : diagonals) {
    const Svd3 svd = expect_valid_svd(Mat3::diagonal(d), "diagonal");
    const double product = d.x * d.y * d.z;
    EXPECT_NEAR(std::abs(svd.singular_values.x), std::max({std::abs(d.x), std::abs(d.y), std::abs(d.z)}), 1e-15);
    if (product < 0.0) {
      EXPECT_LT(svd.singular_values.z, 0.0);
    }
  }
}

TEST(Svd3, RankDeficientMatrices) {
  std::mt19937_64 rng(25);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 500; ++trial) {
    const Vec3 a{normal(rng), normal(rng), normal(rng)}, b{normal(rng), normal(rng), normal(rng)};
    const Vec3 c{normal(rng), normal(rng), normal(rng)}, d{normal(rng), normal(rng), normal(rng)};
    const Svd3 rank1 = expect_valid_svd(outer(a, b), "rank 1");
    EXPECT_NEAR(rank1.singular_values.x, norm(a) * norm(b), 1e-14 * norm(a) * norm(b));
    EXPECT_LE(rank1.singular_values.y, 1e-15 * rank1.singular_values.x);
    const Svd3 rank2 = expect_valid_svd(outer(a, b) + outer(c, d), "rank 2");
    EXPECT_LE(std::abs(rank2.singular_values.z), 1e-15 * rank2.singular_values.x);
    EXPECT_GT(rank2.singular_values.y, 1e-6 * rank2.singular_values.x);
  }
  // Exactly zero columns and rows (no rounding noise at all).
  expect_valid_svd(Mat3::from_columns({0, 0, 0}, {1, 2, 3}, {0, 0, 0}), "one non-zero column");
  expect_valid_svd(Mat3::from_rows({1, 2, 3}, {2, 4, 6}, {0, 0, 0}), "rank 1 with zero row");
}

TEST(Svd3, ZeroMatrix) {
  const Svd3 svd = expect_valid_svd(Mat3::zero(), "zero");
  EXPECT_EQ(svd.singular_values, (Vec3{0.0, 0.0, 0.0}));
  EXPECT_EQ(svd.u, Mat3::identity());
  EXPECT_EQ(svd.v, Mat3::identity());
}

TEST(Svd3, NegativeIdentityIsRotationByPiTimesReflection) {
  const Svd3 svd = expect_valid_svd(-Mat3::identity(), "-I");
  EXPECT_EQ(svd.singular_values, (Vec3{1.0, 1.0, -1.0}));
  const Mat3 rotation = svd.u * transpose(svd.v);
  EXPECT_NEAR(rotation_angle(rotation), std::numbers::pi, 1e-15);
}

TEST(Svd3, ConvergesInFewSweeps) {
  std::mt19937_64 rng(26);
  int worst = 0;
  for (int trial = 0; trial < 10000; ++trial) {
    Svd3Stats stats;
    (void)svd3(random_mat3(rng), &stats);
    worst = std::max(worst, stats.sweeps);
  }
  EXPECT_LE(worst, 6);  // quadratic convergence: a handful of sweeps including the final check
}

}  // namespace
}  // namespace cholsim::linalg
