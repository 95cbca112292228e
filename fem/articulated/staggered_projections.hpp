#pragma once
// The baseline BISP is measured against: staggered projections (Kaufman et al. 2008; seed 002
// §3.3.1, Algorithm 3.1) for the same joints in maximal coordinates. Every body is free (six
// DOFs, its twist in its own frame); each joint is the set of contact points of
// joint_contacts.hpp held together by constraints, with Baumgarte position stabilization because
// maximal coordinates drift. Per step the contact QP (eq. 3.1: the velocity closest to the
// unconstrained one in the M-norm that keeps the joints together) and the friction box QP
// (eq. 3.2) alternate from the previous step's friction force until the contact force settles.
// The contact QP goes to the project's dense QP solver (Goldfarb–Idnani, solvers/qp), the
// friction QP to the projected Newton box solver — the same one BISP uses.
#include <vector>

#include "fem/articulated/bilateral_staggered_projections.hpp"
#include "solvers/qp/active_set.hpp"

namespace cholsim::fem::articulated {

struct StaggeredProjectionsOptions {
  JointFrictionOptions friction;
  /// Fraction of the joints' position error removed per step (Baumgarte: rows N v = −γ g / h).
  double stabilization = 0.2;
  /// A friction row per contact tangent (SP over contact points, as in the thesis' comparison)
  /// or one per 1-DOF joint (cheaper; the friction QP then matches BISP's in size).
  FrictionRows friction_rows = FrictionRows::per_tangent;
};

/// How far a joint has come apart in maximal coordinates (world frame): the rotation vector
/// and the translation of the joint origin that would put the child back.
struct JointError {
  Vec3 rotation;
  Vec3 translation;
};

class StaggeredProjections {
 public:
  /// Starts from the system's current state (its bodies' frames and twists).
  StaggeredProjections(const ArticulatedSystem& system, StaggeredProjectionsOptions options);

  /// Adds constraints outside the tree, as rows of the contact QP (and loop friction cylinders).
  void set_external_constraints(ExternalConstraints constraints);

  JointFrictionStepStats step(double time_step, const Vec3& gravity);
  /// The drivers' torques of the last step, one per driver.
  [[nodiscard]] const std::vector<double>& driver_torques() const { return driver_torques_; }

  [[nodiscard]] int body_count() const { return static_cast<int>(frames_.size()); }
  [[nodiscard]] const RigidTransform& body_to_world(int body) const { return frames_[static_cast<std::size_t>(body)]; }
  [[nodiscard]] const Vec6& body_twist(int body) const { return twists_[static_cast<std::size_t>(body)]; }
  [[nodiscard]] Energies energies(const Vec3& gravity) const;
  /// The largest joint position error now: the origin's offset, or the axis misalignment
  /// times the joint's radius (at least 1), whichever is larger.
  [[nodiscard]] double joint_drift() const;
  /// The friction impulses β/h of the last step, per tangent row.
  [[nodiscard]] const std::vector<double>& friction_forces() const { return friction_per_row_; }

 private:
  [[nodiscard]] JointError joint_error(int link) const;
  /// The rows (and right-hand sides) of the fixed joints: six each.
  void fixed_joint_rows(double h, linalg::DenseMatrix& rows, std::vector<double>& rhs) const;
  /// The right-hand side of the joint rows (position stabilization).
  [[nodiscard]] std::vector<double> stabilization_rhs(const linalg::DenseMatrix& normals, double h) const;

  StaggeredProjectionsOptions options_;
  ArticulatedSystem system_;  // the joints' data (the state lives in frames_ and twists_)
  JointContacts contacts_;
  ExternalConstraints external_;
  std::vector<double> driver_torques_;
  std::vector<RigidTransform> frames_;
  std::vector<Vec6> twists_;
  std::vector<RigidTransform> joint_in_child_;   // the joint frame in the child body's frame
  std::vector<RigidTransform> joint_in_parent_;  // … in the parent body's (the world's for a root) at q = 0
  std::vector<double> friction_force_;
  std::vector<double> friction_impulse_;
  std::vector<double> friction_per_row_;
};

}  // namespace cholsim::fem::articulated
