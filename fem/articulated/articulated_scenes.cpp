#include "fem/articulated/articulated_scenes.hpp"

#include <numbers>
#include <stdexcept>
#include <string>

namespace cholsim::fem::articulated {
namespace {

constexpr double pi = std::numbers::pi;

CuboidBody cuboid(const Vec3& sides, const Vec3& centre_in_joint) {
  CuboidBody body;
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
    default: throw std::invalid_argument("no REDMAX scene " + std::to_string(id) + " (have −1, 0, 27)");
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

}  // namespace cholsim::fem::articulated
