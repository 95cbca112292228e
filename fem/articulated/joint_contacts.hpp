#pragma once
// The implicit contacts inside the joints (seed 002 §3.3.2): each joint is given a geometry — a
// cylinder for a revolute joint, a ball for a spherical one, a box for a prismatic one — whose
// surface carries a few fixed contact points. Their normals span the joint's constraint
// wrenches; their tangents span its motion, along which friction acts. No collision detection:
// the points are fixed in the child body's frame and the parent sees them where they are.
#include <span>
#include <vector>

#include "fem/articulated/articulated_system.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::fem::articulated {

/// A point of a joint with one direction at it, both in the child body's frame.
struct JointPoint {
  Vec3 position;
  Vec3 direction;
};

struct JointContactSet {
  std::vector<JointPoint> normals;   ///< bilateral contact normals (α of either sign)
  std::vector<JointPoint> tangents;  ///< friction directions
  /// For each tangent, the normals whose |α| sum bounds it: |β| ≤ μ Σ|α|.
  std::vector<std::vector<int>> tangent_supports;
  /// All tangents resist the joint's one DOF (revolute, prismatic): friction can then be one
  /// variable — the average of the tangent rows, bounded by the sum of their bounds.
  bool one_dof = false;
};

/// How the friction rows of a joint are posed.
enum class FrictionRows {
  per_tangent,  ///< a row per tangent of every contact point (REDMAX's MATLAB code)
  per_dof,      ///< one row per 1-DOF joint (§3.3.2: "the friction cone can be represented
                ///< exactly using box constraints for 1 DOF joints"); other joints per tangent
};

/// The contact set of one joint between `body` (whose frame the set is written in) and `other`
/// (−1: the world).
struct ContactGroup {
  int body = 0;
  int other = -1;
  JointContactSet set;
};

/// The world frames of a system's bodies (the form the contact rows are built from, shared by the
/// reduced and the maximal simulators).
std::vector<RigidTransform> body_frames(const ArticulatedSystem& system);
/// The revolute joint's contact set for a cylinder about `axis` through `origin` (body frame).
JointContactSet cylinder_contacts(const RigidTransform& joint_in_body, const Vec3& axis, double radius, double height);

/// The contacts of every link's joint (group i is link i's joint, between the link and its
/// parent), then of any loop-closing joints added; rows of the friction problem are numbered
/// group by group.
class JointContacts {
 public:
  explicit JointContacts(const ArticulatedSystem& system);
  /// Adds a revolute loop-closing joint between two bodies: a cylinder of `radius` and `height`
  /// about `axis` through `origin`, both in `body`'s frame. Returns its group index.
  int add_loop(int body, int other, const Vec3& origin, const Vec3& axis, double radius, double height);

  [[nodiscard]] int group_count() const { return static_cast<int>(groups_.size()); }
  [[nodiscard]] const ContactGroup& group(int g) const { return groups_[static_cast<std::size_t>(g)]; }
  [[nodiscard]] const JointContactSet& of(int g) const { return group(g).set; }
  [[nodiscard]] int normal_count() const { return normal_count_; }
  [[nodiscard]] int tangent_count() const { return tangent_count_; }
  [[nodiscard]] int first_normal(int g) const { return normal_offsets_[static_cast<std::size_t>(g)]; }
  [[nodiscard]] int first_tangent(int g) const { return tangent_offsets_[static_cast<std::size_t>(g)]; }
  /// The number of friction rows for the choice (tangent_count() per tangent).
  [[nodiscard]] int friction_row_count(FrictionRows rows) const;

  /// T (tangent rows × 6·bodies): the relative tangential velocity of the two bodies at each
  /// friction point is T φ.
  void tangent_matrix(std::span<const RigidTransform> frames, linalg::DenseMatrix& tangents) const;
  /// The friction rows (friction_row_count(rows) × 6·bodies) at the current frames.
  void friction_matrix(std::span<const RigidTransform> frames, FrictionRows rows, linalg::DenseMatrix& matrix) const;
  /// N (normal rows × 6·bodies), the same for the contact normals.
  void normal_matrix(std::span<const RigidTransform> frames, linalg::DenseMatrix& normals) const;
  /// §3.3.2.2: splits a maximal wrench vector (the sum of the joint reactions acting on each
  /// body, body frames) into one wrench per link's joint, on the link, from the leaves to the
  /// root (`wrenches` gets group_count() entries; loop groups' are zero). With
  /// `previous_in_order`, a link's remainder goes to the link before it in the system's order
  /// instead of its parent — REDMAX's scatterContactForce does so (the same for a chain, not for
  /// a branching tree); only to reproduce its regression energies.
  void distribute_to_joints(const ArticulatedSystem& system, std::span<const double> maximal,
                            std::vector<Vec6>& wrenches, bool previous_in_order = false) const;
  /// §3.3.2.3, eq. 3.7: per group, α = h (N M⁻¹ Nᵀ + εI)⁻¹ N M⁻¹ f, the regularized contact
  /// impulses that reproduce its reaction f (on `body`, the opposite on `other`); `alpha` gets
  /// normal_count() entries. Builds and factors the groups' systems for these frames: a loop
  /// that asks for α repeatedly in one configuration prepares them once (below).
  void contact_multipliers(std::span<const RigidTransform> frames, const std::vector<Vec6>& wrenches, double time_step,
                           double regularization, std::vector<double>& alpha) const;
  /// Eq. 3.7's matrices depend on the frames only: per group N M⁻¹ and the Cholesky factor of
  /// N M⁻¹ Nᵀ + εI. A step's staggered iterations, which change only the reactions f, then pay
  /// a product and two triangular solves per group (the rebuild and factorization every
  /// iteration were three quarters of a CHAIN step).
  struct MultiplierSystems {
    struct Group {
      linalg::DenseMatrix weighted_normals;  ///< N M⁻¹, nc × (6 or 12)
      linalg::DenseMatrix factor;            ///< lower Cholesky factor of N M⁻¹ Nᵀ + εI
      Mat6 other_in_body;                    ///< Ad of `other`'s frame in `body`'s (two-body groups)
    };
    std::vector<Group> groups;
  };
  /// Throws std::runtime_error naming the joint when a group's system is not positive definite.
  void prepare_contact_multipliers(std::span<const RigidTransform> frames, double regularization,
                                   MultiplierSystems& systems) const;
  void contact_multipliers(const MultiplierSystems& systems, const std::vector<Vec6>& wrenches, double time_step,
                           std::vector<double>& alpha) const;
  /// The friction bounds μ Σ|α| of the friction rows (one per row of friction_matrix).
  void friction_bounds(std::span<const double> alpha, double friction, FrictionRows rows,
                       std::vector<double>& bounds) const;

 private:
  void add_group(ContactGroup group);

  std::vector<ContactGroup> groups_;
  std::vector<Vec6> inertia_;
  std::vector<int> normal_offsets_;
  std::vector<int> tangent_offsets_;
  int normal_count_ = 0;
  int tangent_count_ = 0;
};

}  // namespace cholsim::fem::articulated
