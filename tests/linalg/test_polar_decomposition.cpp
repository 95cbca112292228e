// Polar decomposition from the SVD, and the analytic polar decomposition (APD) of seed 003
// §3.3 checked against it with the paper's own accuracy protocol (§4).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <utility>
#include <vector>

#include "linalg/polar_decomposition.hpp"
#include "linalg/svd3.hpp"
#include "tests/linalg/mat3_test_helpers.hpp"

namespace cholsim::linalg {
namespace {

constexpr double kDegreesPerRadian = 180.0 / std::numbers::pi;

/// tr(Rᵀ·F), the quantity both decompositions maximize over SO(3).
double alignment(const Mat3& rotation, const Mat3& f) { return trace(transpose_times(rotation, f)); }

// ---------------------------------------------------------------------------------------
// SVD-based polar decomposition

TEST(PolarDecomposition, FactorsAreRotationAndSymmetricAndReproduceF) {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 2000; ++trial) {
    const Mat3 f = random_mat3(rng);
    const PolarDecomposition polar = polar_decomposition(f);
    const Mat3& r = polar.rotation;
    const Mat3& s = polar.stretch;
    EXPECT_LT(max_abs_difference(transpose_times(r, r), Mat3::identity()), 1e-14);
    EXPECT_NEAR(determinant(r), 1.0, 1e-14);
    EXPECT_LT(max_abs_difference(s, transpose(s)), 1e-14 * frobenius_norm(f));
    EXPECT_LE(frobenius_norm(r * s - f), 1e-12 * frobenius_norm(f));
    EXPECT_LT(max_abs_difference(polar_rotation(f), r), 1e-15);
    if (determinant(f) > 0.0) {
      // Classical polar decomposition: S positive definite (all leading minors positive).
      EXPECT_GT(s(0, 0), 0.0);
      EXPECT_GT(s(0, 0) * s(1, 1) - s(0, 1) * s(1, 0), 0.0);
      EXPECT_GT(determinant(s), 0.0);
    } else {
      EXPECT_LE(determinant(s), 0.0);  // the reflection lives in S, never in R
    }
  }
}

TEST(PolarDecomposition, RotationMaximizesAlignmentOverSO3) {
  std::mt19937_64 rng(32);
  for (int trial = 0; trial < 200; ++trial) {
    const Mat3 f = random_mat3(rng);
    const double best = alignment(polar_rotation(f), f);
    for (int probe = 0; probe < 50; ++probe) {
      EXPECT_LE(alignment(random_rotation_matrix(rng), f), best + 1e-14);
    }
  }
}

TEST(PolarDecomposition, RandomRotationRespectsMaximumAngle) {
  std::mt19937_64 rng(33);
  const double max_angle = 10.0 / kDegreesPerRadian;
  double largest = 0.0;
  double mean = 0.0;
  constexpr int kSamples = 20000;
  for (int trial = 0; trial < kSamples; ++trial) {
    const double angle = to_axis_angle(random_rotation(rng, max_angle)).angle;
    largest = std::max(largest, angle);
    mean += angle / kSamples;
  }
  EXPECT_LE(largest, max_angle * (1 + 1e-12));
  // Haar density restricted to [0, θmax] is ≈ ∝ θ², whose mean is ¾·θmax.
  EXPECT_NEAR(mean / max_angle, 0.75, 0.01);
}

TEST(PolarDecomposition, NearRotationSamplesAreCloseToRotations) {
  std::mt19937_64 rng(34);
  for (int trial = 0; trial < 1000; ++trial) {
    const Mat3 f = random_near_rotation(rng);
    const Svd3 svd = svd3(f);
    EXPECT_GT(svd.singular_values.z, 0.5);  // 10% vertex displacement cannot invert a tet
    EXPECT_LT(svd.singular_values.x, 1.5);
    EXPECT_LE(rotation_angle(polar_rotation(f)), 25.0 / kDegreesPerRadian);
  }
}

// ---------------------------------------------------------------------------------------
// Analytic polar decomposition

/// E_APD(R0·exp([ω]×)) with the exact exponential.
double apd_objective(const Mat3& r0, const Mat3& f, const Vec3& omega) {
  const Mat3 r = r0 * to_rotation_matrix(quaternion_from_axis_angle(omega, norm(omega)));
  return 0.5 * squared_frobenius_norm(r - f);
}

TEST(Apd, GradientAndHessianMatchFiniteDifferences) {
  // Seed 003 eq. 24–25 against central differences of eq. 19, on random input and on the
  // degenerate F = −I at R0 = I (zero gradient, negative definite Hessian).
  std::mt19937_64 rng(41);
  std::vector<std::pair<Mat3, Mat3>> cases;
  for (int trial = 0; trial < 50; ++trial) cases.emplace_back(random_rotation_matrix(rng), random_mat3(rng));
  cases.emplace_back(Mat3::identity(), -Mat3::identity());
  cases.emplace_back(Mat3::identity(), Mat3::diagonal({1.0, 1.0, -1.0}));
  const std::array<Vec3, 3> axes = {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}};
  for (const auto& [r0, f] : cases) {
    const ApdLocalModel model = apd_local_model(r0, f);
    EXPECT_NEAR(model.objective, apd_objective(r0, f, {}), 1e-15);
    const double h = 1e-5;
    for (int i = 0; i < 3; ++i) {
      const double gradient_fd =
          (apd_objective(r0, f, h * axes[i]) - apd_objective(r0, f, -h * axes[i])) / (2 * h);
      EXPECT_NEAR(model.gradient[i], gradient_fd, 1e-8);
      for (int j = 0; j < 3; ++j) {
        const double k = 1e-4;
        const Vec3 a = k * axes[i], b = k * axes[j];
        const double hessian_fd = (apd_objective(r0, f, a + b) - apd_objective(r0, f, a - b) -
                                   apd_objective(r0, f, b - a) + apd_objective(r0, f, -a - b)) /
                                  (4 * k * k);
        EXPECT_NEAR(model.hessian(i, j), hessian_fd, 1e-5) << i << "," << j;
      }
    }
  }
}

TEST(Apd, CayleyQuaternionIsUnitAndSecondOrderExact) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> normal;
  for (const double length : {1e-6, 1e-3, 1e-1, 1.0, 3.0}) {
    const Vec3 omega = length * normalized(Vec3{normal(rng), normal(rng), normal(rng)});
    const Quaternion cayley = cayley_quaternion(omega);
    EXPECT_NEAR(norm(cayley), 1.0, 1e-15);
    const AxisAngle axis_angle = to_axis_angle(cayley);
    EXPECT_NEAR(axis_angle.angle, 4.0 * std::atan(length / 4.0), 1e-14);
    EXPECT_LT(norm(axis_angle.axis - normalized(omega)), 1e-9);
    // Angle error vs exp([ω]×) is ‖ω‖³/48 + O(‖ω‖⁵).
    EXPECT_LE(length - axis_angle.angle, length * length * length / 48.0 + 1e-15);
  }
}

// Seed 003 §4 protocol: random rotations uniform on SO(3) restricted to ≤ 10°, applied to a
// tetrahedron whose vertices are displaced by at most 10% of the mean edge length;
// F = R·D_s·D_m⁻¹ (random_near_rotation). The paper demands mean error < 0.05° against
// the SVD rotation under the metric d(R1, R2) = ∠(R1ᵀ·R2); we check every sample.
TEST(Apd, AgreesWithSvdRotationOnSeed003NearRotations) {
  std::mt19937_64 rng(43);
  constexpr int kSamples = 100000;
  double mean_degrees = 0.0, max_degrees = 0.0;
  double mean_iterations = 0.0;
  int max_iterations = 0;
  double one_step_mean_degrees = 0.0, one_step_max_degrees = 0.0;
  ApdOptions one_step;
  one_step.max_iterations = 1;  // the paper's benchmark setting: a single Newton step
  for (int trial = 0; trial < kSamples; ++trial) {
    const Mat3 f = random_near_rotation(rng);
    const Mat3 reference = polar_rotation(f);
    ApdStats stats;
    const Quaternion q = analytic_polar_decomposition(f, Quaternion{}, ApdOptions{}, &stats);
    const double error = rotation_distance(to_rotation_matrix(q), reference) * kDegreesPerRadian;
    mean_degrees += error / kSamples;
    max_degrees = std::max(max_degrees, error);
    mean_iterations += static_cast<double>(stats.iterations) / kSamples;
    max_iterations = std::max(max_iterations, stats.iterations);
    EXPECT_TRUE(stats.converged);
    EXPECT_EQ(stats.flips, 0);

    const Quaternion q1 = analytic_polar_decomposition(f, Quaternion{}, one_step);
    const double error1 = rotation_distance(to_rotation_matrix(q1), reference) * kDegreesPerRadian;
    one_step_mean_degrees += error1 / kSamples;
    one_step_max_degrees = std::max(one_step_max_degrees, error1);
  }
  std::printf("[ APD      ] %d seed-003 near-rotations, cold start: angle to SVD rotation mean %.3e deg, "
              "max %.3e deg; iterations mean %.2f max %d\n",
              kSamples, mean_degrees, max_degrees, mean_iterations, max_iterations);
  std::printf("[ APD      ] single Newton step (paper setting): mean %.3e deg, max %.3e deg\n",
              one_step_mean_degrees, one_step_max_degrees);
  EXPECT_LT(max_degrees, 0.05);
  EXPECT_LT(max_degrees, 1e-9);  // converged to tolerance 1e-12 rad: working precision
  // One step from the identity: the paper reports a mean below 0.05° for one iteration; with
  // the 10% vertex displacement we measure ≈ 0.079° (see the next test for why), so this
  // bound only guards against a regression of the step itself.
  EXPECT_LT(one_step_mean_degrees, 0.1);
}

TEST(Apd, SingleStepOnPureRotationsMeetsPaperAccuracy) {
  // For F = R(θ) the Newton step length is tan θ and cayley_quaternion turns it into
  // 4·atan(tan θ / 4) ≈ θ + 0.3125·θ³: one step leaves ≈ 0.3125·θ³, whose mean over the
  // ≤ 10° Haar rotations is ≈ 0.048°, just inside the paper's 0.05°. Stretch adds to it.
  std::mt19937_64 rng(48);
  NearRotationSampling pure_rotation;
  pure_rotation.max_displacement_fraction = 0.0;
  ApdOptions one_step;
  one_step.max_iterations = 1;
  constexpr int kSamples = 20000;
  double mean_degrees = 0.0;
  for (int trial = 0; trial < kSamples; ++trial) {
    const Mat3 f = random_near_rotation(rng, pure_rotation);
    const Quaternion q = analytic_polar_decomposition(f, Quaternion{}, one_step);
    mean_degrees += rotation_distance(to_rotation_matrix(q), polar_rotation(f)) * kDegreesPerRadian / kSamples;
  }
  EXPECT_LT(mean_degrees, 0.05);
  EXPECT_GT(mean_degrees, 0.04);  // the θ³ law above: a wrong step scale would miss it either way
}

TEST(Apd, WarmStartFromExactAnswerConvergesInOneIteration) {
  std::mt19937_64 rng(44);
  for (int trial = 0; trial < 1000; ++trial) {
    const Mat3 f = trial % 2 == 0 ? random_near_rotation(rng) : random_rotation_matrix(rng) * random_near_rotation(rng);
    const Quaternion exact = quaternion_from_rotation_matrix(polar_rotation(f));
    ApdStats stats;
    const Quaternion q = analytic_polar_decomposition(f, exact, ApdOptions{}, &stats);
    EXPECT_LE(stats.iterations, 1);
    EXPECT_TRUE(stats.converged);
    EXPECT_LT(rotation_distance(to_rotation_matrix(q), to_rotation_matrix(exact)), 1e-13);
  }
}

TEST(Apd, WarmStartTracksASpinningElement) {
  // Temporal coherence (seed 003 §3.3): an element spinning at 5° per step, always warm
  // started from the previous answer, stays on the SVD answer within 4 steps (Newton takes
  // 5° → ~1e-4 → ~1e-8 → ~1e-16 rad; the fourth step is the one that sees ‖Δω‖ < 1e-12).
  std::mt19937_64 rng(45);
  const Mat3 shape = random_near_rotation(rng);
  const Vec3 spin_axis = normalized(Vec3{0.3, -0.5, 0.8});
  Quaternion q;
  for (int step = 0; step < 200; ++step) {
    const Mat3 f = to_rotation_matrix(quaternion_from_axis_angle(spin_axis, step * 5.0 / kDegreesPerRadian)) * shape;
    ApdStats stats;
    q = analytic_polar_decomposition(f, q, ApdOptions{}, &stats);
    EXPECT_LE(stats.iterations, 4) << "step " << step;
    EXPECT_LT(rotation_distance(to_rotation_matrix(q), polar_rotation(f)), 1e-12) << "step " << step;
  }
}

TEST(Apd, RecoversFullyInvertedElement) {
  // F = −s·I from the rest rotation: the identity is the global *minimum* of tr(Rᵀ·F) with
  // g = 0, where Algorithm 3 alone would not move. The flip must reach a maximizer — any
  // rotation by π (tr(Rᵀ·F) = s = σ1 + σ2 + σ3 with σ = (s, s, −s)).
  for (const double s : {0.25, 1.0, 3.0}) {
    const Mat3 f = -s * Mat3::identity();
    ApdStats stats;
    const Quaternion q = analytic_polar_decomposition(f, Quaternion{}, ApdOptions{}, &stats);
    const Mat3 r = to_rotation_matrix(q);
    EXPECT_TRUE(stats.converged);
    EXPECT_GE(stats.flips, 1);
    EXPECT_NEAR(norm(q), 1.0, 1e-14);
    EXPECT_NEAR(determinant(r), 1.0, 1e-14);
    EXPECT_NEAR(alignment(r, f), s, 1e-12 * s);
    EXPECT_NEAR(rotation_angle(r), std::numbers::pi, 1e-7);
  }
}

TEST(Apd, RecoversReflectedRotations) {
  std::mt19937_64 rng(46);
  for (int trial = 0; trial < 1000; ++trial) {
    const Mat3 q_left = random_rotation_matrix(rng), q_right = random_rotation_matrix(rng);
    // A pure reflection: σ = (1, 1, −1) has a degenerate set of maximizers; check the value.
    const Mat3 reflected = q_left * Mat3::diagonal({1.0, 1.0, -1.0});
    const Quaternion q = analytic_polar_decomposition(reflected, Quaternion{});
    EXPECT_NEAR(alignment(to_rotation_matrix(q), reflected), 1.0, 1e-9) << "trial " << trial;
    // A generic inverted element (distinct |σ|): the maximizer is unique and equals U·Vᵀ.
    const Mat3 inverted = q_left * Mat3::diagonal({1.3, 0.9, -0.6}) * transpose(q_right);
    ApdStats stats;
    const Quaternion p = analytic_polar_decomposition(inverted, Quaternion{}, ApdOptions{}, &stats);
    EXPECT_TRUE(stats.converged) << "trial " << trial;
    EXPECT_LT(rotation_distance(to_rotation_matrix(p), polar_rotation(inverted)), 1e-10) << "trial " << trial;
  }
}

TEST(Apd, ReachesGlobalMaximumOnArbitraryMatrices) {
  // tr(Rᵀ·F) has a single local maximum on SO(3) (the others are saddles or the minimum),
  // and every APD step is an ascent step, so even arbitrary F from a bad start end at U·Vᵀ.
  std::mt19937_64 rng(47);
  int converged = 0;
  int max_iterations = 0, flips = 0, backtracks = 0;
  constexpr int kSamples = 5000;
  for (int trial = 0; trial < kSamples; ++trial) {
    const Mat3 f = random_mat3(rng);
    ApdStats stats;
    const Quaternion start = quaternion_from_rotation_matrix(random_rotation_matrix(rng));
    const Quaternion q = analytic_polar_decomposition(f, start, ApdOptions{}, &stats);
    converged += stats.converged ? 1 : 0;
    max_iterations = std::max(max_iterations, stats.iterations);
    flips += stats.flips;
    backtracks += stats.backtracks;
    EXPECT_NEAR(alignment(to_rotation_matrix(q), f), alignment(polar_rotation(f), f), 1e-9 * frobenius_norm(f))
        << "trial " << trial;
  }
  std::printf("[ APD      ] %d arbitrary F from random starts: %d converged, max %d iterations, "
              "%d flips, %d backtracks\n", kSamples, converged, max_iterations, flips, backtracks);
  EXPECT_GE(converged, kSamples * 99 / 100);
}

}  // namespace
}  // namespace cholsim::linalg
