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
#include <vector>

#include "fem/articulated/joint_contacts.hpp"
#include "fem/articulated/redmax_step.hpp"

namespace cholsim::fem::articulated {

struct JointFrictionOptions {
  double friction = 0.6;          ///< μ in the joints
  int max_iterations = 100;       ///< staggered iterations per step
  double convergence = 1e-3;      ///< on ‖Δf_α‖²_{M̃⁻¹} / ‖f_α‖²_{M̃⁻¹}
  double active_threshold = 1e-10;  ///< tangent rows with μΣ|α| ≤ μ·this are dropped
  double regularization = 1e-6;   ///< ε of eq. 3.7
  /// Line 24 as REDMAX's MATLAB code (eulerFric) has it: q̇ = M̃_r⁻¹(f̃_r + hJᵀ(f_α + f_β)). Its
  /// f_α holds the reaction to the velocity-product term −M J̇ q̇ that f̃_r already contains, so
  /// Jᵀf_α ≠ 0 and that term acts twice: without friction the step is then not the
  /// frictionless one, by O(1) in the motion, not O(h). Off (the default), a reaction does no
  /// work in reduced coordinates (Jᵀf_α = 0 by construction) and only f_β is added; on, the
  /// reference regression energies are reproduced.
  bool redmax_final_step = false;
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

  /// One linearly implicit step with joint friction.
  JointFrictionStepStats step(ArticulatedSystem& system, double time_step, const Vec3& gravity);

  /// The contact impulses α of the last step (JointContacts numbering).
  [[nodiscard]] const std::vector<double>& contact_impulses() const { return alpha_; }
  /// The joints' friction torques/forces of the last step, Jᵀf_β (one per reduced DOF).
  [[nodiscard]] const std::vector<double>& joint_friction() const { return joint_friction_; }
  [[nodiscard]] const JointContacts& contacts() const { return contacts_; }

 private:
  JointFrictionOptions options_;
  JointContacts contacts_;
  RedmaxStepTerms terms_;
  std::vector<double> friction_force_;  // f_β (maximal), kept between steps as the warm start
  std::vector<double> friction_impulse_;  // β per tangent row, the QP's warm start
  std::vector<double> alpha_;
  std::vector<double> joint_friction_;
};

/// The friction QP of eq. 3.2 on the rows whose bound is above the threshold: β minimizes
/// ½βᵀT M̃⁻¹Tᵀβ − βᵀT M̃⁻¹ w within ±bounds. Returns f_β = −Tᵀβ/h (maximal) and updates `impulse`
/// (all rows; inactive ones 0). Adds the QP's iterations to `qp_iterations`; `active` gets the
/// row count.
std::vector<double> solve_friction_qp(const linalg::DenseMatrix& tangents, const std::vector<double>& maximal_matrix,
                                      const std::vector<double>& velocity_times_mass,
                                      const std::vector<double>& bounds, double threshold, double time_step,
                                      std::vector<double>& impulse, int& qp_iterations, int& active);

/// ‖x‖²_{M̃⁻¹} for a diagonal M̃.
double inverse_mass_norm2(const std::vector<double>& x, const std::vector<double>& maximal_matrix);

}  // namespace cholsim::fem::articulated
