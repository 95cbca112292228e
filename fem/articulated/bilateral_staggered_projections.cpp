#include "fem/articulated/bilateral_staggered_projections.hpp"

#include <algorithm>
#include <stdexcept>

#include "fem/articulated/dense_qp.hpp"
#include "linalg/blas.hpp"
#include "solvers/qp/box_qp.hpp"

namespace cholsim::fem::articulated {

double inverse_mass_norm2(const std::vector<double>& x, const std::vector<double>& maximal_matrix) {
  double sum = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) sum += x[k] * x[k] / maximal_matrix[k];
  return sum;
}

bool contact_force_settled(const std::vector<double>& force, const std::vector<double>& previous,
                           const std::vector<double>& maximal_matrix, double tolerance) {
  std::vector<double> change(force.size());
  for (std::size_t k = 0; k < force.size(); ++k) change[k] = force[k] - previous[k];
  const double size = inverse_mass_norm2(force, maximal_matrix);
  return size == 0.0 || inverse_mass_norm2(change, maximal_matrix) < tolerance * size;
}

Vec6 rows_wrench(const linalg::DenseMatrix& rows, Index first, Index count, int body, std::span<const double> impulses,
                 double h) {
  Vec6 wrench{};
  for (Index r = first; r < first + count; ++r) {
    const double force = impulses[static_cast<std::size_t>(r)] / h;
    for (int c = 0; c < 6; ++c) wrench[static_cast<std::size_t>(c)] += rows(r, 6 * body + c) * force;
  }
  return wrench;
}

void append_floor_bounds(std::span<const double> normal_impulses, double friction, std::vector<double>& bounds) {
  for (double impulse : normal_impulses) {
    bounds.push_back(friction * impulse);
    bounds.push_back(friction * impulse);
  }
}

FrictionProblem maximal_friction_problem(const linalg::DenseMatrix& tangents, const std::vector<double>& maximal_matrix,
                                         const std::vector<double>& velocity_times_mass) {
  const Index rows = tangents.rows(), nm = tangents.cols();
  FrictionProblem problem{linalg::DenseMatrix(rows, rows), std::vector<double>(static_cast<std::size_t>(rows), 0.0)};
  for (Index a = 0; a < rows; ++a) {
    for (Index k = 0; k < nm; ++k) {
      const auto uk = static_cast<std::size_t>(k);
      problem.linear[static_cast<std::size_t>(a)] += tangents(a, k) * velocity_times_mass[uk] / maximal_matrix[uk];
    }
    for (Index b = 0; b <= a; ++b) {
      double sum = 0.0;
      for (Index k = 0; k < nm; ++k) sum += tangents(a, k) * tangents(b, k) / maximal_matrix[static_cast<std::size_t>(k)];
      problem.hessian(a, b) = problem.hessian(b, a) = sum;
    }
  }
  return problem;
}

ConstrainedMobility::ConstrainedMobility(const RedmaxStepTerms& terms, linalg::DenseMatrix rows)
    : terms_(terms), rows_(std::move(rows)) {
  const Index na = rows_.rows(), nr = rows_.cols();
  spread_ = linalg::DenseMatrix(nr, na);
  for (Index a = 0; a < na; ++a) {
    for (Index c = 0; c < nr; ++c) spread_(c, a) = rows_(a, c);
  }
  if (na == 0 || nr == 0) return;
  linalg::blas::potrs(terms_.reduced_factor.view(), spread_.view());
  factor_ = linalg::DenseMatrix(na, na);
  linalg::blas::gemm(linalg::blas::Transpose::no, linalg::blas::Transpose::no, 1.0, rows_.view(), spread_.view(), 0.0,
                     factor_.view());
  double largest = 0.0;
  for (Index a = 0; a < na; ++a) largest = std::max(largest, factor_(a, a));
  for (Index a = 0; a < na; ++a) factor_(a, a) += 1e-10 * largest;
  if (linalg::blas::potrf(factor_.view()) != 0) {
    throw std::runtime_error("BISP: the constraint rows' Schur complement A M̃_r⁻¹ Aᵀ is not positive definite");
  }
}

void ConstrainedMobility::apply(linalg::DenseMatrix& columns) const {
  if (columns.rows() == 0 || columns.cols() == 0) return;
  linalg::blas::potrs(terms_.reduced_factor.view(), columns.view());  // M̃_r⁻¹ B
  const Index na = rows_.rows();
  if (na == 0) return;
  linalg::DenseMatrix pressed(na, columns.cols());  // S⁻¹ A M̃_r⁻¹ B
  linalg::blas::gemm(linalg::blas::Transpose::no, linalg::blas::Transpose::no, 1.0, rows_.view(), columns.view(), 0.0,
                     pressed.view());
  linalg::blas::potrs(factor_.view(), pressed.view());
  linalg::blas::gemm(linalg::blas::Transpose::no, linalg::blas::Transpose::no, -1.0, spread_.view(), pressed.view(), 1.0,
                     columns.view());
}

FrictionProblem reduced_friction_problem(const linalg::DenseMatrix& tangents, const RedmaxStepTerms& terms,
                                         const std::vector<double>& reduced_velocity,
                                         const ConstrainedMobility* mobility) {
  const Index rows = tangents.rows(), nr = terms.jacobian.cols();
  FrictionProblem problem{linalg::DenseMatrix(rows, rows), std::vector<double>(static_cast<std::size_t>(rows), 0.0)};
  if (rows == 0 || nr == 0) return problem;
  // T_r = T J, then H = T_r M̃_r⁻¹ T_rᵀ from X = M̃_r⁻¹ T_rᵀ.
  linalg::DenseMatrix reduced_rows(rows, nr);
  linalg::blas::gemm(linalg::blas::Transpose::no, linalg::blas::Transpose::no, 1.0, tangents.view(), terms.jacobian.view(),
                     0.0, reduced_rows.view());
  linalg::DenseMatrix solved(nr, rows);
  for (Index r = 0; r < rows; ++r) {
    for (Index c = 0; c < nr; ++c) solved(c, r) = reduced_rows(r, c);
  }
  if (mobility != nullptr) {
    mobility->apply(solved);
  } else {
    linalg::blas::potrs(terms.reduced_factor.view(), solved.view());
  }
  linalg::blas::gemm(linalg::blas::Transpose::no, linalg::blas::Transpose::no, 1.0, reduced_rows.view(), solved.view(), 0.0,
                     problem.hessian.view());
  linalg::blas::gemv(linalg::blas::Transpose::no, 1.0, reduced_rows.view(), reduced_velocity.data(), 0.0,
                     problem.linear.data());
  if (mobility != nullptr) {
    // In a closed mechanism most friction rows push where the constraints hold (H = T_r Q T_rᵀ has
    // the rank of the mechanism's few free DOFs): a small ridge picks the least impulses among
    // the equivalent ones instead of arbitrary large ones that the constraints would cancel.
    double largest = 0.0;
    for (Index r = 0; r < rows; ++r) largest = std::max(largest, problem.hessian(r, r));
    for (Index r = 0; r < rows; ++r) problem.hessian(r, r) += 1e-6 * largest;
  }
  return problem;
}

std::vector<double> solve_friction(const FrictionProblem& problem, const linalg::DenseMatrix& tangents,
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
  // The box QP over the rows that can carry friction.
  const auto n = static_cast<Index>(rows.size());
  linalg::DenseMatrix hessian(n, n);
  std::vector<double> linear(static_cast<std::size_t>(n)), lower(static_cast<std::size_t>(n)),
      upper(static_cast<std::size_t>(n)), start(static_cast<std::size_t>(n));
  for (Index a = 0; a < n; ++a) {
    const Index ra = rows[static_cast<std::size_t>(a)];
    for (Index b = 0; b < n; ++b) hessian(a, b) = problem.hessian(ra, rows[static_cast<std::size_t>(b)]);
    const auto ua = static_cast<std::size_t>(a);
    linear[ua] = problem.linear[static_cast<std::size_t>(ra)];
    lower[ua] = -bounds[static_cast<std::size_t>(ra)];
    upper[ua] = bounds[static_cast<std::size_t>(ra)];
    start[ua] = impulse[static_cast<std::size_t>(ra)];
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

void BispStepper::set_external_constraints(const ArticulatedSystem& system, ExternalConstraints constraints) {
  constraints.check(system);
  for (const LoopClosure& loop : constraints.loops) {
    contacts_.add_loop(loop.body_a, loop.body_b, loop.point_a, loop.axis_a, loop.radius, loop.height);
  }
  external_ = std::move(constraints);
  friction_impulse_.clear();
}

JointFrictionStepStats BispStepper::step(ArticulatedSystem& system, double h, const Vec3& gravity) {
  system.reparameterize();
  assemble_redmax_step(system, h, gravity, terms_);
  const std::vector<RigidTransform> frames = body_frames(system);
  return external_.empty() ? step_in_tree(system, h, frames) : step_with_external(system, h, frames);
}

void BispStepper::relax(std::vector<double> friction_force, int iteration) {
  // Past relaxation_start iterations the staggered loop is cycling (typically a period-2 swap
  // of the normal load between two feet, each swap moving the friction bounds): average the new
  // friction force with the last, which damps the cycle. REDMAX does not, so compat mode doesn't.
  if (options_.redmax_compatible || iteration < options_.relaxation_start ||
      friction_force.size() != friction_force_.size()) {
    friction_force_ = std::move(friction_force);
    return;
  }
  for (std::size_t k = 0; k < friction_force_.size(); ++k) friction_force_[k] = 0.5 * (friction_force_[k] + friction_force[k]);
}

std::vector<double> BispStepper::final_rhs(const std::vector<double>& contact_force) const {
  std::vector<double> total = friction_force_;
  if (options_.redmax_compatible) {
    for (std::size_t k = 0; k < total.size(); ++k) total[k] += contact_force[k];
  }
  std::vector<double> rhs(terms_.reduced_rhs.size());
  jacobian_transpose_times(terms_, total, rhs);
  for (std::size_t k = 0; k < rhs.size(); ++k) rhs[k] = terms_.reduced_rhs[k] + terms_.time_step * rhs[k];
  return rhs;
}

JointFrictionStepStats BispStepper::step_in_tree(ArticulatedSystem& system, double h,
                                                 const std::vector<RigidTransform>& frames) {
  const auto nm = static_cast<std::size_t>(system.maximal_dof_count());
  const auto nr = static_cast<std::size_t>(system.reduced_dof_count());
  const std::vector<double>& mm = terms_.maximal_matrix;

  // The velocities without friction: maximal unconstrained and reduced (constrained).
  std::vector<double> reduced = terms_.reduced_rhs;
  solve_reduced(terms_, reduced);
  std::vector<double> constrained(nm), unconstrained(nm);
  jacobian_times(terms_, reduced, constrained);
  for (std::size_t k = 0; k < nm; ++k) unconstrained[k] = terms_.maximal_rhs[k] / mm[k];

  const FrictionRows row_kind = options_.redmax_compatible ? FrictionRows::per_tangent : FrictionRows::per_dof;
  linalg::DenseMatrix tangents;
  contacts_.friction_matrix(frames, row_kind, tangents);
  // Ours on the reduced system, where the joints hold exactly and a joint's friction meets the
  // inertia it really moves, is the same all step (only the bounds move); REDMAX's eq. 3.2 on the
  // maximal bodies with f_α held changes with f_α.
  const FrictionProblem reduced_problem =
      options_.redmax_compatible ? FrictionProblem{} : reduced_friction_problem(tangents, terms_, reduced);
  JointContacts::MultiplierSystems multiplier_systems;
  contacts_.prepare_contact_multipliers(frames, options_.regularization, multiplier_systems);
  JointFrictionStepStats stats;
  std::vector<double> contact_force(nm, 0.0), previous(nm, 0.0), reduced_friction(nr), with_contact(nm), bounds;
  std::vector<double> constrained_friction(nm);
  std::vector<Vec6> joint_wrenches;
  for (stats.iterations = 1; stats.iterations <= options_.max_iterations; ++stats.iterations) {
    // Eq. 3.5: both velocities with the current friction force; f_α from their difference.
    jacobian_transpose_times(terms_, friction_force_, reduced_friction);
    solve_reduced(terms_, reduced_friction);
    jacobian_times(terms_, reduced_friction, constrained_friction);
    for (std::size_t k = 0; k < nm; ++k) {
      const double vcon = constrained[k] + h * constrained_friction[k];
      const double vunc = unconstrained[k] + h * friction_force_[k] / mm[k];
      contact_force[k] = mm[k] * (vcon - vunc) / h;
    }
    contacts_.distribute_to_joints(system, contact_force, joint_wrenches, options_.redmax_compatible);
    contacts_.contact_multipliers(multiplier_systems, joint_wrenches, h, alpha_);
    if (contact_force_settled(contact_force, previous, mm, options_.convergence)) {
      stats.converged = true;
      break;
    }
    if (stats.iterations == options_.max_iterations) break;
    previous = contact_force;
    // Eq. 3.2 around the velocity with the joint reactions but without friction.
    for (std::size_t k = 0; k < nm; ++k) with_contact[k] = terms_.maximal_rhs[k] + h * contact_force[k];
    contacts_.friction_bounds(alpha_, options_.friction, row_kind, bounds);
    const FrictionProblem problem =
        options_.redmax_compatible ? maximal_friction_problem(tangents, mm, with_contact) : reduced_problem;
    relax(solve_friction(problem, tangents, bounds, options_.friction * options_.active_threshold, h, friction_impulse_,
                         stats.friction_qp_iterations, stats.active_tangents),
          stats.iterations);
  }
  stats.iterations = std::min(stats.iterations, options_.max_iterations);
  // Line 24: the reduced velocity under the friction force (and the joint reaction as REDMAX
  // adds it, see JointFrictionOptions::redmax_compatible).
  std::vector<double> velocities = final_rhs(contact_force);
  joint_friction_.assign(nr, 0.0);
  jacobian_transpose_times(terms_, friction_force_, joint_friction_);
  solve_reduced(terms_, velocities);
  advance_positions(system, h, velocities);
  return stats;
}

namespace {

/// A·J for constraint rows A on the maximal twists: the same constraints on q̇.
linalg::DenseMatrix times_jacobian(const linalg::DenseMatrix& rows, const linalg::DenseMatrix& jacobian) {
  linalg::DenseMatrix product(rows.rows(), jacobian.cols());
  if (rows.rows() > 0 && jacobian.cols() > 0) {
    linalg::blas::gemm(linalg::blas::Transpose::no, linalg::blas::Transpose::no, 1.0, rows.view(), jacobian.view(), 0.0,
                       product.view());
  }
  return product;
}

/// The rows of C whose multiplier is positive (the feet pressing on the floor).
linalg::DenseMatrix pressing_rows(const linalg::DenseMatrix& rows, const std::vector<double>& multipliers) {
  std::vector<Index> pressing;
  for (Index r = 0; r < rows.rows(); ++r) {
    if (multipliers[static_cast<std::size_t>(r)] > 0.0) pressing.push_back(r);
  }
  linalg::DenseMatrix kept(static_cast<Index>(pressing.size()), rows.cols());
  for (Index c = 0; c < rows.cols(); ++c) {
    for (std::size_t k = 0; k < pressing.size(); ++k) kept(static_cast<Index>(k), c) = rows(pressing[k], c);
  }
  return kept;
}

}  // namespace

JointFrictionStepStats BispStepper::step_with_external(ArticulatedSystem& system, double h,
                                                       const std::vector<RigidTransform>& frames) {
  const auto nm = static_cast<std::size_t>(system.maximal_dof_count());
  const auto nr = static_cast<std::size_t>(system.reduced_dof_count());
  const std::vector<double>& mm = terms_.maximal_matrix;
  const ExternalRows rows = external_rows(external_, system, frames, h);
  solvers::qp::QpProblem maximal =
      diagonal_qp(mm, rows.equality, rows.equality_rhs, rows.inequality, rows.inequality_rhs);
  const linalg::DenseMatrix equality_on_q = times_jacobian(rows.equality, terms_.jacobian);
  const linalg::DenseMatrix inequality_on_q = times_jacobian(rows.inequality, terms_.jacobian);
  solvers::qp::QpProblem reduced =
      dense_qp(terms_.reduced_matrix, equality_on_q, rows.equality_rhs, inequality_on_q, rows.inequality_rhs);
  const FrictionRows row_kind = options_.redmax_compatible ? FrictionRows::per_tangent : FrictionRows::per_dof;
  linalg::DenseMatrix joint_rows;
  contacts_.friction_matrix(frames, row_kind, joint_rows);
  const linalg::DenseMatrix tangents = stack_rows(joint_rows, rows.floor_tangents);
  const auto loops = external_.loops.size();
  const int first_loop_group = system.link_count();

  JointContacts::MultiplierSystems multiplier_systems;
  contacts_.prepare_contact_multipliers(frames, options_.regularization, multiplier_systems);
  JointFrictionStepStats stats;
  std::vector<double> contact_force(nm, 0.0), previous(nm, 0.0), with_contact(nm), bounds;
  std::vector<Vec6> wrenches;
  solvers::qp::QpSolution constrained;
  solvers::qp::ActiveSetWarmStart reduced_active_set;  // the floor rows stay the same within a step
  for (stats.iterations = 1; stats.iterations <= options_.max_iterations; ++stats.iterations) {
    // Eq. 3.8: the maximal velocity under the external constraints only, and the reduced one.
    for (std::size_t k = 0; k < nm; ++k) maximal.linear[k] = terms_.maximal_rhs[k] + h * friction_force_[k];
    const std::vector<double> unconstrained = solve_dense_qp(maximal, "BISP, eq. 3.8b").x;
    jacobian_transpose_times(terms_, friction_force_, reduced.linear);
    for (std::size_t k = 0; k < nr; ++k) reduced.linear[k] = terms_.reduced_rhs[k] + h * reduced.linear[k];
    constrained = solve_dense_qp(reduced, "BISP, eq. 3.8c", &reduced_active_set);
    std::vector<double> velocity(nm);
    jacobian_times(terms_, constrained.x, velocity);
    for (std::size_t k = 0; k < nm; ++k) contact_force[k] = mm[k] * (velocity[k] - unconstrained[k]) / h;
    // The tree's joints from f_α; each loop joint from its own rows' force on its first body.
    contacts_.distribute_to_joints(system, contact_force, wrenches, options_.redmax_compatible);
    for (std::size_t l = 0; l < loops; ++l) {
      wrenches[static_cast<std::size_t>(first_loop_group) + l] = rows_wrench(
          rows.equality, 2 * static_cast<Index>(l), 2, external_.loops[l].body_a, constrained.equality_multipliers, h);
    }
    contacts_.contact_multipliers(multiplier_systems, wrenches, h, alpha_);
    if (contact_force_settled(contact_force, previous, mm, options_.convergence)) {
      stats.converged = true;
      break;
    }
    if (stats.iterations == options_.max_iterations) break;
    previous = contact_force;
    for (std::size_t k = 0; k < nm; ++k) with_contact[k] = terms_.maximal_rhs[k] + h * contact_force[k];
    contacts_.friction_bounds(alpha_, options_.friction, row_kind, bounds);
    append_floor_bounds(constrained.inequality_multipliers, external_.floor_friction, bounds);
    // The constrained mobility (the loops, drivers and pressing feet hold while friction acts)
    // and the reduced velocity under the constraints without the current friction's push.
    const ConstrainedMobility mobility(
        terms_, stack_rows(equality_on_q, pressing_rows(inequality_on_q, constrained.inequality_multipliers)));
    linalg::DenseMatrix push(static_cast<Index>(nr), 1);
    jacobian_transpose_times(terms_, friction_force_, push.storage());
    mobility.apply(push);
    std::vector<double> without_friction(nr);
    for (std::size_t k = 0; k < nr; ++k) without_friction[k] = constrained.x[k] - h * push.storage()[k];
    const FrictionProblem problem = options_.redmax_compatible
                                        ? maximal_friction_problem(tangents, mm, with_contact)
                                        : reduced_friction_problem(tangents, terms_, without_friction, &mobility);
    relax(solve_friction(problem, tangents, bounds, options_.friction * options_.active_threshold, h, friction_impulse_,
                         stats.friction_qp_iterations, stats.active_tangents),
          stats.iterations);
  }
  stats.iterations = std::min(stats.iterations, options_.max_iterations);
  // Eq. 3.9: the final reduced QP under the external constraints.
  reduced.linear = final_rhs(contact_force);
  const solvers::qp::QpSolution final_step = solve_dense_qp(reduced, "BISP, eq. 3.9");
  joint_friction_.assign(nr, 0.0);
  jacobian_transpose_times(terms_, friction_force_, joint_friction_);
  driver_torques_.clear();
  for (std::size_t d = 0; d < external_.drivers.size(); ++d) {
    driver_torques_.push_back(final_step.equality_multipliers[static_cast<std::size_t>(first_driver_row(external_)) + d] / h);
  }
  advance_positions(system, h, final_step.x);
  return stats;
}

}  // namespace cholsim::fem::articulated
