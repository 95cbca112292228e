// Properties of the fixed-size 3D types: algebraic identities, and quaternion ↔ matrix
// round trips over random rotations including angles near 0 and π (every Shepperd branch).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "linalg/small_matrix.hpp"
#include "tests/linalg/mat3_test_helpers.hpp"

namespace cholsim::linalg {
namespace {

constexpr Mat3 kSample{{2.0, -1.0, 0.5, 0.0, 3.0, 1.0, 4.0, 1.0, -2.0}};

/// q and −q are the same rotation: compare up to sign.
double quaternion_distance(const Quaternion& a, const Quaternion& b) {
  const double plus = norm(Quaternion{a.w - b.w, a.x - b.x, a.y - b.y, a.z - b.z});
  const double minus = norm(Quaternion{a.w + b.w, a.x + b.x, a.y + b.y, a.z + b.z});
  return std::min(plus, minus);
}

Quaternion random_unit_quaternion(std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  return normalized(Quaternion{normal(rng), normal(rng), normal(rng), normal(rng)});
}

TEST(SmallMatrix, ConstexprBasics) {
  static_assert(trace(kSample) == 3.0);
  static_assert(determinant(Mat3::identity()) == 1.0);
  static_assert(transpose(transpose(kSample)) == kSample);
  static_assert(kSample * Mat3::identity() == kSample);
  static_assert(dot(Vec3{1, 2, 3}, Vec3{4, 5, 6}) == 32.0);
  static_assert(cross(Vec3{1, 0, 0}, Vec3{0, 1, 0}) == Vec3{0, 0, 1});
  static_assert(Mat3::from_columns({1, 2, 3}, {4, 5, 6}, {7, 8, 9})(2, 1) == 6.0);
  static_assert(Mat3::from_rows({1, 2, 3}, {4, 5, 6}, {7, 8, 9})(2, 1) == 8.0);
  static_assert(axial_vector(skew(Vec3{1, 2, 3})) == Vec3{1, 2, 3});
  SUCCEED();
}

TEST(SmallMatrix, DeterminantTraceNormMatchHandComputation) {
  // det by cofactor expansion along the first row: 2(−6−1) + 1(0−4) + 0.5(0−12) = −24.
  EXPECT_DOUBLE_EQ(determinant(kSample), -24.0);
  EXPECT_DOUBLE_EQ(squared_frobenius_norm(kSample), 4 + 1 + 0.25 + 9 + 1 + 16 + 1 + 4);
  EXPECT_DOUBLE_EQ(frobenius_norm(Mat3::identity()), std::sqrt(3.0));
}

TEST(SmallMatrix, ProductTransposeAndInverseIdentities) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> entry(-1.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    Mat3 a, b;
    for (double& e : a.entries) e = entry(rng);
    for (double& e : b.entries) e = entry(rng);
    const Vec3 v{entry(rng), entry(rng), entry(rng)};
    EXPECT_LT(max_abs_difference(transpose(a * b), transpose(b) * transpose(a)), 1e-14);
    EXPECT_LT(max_abs_difference(transpose_times(a, b), transpose(a) * b), 1e-14);
    EXPECT_NEAR(determinant(a * b), determinant(a) * determinant(b), 1e-14);
    EXPECT_LT(norm((a * b) * v - a * (b * v)), 1e-14);
    EXPECT_LT(norm(skew(v) * b.col(0) - cross(v, b.col(0))), 1e-14);
    EXPECT_LT(norm(outer(v, b.col(1)) * b.col(2) - dot(b.col(1), b.col(2)) * v), 1e-14);
    if (std::abs(determinant(a)) > 1e-3) {
      EXPECT_LT(max_abs_difference(inverse(a) * a, Mat3::identity()), 1e-11);
    }
  }
}

TEST(SmallMatrix, QuaternionToMatrixIsRotationAndHomomorphism) {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 1000; ++trial) {
    const Quaternion q = random_unit_quaternion(rng);
    const Quaternion p = random_unit_quaternion(rng);
    const Mat3 r = to_rotation_matrix(q);
    EXPECT_LT(max_abs_difference(transpose_times(r, r), Mat3::identity()), 1e-14);
    EXPECT_NEAR(determinant(r), 1.0, 1e-14);
    EXPECT_LT(max_abs_difference(to_rotation_matrix(q * p), r * to_rotation_matrix(p)), 1e-14);
    EXPECT_LT(max_abs_difference(to_rotation_matrix(conjugate(q)), transpose(r)), 1e-14);
    const Vec3 v{0.3, -1.2, 2.0};
    EXPECT_LT(norm(rotate(q, v) - r * v), 1e-14);
  }
}

TEST(SmallMatrix, QuaternionMatrixRoundTrip) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 2000; ++trial) {
    const Quaternion q = random_unit_quaternion(rng);
    const Quaternion back = quaternion_from_rotation_matrix(to_rotation_matrix(q));
    EXPECT_LT(quaternion_distance(q, back), 1e-14) << "trial " << trial;
    EXPECT_GE(back.w, 0.0);
  }
  // Near π each of x, y, z dominates in turn; near 0, w does: all four branches of Shepperd.
  for (const Vec3 axis : {Vec3{1, 0.01, 0.02}, Vec3{0.01, 1, -0.02}, Vec3{0.02, -0.01, 1}, Vec3{1, 1, 1}}) {
    for (const double angle : {0.0, 1e-12, 1e-6, 1.0, std::numbers::pi - 1e-9, std::numbers::pi}) {
      const Quaternion q = quaternion_from_axis_angle(axis, angle);
      EXPECT_LT(quaternion_distance(q, quaternion_from_rotation_matrix(to_rotation_matrix(q))), 1e-14)
          << "angle " << angle;
    }
  }
}

TEST(SmallMatrix, AxisAngleRoundTripAndRotationAngle) {
  std::mt19937_64 rng(14);
  std::uniform_real_distribution<double> angle_distribution(0.0, std::numbers::pi);
  for (int trial = 0; trial < 1000; ++trial) {
    const Vec3 axis = normalized(random_unit_quaternion(rng).vector_part());
    const double angle = angle_distribution(rng);
    const Quaternion q = quaternion_from_axis_angle(axis, angle);
    const AxisAngle back = to_axis_angle(q);
    EXPECT_NEAR(back.angle, angle, 1e-14);
    EXPECT_LT(norm(back.axis - axis), 1e-12);
    EXPECT_NEAR(rotation_angle(to_rotation_matrix(q)), angle, 1e-14);
    // −q is the same rotation: same angle and axis.
    EXPECT_NEAR(to_axis_angle(Quaternion{-q.w, -q.x, -q.y, -q.z}).angle, angle, 1e-14);
  }
  // rotation_angle keeps relative accuracy for tiny angles (acos would return 0 or ~1e-8).
  const double tiny = 1e-10;
  EXPECT_NEAR(rotation_angle(to_rotation_matrix(quaternion_from_axis_angle({0, 0, 1}, tiny))), tiny, 1e-22);
  EXPECT_EQ(to_axis_angle(Quaternion{}).angle, 0.0);
}

}  // namespace
}  // namespace cholsim::linalg
