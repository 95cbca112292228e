#pragma once
// The implicit contacts inside the joints (seed 002 §3.3.2): each joint is given a geometry — a
// cylinder for a revolute joint, a ball for a spherical one, a box for a prismatic one — whose
// surface carries a few fixed contact points. Their normals span the joint's constraint
// wrenches; their tangents span its motion, along which friction acts. No collision detection:
// the points are fixed in the child body's frame and the parent sees them where they are.
#include <span>
#include <vector>

#include "fem/articulated/articulated_system.hpp"

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
};

/// The contacts of every link's joint, fixed at construction; rows of the friction problem are
/// numbered joint by joint.
class JointContacts {
 public:
  explicit JointContacts(const ArticulatedSystem& system);

  [[nodiscard]] const JointContactSet& of(int link) const { return sets_[static_cast<std::size_t>(link)]; }
  [[nodiscard]] int normal_count() const { return normal_count_; }
  [[nodiscard]] int tangent_count() const { return tangent_count_; }
  [[nodiscard]] int first_normal(int link) const { return normal_offsets_[static_cast<std::size_t>(link)]; }
  [[nodiscard]] int first_tangent(int link) const { return tangent_offsets_[static_cast<std::size_t>(link)]; }

  /// T (tangent rows × maximal DOFs): the relative tangential velocity of child and parent at
  /// each friction point is T φ.
  void tangent_matrix(const ArticulatedSystem& system, linalg::DenseMatrix& tangents) const;
  /// §3.3.2.2: splits a maximal wrench vector (the sum of the joint reactions acting on each
  /// body, body frames) into one wrench per joint, on its child body, from the leaves to the root.
  void distribute_to_joints(const ArticulatedSystem& system, std::span<const double> maximal,
                            std::vector<Vec6>& joint_wrenches) const;
  /// §3.3.2.3, eq. 3.7: per joint, α = h (N M⁻¹ Nᵀ + εI)⁻¹ N M⁻¹ f_α, the regularized contact
  /// impulses that reproduce its reaction wrench (`alpha` has normal_count() entries).
  void contact_multipliers(const ArticulatedSystem& system, const std::vector<Vec6>& joint_wrenches,
                           double time_step, double regularization, std::vector<double>& alpha) const;
  /// The friction bounds μ Σ|α| per tangent row.
  void friction_bounds(std::span<const double> alpha, double friction, std::vector<double>& bounds) const;

 private:
  std::vector<JointContactSet> sets_;
  std::vector<int> normal_offsets_;
  std::vector<int> tangent_offsets_;
  int normal_count_ = 0;
  int tangent_count_ = 0;
};

}  // namespace cholsim::fem::articulated
