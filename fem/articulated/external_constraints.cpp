#include "fem/articulated/external_constraints.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace cholsim::fem::articulated {
namespace {

void set_row(linalg::DenseMatrix& rows, Index row, int body, const Vec6& values, double sign = 1.0) {
  for (int c = 0; c < 6; ++c) rows(row, 6 * body + c) = sign * values[static_cast<std::size_t>(c)];
}

/// Two unit vectors across `axis` (REDMAX's construction: start from the axis' smallest
/// component).
void across(const Vec3& axis, Vec3& first, Vec3& second) {
  Vec3 seed{};
  const double ax = std::abs(axis.x), ay = std::abs(axis.y), az = std::abs(axis.z);
  (ax <= ay && ax <= az ? seed.x : ay <= az ? seed.y : seed.z) = 1.0;
  second = linalg::normalized(linalg::cross(axis, seed));
  first = linalg::normalized(linalg::cross(second, axis));
}

}  // namespace

void ExternalConstraints::check(const ArticulatedSystem& system) const {
  const int bodies = system.link_count();
  auto body_ok = [&](int b) { return b >= 0 && b < bodies; };
  for (std::size_t k = 0; k < loops.size(); ++k) {
    const LoopClosure& l = loops[k];
    if (!body_ok(l.body_a) || !body_ok(l.body_b) || l.body_a == l.body_b || std::abs(linalg::norm(l.axis_a) - 1.0) > 1e-9 ||
        !(l.radius > 0.0) || !(l.height > 0.0)) {
      throw std::invalid_argument("loop closure " + std::to_string(k) +
                                  ": needs two different bodies of the system, a unit axis and a positive radius and height");
    }
  }
  for (std::size_t k = 0; k < drivers.size(); ++k) {
    const DrivenJoint& d = drivers[k];
    if (d.link < 0 || d.link >= bodies || system.link_dof_count(d.link) != 1 || !std::isfinite(d.rate)) {
      throw std::invalid_argument("driver " + std::to_string(k) + ": needs a 1-DOF joint of the system and a finite rate");
    }
  }
  for (std::size_t k = 0; k < feet.size(); ++k) {
    if (!body_ok(feet[k].body) || !(feet[k].radius >= 0.0)) {
      throw std::invalid_argument("foot " + std::to_string(k) + ": needs a body of the system and a radius ≥ 0");
    }
  }
  if (!(floor_friction >= 0.0) || !(stabilization >= 0.0 && stabilization <= 1.0) || !std::isfinite(floor_height)) {
    throw std::invalid_argument("external constraints: floor μ ≥ 0, stabilization in [0, 1] and a finite floor height");
  }
}

ExternalRows external_rows(const ExternalConstraints& constraints, const ArticulatedSystem& system,
                           std::span<const RigidTransform> frames, double h) {
  const Index nm = 6 * static_cast<Index>(frames.size());
  const double feedback = constraints.stabilization / h;
  ExternalRows rows;
  const auto equalities = static_cast<Index>(2 * constraints.loops.size() + constraints.drivers.size());
  rows.equality = linalg::DenseMatrix(equalities, nm);
  rows.equality_rhs.assign(static_cast<std::size_t>(equalities), 0.0);
  Index row = 0;
  for (const LoopClosure& loop : constraints.loops) {
    const RigidTransform& a = frames[static_cast<std::size_t>(loop.body_a)];
    const RigidTransform& b = frames[static_cast<std::size_t>(loop.body_b)];
    Vec3 first, second;
    across(a.rotation * loop.axis_a, first, second);
    const Vec3 gap = transform_point(a, loop.point_a) - transform_point(b, loop.point_b);
    for (const Vec3& d : {first, second}) {
      set_row(rows.equality, row, loop.body_a, point_direction_row(loop.point_a, linalg::transpose(a.rotation) * d));
      set_row(rows.equality, row, loop.body_b, point_direction_row(loop.point_b, linalg::transpose(b.rotation) * d), -1.0);
      rows.equality_rhs[static_cast<std::size_t>(row)] = -feedback * linalg::dot(d, gap);
      ++row;
    }
  }
  for (const DrivenJoint& driver : constraints.drivers) {
    // The joint's rate as seen from the two bodies: the axis in each body's frame.
    const JointSpec& joint = system.joint(driver.link);
    const Vec3 axis = linalg::transpose(system.body(driver.link).in_joint.rotation) * joint.axis;
    const bool turning = joint.kind == JointKind::revolute;
    const Vec6 own = turning ? Vec6{axis.x, axis.y, axis.z, 0, 0, 0} : Vec6{0, 0, 0, axis.x, axis.y, axis.z};
    set_row(rows.equality, row, driver.link, own);
    if (joint.parent >= 0) {
      const RigidTransform to_parent =
          inverse(frames[static_cast<std::size_t>(joint.parent)]) * frames[static_cast<std::size_t>(driver.link)];
      const Vec3 p = to_parent.rotation * axis;
      // The parent's velocity at the child's frame origin, along the axis (prismatic).
      const Vec6 parent = turning ? Vec6{p.x, p.y, p.z, 0, 0, 0} : point_direction_row(to_parent.translation, p);
      set_row(rows.equality, row, joint.parent, parent, -1.0);
    }
    rows.equality_rhs[static_cast<std::size_t>(row)] = driver.rate;
    ++row;
  }
  const Vec3 up{0.0, 0.0, 1.0};
  std::vector<Vec6> normal_rows, tangent_rows;
  for (std::size_t k = 0; k < constraints.feet.size(); ++k) {
    const FloorContact& foot = constraints.feet[k];
    const RigidTransform& frame = frames[static_cast<std::size_t>(foot.body)];
    const Vec3 centre = transform_point(frame, foot.point);
    const double penetration = constraints.floor_height + foot.radius - centre.z;
    if (penetration <= 0.0) continue;  // touching is not yet pressing (REDMAX: z < r)
    const Mat3 to_body = linalg::transpose(frame.rotation);
    const Vec3 lowest = foot.point - foot.radius * (to_body * up);
    rows.touching_feet.push_back(static_cast<int>(k));
    rows.contact_points.push_back(lowest);
    rows.inequality_rhs.push_back(feedback * penetration);
    normal_rows.push_back(point_direction_row(lowest, to_body * up));
    tangent_rows.push_back(point_direction_row(lowest, to_body * Vec3{1.0, 0.0, 0.0}));
    tangent_rows.push_back(point_direction_row(lowest, to_body * Vec3{0.0, 1.0, 0.0}));
  }
  const auto touching = static_cast<Index>(rows.touching_feet.size());
  rows.inequality = linalg::DenseMatrix(touching, nm);
  rows.floor_tangents = linalg::DenseMatrix(2 * touching, nm);
  for (Index r = 0; r < touching; ++r) {
    const int body = constraints.feet[static_cast<std::size_t>(rows.touching_feet[static_cast<std::size_t>(r)])].body;
    set_row(rows.inequality, r, body, normal_rows[static_cast<std::size_t>(r)]);
    set_row(rows.floor_tangents, 2 * r, body, tangent_rows[static_cast<std::size_t>(2 * r)]);
    set_row(rows.floor_tangents, 2 * r + 1, body, tangent_rows[static_cast<std::size_t>(2 * r + 1)]);
  }
  return rows;
}

}  // namespace cholsim::fem::articulated
