// CONJAC's adaptivity metric (seed 002 §4.4.1): the rate of stretch Ṡ against central
// differences of the polar stretch, zero under rigid motion, and the region averages with
// their hysteresis switch.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "fem/conjac/liveliness.hpp"
#include "fem/elements/elastic_body.hpp"
#include "fem/mesh/procedural_meshes.hpp"
#include "linalg/polar_decomposition.hpp"

namespace cholsim::fem {
namespace {

using linalg::Mat3;
using linalg::Vec3;

double max_abs(const Mat3& m) {
  double value = 0.0;
  for (double e : m.entries) value = std::max(value, std::abs(e));
  return value;
}

TEST(Liveliness, StretchRateMatchesCentralDifferencesOfThePolarStretch) {
  const Mat3 f{{1.2, 0.3, -0.1, 0.2, 0.9, 0.25, -0.15, 0.1, 1.1}};
  const Mat3 f_dot{{0.4, -0.7, 0.2, 0.5, 0.1, -0.3, 0.6, 0.35, -0.2}};
  constexpr double h = 1e-6;
  const Mat3 ahead = linalg::polar_decomposition(f + h * f_dot).stretch;
  const Mat3 behind = linalg::polar_decomposition(f - (h * f_dot)).stretch;
  Mat3 difference = ahead;
  difference -= behind;
  const Mat3 expected = (1.0 / (2.0 * h)) * difference;
  Mat3 error = stretch_rate(f, f_dot);
  error -= expected;
  EXPECT_LE(max_abs(error), 1e-7 * max_abs(expected));
}

TEST(Liveliness, RigidMotionHasNoStretchRate) {
  const Mat3 rotation = linalg::polar_decomposition(Mat3{{0.8, -0.6, 0.1, 0.6, 0.8, 0.05, -0.1, 0.0, 1.0}}).rotation;
  const Mat3 spin{{0.0, -0.7, 0.3, 0.7, 0.0, -0.2, -0.3, 0.2, 0.0}};  // skew: d/dt R = W·R
  EXPECT_LE(max_abs(stretch_rate(rotation, spin * rotation)), 1e-12);
  // At F = I a symmetric rate is all stretch.
  const Mat3 symmetric{{0.3, 0.1, 0.0, 0.1, -0.2, 0.4, 0.0, 0.4, 0.5}};
  Mat3 error = stretch_rate(Mat3::identity(), symmetric);
  error -= symmetric;
  EXPECT_LE(max_abs(error), 1e-12);
}

TEST(Liveliness, RegionsSeeStretchingNotSpinningAndSwitchWithHysteresis) {
  TetMesh mesh = make_box_mesh(1.0, 0.25, 0.25, 8);
  const ElasticBody body = make_elastic_body(mesh, Material{});
  // Two representatives: the ends of the bar.
  std::vector<Index> representatives{0, 0};
  for (Index v = 0; v < mesh.node_count(); ++v) {
    if (mesh.positions[3 * v] > mesh.positions[3 * representatives[1]]) representatives[1] = v;
  }
  LivelinessMetric metric(body, representatives, {.window = 2, .activate = 0.1, .deactivate = 0.02});
  std::vector<double> spin(mesh.positions.size());
  std::vector<double> stretch(mesh.positions.size());
  for (Index v = 0; v < mesh.node_count(); ++v) {
    const double x = mesh.positions[3 * v], y = mesh.positions[3 * v + 1];
    spin[3 * v] = -2.0 * y;  // rotation about z at 2 rad/s
    spin[3 * v + 1] = 2.0 * x;
    stretch[3 * v] = x > 0.5 ? 4.0 * (x - 0.5) : 0.0;  // the far half stretches at 4/s: metric 4/9
  }
  auto values = metric.update(mesh.positions, spin);
  EXPECT_LE(values[0], 1e-12);
  EXPECT_LE(values[1], 1e-12);
  std::vector<char> active{1, 0};
  EXPECT_TRUE(metric.switch_states(active));
  EXPECT_EQ(active, (std::vector<char>{0, 0}));
  values = metric.update(mesh.positions, stretch);  // window of 2: half the stretching frame
  EXPECT_LE(values[0], 1e-12);
  EXPECT_GT(values[1], 0.1);
  EXPECT_TRUE(metric.switch_states(active));
  EXPECT_EQ(active, (std::vector<char>{0, 1}));
}

}  // namespace
}  // namespace cholsim::fem
