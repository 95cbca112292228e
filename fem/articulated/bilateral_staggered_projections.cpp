#include "fem/articulated/bilateral_staggered_projections.hpp"

#include <stdexcept>

#include "solvers/qp/box_qp.hpp"

namespace cholsim::fem::articulated {

double inverse_mass_norm2(const std::vector<double>& x, const std::vector<double>& maximal_matrix) {
  double sum = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) sum += x[k] * x[k] / maximal_matrix[k];
  return sum;
}

std::vector<double> solve_friction_qp(const linalg::DenseMatrix& tangents, const std::vector<double>& maximal_matrix,
                                      const std::vector<double>& velocity_times_mass,
                                      const std::vector<double>& bounds, double threshold, double h,
                                      std::vector<double>& impulse, int& qp_iterations, int& active) {
  const Index nm = tangents.cols();
  std::vector<Index> rows;
  for (Index t = 0; t < tangents.rows(); ++t) {
    if (bounds[static_cast<std::size_t>(t)] > threshold) rows.push_back(t);
  }
  active = static_cast<int>(rows.size());
  std::vector<double> force(static_cast<std::size_t>(nm), 0.0);
  impulse.resize(static_cast<std::size_t>(tangents.rows()), 0.0);
  if (rows.empty()) {
    std::fill(impulse.begin(), impulse.end(), 0.0);
    return force;
  }
  const auto n = static_cast<Index>(rows.size());
  // H = T M̃⁻¹ Tᵀ and g = T M̃⁻¹ w over the active rows (M̃ diagonal).
  linalg::DenseMatrix hessian(n, n);
  std::vector<double> linear(static_cast<std::size_t>(n), 0.0), lower(static_cast<std::size_t>(n)),
      upper(static_cast<std::size_t>(n)), start(static_cast<std::size_t>(n));
  for (Index a = 0; a < n; ++a) {
    const Index ra = rows[static_cast<std::size_t>(a)];
    for (Index k = 0; k < nm; ++k) {
      const double tk = tangents(ra, k);
      if (tk != 0.0) linear[static_cast<std::size_t>(a)] += tk * velocity_times_mass[static_cast<std::size_t>(k)] / maximal_matrix[static_cast<std::size_t>(k)];
    }
    for (Index b = 0; b <= a; ++b) {
      const Index rb = rows[static_cast<std::size_t>(b)];
      double sum = 0.0;
      for (Index k = 0; k < nm; ++k) sum += tangents(ra, k) * tangents(rb, k) / maximal_matrix[static_cast<std::size_t>(k)];
      hessian(a, b) = sum;
      hessian(b, a) = sum;
    }
    const double bound = bounds[static_cast<std::size_t>(ra)];
    lower[static_cast<std::size_t>(a)] = -bound;
    upper[static_cast<std::size_t>(a)] = bound;
    start[static_cast<std::size_t>(a)] = impulse[static_cast<std::size_t>(ra)];
  }
  const solvers::qp::BoxQpResult qp = solvers::qp::solve_box_qp(hessian, linear, lower, upper, start);
  qp_iterations += qp.iterations;
  std::fill(impulse.begin(), impulse.end(), 0.0);
  for (Index a = 0; a < n; ++a) {
    const Index ra = rows[static_cast<std::size_t>(a)];
    const double beta = qp.x[static_cast<std::size_t>(a)];
    impulse[static_cast<std::size_t>(ra)] = beta;
    for (Index k = 0; k < nm; ++k) force[static_cast<std::size_t>(k)] -= tangents(ra, k) * beta / h;
  }
  return force;
}

BispStepper::BispStepper(const ArticulatedSystem& system, JointFrictionOptions options)
    : options_(options), contacts_(system) {
  if (!(options_.friction >= 0.0) || options_.max_iterations < 1 || !(options_.regularization > 0.0)) {
    throw std::invalid_argument("BISP: μ ≥ 0, at least one iteration and a positive regularization are needed");
  }
  friction_force_.assign(static_cast<std::size_t>(system.maximal_dof_count()), 0.0);
}

JointFrictionStepStats BispStepper::step(ArticulatedSystem& system, double h, const Vec3& gravity) {
  system.reparameterize();
  assemble_redmax_step(system, h, gravity, terms_);
  const auto nm = static_cast<std::size_t>(system.maximal_dof_count());
  const auto nr = static_cast<std::size_t>(system.reduced_dof_count());
  const std::vector<double>& mm = terms_.maximal_matrix;

  // The velocities without friction: maximal unconstrained and reduced (constrained).
  std::vector<double> reduced = terms_.reduced_rhs;
  solve_reduced(terms_, reduced);
  std::vector<double> constrained(nm), unconstrained(nm);
  jacobian_times(terms_, reduced, constrained);
  for (std::size_t k = 0; k < nm; ++k) unconstrained[k] = terms_.maximal_rhs[k] / mm[k];

  linalg::DenseMatrix tangents;
  contacts_.tangent_matrix(system, tangents);
  JointFrictionStepStats stats;
  std::vector<double> contact_force(nm, 0.0), previous(nm, 0.0), reduced_friction(nr), with_contact(nm),
      bounds;
  std::vector<Vec6> joint_wrenches;
  for (stats.iterations = 1; stats.iterations <= options_.max_iterations; ++stats.iterations) {
    // Eq. 3.5: both velocities with the current friction force; f_α from their difference.
    jacobian_transpose_times(terms_, friction_force_, reduced_friction);
    solve_reduced(terms_, reduced_friction);
    std::vector<double> constrained_friction(nm);
    jacobian_times(terms_, reduced_friction, constrained_friction);
    for (std::size_t k = 0; k < nm; ++k) {
      const double vcon = constrained[k] + h * constrained_friction[k];
      const double vunc = unconstrained[k] + h * friction_force_[k] / mm[k];
      contact_force[k] = mm[k] * (vcon - vunc) / h;
    }
    contacts_.distribute_to_joints(system, contact_force, joint_wrenches);
    contacts_.contact_multipliers(system, joint_wrenches, h, options_.regularization, alpha_);
    std::vector<double> change(nm);
    for (std::size_t k = 0; k < nm; ++k) change[k] = contact_force[k] - previous[k];
    const double size = inverse_mass_norm2(contact_force, mm);
    if (size == 0.0 || inverse_mass_norm2(change, mm) < options_.convergence * size) {
      stats.converged = true;
      break;
    }
    if (stats.iterations == options_.max_iterations) break;
    previous = contact_force;
    // Eq. 3.2 around the velocity with the joint reactions but without friction.
    for (std::size_t k = 0; k < nm; ++k) with_contact[k] = terms_.maximal_rhs[k] + h * contact_force[k];
    contacts_.friction_bounds(alpha_, options_.friction, bounds);
    friction_force_ = solve_friction_qp(tangents, mm, with_contact, bounds, options_.friction * options_.active_threshold,
                                        h, friction_impulse_, stats.friction_qp_iterations, stats.active_tangents);
  }
  stats.iterations = std::min(stats.iterations, options_.max_iterations);
  // Line 24: the reduced velocity under the friction force (and the joint reaction as REDMAX
  // adds it, see JointFrictionOptions::redmax_final_step).
  std::vector<double> total = friction_force_;
  if (options_.redmax_final_step) {
    for (std::size_t k = 0; k < nm; ++k) total[k] += contact_force[k];
  }
  std::vector<double> velocities(nr);
  jacobian_transpose_times(terms_, total, velocities);
  joint_friction_.assign(nr, 0.0);
  jacobian_transpose_times(terms_, friction_force_, joint_friction_);
  for (std::size_t k = 0; k < nr; ++k) velocities[k] = terms_.reduced_rhs[k] + h * velocities[k];
  solve_reduced(terms_, velocities);
  advance_positions(system, h, velocities);
  return stats;
}

}  // namespace cholsim::fem::articulated
