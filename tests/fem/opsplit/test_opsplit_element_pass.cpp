// The fused element pass of operator splitting (fem/opsplit_element_pass: F(x̃), APD and
// DᵀK(r − Dx̃) in one pass, seed 003 Algorithm 2 lines 4–8) against an independent element by
// element evaluation with the SVD polar rotation, with fixed nodes, frozen rotations, and the
// result's independence of the thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "fem/opsplit/opsplit_element_pass.hpp"
#include "linalg/dense_matrix.hpp"
#include "linalg/generators.hpp"
#include "linalg/parallel_loops.hpp"
#include "linalg/polar_decomposition.hpp"
#include "linalg/vector_norms.hpp"

namespace cholsim::fem {
namespace {

using linalg::DenseMatrix;
using linalg::Mat3;
using linalg::max_abs;
using linalg::Quaternion;
using linalg::Vec3;

constexpr double kElementPassTimeStep = 0.01;

ElasticBody box(Index nx, Index ny, Index nz) {
  Material material;
  material.youngs_modulus = 2e5;
  material.poisson_ratio = 0.3;
  return make_elastic_body(linalg::structured_tet_box(nx, ny, nz, 0.1), material, "test box");
}

/// Rest positions twisted about y (up to ≈ 0.5 rad) and jittered: every element rotated and
/// stretched differently.
std::vector<double> deformed(const ElasticBody& body, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> jitter(-0.005, 0.005);
  std::vector<double> x = body.rest.positions;
  for (std::size_t i = 0; i < x.size(); i += 3) {
    const double angle = 1.5 * x[i + 1];
    const double px = x[i], pz = x[i + 2];
    x[i] = std::cos(angle) * px - std::sin(angle) * pz + jitter(rng);
    x[i + 1] += jitter(rng);
    x[i + 2] = std::sin(angle) * px + std::cos(angle) * pz + jitter(rng);
  }
  return x;
}

/// Every third node fixed (row −1), the others numbered in order.
std::vector<Index> rows_with_fixed_nodes(Index nodes, Index& free) {
  std::vector<Index> rows(static_cast<std::size_t>(nodes));
  free = 0;
  for (Index v = 0; v < nodes; ++v) rows[static_cast<std::size_t>(v)] = v % 3 == 0 ? -1 : free++;
  return rows;
}

Vec3 node(const std::vector<double>& x, Index v) {
  const auto i = static_cast<std::size_t>(3 * v);
  return {x[i], x[i + 1], x[i + 2]};
}

/// Σ_t DₜᵀKₜ(vec Rₜ − vec Fₜ) element by element from the rest positions: Dₘ, its inverse and
/// volume recomputed here, rotation(t, F) supplying Rₜ.
template <typename Rotation>
DenseMatrix reference_right_hand_side(const ElasticBody& body, const std::vector<double>& x,
                                      const std::vector<Index>& rows, Index free, Rotation rotation) {
  DenseMatrix rhs(free, 3);
  const double mu = body.lame[0].mu;
  for (Index t = 0; t < body.element_count(); ++t) {
    const auto nodes = body.element_nodes(t);
    const Vec3 rest0 = node(body.rest.positions, nodes[0]), x0 = node(x, nodes[0]);
    const Mat3 dm = Mat3::from_columns(node(body.rest.positions, nodes[1]) - rest0,
                                       node(body.rest.positions, nodes[2]) - rest0,
                                       node(body.rest.positions, nodes[3]) - rest0);
    const Mat3 ds = Mat3::from_columns(node(x, nodes[1]) - x0, node(x, nodes[2]) - x0, node(x, nodes[3]) - x0);
    const Mat3 b = linalg::inverse(dm);
    const Mat3 f = ds * b;
    const double h = kElementPassTimeStep;
    const Mat3 p = (2.0 * mu * linalg::determinant(dm) / 6.0 * h * h) * (rotation(t, f) - f);
    std::array<Vec3, 4> g{};
    for (int k = 1; k < 4; ++k) g[static_cast<std::size_t>(k)] = b.row(k - 1);
    g[0] = -(g[1] + g[2] + g[3]);
    for (std::size_t k = 0; k < 4; ++k) {
      const Index row = rows[static_cast<std::size_t>(nodes[k])];
      if (row < 0) continue;
      const Vec3 force = p * g[k];
      for (Index c = 0; c < 3; ++c) rhs(row, c) += force[c];
    }
  }
  return rhs;
}

/// Entry (row, c) of a right-hand side in the pass's layout.
double rhs_entry(const std::vector<double>& rhs, Index row, Index c) {
  return rhs[kRightHandSideStride * static_cast<std::size_t>(row) + static_cast<std::size_t>(c)];
}

TEST(OpsplitElementPass, MatchesElementByElementReferenceWithSvdRotations) {
  const ElasticBody body = box(4, 3, 3);
  Index free = 0;
  const std::vector<Index> rows = rows_with_fixed_nodes(body.node_count(), free);
  OpsplitElementPass pass(body, rows, free, kElementPassTimeStep);
  const std::vector<double> x = deformed(body, 3);
  std::vector<double> rhs(kRightHandSideStride * static_cast<std::size_t>(free), 123.0);  // overwritten, not accumulated
  OpsplitElementPassOptions options;
  options.apd.tolerance = 1e-12;
  const linalg::ApdBatchStats stats = pass.run(x, rhs, options);
  EXPECT_GT(stats.vector_iterations, 0);
  EXPECT_EQ(stats.unconverged, 0);

  const DenseMatrix expected =
      reference_right_hand_side(body, x, rows, free, [](Index, const Mat3& f) { return linalg::polar_rotation(f); });
  const double scale = max_abs(expected.storage());
  ASSERT_GT(scale, 0.0);
  for (Index i = 0; i < free; ++i) {
    for (Index c = 0; c < 3; ++c) {
      EXPECT_NEAR(rhs_entry(rhs, i, c), expected(i, c), 1e-10 * scale) << "row " << i << " col " << c;
    }
    EXPECT_EQ(rhs_entry(rhs, i, 3), 0.0) << "row " << i << ": the unused value";
  }
  double largest_angle = 0.0;
  for (Index t = 0; t < body.element_count(); ++t) {
    largest_angle = std::max(largest_angle, linalg::rotation_angle(linalg::to_rotation_matrix(pass.rotation(t))));
  }
  EXPECT_GT(largest_angle, 0.1);  // the twist is not the identity
}

TEST(OpsplitElementPass, FrozenRotationsStayAndEnterTheRightHandSide) {
  const ElasticBody body = box(3, 3, 2);
  Index free = 0;
  const std::vector<Index> rows = rows_with_fixed_nodes(body.node_count(), free);
  OpsplitElementPass pass(body, rows, free, kElementPassTimeStep);
  const std::vector<double> x = deformed(body, 4);
  std::vector<double> rhs(kRightHandSideStride * static_cast<std::size_t>(free));
  OpsplitElementPassOptions options;
  options.update_rotations = false;
  EXPECT_EQ(pass.run(x, rhs, options).vector_iterations, 0);
  for (Index t = 0; t < body.element_count(); ++t) EXPECT_EQ(pass.rotation(t), Quaternion{});
  const DenseMatrix expected =
      reference_right_hand_side(body, x, rows, free, [](Index, const Mat3&) { return Mat3::identity(); });
  const double scale = max_abs(expected.storage());
  for (Index i = 0; i < free; ++i) {
    for (Index c = 0; c < 3; ++c) EXPECT_NEAR(rhs_entry(rhs, i, c), expected(i, c), 1e-13 * scale);
  }
}

TEST(OpsplitElementPass, ResultDoesNotDependOnThreadCount) {
  // 18252 tets and 2482 free nodes: enough for the threaded blocks and the threaded scatter.
  const ElasticBody body = box(18, 13, 13);
  Index free = 0;
  const std::vector<Index> rows = rows_with_fixed_nodes(body.node_count(), free);
  const std::vector<double> x = deformed(body, 5);
  const OpsplitElementPass initial(body, rows, free, kElementPassTimeStep);
  OpsplitElementPass one = initial;
  std::vector<double> rhs_one(kRightHandSideStride * static_cast<std::size_t>(free));
  OpsplitElementPassOptions options;
  options.threads = 1;
  const linalg::ApdBatchStats stats_one = one.run(x, rhs_one, options);
  for (int threads : {2, 3}) {
    OpsplitElementPass pass = initial;
    std::vector<double> rhs(rhs_one.size());
    options.threads = threads;
    const linalg::ApdBatchStats stats = pass.run(x, rhs, options);
    ASSERT_GE(free, linalg::kMinParallelIterations);
    EXPECT_EQ(rhs, rhs_one) << threads << " threads";
    EXPECT_EQ(stats.vector_iterations, stats_one.vector_iterations);
    for (Index t = 0; t < body.element_count(); ++t) {
      EXPECT_EQ(pass.rotation(t), one.rotation(t)) << "element " << t << ", " << threads << " threads";
    }
  }
}

/// `x` turned by `angle` about the axis (1, 2, 2)/3 through the origin.
std::vector<double> turned(std::vector<double> x, double angle) {
  const Vec3 axis{1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0};
  const double c = std::cos(angle), s = std::sin(angle);
  for (std::size_t i = 0; i < x.size(); i += 3) {
    const Vec3 p{x[i], x[i + 1], x[i + 2]};
    const Vec3 q = c * p + s * linalg::cross(axis, p) + (1.0 - c) * linalg::dot(axis, p) * axis;
    for (std::size_t r = 0; r < 3; ++r) x[i + r] = q[r];
  }
  return x;
}

// A deformed body turning at a steady rate, 0.05 rad a step. Warm-started at the previous
// rotation, every block takes at least two Newton steps (one to move 0.05 rad, one to see it
// is done; three here, for the twisted elements);
// extrapolated, the start is exact up to rounding from the third step on, and each block stops
// after one. Both give the polar rotation to the APD's tolerance squared, and the extrapolated
// pass does not depend on the thread count either.
TEST(OpsplitElementPass, ExtrapolatedWarmStartFollowsASteadyTurnInOneNewtonStep) {
  const ElasticBody body = box(18, 13, 13);
  Index free = 0;
  const std::vector<Index> rows = rows_with_fixed_nodes(body.node_count(), free);
  const std::vector<double> shape = deformed(body, 7);
  const OpsplitElementPass initial(body, rows, free, kElementPassTimeStep);
  OpsplitElementPass previous = initial, extrapolated = initial, extrapolated_two_threads = initial;
  const Index blocks = (body.element_count() + OpsplitElementPass::kLanes - 1) / OpsplitElementPass::kLanes;
  std::vector<double> rhs(kRightHandSideStride * static_cast<std::size_t>(free));
  std::vector<double> rhs_two_threads(rhs.size());
  OpsplitElementPassOptions options;  // τ = 1e-3
  options.threads = 1;
  OpsplitElementPassOptions extrapolating = options;
  extrapolating.extrapolate_rotations = true;
  OpsplitElementPassOptions extrapolating_two_threads = extrapolating;
  extrapolating_two_threads.threads = 2;
  for (int step = 0; step < 5; ++step) {
    const std::vector<double> x = turned(shape, 0.05 * step);
    const linalg::ApdBatchStats from_previous = previous.run(x, rhs, options);
    const linalg::ApdBatchStats from_extrapolation = extrapolated.run(x, rhs, extrapolating);
    extrapolated_two_threads.run(x, rhs_two_threads, extrapolating_two_threads);
    EXPECT_EQ(rhs_two_threads, rhs) << "step " << step;
    EXPECT_EQ(from_extrapolation.unconverged, 0);
    if (step >= 1) {
      EXPECT_GE(from_previous.vector_iterations, 2 * blocks) << "step " << step;
    }
    if (step >= 2) {
      EXPECT_EQ(from_extrapolation.vector_iterations, blocks) << "step " << step;
    }
    double worst = 0.0;
    for (Index t = 0; t < body.element_count(); t += 7) {
      const auto nodes = body.element_nodes(t);
      const Vec3 x0 = node(x, nodes[0]);
      const Mat3 ds = Mat3::from_columns(node(x, nodes[1]) - x0, node(x, nodes[2]) - x0, node(x, nodes[3]) - x0);
      const Mat3 exact = linalg::polar_rotation(ds * body.rest_shape_inverse[static_cast<std::size_t>(t)]);
      const Mat3 r = linalg::to_rotation_matrix(extrapolated.rotation(t));
      worst = std::max(worst, linalg::rotation_distance(exact, r));
      EXPECT_EQ(extrapolated_two_threads.rotation(t), extrapolated.rotation(t)) << "element " << t;
    }
    EXPECT_LT(worst, 1e-5) << "step " << step;
  }
}

TEST(OpsplitElementPass, SinglePrecisionMatchesTheReferenceToFloatAccuracyForAnyThreadCount) {
  // 16 elements a block in float; the edges are formed in double, so the error is float rounding
  // of F (≈ 1e-7) on R − F, which is a few hundredths here: ~1e-5 of the forces.
  const ElasticBody body = box(18, 13, 13);
  Index free = 0;
  const std::vector<Index> rows = rows_with_fixed_nodes(body.node_count(), free);
  const std::vector<double> x = deformed(body, 6);
  const OpsplitElementPassOf<float> initial(body, rows, free, kElementPassTimeStep);
  const DenseMatrix expected =
      reference_right_hand_side(body, x, rows, free, [](Index, const Mat3& f) { return linalg::polar_rotation(f); });
  const double scale = max_abs(expected.storage());
  ASSERT_GT(scale, 0.0);
  std::vector<double> rhs_one;
  for (int threads : {1, 2}) {
    OpsplitElementPassOf<float> pass = initial;
    std::vector<double> rhs(kRightHandSideStride * static_cast<std::size_t>(free));
    OpsplitElementPassOptions options;
    options.apd.tolerance = 1e-4;
    options.threads = threads;
    const linalg::ApdBatchStats stats = pass.run(x, rhs, options);
    EXPECT_EQ(stats.unconverged, 0);
    double worst = 0.0;
    for (Index i = 0; i < free; ++i) {
      for (Index c = 0; c < 3; ++c) worst = std::max(worst, std::abs(rhs_entry(rhs, i, c) - expected(i, c)));
      EXPECT_EQ(rhs_entry(rhs, i, 3), 0.0);
    }
    EXPECT_LT(worst, 1e-4 * scale) << threads << " threads";
    EXPECT_GT(worst, 0.0) << "single precision should not reproduce double to the last bit";
    for (Index t = 0; t < body.element_count(); t += 97) {
      const Mat3 f_rotation = linalg::to_rotation_matrix(pass.rotation(t));
      EXPECT_NEAR(linalg::determinant(f_rotation), 1.0, 1e-5);
    }
    if (threads == 1) {
      rhs_one = rhs;
    } else {
      EXPECT_EQ(rhs, rhs_one) << "the sums do not depend on the thread count";
    }
  }
}

TEST(OpsplitElementPass, RejectsBadSizes) {
  const ElasticBody body = box(1, 1, 1);
  Index free = 0;
  std::vector<Index> rows = rows_with_fixed_nodes(body.node_count(), free);
  EXPECT_THROW(OpsplitElementPass(body, std::span(rows).first(2), free, kElementPassTimeStep), std::invalid_argument);
  EXPECT_THROW(OpsplitElementPass(body, rows, free, 0.0), std::invalid_argument);
  rows[1] = free;  // one past the last row
  EXPECT_THROW(OpsplitElementPass(body, rows, free, kElementPassTimeStep), std::invalid_argument);
  rows = rows_with_fixed_nodes(body.node_count(), free);
  OpsplitElementPass pass(body, rows, free, kElementPassTimeStep);
  const std::vector<double>& x = body.rest.positions;
  std::vector<double> wrong(3 * static_cast<std::size_t>(free)), right(kRightHandSideStride * static_cast<std::size_t>(free));
  EXPECT_NO_THROW(pass.run(x, right, {}));
  EXPECT_THROW(pass.run(x, wrong, {}), std::invalid_argument);  // three values a row
  EXPECT_THROW(pass.run(std::vector<double>(5), right, {}), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::fem
