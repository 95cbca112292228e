#pragma once
// Articulated rigid bodies in the hybrid reduced/maximal coordinates of REDMAX (seed 002
// ch. 3; Wang, Weidner, Baxter, Hwang, Kaufman, Sueda, "RedMax", ACM TOG 38(4) 2019).
//
// Link i is a cuboid body with the joint that attaches it to its parent link (or to the world).
// The reduced coordinates q are the joints' own coordinates (an angle, a slide, an
// exponential-coordinates rotation); the maximal coordinates are one twist φᵢ = [ω; v] per body
// in its own frame (centre of mass, principal axes), so that the maximal mass matrix is
// diagonal. The Jacobian J_mr maps q̇ to the twists (φ = J q̇) and is filled recursively from
// the root: J(i, i) = Ad(E_ij) Sᵢ, J(i, a) = Ad(E_ip) J(p, a) for the ancestors a.
#include <span>
#include <string>
#include <vector>

#include "fem/articulated/spatial_algebra.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::fem::articulated {

using linalg::Index;

enum class JointKind {
  fixed,      ///< 0 DOFs
  revolute,   ///< 1: the angle about `axis`
  prismatic,  ///< 1: the slide along `axis`
  spherical,  ///< 3: exponential coordinates of the relative rotation
  free,       ///< 6: exponential coordinates, then the translation in the rotated frame
};

int dof_count(JointKind kind);

enum class BodyShape {
  cuboid,    ///< of `sides`
  sphere,    ///< of diameter sides.x
  cylinder,  ///< along z: diameter sides.x, height sides.z
};

/// A rigid body of uniform density; its frame is at its centre, along its principal axes;
/// `sides` is its bounding box (what the apps draw).
struct BodySpec {
  std::string name;
  BodyShape shape = BodyShape::cuboid;
  Vec3 sides{1.0, 1.0, 1.0};
  double density = 1.0;
  RigidTransform in_joint;  ///< E_ji: the body frame in its joint's frame
  double damping = 0.0;     ///< viscous damping of the body twist (maximal, implicit)
};

/// The joint that attaches a link to its parent.
struct JointSpec {
  JointKind kind = JointKind::revolute;
  int parent = -1;          ///< parent link, or −1 for the world
  Vec3 axis{0.0, 0.0, 1.0};  ///< revolute and prismatic (unit length)
  RigidTransform in_parent;  ///< E_pj0: the joint frame in the parent joint's frame at q = 0
  double stiffness = 0.0;    ///< reduced spring towards the initial q (implicit)
  double damping = 0.0;      ///< reduced viscous damping (implicit)
  /// The joint's geometry for its internal friction (§3.3.2): the cylinder of a revolute joint
  /// (radius, height), the ball of a spherical joint (radius), the box of a prismatic joint
  /// (prism_sides).
  double radius = 1.0;
  double height = 1.0;
  Vec3 prism_sides{0.5, 0.5, 0.5};
  std::vector<double> initial_positions;  ///< q at t = 0 (empty: zeros)
  std::vector<double> initial_velocities;  ///< q̇ at t = 0 (empty: zeros)
};

struct Energies {
  double kinetic = 0.0;
  double potential = 0.0;  ///< gravity's (−m g·x) and the joint springs'
};

/// One free body's maximal force in its own frame: the quadratic velocity (Coriolis) wrench
/// ad(φ)ᵀMφ and its weight, for the principal inertia `inertia` (moments, then the mass three
/// times), twist φ, and the rotation of its frame in the world.
Vec6 body_wrench(const Vec6& inertia, const Vec6& twist, const Mat3& body_to_world, const Vec3& gravity);
/// ½φᵀMφ and −m g·x of one body.
Energies body_energies(const Vec6& inertia, const Vec6& twist, const Vec3& position, const Vec3& gravity);

class ArticulatedSystem {
 public:
  /// Appends a link; its joint's parent must be an earlier link (parents come first, the order
  /// every recursion here relies on). Returns the link's index. Throws std::invalid_argument
  /// for a bad parent, non-positive sides or density, a zero axis or wrong initial sizes.
  int add_link(BodySpec body, JointSpec joint);

  [[nodiscard]] int link_count() const { return static_cast<int>(links_.size()); }
  [[nodiscard]] Index reduced_dof_count() const { return static_cast<Index>(positions_.size()); }
  [[nodiscard]] Index maximal_dof_count() const { return 6 * static_cast<Index>(links_.size()); }

  /// q and q̇; call update() after writing them.
  [[nodiscard]] std::vector<double>& positions() { return positions_; }
  [[nodiscard]] std::vector<double>& velocities() { return velocities_; }
  [[nodiscard]] const std::vector<double>& positions() const { return positions_; }
  [[nodiscard]] const std::vector<double>& velocities() const { return velocities_; }

  /// Forward kinematics: joint and body frames, twists, from q and q̇.
  void update();
  /// Rewrites exponential coordinates longer than 1.5π as the equivalent shorter ones (and their
  /// velocities so that the twists are unchanged), as REDMAX does before each step.
  void reparameterize();

  [[nodiscard]] const BodySpec& body(int link) const { return links_[index(link)].body; }
  [[nodiscard]] const JointSpec& joint(int link) const { return links_[index(link)].joint; }
  [[nodiscard]] int parent(int link) const { return links_[index(link)].joint.parent; }
  [[nodiscard]] Index dof_offset(int link) const { return links_[index(link)].dof_offset; }
  [[nodiscard]] int link_dof_count(int link) const { return dof_count(links_[index(link)].joint.kind); }
  /// E_wi: the body's frame in the world.
  [[nodiscard]] const RigidTransform& body_to_world(int link) const { return links_[index(link)].body_to_world; }
  /// E_wj: the joint's frame in the world.
  [[nodiscard]] const RigidTransform& joint_to_world(int link) const { return links_[index(link)].joint_to_world; }
  /// φᵢ, the body twist in its own frame.
  [[nodiscard]] const Vec6& body_twist(int link) const { return links_[index(link)].twist; }
  /// The diagonal of the body's 6×6 mass matrix: principal moments, then the mass three times.
  [[nodiscard]] const Vec6& body_inertia(int link) const { return links_[index(link)].inertia; }
  /// E_ip: the parent body's frame in this body's frame (identity for a root link).
  [[nodiscard]] RigidTransform parent_to_body(int link) const;

  /// J_mr (maximal × reduced) and, when `jacobian_rate` is given, dJ/dt at the current state.
  void jacobian(linalg::DenseMatrix& jacobian, linalg::DenseMatrix* jacobian_rate = nullptr) const;
  /// The maximal mass matrix's diagonal (size 6·links).
  void mass_diagonal(std::span<double> mass) const;
  /// Maximal forces: the quadratic velocity (Coriolis) wrench ad(φ)ᵀMφ and gravity, per body,
  /// in body frames. Damping is not here: the integrator takes it implicitly.
  void maximal_forces(const Vec3& gravity, std::span<double> forces) const;
  /// Reduced forces: the joint springs −k (q − q₀).
  void reduced_forces(std::span<double> forces) const;
  [[nodiscard]] Energies energies(const Vec3& gravity) const;

 private:
  struct Link {
    BodySpec body;
    JointSpec joint;
    Index dof_offset = 0;
    Vec6 inertia{};
    std::vector<double> rest_positions;
    // Kinematic state, filled by update().
    RigidTransform joint_to_parent;  // E_pj = E_pj0 Q(q)
    RigidTransform joint_to_world;   // E_wj
    RigidTransform body_to_world;    // E_wi
    Mat6 motion_subspace;            // Sᵢ in its first dof_count columns
    Mat6 motion_subspace_rate;       // Ṡᵢ, the same layout
    Vec6 joint_twist{};               // Vⱼ in the joint frame
    Vec6 twist{};                     // φᵢ in the body frame
  };
  [[nodiscard]] std::size_t index(int link) const;
  void joint_kinematics(Link& link) const;

  std::vector<Link> links_;
  std::vector<double> positions_;
  std::vector<double> velocities_;
};

}  // namespace cholsim::fem::articulated
