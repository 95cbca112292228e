#include "fem/contact/obstacles.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace cholsim::fem {
namespace {

void expect_near(const Vec3& actual, const Vec3& expected, double tolerance = 1e-12) {
  EXPECT_NEAR(actual.x, expected.x, tolerance);
  EXPECT_NEAR(actual.y, expected.y, tolerance);
  EXPECT_NEAR(actual.z, expected.z, tolerance);
}

TEST(Obstacles, GroundDistanceIsHeightAboveIt) {
  const Obstacle ground = HalfSpace{{0.0, 1.0, 0.0}, -0.5};
  const auto above = proximity(ground, {3.0, 1.0, -2.0}, 0.0);
  EXPECT_DOUBLE_EQ(above.distance, 1.5);
  expect_near(above.normal, {0.0, 1.0, 0.0});
  EXPECT_DOUBLE_EQ(proximity(ground, {0.0, -1.0, 0.0}, 0.0).distance, -0.5);
}

TEST(Obstacles, SphereNormalPointsAwayFromCentre) {
  const Obstacle ball = Sphere{{1.0, 0.0, 0.0}, 0.5};
  const auto outside = proximity(ball, {1.0, 2.0, 0.0}, 0.0);
  EXPECT_DOUBLE_EQ(outside.distance, 1.5);
  expect_near(outside.normal, {0.0, 1.0, 0.0});
  EXPECT_DOUBLE_EQ(proximity(ball, {1.25, 0.0, 0.0}, 0.0).distance, -0.25);
}

TEST(Obstacles, CylinderSideCapAndRim) {
  const Obstacle cylinder = Cylinder{{0.0, 0.0, 0.0}, {0.0, 2.0, 0.0}, 1.0};
  const auto side = proximity(cylinder, {3.0, 1.0, 0.0}, 0.0);
  EXPECT_DOUBLE_EQ(side.distance, 2.0);
  expect_near(side.normal, {1.0, 0.0, 0.0});
  const auto cap = proximity(cylinder, {0.2, 2.5, 0.0}, 0.0);
  EXPECT_DOUBLE_EQ(cap.distance, 0.5);
  expect_near(cap.normal, {0.0, 1.0, 0.0});
  const auto rim = proximity(cylinder, {4.0, 6.0, 0.0}, 0.0);  // beyond edge: distance to the rim
  EXPECT_DOUBLE_EQ(rim.distance, 5.0);
  expect_near(rim.normal, {0.6, 0.8, 0.0});
  const auto inside = proximity(cylinder, {0.9, 1.0, 0.0}, 0.0);
  EXPECT_NEAR(inside.distance, -0.1, 1e-12);
  expect_near(inside.normal, {1.0, 0.0, 0.0});
}

TEST(Obstacles, PistonMovesOnlyDuringItsStroke) {
  const MovingBox piston{{0.0, 2.0, 0.0}, {1.0, 0.1, 1.0}, {0.0, -1.0, 0.0}, 1.0, 2.0};
  const Obstacle obstacle = piston;
  expect_near(piston.center_at(0.5), {0.0, 2.0, 0.0});
  expect_near(piston.center_at(1.5), {0.0, 1.5, 0.0});
  expect_near(piston.center_at(3.0), {0.0, 1.0, 0.0});
  const auto below = proximity(obstacle, {0.0, 1.0, 0.0}, 1.5);
  EXPECT_NEAR(below.distance, 0.4, 1e-12);
  expect_near(below.normal, {0.0, -1.0, 0.0});
  expect_near(below.velocity, {0.0, -1.0, 0.0});
  expect_near(proximity(obstacle, {0.0, 1.0, 0.0}, 2.5).velocity, {0.0, 0.0, 0.0});
  EXPECT_LT(proximity(obstacle, {0.5, 1.55, 0.0}, 1.5).distance, 0.0);
}

TEST(Obstacles, PistonWithAReturnTimeTravelsItsStrokeBack) {
  MovingBox piston{{0.0, 2.0, 0.0}, {1.0, 0.1, 1.0}, {0.0, -1.0, 0.0}, 1.0, 2.0};
  piston.return_time = 3.0;
  expect_near(piston.center_at(2.5), {0.0, 1.0, 0.0});  // holds between the strokes
  expect_near(piston.velocity_at(2.5), {0.0, 0.0, 0.0});
  expect_near(piston.center_at(3.25), {0.0, 1.25, 0.0});
  expect_near(piston.velocity_at(3.25), {0.0, 1.0, 0.0});
  expect_near(piston.center_at(9.0), {0.0, 2.0, 0.0});  // back where it started, at rest
  expect_near(piston.velocity_at(9.0), {0.0, 0.0, 0.0});
  expect_near(proximity(Obstacle{piston}, {0.0, 0.5, 0.0}, 3.5).velocity, {0.0, 1.0, 0.0});
}

TEST(Obstacles, NearestOfSeveralAndNoneIsInfinitelyFar) {
  const std::vector<Obstacle> scene{HalfSpace{}, Sphere{{0.0, 1.0, 0.0}, 0.25}};
  const auto nearest = nearest_obstacle(scene, {0.0, 0.6, 0.0}, 0.0);
  EXPECT_NEAR(nearest.distance, 0.15, 1e-12);
  expect_near(nearest.normal, {0.0, -1.0, 0.0});
  EXPECT_TRUE(std::isinf(nearest_obstacle({}, {0.0, 0.0, 0.0}, 0.0).distance));
}

}  // namespace
}  // namespace cholsim::fem
