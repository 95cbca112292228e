#pragma once
// Constraints outside the joint tree (seed 002 §3.3.3), all as rows on the maximal twists:
// loop-closing revolute joints (bilateral G, two rows across the axis as in REDMAX), driven
// joints whose rate is prescribed (a bilateral row on the relative angular velocity — its
// multiplier is the motor torque), and feet against a floor (unilateral C, active when a foot's
// sphere touches the plane z = floor_height). Position errors are fed back Baumgarte-style at
// the velocity level: a fraction `stabilization` of each error per step.
#include <span>
#include <vector>

#include "fem/articulated/articulated_system.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::fem::articulated {

/// A revolute joint closing a loop: `point_a` on body a and `point_b` on body b coincide, the
/// bodies turn about `axis_a` (body a's frame) relative to each other. `radius`/`height` shape
/// its friction cylinder.
struct LoopClosure {
  int body_a = 0;
  int body_b = 0;
  Vec3 point_a;
  Vec3 point_b;
  Vec3 axis_a{0.0, 0.0, 1.0};
  double radius = 0.5;
  double height = 0.5;
};

/// A 1-DOF joint (revolute or prismatic) driven at a prescribed rate.
struct DrivenJoint {
  int link = 0;
  double rate = 0.0;
};

/// A sphere of `radius` at `point` of a body, held above the floor.
struct FloorContact {
  int body = 0;
  Vec3 point;
  double radius = 0.0;
};

struct ExternalConstraints {
  std::vector<LoopClosure> loops;
  std::vector<DrivenJoint> drivers;
  std::vector<FloorContact> feet;
  double floor_height = 0.0;
  double floor_friction = 0.8;  ///< μ between the feet and the floor
  double stabilization = 0.1;   ///< fraction of a position error removed per step

  [[nodiscard]] bool empty() const { return loops.empty() && drivers.empty() && feet.empty(); }
  /// Throws std::invalid_argument naming the first constraint that refers to a missing body or
  /// link, a driver on a joint that is not 1-DOF, or a bad number.
  void check(const ArticulatedSystem& system) const;
};

/// The rows at the current body frames.
struct ExternalRows {
  linalg::DenseMatrix equality;        ///< G: two rows per loop, then one per driver (× 6·bodies)
  std::vector<double> equality_rhs;
  linalg::DenseMatrix inequality;      ///< C: one row per foot touching the floor
  std::vector<double> inequality_rhs;
  std::vector<int> touching_feet;      ///< the feet of C's rows
  std::vector<Vec3> contact_points;    ///< each touching foot's lowest point, in its body frame
  /// The floor's two tangent directions at each touching foot (2 rows each), for friction.
  linalg::DenseMatrix floor_tangents;
};

ExternalRows external_rows(const ExternalConstraints& constraints, const ArticulatedSystem& system,
                           std::span<const RigidTransform> frames, double time_step);

/// The driver rows' position in G: the first driver row.
inline Index first_driver_row(const ExternalConstraints& constraints) {
  return 2 * static_cast<Index>(constraints.loops.size());
}

}  // namespace cholsim::fem::articulated
