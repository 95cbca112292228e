// SimulationHealth (fem/health/simulation_health.hpp): each check stays silent on a physical
// state near its limit and fires on a broken one, once per kind, with the figure it saw.
#include "fem/health/simulation_health.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "fem/mesh/procedural_meshes.hpp"

namespace cholsim::fem {
namespace {

const Vec3 gravity{0.0, -9.81, 0.0};

/// A 0.4 x 0.2 x 0.2 m box resting 0.1 m above the ground y = 0, and the ground.
struct Scene {
  ElasticBody body;
  std::vector<Obstacle> ground{HalfSpace{}};
  std::vector<double> at_rest;

  Scene() : body(make_elastic_body(lifted_box(), Material{})), at_rest(body.rest.positions.size(), 0.0) {}

  static TetMesh lifted_box() {
    TetMesh mesh = make_box_mesh(0.4, 0.2, 0.2, 4);
    const auto box = bounding_box(mesh.positions);
    for (std::size_t i = 1; i < mesh.positions.size(); i += 3) mesh.positions[i] += 0.1 - box[1];
    return mesh;
  }

  SimulationHealth monitor() const { return SimulationHealth(body, gravity, ground, at_rest); }

  /// The rest positions moved by `offset`.
  std::vector<double> moved(const Vec3& offset) const {
    std::vector<double> positions = body.rest.positions;
    for (std::size_t i = 0; i < positions.size(); ++i) positions[i] += offset[static_cast<int>(i % 3)];
    return positions;
  }
  std::vector<double> uniform_velocity(const Vec3& velocity) const {
    std::vector<double> velocities(at_rest.size());
    for (std::size_t i = 0; i < velocities.size(); ++i) velocities[i] = velocity[static_cast<int>(i % 3)];
    return velocities;
  }
};

TEST(SimulationHealth, RestStateAndFreeFallAreHealthy) {
  const Scene scene;
  SimulationHealth health = scene.monitor();
  EXPECT_TRUE(health.check({0, 0.0, scene.body.rest.positions, scene.at_rest}).empty());
  // Free fall for 0.1 s, without the ground: position and speed of exact free fall keep the
  // kinetic + gravitational energy and stay inside the free-fall displacement bound.
  SimulationHealth no_ground(scene.body, gravity, {}, scene.at_rest);
  const double t = 0.1;
  const auto positions = scene.moved(Vec3{0.0, -0.5 * 9.81 * t * t, 0.0});
  const auto velocities = scene.uniform_velocity(Vec3{0.0, -9.81 * t, 0.0});
  EXPECT_TRUE(no_ground.check({1, t, positions, velocities}).empty());
  EXPECT_TRUE(no_ground.findings().empty());
  EXPECT_NEAR(health.model_size(), std::sqrt(0.4 * 0.4 + 0.2 * 0.2 + 0.2 * 0.2), 1e-12);
}

TEST(SimulationHealth, MirroredBodyIsInvertedEverywhere) {
  const Scene scene;
  SimulationHealth health = scene.monitor();
  std::vector<double> mirrored = scene.body.rest.positions;
  for (std::size_t i = 0; i < mirrored.size(); i += 3) mirrored[i] = -mirrored[i];
  const auto news = health.check({3, 0.05, mirrored, scene.at_rest});
  ASSERT_EQ(news, std::vector<HealthIssue>{HealthIssue::inverted_elements});
  const HealthFinding& finding = health.finding(HealthIssue::inverted_elements);
  EXPECT_EQ(finding.first_frame, 3);
  EXPECT_EQ(finding.first_value, static_cast<double>(scene.body.element_count()));
  EXPECT_DOUBLE_EQ(finding.threshold, 0.01 * static_cast<double>(scene.body.element_count()));
  EXPECT_NE(finding.description().find("elements inverted (det F <= 0) in frame 3"), std::string::npos);
}

TEST(SimulationHealth, UnconvergedSolverIsReportedOnceWithItsFrameCount) {
  const Scene scene;
  SimulationHealth health = scene.monitor();
  EXPECT_EQ(health.check({1, 0.1, scene.body.rest.positions, scene.at_rest, false}),
            std::vector<HealthIssue>{HealthIssue::solver_not_converged});
  EXPECT_TRUE(health.check({2, 0.2, scene.body.rest.positions, scene.at_rest, false}).empty());
  EXPECT_TRUE(health.check({3, 0.3, scene.body.rest.positions, scene.at_rest, true}).empty());
  EXPECT_EQ(health.finding(HealthIssue::solver_not_converged).frames, 2);
  EXPECT_EQ(health.finding(HealthIssue::solver_not_converged).first_frame, 1);
}

TEST(SimulationHealth, BodyFlungFarUpIsRunawayAndGainsEnergy) {
  const Scene scene;
  SimulationHealth health = scene.monitor();
  // 76 km up after 1 s, as a 10 s implicit step once launched a box (issue 23 D5).
  const auto news = health.check({1, 1.0, scene.moved(Vec3{0.0, 76e3, 0.0}), scene.at_rest});
  EXPECT_EQ(news, (std::vector<HealthIssue>{HealthIssue::runaway_displacement, HealthIssue::energy_growth}));
  const HealthFinding& energy = health.finding(HealthIssue::energy_growth);
  double mass = 0.0;
  for (double m : scene.body.node_masses) mass += m;
  EXPECT_NEAR(energy.first_value, mass * 9.81 * 76e3, 1e-6 * mass * 9.81 * 76e3);
  EXPECT_NEAR(energy.threshold, 10 * mass * 9.81 * health.model_size(), 1e-9 * energy.threshold);
  // Lifted 9 model sizes: inside both limits (10 for the energy, 100 for the distance).
  SimulationHealth near_limits = scene.monitor();
  EXPECT_TRUE(near_limits.check({1, 0.0, scene.moved(Vec3{0.0, 9 * health.model_size(), 0.0}), scene.at_rest}).empty());
}

TEST(SimulationHealth, NodeFasterThanAFallThroughTheAllowanceIsRunawaySpeed) {
  const Scene scene;
  SimulationHealth health = scene.monitor();
  // At t = 0.1 s: g·t plus √(2·g·100 L), L = 0.49 m — about 32 m/s.
  const double limit = 9.81 * 0.1 + std::sqrt(2.0 * 9.81 * 100.0 * health.model_size());
  std::vector<double> velocities = scene.at_rest;
  velocities[4] = 0.9 * limit;  // one node, sideways: fast, but a fall could explain it
  EXPECT_TRUE(health.check({1, 0.1, scene.body.rest.positions, velocities}).empty());
  velocities[4] = 41.0;  // the blown-up Baraff armadillo's speed at 0.1 s (issue 19, stop 53)
  EXPECT_EQ(health.check({2, 0.1, scene.body.rest.positions, velocities}),
            std::vector<HealthIssue>{HealthIssue::runaway_speed});
  const HealthFinding& finding = health.finding(HealthIssue::runaway_speed);
  EXPECT_NEAR(finding.threshold, limit, 1e-9 * limit);
  EXPECT_NE(finding.description().find("a node moves at 41 m/s in frame 2"), std::string::npos);
  // Without gravity there is no speed scale: not checked.
  SimulationHealth weightless(scene.body, Vec3{0.0, 0.0, 0.0}, {}, scene.at_rest);
  EXPECT_TRUE(weightless.check({1, 0.1, scene.body.rest.positions, velocities}).empty());
}

TEST(SimulationHealth, BodyThroughTheGroundIsPenetration) {
  const Scene scene;
  SimulationHealth health = scene.monitor();
  // Penalty contact lets nodes in by millimetres: the bottom 1 mm below the ground is fine.
  EXPECT_TRUE(health.check({1, 0.1, scene.moved(Vec3{0.0, -0.101, 0.0}), scene.at_rest}).empty());
  const auto news = health.check({2, 0.2, scene.moved(Vec3{0.0, -0.6, 0.0}), scene.at_rest});
  ASSERT_EQ(news, std::vector<HealthIssue>{HealthIssue::obstacle_penetration});
  EXPECT_NEAR(health.finding(HealthIssue::obstacle_penetration).first_value, 0.5, 1e-9);
  EXPECT_EQ(health.finding(HealthIssue::obstacle_penetration).first_frame, 2);
}

TEST(SimulationHealth, NonFiniteFiguresAreFindingsAndWrongSizesAreRejected) {
  const Scene scene;
  SimulationHealth health = scene.monitor();
  std::vector<double> broken = scene.body.rest.positions;
  broken[4] = std::nan("");
  const auto news = health.check({1, 0.1, broken, scene.at_rest});
  EXPECT_NE(std::find(news.begin(), news.end(), HealthIssue::runaway_displacement), news.end());
  EXPECT_THROW(health.check({1, 0.1, std::vector<double>(3), scene.at_rest}), std::invalid_argument);
  EXPECT_THROW(SimulationHealth(scene.body, gravity, {}, std::vector<double>(6)), std::invalid_argument);
  HealthThresholds negative;
  negative.inverted_fraction = -1.0;
  EXPECT_THROW(SimulationHealth(scene.body, gravity, {}, scene.at_rest, negative), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::fem
