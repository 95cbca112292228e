#include "fem/articulated/articulated_scenes.hpp"

#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace cholsim::fem::articulated {
namespace {

constexpr double pi = std::numbers::pi;

BodySpec cuboid(const Vec3& sides, const Vec3& centre_in_joint) {
  BodySpec body;
  body.sides = sides;
  body.in_joint = RigidTransform::translated(centre_in_joint);
  return body;
}

JointSpec revolute(int parent, const Vec3& axis, const RigidTransform& in_parent, double angle = 0.0) {
  JointSpec joint;
  joint.kind = JointKind::revolute;
  joint.parent = parent;
  joint.axis = axis;
  joint.in_parent = in_parent;
  joint.initial_positions = {angle};
  return joint;
}

BodySpec shaped(BodyShape shape, const Vec3& sides, const RigidTransform& in_joint) {
  BodySpec body;
  body.shape = shape;
  body.sides = sides;
  body.in_joint = in_joint;
  return body;
}

JointSpec fixed_to(int parent) {
  JointSpec joint;
  joint.kind = JointKind::fixed;
  joint.parent = parent;
  return joint;
}

/// REDMAX scene 33, "External friction 4-bar linkage": a free bar carrying a Grashof four-bar
/// (one loop closure) whose crank is driven at 2 rev/s, standing on four spheres on the floor,
/// friction 0.8 in the joints and on the floor, Baumgarte 0.1/h, h = 5e-3, 1 s. The links in
/// REDMAX's traversal order, which is the order testRedMaxScenes.m adds them (its
/// getTraversalOrder numbers the joints as it meets them, so the permutation it returns is the
/// identity).
ArticulatedScene redmax_four_bar_on_the_floor() {
  ArticulatedScene scene;
  scene.name = "redmax33: external friction, four-bar linkage";
  scene.time_step = 5e-3;
  scene.duration = 1.0;
  scene.joint_friction = true;
  scene.joint_friction_coefficient = 0.8;
  const Vec3 y{0.0, 1.0, 0.0};
  auto revolute_on = [&](int parent, const Vec3& at) {
    JointSpec joint = revolute(parent, y, RigidTransform::translated(at));
    joint.radius = joint.height = 0.5;
    return joint;
  };
  JointSpec free;
  free.kind = JointKind::free;
  free.in_parent = RigidTransform::translated({0.0, 0.0, 1.0});
  ArticulatedSystem& system = scene.system;
  system.add_link(shaped(BodyShape::cuboid, {10.0, 0.5, 0.5}, {}), free);
  system.add_link(shaped(BodyShape::cuboid, {4.0, 0.5, 0.5}, RigidTransform::translated({2.0, 0.0, 0.0})),
                  revolute_on(0, {-5.0, 0.0, 0.0}));
  // The coupler closes a triangle of sides 6, 12 and 14 (its height from Heron's formula).
  const double s = 0.5 * (6.0 + 12.0 + 14.0);
  const double z = 2.0 * std::sqrt(s * (s - 6.0) * (s - 12.0) * (s - 14.0)) / 6.0;
  const double x = std::sqrt(14.0 * 14.0 - z * z);
  system.add_link(shaped(BodyShape::cuboid, {14.0, 0.5, 0.5},
                         {axis_angle_rotation(y, -std::atan2(z, x)), {0.5 * x, 0.0, 0.5 * z}}),
                  revolute_on(1, {4.0, 0.0, 0.0}));
  const double x4 = x - 6.0;
  system.add_link(shaped(BodyShape::cuboid, {12.0, 0.5, 0.5},
                         {axis_angle_rotation(y, -std::atan2(z, x4)), {-0.5 * x4, 0.0, -0.5 * z}}),
                  revolute_on(2, {x, 0.0, z}));
  const auto sphere_at = [](const Vec3& centre) {
    return shaped(BodyShape::sphere, {2.0, 2.0, 2.0}, RigidTransform::translated(centre));
  };
  system.add_link(sphere_at({-5.0, 0.0, 0.0}), fixed_to(0));  // front
  system.add_link(sphere_at({5.0, 0.0, 0.0}), fixed_to(0));   // back
  system.add_link(shaped(BodyShape::cylinder, {1.0, 1.0, 5.0}, RigidTransform::rotated(axis_angle_rotation({1, 0, 0}, pi / 2))),
                  fixed_to(2));
  system.add_link(sphere_at({0.0, 2.5, 0.0}), fixed_to(6));   // middle right, on the cylinder
  system.add_link(sphere_at({0.0, -2.5, 0.0}), fixed_to(6));  // middle left
  ExternalConstraints& constraints = scene.constraints;
  constraints.loops.push_back({.body_a = 3, .body_b = 0, .point_a = {-6.0, 0.0, 0.0}, .point_b = {5.0, 0.0, 0.0},
                               .axis_a = y, .radius = 0.5, .height = 0.5});
  for (int sphere : {4, 5, 7, 8}) constraints.feet.push_back({sphere, {}, 1.0});
  constraints.drivers.push_back({1, -4.0 * pi});  // REDMAX's rhs −ġ with ġ = 2·2π
  constraints.floor_height = 0.0;
  constraints.floor_friction = 0.8;
  constraints.stabilization = 0.1;
  return scene;
}

}  // namespace

ArticulatedScene make_redmax_scene(int id) {
  ArticulatedScene scene;
  const Vec3 sides{10.0, 1.0, 1.0};
  const Vec3 centre{5.0, 0.0, 0.0};
  const RigidTransform next = RigidTransform::translated({10.0, 0.0, 0.0});
  switch (id) {
    case -1:
      scene.name = "redmax-1: two-link serial chain";
      scene.system.add_link(cuboid(sides, centre), revolute(-1, {0, 1, 0}, {}, pi / 2));
      scene.system.add_link(cuboid(sides, centre), revolute(0, {0, 1, 0}, next, pi / 4));
      break;
    case 0:
      scene.name = "redmax0: five links, revolute and fixed joints";
      for (int i = 0; i < 5; ++i) {
        if (i % 2 == 0) {
          scene.system.add_link(cuboid(sides, centre), revolute(i - 1, {0, 1, 0}, i == 0 ? RigidTransform{} : next, pi / 4));
        } else {
          JointSpec fixed;
          fixed.kind = JointKind::fixed;
          fixed.parent = i - 1;
          fixed.in_parent = next;
          scene.system.add_link(cuboid(sides, centre), fixed);
        }
      }
      break;
    case 27: {
      scene.name = "redmax27: internal friction, revolute";
      scene.duration = 1.0;
      scene.joint_friction = true;
      for (int i = 0; i < 2; ++i) {
        const RigidTransform in_parent =
            i == 0 ? RigidTransform::rotated(axis_angle_rotation({1, 0, 0}, pi / 4)) : next;
        JointSpec joint = revolute(i - 1, {0, 0, 1}, in_parent);
        joint.radius = 0.5;
        joint.height = 1.0;
        scene.system.add_link(cuboid(sides, centre), joint);
      }
      break;
    }
    case 33: return redmax_four_bar_on_the_floor();
    default: throw std::invalid_argument("no REDMAX scene " + std::to_string(id) + " (have −1, 0, 27, 33)");
  }
  return scene;
}

ArticulatedScene make_chain_scene(const ChainOptions& options) {
  if (options.links < 1) throw std::invalid_argument("chain: at least one link");
  ArticulatedScene scene;
  scene.name = "chain";
  scene.time_step = options.time_step;
  scene.duration = options.duration;
  scene.joint_friction = true;
  scene.joint_friction_coefficient = options.friction;
  const double l = options.link_length;
  for (int i = 0; i < options.links; ++i) {
    const RigidTransform in_parent = i == 0 ? RigidTransform::rotated(axis_angle_rotation({1, 0, 0}, pi / 4))
                                            : RigidTransform::translated({l, 0.0, 0.0});
    JointSpec joint = revolute(i - 1, {0, 0, 1}, in_parent);
    joint.radius = options.joint_radius;
    joint.height = options.joint_height;
    scene.system.add_link(cuboid({l, options.link_width, options.link_width}, {0.5 * l, 0.0, 0.0}), joint);
  }
  return scene;
}

namespace {

/// A point of a leg's plane: u forward, w up.
struct PlanePoint {
  double u = 0.0;
  double w = 0.0;
};

/// One of the two intersections of the circles (p, r) and (q, s); `side` picks which.
PlanePoint circle_intersection(PlanePoint p, double r, PlanePoint q, double s, double side) {
  const double du = q.u - p.u, dw = q.w - p.w, d = std::hypot(du, dw);
  const double along = (r * r - s * s + d * d) / (2.0 * d);
  const double across2 = r * r - along * along;
  if (across2 < 0.0) throw std::logic_error("Klann leg: the linkage does not close at this crank angle");
  const double across = std::sqrt(across2);
  return {p.u + along * du / d - side * across * dw / d, p.w + along * dw / d + side * across * du / d};
}

/// The joints of one Klann leg at a crank angle (optimized geometry, mm): crank centre A at the
/// origin, rockers grounded at B and D, crank pin C, coupler C–H–F, leg E–F–G with the foot G.
struct KlannLegPose {
  PlanePoint a, b, c, d, e, f, g, h;
};

KlannLegPose klann_leg_facing_back(double crank_angle) {
  KlannLegPose pose;
  pose.b = {-38.8, -12.5};
  pose.d = {-14.6, 41.9};
  pose.c = {17.5 * std::cos(crank_angle), 17.5 * std::sin(crank_angle)};
  pose.h = circle_intersection(pose.c, 38.8, pose.b, 23.7, -1.0);
  pose.f = circle_intersection(pose.c, 73.4, pose.h, 35.2, 1.0);
  pose.e = circle_intersection(pose.f, 57.7, pose.d, 34.1, 1.0);
  pose.g = circle_intersection(pose.e, 111.7, pose.f, 59.0, 1.0);
  return pose;
}

/// The leg with its crank pin at `crank_angle`, facing back (u < 0) or mirrored to face forward
/// (the mirror image of the back leg whose pin is at π − angle, so that both push the same way).
KlannLegPose klann_leg(double crank_angle, bool facing_forward) {
  if (!facing_forward) return klann_leg_facing_back(crank_angle);
  KlannLegPose pose = klann_leg_facing_back(std::numbers::pi - crank_angle);
  for (PlanePoint* p : {&pose.a, &pose.b, &pose.c, &pose.d, &pose.e, &pose.f, &pose.g, &pose.h}) p->u = -p->u;
  return pose;
}

/// Builds links whose joint frames are aligned with the world at q = 0, from world positions.
class WorldLinkBuilder {
 public:
  explicit WorldLinkBuilder(ArticulatedSystem& system) : system_(system) {}

  /// A link whose joint sits at `joint` (world) and whose cuboid spans `from`–`to` (world) with
  /// a square section `width`; returns the link index.
  int add_bar(int parent, const Vec3& joint, const Vec3& from, const Vec3& to, double width, double radius,
              double height) {
    const Vec3 d = to - from;
    const double length = linalg::norm(d);
    const Mat3 rotation = axis_angle_rotation({0.0, 1.0, 0.0}, std::atan2(-d.z, d.x));
    BodySpec body;
    body.sides = {length, width, width};
    body.in_joint = {rotation, 0.5 * (from + to) - joint};
    JointSpec spec;
    spec.parent = parent;
    spec.axis = {0.0, 1.0, 0.0};
    spec.in_parent = RigidTransform::translated(joint - joint_position(parent));
    spec.radius = radius;
    spec.height = height;
    return add(body, spec, joint);
  }

  int add(const BodySpec& body, const JointSpec& spec, const Vec3& joint) {
    const int link = system_.add_link(body, spec);
    joints_.push_back(joint);
    return link;
  }

  [[nodiscard]] Vec3 joint_position(int link) const {
    return link < 0 ? Vec3{} : joints_[static_cast<std::size_t>(link)];
  }
  /// A world point in the link's body frame (at q = 0).
  [[nodiscard]] Vec3 in_body(int link, const Vec3& world) const {
    return transform_point(inverse(system_.body_to_world(link)), world);
  }

 private:
  ArticulatedSystem& system_;
  std::vector<Vec3> joints_;
};

}  // namespace

ArticulatedScene make_klann_scene(const KlannOptions& options) {
  if (!(options.joint_friction >= 0.0) || !(options.floor_friction >= 0.0) || !std::isfinite(options.crank_rate)) {
    throw std::invalid_argument("KLANN: friction coefficients ≥ 0 and a finite crank rate");
  }
  ArticulatedScene scene;
  scene.name = "klann";
  scene.time_step = options.time_step;
  scene.duration = options.duration;
  scene.joint_friction = true;
  scene.joint_friction_coefficient = options.joint_friction;
  constexpr double scale = 0.1;  // mm → cm
  constexpr double bar = 0.4, pin_radius = 0.25, pin_height = 1.5, foot_radius = 0.3;
  constexpr double lift = 12.0;  // crank axis height above the chassis' lowest foot, roughly
  const Vec3 chassis_centre{0.0, 0.0, lift};
  WorldLinkBuilder builder(scene.system);
  {
    BodySpec chassis;
    chassis.name = "chassis";
    chassis.sides = {16.0, 9.0, 1.5};
    JointSpec free;
    free.kind = JointKind::free;
    free.in_parent = RigidTransform::translated(chassis_centre);
    builder.add(chassis, free, chassis_centre);
  }
  auto world = [&](PlanePoint p, double y) { return Vec3{scale * p.u, y, lift + scale * p.w}; };
  ExternalConstraints& constraints = scene.constraints;
  constraints.floor_friction = options.floor_friction;
  double lowest_foot = 1e300;
  for (double side : {1.0, -1.0}) {
    const double crank_y = side * 1.5;
    const int crank = builder.add_bar(0, world({0.0, 0.0}, crank_y), world({-17.5, 0.0}, crank_y),
                                      world({17.5, 0.0}, crank_y), bar, pin_radius, pin_height);
    constraints.drivers.push_back({crank, options.crank_rate});
    for (int k = 0; k < 3; ++k) {
      const double y = side * (2.5 + 1.5 * k);
      const double phase = 2.0 * std::numbers::pi * k / 3.0 + (side < 0 ? std::numbers::pi / 3.0 : 0.0);
      const KlannLegPose leg = klann_leg(phase, k == 1);
      const int coupler = builder.add_bar(crank, world(leg.c, y), world(leg.c, y), world(leg.f, y), bar, pin_radius, pin_height);
      const int rocker_b = builder.add_bar(coupler, world(leg.h, y), world(leg.h, y), world(leg.b, y), bar, pin_radius, pin_height);
      const int shin = builder.add_bar(coupler, world(leg.f, y), world(leg.e, y), world(leg.g, y), bar, pin_radius, pin_height);
      const int rocker_d = builder.add_bar(shin, world(leg.e, y), world(leg.e, y), world(leg.d, y), bar, pin_radius, pin_height);
      for (const auto& [rocker, pivot] : {std::pair{rocker_b, leg.b}, std::pair{rocker_d, leg.d}}) {
        LoopClosure loop;
        loop.body_a = rocker;
        loop.body_b = 0;
        loop.point_a = builder.in_body(rocker, world(pivot, y));
        loop.point_b = builder.in_body(0, world(pivot, y));
        loop.axis_a = {0.0, 1.0, 0.0};
        loop.radius = pin_radius;
        loop.height = pin_height;
        constraints.loops.push_back(loop);
      }
      constraints.feet.push_back({shin, builder.in_body(shin, world(leg.g, y)), foot_radius});
      lowest_foot = std::min(lowest_foot, world(leg.g, y).z);
    }
  }
  constraints.floor_height = lowest_foot - foot_radius;
  return scene;
}

}  // namespace cholsim::fem::articulated
