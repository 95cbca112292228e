#include "fem/contact/obstacles.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

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

TEST(Obstacles, BowlHoldsFromInsideAndIsOpenAtTheTop) {
  const Obstacle bowl = Bowl{{0.0, 1.0, 0.0}, 0.5};
  // In the cavity, 0.1 above the bottom: the wall pushes up, towards the centre.
  const auto bottom = proximity(bowl, {0.0, 0.6, 0.0}, 0.0);
  EXPECT_NEAR(bottom.distance, 0.1, 1e-15);
  expect_near(bottom.normal, {0.0, 1.0, 0.0});
  // Through the wall: negative, the normal pointing back into the cavity.
  const auto through = proximity(bowl, {0.6, 1.0 - 1e-12, 0.0}, 0.0);
  EXPECT_NEAR(through.distance, -0.1, 1e-9);
  expect_near(through.normal, {-1.0, 0.0, 0.0}, 1e-9);
  // Above the opening: the distance to the rim, continuous with the cavity's at rim height.
  EXPECT_NEAR(proximity(bowl, {0.3, 1.0 + 1e-12, 0.0}, 0.0).distance, 0.2, 1e-9);
  EXPECT_NEAR(proximity(bowl, {0.0, 2.0, 0.0}, 0.0).distance, std::sqrt(1.25), 1e-12);
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

/// The normal must be the gradient of the distance: compare with central differences at
/// random points away from the shape's surface-less creases (core curve, medial surfaces).
void expect_normals_are_distance_gradients(const Obstacle& obstacle, const Vec3& low, const Vec3& high,
                                           unsigned seed) {
  std::mt19937 random(seed);
  const double step = 1e-6;
  int checked = 0;
  for (int n = 0; n < 500; ++n) {
    Vec3 point;
    for (int axis = 0; axis < 3; ++axis) point[axis] = std::uniform_real_distribution<double>(low[axis], high[axis])(random);
    const auto here = proximity(obstacle, point, 0.0);
    Vec3 gradient;
    for (int axis = 0; axis < 3; ++axis) {
      Vec3 offset;
      offset[axis] = step;
      gradient[axis] = (proximity(obstacle, point + offset, 0.0).distance -
                        proximity(obstacle, point - offset, 0.0).distance) / (2.0 * step);
    }
    if (std::abs(linalg::norm(gradient) - 1.0) > 1e-4) continue;  // a kink of the distance: skip
    ++checked;
    expect_near(here.normal, gradient, 1e-5);
    expect_near(here.velocity, {0.0, 0.0, 0.0});
  }
  EXPECT_GT(checked, 450);
}

TEST(Obstacles, CapsuleSideEndsAndInside) {
  const Obstacle capsule = Capsule{{0.0, 0.0, 0.0}, {0.0, 2.0, 0.0}, 0.5};
  const auto side = proximity(capsule, {3.0, 1.0, 0.0}, 0.0);
  EXPECT_DOUBLE_EQ(side.distance, 2.5);
  expect_near(side.normal, {1.0, 0.0, 0.0});
  // Beyond an end the rounded cap is a sphere about that end point (a cylinder would be flat).
  const auto beyond_end = proximity(capsule, {3.0, 6.0, 0.0}, 0.0);
  EXPECT_DOUBLE_EQ(beyond_end.distance, 4.5);
  expect_near(beyond_end.normal, {0.6, 0.8, 0.0});
  const auto below = proximity(capsule, {0.0, -1.0, 0.0}, 0.0);
  EXPECT_DOUBLE_EQ(below.distance, 0.5);
  expect_near(below.normal, {0.0, -1.0, 0.0});
  const auto inside = proximity(capsule, {0.0, 2.25, 0.0}, 0.0);
  EXPECT_DOUBLE_EQ(inside.distance, -0.25);
  expect_near(inside.normal, {0.0, 1.0, 0.0});
  // On the core segment the depth is the radius and the normal some unit direction across it.
  const auto on_core = proximity(capsule, {0.0, 1.0, 0.0}, 0.0);
  EXPECT_DOUBLE_EQ(on_core.distance, -0.5);
  EXPECT_NEAR(linalg::norm(on_core.normal), 1.0, 1e-12);
  EXPECT_NEAR(on_core.normal.y, 0.0, 1e-12);
  // A zero-length capsule is a sphere.
  EXPECT_DOUBLE_EQ(proximity(Capsule{{1.0, 1.0, 1.0}, {1.0, 1.0, 1.0}, 0.5}, {1.0, 3.0, 1.0}, 0.0).distance, 1.5);
}

TEST(Obstacles, CapsuleNormalIsTheDistanceGradient) {
  expect_normals_are_distance_gradients(Capsule{{-0.5, 0.2, 0.1}, {0.7, -0.3, 0.9}, 0.3}, {-1.5, -1.5, -1.0},
                                        {1.5, 1.5, 2.0}, 21);
}

TEST(Obstacles, HalfTorusAlongTheArcAtItsEndsAndInside) {
  // Arch of radius 2 in the x–y plane from +x through +y to −x, tube radius 0.5.
  const Obstacle arch = HalfTorus{{0.0, 0.0, 0.0}, {0.0, 0.0, 1.0}, {1.0, 0.0, 0.0}, 2.0, 0.5};
  const auto outer = proximity(arch, {0.0, 3.0, 0.0}, 0.0);  // beyond the arc's midpoint
  EXPECT_DOUBLE_EQ(outer.distance, 0.5);
  expect_near(outer.normal, {0.0, 1.0, 0.0});
  const auto diagonal = proximity(arch, {2.0, 2.0, 0.0}, 0.0);
  EXPECT_NEAR(diagonal.distance, 2.0 * std::sqrt(2.0) - 2.5, 1e-12);
  expect_near(diagonal.normal, {std::sqrt(0.5), std::sqrt(0.5), 0.0});
  const auto above = proximity(arch, {-2.0 * std::sqrt(0.5), 2.0 * std::sqrt(0.5), 1.5}, 0.0);
  EXPECT_NEAR(above.distance, 1.0, 1e-12);
  expect_near(above.normal, {0.0, 0.0, 1.0});
  // The open side (y < 0): hemispherical end caps about (±2, 0, 0), not a full torus.
  const auto past_start = proximity(arch, {2.0, -1.0, 0.0}, 0.0);
  EXPECT_DOUBLE_EQ(past_start.distance, 0.5);
  expect_near(past_start.normal, {0.0, -1.0, 0.0});
  const auto past_end = proximity(arch, {-2.6, -0.8, 0.0}, 0.0);
  EXPECT_NEAR(past_end.distance, 0.5, 1e-12);
  expect_near(past_end.normal, {-0.6, -0.8, 0.0});
  EXPECT_NEAR(proximity(arch, {0.0, -2.0, 0.0}, 0.0).distance, 2.0 * std::sqrt(2.0) - 0.5, 1e-12);
  // The centre: every arc point is at the arch radius.
  EXPECT_DOUBLE_EQ(proximity(arch, {0.0, 0.0, 0.0}, 0.0).distance, 1.5);
  const auto inside = proximity(arch, {0.0, 2.0, -0.25}, 0.0);
  EXPECT_DOUBLE_EQ(inside.distance, -0.25);
  expect_near(inside.normal, {0.0, 0.0, -1.0});
  EXPECT_DOUBLE_EQ(proximity(arch, {0.0, 2.0, 0.0}, 0.0).distance, -0.5);  // on the core curve
}

TEST(Obstacles, HalfTorusInAnyPlaneAndDirection) {
  // Arch in the y–z plane (axis x) centred at (1, 1, 1), starting towards +z (the given start
  // direction leans along the axis and is orthogonalized) and turning
  // about +x: x × z = −y, so the arc passes through the centre + (0, −2, 0).
  const Obstacle arch = HalfTorus{{1.0, 1.0, 1.0}, {3.0, 0.0, 0.0}, {0.7, 0.0, 2.0}, 2.0, 0.25};
  const auto mid = proximity(arch, {1.0, -2.0, 1.0}, 0.0);
  EXPECT_NEAR(mid.distance, 0.75, 1e-12);
  expect_near(mid.normal, {0.0, -1.0, 0.0});
  // Opposite the midpoint lies the open side: the nearer arc ends are (1, 1, 3) and (1, 1, −1).
  const auto open_side = proximity(arch, {1.0, 3.0, 2.5}, 0.0);
  EXPECT_NEAR(open_side.distance, std::hypot(2.0, 0.5) - 0.25, 1e-12);
  expect_near(proximity(arch, {1.0, 3.0, 1.0}, 0.0).normal, linalg::normalized(Vec3{0.0, 2.0, -2.0}), 1e-12);
  expect_normals_are_distance_gradients(arch, {-1.0, -2.0, -2.0}, {3.0, 4.0, 4.0}, 22);
}

}  // namespace
}  // namespace cholsim::fem
