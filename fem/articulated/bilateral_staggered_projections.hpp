#pragma once
// Joint friction by bilateral staggered projections, BISP (seed 002 §3.3.2, Algorithm 3.2).
//
// Each step iterates, from the friction force of the previous step (the warm start of §3.3.1):
//   1. the joint reaction force f_α = M̃(J q̇_r^con − q̇_m^unc)/h (eq. 3.5) — the reduced solve
//      satisfies the joints exactly, so no contact QP is needed;
//   2. f_α split into one reaction per joint, leaf to root (§3.3.2.2);
//   3. per joint, its contact impulses α by the regularized least squares of eq. 3.7;
//   4. stop when f_α moved less than `convergence` in M̃⁻¹-norm (relative), else
//   5. the friction impulses β from the box QP of eq. 3.2 with |β| ≤ μΣ|α|, f_β = −Tᵀβ/h;
// and the step ends with q̇_r = M̃_r⁻¹(f̃_r + hJᵀ(f_α + f_β)) (line 24).
//
// With external constraints (§3.3.3: loop closures, driven joints, floor contacts) the two
// velocities of step 1 come from QPs — the maximal one (eq. 3.8b) and the reduced one (eq. 3.8c)
// under the same constraints — the loop joints get their own α from their multipliers, the
// floor's friction is bounded by its normal impulses, and the final velocity is the reduced QP of
// eq. 3.9. The QPs go to the project's Goldfarb–Idnani solver (solvers/qp).
#include <span>
#include <vector>

#include "fem/articulated/external_constraints.hpp"
#include "fem/articulated/joint_contacts.hpp"
#include "fem/articulated/redmax_step.hpp"

namespace cholsim::fem::articulated {

struct JointFrictionOptions {
  double friction = 0.6;          ///< μ in the joints
  int max_iterations = 100;       ///< staggered iterations per step
  double convergence = 1e-3;      ///< on ‖Δf_α‖²_{M̃⁻¹} / ‖f_α‖²_{M̃⁻¹}
  double active_threshold = 1e-10;  ///< tangent rows with μΣ|α| ≤ μ·this are dropped
  double regularization = 1e-6;   ///< ε of eq. 3.7
  /// From this staggered iteration on, the friction force is averaged with the previous one
  /// (see BispStepper; not in redmax_compatible mode).
  int relaxation_start = 10;
  /// As REDMAX's MATLAB code (eulerFric) does it, to reproduce its regression energies:
  /// - the friction QP has a row per tangent of every contact point (8 per revolute joint, more
  ///   rows than body DOFs, so a singular QP that takes tens of projected Newton iterations);
  ///   ours (off) has one row per 1-DOF joint, exact by §3.3.2's box argument;
  /// - line 24 adds f_α too: q̇ = M̃_r⁻¹(f̃_r + hJᵀ(f_α + f_β)). Its f_α holds the reaction to
  ///   the velocity-product term −M J̇ q̇ that f̃_r already contains, so Jᵀf_α ≠ 0 and that term
  ///   acts twice: without friction the step is then not the frictionless one, by O(1) in the
  ///   motion, not O(h). Ours adds only f_β (a reaction does no work in reduced coordinates);
  /// - the joint reactions are split leaf to root by handing a link's remainder to the link
  ///   before it in traversal order (JointContacts::distribute_to_joints), not to its parent.
  bool redmax_compatible = false;
};

struct JointFrictionStepStats {
  int iterations = 0;          ///< staggered iterations (contact-force evaluations)
  int active_tangents = 0;     ///< friction rows in the last friction QP
  int friction_qp_iterations = 0;  ///< projected Newton iterations, all QPs of the step
  bool converged = false;
};

class BispStepper {
 public:
  BispStepper(const ArticulatedSystem& system, JointFrictionOptions options);

  /// Adds constraints outside the tree (checked against the system; loops get friction
  /// cylinders like the tree's revolute joints).
  void set_external_constraints(const ArticulatedSystem& system, ExternalConstraints constraints);

  /// One linearly implicit step with joint friction.
  JointFrictionStepStats step(ArticulatedSystem& system, double time_step, const Vec3& gravity);

  /// The drivers' torques (forces for prismatic joints) of the last step, one per driver.
  [[nodiscard]] const std::vector<double>& driver_torques() const { return driver_torques_; }

  /// The contact impulses α of the last step (JointContacts numbering).
  [[nodiscard]] const std::vector<double>& contact_impulses() const { return alpha_; }
  /// The joints' friction torques/forces of the last step, Jᵀf_β (one per reduced DOF).
  [[nodiscard]] const std::vector<double>& joint_friction() const { return joint_friction_; }
  [[nodiscard]] const JointContacts& contacts() const { return contacts_; }

 private:
  /// f_β ← the new friction force, averaged with the last one from options_.relaxation_start on.
  void relax(std::vector<double> friction_force, int iteration);
  /// Line 24 / eq. 3.9's right-hand side: f̃_r + hJᵀ(f_β [+ f_α]).
  std::vector<double> final_rhs(const std::vector<double>& contact_force) const;
  JointFrictionStepStats step_in_tree(ArticulatedSystem& system, double time_step,
                                      const std::vector<RigidTransform>& frames);
  JointFrictionStepStats step_with_external(ArticulatedSystem& system, double time_step,
                                            const std::vector<RigidTransform>& frames);

  JointFrictionOptions options_;
  ExternalConstraints external_;
  std::vector<double> driver_torques_;
  JointContacts contacts_;
  RedmaxStepTerms terms_;
  std::vector<double> friction_force_;  // f_β (maximal), kept between steps as the warm start
  std::vector<double> friction_impulse_;  // β per tangent row, the QP's warm start
  std::vector<double> alpha_;
  std::vector<double> joint_friction_;
};

/// A friction QP: β minimizes ½βᵀHβ − βᵀg within ±bounds, H = W M⁻¹ Wᵀ and g = W v for the
/// friction rows W seen by some mobility M and velocity v (the kinetic energy after friction).
struct FrictionProblem {
  linalg::DenseMatrix hessian;
  std::vector<double> linear;
};

/// Eq. 3.2 as written: the maximal bodies (diagonal M̃) with the contact force held, v =
/// M̃⁻¹·velocity_times_mass.
FrictionProblem maximal_friction_problem(const linalg::DenseMatrix& tangents, const std::vector<double>& maximal_matrix,
                                         const std::vector<double>& velocity_times_mass);
/// M̃_r⁻¹ on the velocities that keep constraint rows A (reduced, na × nr) — the loops, the
/// drivers and the pressing feet: Q = M̃_r⁻¹ − Y S⁻¹ Yᵀ with Y = M̃_r⁻¹Aᵀ and S = AY (+ δI, as
/// loop rows can be dependent). Friction in a closed loop moves the loop, not one joint.
class ConstrainedMobility {
 public:
  ConstrainedMobility(const RedmaxStepTerms& terms, linalg::DenseMatrix rows);
  /// Q B for a block of reduced columns B (nr × k), in place.
  void apply(linalg::DenseMatrix& columns) const;

 private:
  const RedmaxStepTerms& terms_;
  linalg::DenseMatrix rows_;    // A
  linalg::DenseMatrix spread_;  // Y = M̃_r⁻¹Aᵀ
  linalg::DenseMatrix factor_;  // Cholesky of S
};

/// The same on the reduced system: W = T J, M = M̃_r (or its constrained Q when `mobility` is
/// given), v the reduced velocity without friction.
FrictionProblem reduced_friction_problem(const linalg::DenseMatrix& tangents, const RedmaxStepTerms& terms,
                                         const std::vector<double>& reduced_velocity,
                                         const ConstrainedMobility* mobility = nullptr);
/// Solves `problem` over the rows whose bound exceeds `threshold` (the others carry none) by the
/// projected Newton box QP, warm-started from and updating `impulse`; returns the maximal
/// friction force f_β = −Tᵀβ/h. Adds the QP's iterations to `qp_iterations`; `active` gets the
/// row count.
std::vector<double> solve_friction(const FrictionProblem& problem, const linalg::DenseMatrix& tangents,
                                   const std::vector<double>& bounds, double threshold, double time_step,
                                   std::vector<double>& impulse, int& qp_iterations, int& active);

/// The staggered iterations' stopping test (Algorithms 3.1–3.2): f_α moved by less than
/// `tolerance` relative to its size, both in the M̃⁻¹-norm (also true for a zero force).
bool contact_force_settled(const std::vector<double>& force, const std::vector<double>& previous,
                           const std::vector<double>& maximal_matrix, double tolerance);
/// The body-frame wrench on `body` of the constraint rows [first, first + count) of `rows`
/// (6·bodies columns) under the multipliers `impulses` (of those rows, by the same index), /h.
Vec6 rows_wrench(const linalg::DenseMatrix& rows, Index first, Index count, int body, std::span<const double> impulses,
                 double time_step);
/// Appends the floor's friction bounds μ·α for both tangents of each touching foot.
void append_floor_bounds(std::span<const double> normal_impulses, double friction, std::vector<double>& bounds);

/// ‖x‖²_{M̃⁻¹} for a diagonal M̃.
double inverse_mass_norm2(const std::vector<double>& x, const std::vector<double>& maximal_matrix);

}  // namespace cholsim::fem::articulated
