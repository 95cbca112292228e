// Compliant volume constraints of seed 003 §3.2 (eq. 13–16): more Gauss–Seidel sweeps bring
// det F closer to 1 on a compressed mesh; nodes with zero inverse mass do not move; the
// colouring makes the sweep independent of the thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "fem/opsplit/opsplit_color_loops.hpp"
#include "fem/opsplit/volume_constraints.hpp"
#include "linalg/generators.hpp"

namespace cholsim::fem {
namespace {

ElasticBody box(Index n) {
  Material material;
  material.youngs_modulus = 1e6;
  material.poisson_ratio = 0.45;
  return make_elastic_body(linalg::structured_tet_box(n, n, n, 0.1), material, "test box");
}

std::vector<double> compressed(const ElasticBody& body, double factor) {
  std::vector<double> x = body.rest.positions;
  for (std::size_t i = 1; i < x.size(); i += 3) x[i] *= factor;  // squash along y
  return x;
}

std::vector<double> inverse_masses(const ElasticBody& body) {
  std::vector<double> w(body.node_masses.size());
  for (std::size_t v = 0; v < w.size(); ++v) w[v] = 1.0 / body.node_masses[v];
  return w;
}

TEST(VolumeConstraints, MoreSweepsDriveDetFTowardOne) {
  const ElasticBody body = box(3);
  VolumeConstraints constraints(body, 0.01, inverse_masses(body));
  const std::vector<double> start = compressed(body, 0.7);
  const double initial = max_volume_error(body, start);
  EXPECT_NEAR(initial, 0.3, 1e-12);
  // One sweep may overshoot single elements (Gauss–Seidel neighbours pull them along); the
  // maximum error then falls with every further sweep.
  double previous = std::numeric_limits<double>::infinity();
  for (int iterations : {1, 5, 20}) {
    std::vector<double> x = start;
    constraints.project(x, iterations);
    const double error = max_volume_error(body, x);
    std::printf("%2d sweeps: max |det F - 1| = %.4f\n", iterations, error);
    EXPECT_LT(error, previous) << iterations << " sweeps";
    previous = error;
  }
  EXPECT_LT(previous, 0.1 * initial);
}

TEST(VolumeConstraints, ZeroInverseMassNodesDoNotMove) {
  const ElasticBody body = box(2);
  std::vector<double> x = compressed(body, 0.8);
  const std::vector<double> start = x;
  std::vector<double> w = inverse_masses(body);
  for (std::size_t v = 0; v < w.size(); v += 2) w[v] = 0.0;
  VolumeConstraints constraints(body, 0.01, w);
  constraints.project(x, 5);
  bool moved = false;
  for (std::size_t v = 0; v < w.size(); ++v) {
    for (std::size_t c = 0; c < 3; ++c) {
      if (w[v] == 0.0) {
        EXPECT_EQ(x[3 * v + c], start[3 * v + c]);
      }
      moved = moved || x[3 * v + c] != start[3 * v + c];
    }
  }
  EXPECT_TRUE(moved);
}

TEST(VolumeConstraints, ResultDoesNotDependOnThreadCount) {
  const ElasticBody body = box(20);  // 48000 tets: most colours large enough to be split
  const std::vector<Index> color = greedy_element_colors(body.rest);
  ASSERT_GE(std::count(color.begin(), color.end(), 0), kMinParallelColorItems);
  VolumeConstraints constraints(body, 0.01, inverse_masses(body));
  EXPECT_GT(constraints.color_count(), 1);
  const std::vector<double> start = compressed(body, 0.8);
  std::vector<double> one = start;
  constraints.project(one, 2, 1);
  for (int threads : {2, 3}) {
    std::vector<double> x = start;
    constraints.project(x, 2, threads);
    EXPECT_EQ(x, one) << threads << " threads";
  }
}

/// One Gauss–Seidel sweep of eq. 14–16 done plainly, constraint after constraint, in the order
/// the class documents (colour by colour, element order within a colour), with eq. 15's
/// compliance α = 1/(λVΔt²) as printed.
std::vector<double> reference_sweep(const ElasticBody& body, std::vector<double> x, const std::vector<double>& w,
                                    double dt) {
  const std::vector<Index> color = greedy_element_colors(body.rest);
  const Index colors = *std::max_element(color.begin(), color.end()) + 1;
  const auto position = [&](Index v) {
    const auto i = static_cast<std::size_t>(3 * v);
    return linalg::Vec3{x[i], x[i + 1], x[i + 2]};
  };
  for (Index k = 0; k < colors; ++k) {
    for (Index e = 0; e < body.element_count(); ++e) {
      if (color[static_cast<std::size_t>(e)] != k) continue;
      const auto nodes = body.element_nodes(e);
      const double volume = body.rest_volumes[static_cast<std::size_t>(e)];
      const linalg::Vec3 p0 = position(nodes[0]);
      const linalg::Vec3 e1 = position(nodes[1]) - p0, e2 = position(nodes[2]) - p0, e3 = position(nodes[3]) - p0;
      const double c = dot(cross(e1, e2), e3) / (6.0 * volume) - 1.0;
      std::array<linalg::Vec3, 4> g{{{}, cross(e2, e3) / (6.0 * volume), cross(e3, e1) / (6.0 * volume),
                                     cross(e1, e2) / (6.0 * volume)}};
      g[0] = -(g[1] + g[2] + g[3]);
      double denominator = 1.0 / (body.lame[static_cast<std::size_t>(e)].lambda * volume * dt * dt);
      for (std::size_t n = 0; n < 4; ++n) denominator += w[static_cast<std::size_t>(nodes[n])] * squared_norm(g[n]);
      const double delta = -c / denominator;  // κ = 0: the first sweep of a step
      for (std::size_t n = 0; n < 4; ++n) {
        for (std::size_t r = 0; r < 3; ++r) {
          x[3 * static_cast<std::size_t>(nodes[n]) + r] += w[static_cast<std::size_t>(nodes[n])] * delta * g[n][static_cast<int>(r)];
        }
      }
    }
  }
  return x;
}

TEST(VolumeConstraints, OneSweepEqualsThePlainSequentialUpdate) {
  const ElasticBody body = box(4);
  VolumeConstraints constraints(body, 0.01, inverse_masses(body));
  std::vector<double> x = compressed(body, 0.75);
  x[4] += 0.01;  // not a uniform squash
  const std::vector<double> expected = reference_sweep(body, x, inverse_masses(body), 0.01);
  constraints.project(x, 1);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], expected[i], 1e-13) << i;
}

TEST(VolumeConstraints, SinglePrecisionSweepMovesNodesAsThePlainUpdateToFloatAccuracy) {
  // Float arithmetic on edges formed in double; displacements added to the double positions,
  // so the error is float rounding of the motion (here up to ≈ 1 cm), not of the positions.
  const ElasticBody body = box(4);
  VolumeConstraintsOf<float> constraints(body, 0.01, inverse_masses(body));
  std::vector<double> x = compressed(body, 0.75);
  x[4] += 0.01;
  const std::vector<double> expected = reference_sweep(body, x, inverse_masses(body), 0.01);
  double largest_motion = 0.0, worst = 0.0;
  std::vector<double> moved = x;
  constraints.project(moved, 1);
  for (std::size_t i = 0; i < x.size(); ++i) {
    largest_motion = std::max(largest_motion, std::abs(expected[i] - x[i]));
    worst = std::max(worst, std::abs(moved[i] - expected[i]));
  }
  ASSERT_GT(largest_motion, 1e-3);
  EXPECT_LT(worst, 1e-5 * largest_motion);
  // Multipliers and edges of 16-lane blocks: the thread count still does not matter.
  const ElasticBody big = box(20);
  VolumeConstraintsOf<float> many(big, 0.01, inverse_masses(big));
  const std::vector<double> start = compressed(big, 0.8);
  std::vector<double> one = start, two = start;
  many.project(one, 2, 1);
  many.project(two, 2, 2);
  EXPECT_EQ(one, two);
}

TEST(VolumeConstraints, ZeroLameLambdaMeansNoVolumeTerm) {
  Material material;
  material.poisson_ratio = 0.0;  // λ = 0: α = ∞, the constraint has no stiffness
  const ElasticBody body = make_elastic_body(linalg::structured_tet_box(2, 2, 2, 0.1), material, "test box");
  VolumeConstraints constraints(body, 0.01, inverse_masses(body));
  std::vector<double> x = compressed(body, 0.8);
  const std::vector<double> start = x;
  constraints.project(x, 3);
  EXPECT_EQ(x, start);
}

TEST(VolumeConstraints, RejectsBadSizes) {
  const ElasticBody body = box(1);
  EXPECT_THROW(VolumeConstraints(body, 0.0, inverse_masses(body)), std::invalid_argument);
  VolumeConstraints constraints(body, 0.01, inverse_masses(body));
  std::vector<double> x(5);
  EXPECT_THROW(constraints.project(x, 1), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::fem
