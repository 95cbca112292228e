#include "fem/articulated/staggered_projections.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "fem/articulated/dense_qp.hpp"
#include "linalg/blas.hpp"

namespace cholsim::fem::articulated {
namespace {

/// The twist's effect on the body frame over h: R ← R exp(hω), x ← x + R h v.
RigidTransform advance_frame(const RigidTransform& frame, const Vec6& twist, double h) {
  const Vec3 w{twist[0], twist[1], twist[2]}, v{twist[3], twist[4], twist[5]};
  return {frame.rotation * rotation_exponential(h * w), frame.translation + frame.rotation * (h * v)};
}

}  // namespace

JointError StaggeredProjections::joint_error(int link) const {
  const auto i = static_cast<std::size_t>(link);
  const JointSpec& joint = system_.joint(link);
  const int parent = joint.parent;
  const RigidTransform child = frames_[i] * joint_in_child_[i];
  const RigidTransform parent_frame = (parent < 0 ? RigidTransform{} : frames_[static_cast<std::size_t>(parent)]) *
                                      joint_in_parent_[i];
  JointError error;
  error.translation = parent_frame.translation - child.translation;
  switch (joint.kind) {
    case JointKind::revolute:  // the axes must agree; rotation about them is free
      error.rotation = linalg::cross(child.rotation * joint.axis, parent_frame.rotation * joint.axis);
      break;
    case JointKind::fixed:  // neither rotation nor translation
      error.rotation = linalg::axial_vector(parent_frame.rotation * linalg::transpose(child.rotation));
      break;
    case JointKind::prismatic: {  // no relative rotation; sliding along the axis is free
      error.rotation = linalg::axial_vector(parent_frame.rotation * linalg::transpose(child.rotation));
      const Vec3 axis = parent_frame.rotation * joint.axis;
      error.translation = error.translation - linalg::dot(error.translation, axis) * axis;
      break;
    }
    default: break;  // spherical: the centres only
  }
  return error;
}

std::vector<double> StaggeredProjections::stabilization_rhs(const linalg::DenseMatrix& normals, double h) const {
  // Baumgarte at the velocity level: the joint rows ask for γ/h of the child twist that would
  // move the child's joint frame onto the parent's (by the joint's error, about its origin).
  // Being N applied to one twist, the right-hand side is consistent although a joint has many
  // more rows than constrained directions (16 for a revolute joint's 5).
  std::vector<double> rhs(static_cast<std::size_t>(normals.rows()), 0.0);
  for (int i = 0; i < body_count(); ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const auto nc = static_cast<Index>(contacts_.of(i).normals.size());
    if (nc == 0) continue;
    const JointError error = joint_error(i);
    const RigidTransform& frame = frames_[ui];
    const Vec3 lever = frame.translation - (frame * joint_in_child_[ui]).translation;
    const Mat3 to_body = linalg::transpose(frame.rotation);
    const Vec3 w = to_body * error.rotation;
    const Vec3 v = to_body * (error.translation + linalg::cross(error.rotation, lever));
    const Vec6 correction{w.x, w.y, w.z, v.x, v.y, v.z};
    for (Index r = contacts_.first_normal(i); r < contacts_.first_normal(i) + nc; ++r) {
      double rate = 0.0;
      for (int c = 0; c < 6; ++c) rate += normals(r, 6 * i + c) * correction[static_cast<std::size_t>(c)];
      rhs[static_cast<std::size_t>(r)] = options_.stabilization * rate / h;
    }
  }
  return rhs;
}

void StaggeredProjections::fixed_joint_rows(double h, linalg::DenseMatrix& rows, std::vector<double>& rhs) const {
  // A fixed joint has no contact points: its six rows ask the child's joint frame to move with
  // the parent's (relative twist, joint frame) but for γ/h of its error.
  std::vector<int> welded;
  for (int i = 0; i < body_count(); ++i) {
    if (system_.joint(i).kind == JointKind::fixed) welded.push_back(i);
  }
  rows = linalg::DenseMatrix(6 * static_cast<Index>(welded.size()), 6 * body_count());
  rhs.assign(static_cast<std::size_t>(rows.rows()), 0.0);
  for (std::size_t w = 0; w < welded.size(); ++w) {
    const int i = welded[w];
    const auto ui = static_cast<std::size_t>(i);
    const int parent = system_.parent(i);
    const Mat6 child = adjoint(inverse(joint_in_child_[ui]));  // body twist → joint-frame twist
    const RigidTransform joint_frame = frames_[ui] * joint_in_child_[ui];
    const JointError error = joint_error(i);
    const Mat3 to_joint = linalg::transpose(joint_frame.rotation);
    const Vec3 rotation = to_joint * error.rotation, translation = to_joint * error.translation;
    const Vec6 target{rotation.x, rotation.y, rotation.z, translation.x, translation.y, translation.z};
    Mat6 from_parent;
    if (parent >= 0) from_parent = adjoint(inverse(joint_frame) * frames_[static_cast<std::size_t>(parent)]);
    for (int k = 0; k < 6; ++k) {
      const Index row = 6 * static_cast<Index>(w) + k;
      for (int c = 0; c < 6; ++c) {
        rows(row, 6 * i + c) = child(k, c);
        if (parent >= 0) rows(row, 6 * parent + c) = -from_parent(k, c);
      }
      rhs[static_cast<std::size_t>(row)] = options_.stabilization * target[static_cast<std::size_t>(k)] / h;
    }
  }
}

StaggeredProjections::StaggeredProjections(const ArticulatedSystem& system, StaggeredProjectionsOptions options)
    : options_(options), system_(system), contacts_(system) {
  for (int i = 0; i < system.link_count(); ++i) {
    frames_.push_back(system.body_to_world(i));
    twists_.push_back(system.body_twist(i));
    const JointSpec& joint = system.joint(i);
    joint_in_child_.push_back(inverse(system.body(i).in_joint));
    joint_in_parent_.push_back(joint.parent < 0 ? joint.in_parent
                                                : inverse(system.body(joint.parent).in_joint) * joint.in_parent);
  }
  friction_force_.assign(static_cast<std::size_t>(system.maximal_dof_count()), 0.0);
}

JointFrictionStepStats StaggeredProjections::step(double h, const Vec3& gravity) {
  if (!(h > 0.0)) throw std::invalid_argument("staggered projections: the time step must be positive");
  const auto nm = static_cast<std::size_t>(6 * body_count());
  std::vector<double> mass(nm), unconstrained(nm);
  for (std::size_t i = 0; i < frames_.size(); ++i) {
    const Vec6& m = system_.body_inertia(static_cast<int>(i));
    const Vec6 wrench = body_wrench(m, twists_[i], frames_[i].rotation, gravity);
    for (std::size_t r = 0; r < 6; ++r) {
      mass[6 * i + r] = m[r];
      unconstrained[6 * i + r] = twists_[i][r] + h * wrench[r] / m[r];
    }
  }
  // The contact QP in its primal form, eq. 3.1: min ½vᵀMv − vᵀM(q̇_unc + hM⁻¹f_β) subject to
  // the tree's joint rows N v = −γ·error/h and the external rows (loops, drivers, floor).
  linalg::DenseMatrix all_normals;
  contacts_.normal_matrix(frames_, all_normals);
  const Index contact_rows = body_count() < contacts_.group_count() ? contacts_.first_normal(body_count())
                                                                    : contacts_.normal_count();
  linalg::DenseMatrix contact_normals(contact_rows, all_normals.cols());
  for (Index c = 0; c < contact_normals.cols(); ++c) {
    for (Index r = 0; r < contact_rows; ++r) contact_normals(r, c) = all_normals(r, c);
  }
  std::vector<double> rhs = stabilization_rhs(contact_normals, h);
  linalg::DenseMatrix weld_rows;
  std::vector<double> weld_rhs;
  fixed_joint_rows(h, weld_rows, weld_rhs);
  const linalg::DenseMatrix normals = stack_rows(contact_normals, weld_rows);
  rhs.insert(rhs.end(), weld_rhs.begin(), weld_rhs.end());
  const Index joint_rows = normals.rows();
  const ExternalRows external = external_rows(external_, system_, frames_, h);
  rhs.insert(rhs.end(), external.equality_rhs.begin(), external.equality_rhs.end());
  solvers::qp::QpProblem contact = diagonal_qp(mass, stack_rows(normals, external.equality), rhs, external.inequality,
                                               external.inequality_rhs);

  JointFrictionStepStats stats;
  const JointFrictionOptions& fo = options_.friction;
  JointContacts::MultiplierSystems multiplier_systems;
  contacts_.prepare_contact_multipliers(frames_, fo.regularization, multiplier_systems);
  std::vector<double> contact_force(nm, 0.0), previous(nm, 0.0), with_contact(nm), bounds, alpha;
  std::vector<Vec6> wrenches;
  solvers::qp::QpSolution solution;
  linalg::DenseMatrix joint_tangents;
  contacts_.friction_matrix(frames_, options_.friction_rows, joint_tangents);
  const linalg::DenseMatrix tangents = stack_rows(joint_tangents, external.floor_tangents);
  for (stats.iterations = 1; stats.iterations <= fo.max_iterations; ++stats.iterations) {
    for (std::size_t k = 0; k < nm; ++k) contact.linear[k] = mass[k] * unconstrained[k] + h * friction_force_[k];
    solution = solve_dense_qp(contact, "staggered projections, eq. 3.1");
    // f_α = Nᵀy/h + Cᵀz/h: every constraint's force.
    std::fill(contact_force.begin(), contact_force.end(), 0.0);
    solvers::qp::constraint_multiply_transposed(contact.equality, solution.equality_multipliers, contact_force);
    std::vector<double> unilateral(nm, 0.0);
    solvers::qp::constraint_multiply_transposed(contact.inequality, solution.inequality_multipliers, unilateral);
    for (std::size_t k = 0; k < nm; ++k) contact_force[k] = (contact_force[k] + unilateral[k]) / h;
    // Each joint's (and loop's) reaction on its body from its own rows, then α by eq. 3.7 as in
    // BISP, so that both methods bound friction alike.
    // (The QP's equality multipliers: the joint rows, then the external rows.)
    const std::span<const double> joint_impulses(solution.equality_multipliers.data(), static_cast<std::size_t>(joint_rows));
    const std::span<const double> external_impulses = std::span<const double>(solution.equality_multipliers).subspan(
        static_cast<std::size_t>(joint_rows));
    wrenches.assign(static_cast<std::size_t>(contacts_.group_count()), Vec6{});
    for (int g = 0; g < contacts_.group_count(); ++g) {
      const int body = contacts_.group(g).body;
      wrenches[static_cast<std::size_t>(g)] =
          g < body_count() ? rows_wrench(normals, contacts_.first_normal(g), static_cast<Index>(contacts_.of(g).normals.size()),
                                         body, joint_impulses, h)
                           : rows_wrench(external.equality, 2 * (g - body_count()), 2, body, external_impulses, h);
    }
    contacts_.contact_multipliers(multiplier_systems, wrenches, h, alpha);
    if (contact_force_settled(contact_force, previous, mass, fo.convergence)) {
      stats.converged = true;
      break;
    }
    if (stats.iterations == fo.max_iterations) break;
    previous = contact_force;
    for (std::size_t k = 0; k < nm; ++k) with_contact[k] = mass[k] * unconstrained[k] + h * contact_force[k];
    contacts_.friction_bounds(alpha, fo.friction, options_.friction_rows, bounds);
    append_floor_bounds(solution.inequality_multipliers, external_.floor_friction, bounds);
    friction_force_ = solve_friction(maximal_friction_problem(tangents, mass, with_contact), tangents, bounds,
                                     fo.friction * fo.active_threshold, h, friction_impulse_,
                                     stats.friction_qp_iterations, stats.active_tangents);
  }
  driver_torques_.clear();
  for (std::size_t d = 0; d < external_.drivers.size(); ++d) {
    const Index row = joint_rows + first_driver_row(external_) + static_cast<Index>(d);
    driver_torques_.push_back(solution.equality_multipliers[static_cast<std::size_t>(row)] / h);
  }
  stats.iterations = std::min(stats.iterations, fo.max_iterations);
  friction_per_row_.resize(friction_impulse_.size());
  for (std::size_t r = 0; r < friction_impulse_.size(); ++r) friction_per_row_[r] = friction_impulse_[r] / h;
  // Line 20: q̇ = q̇_prev + hM⁻¹(f + f_α + f_β), then the frames.
  for (std::size_t i = 0; i < frames_.size(); ++i) {
    for (std::size_t r = 0; r < 6; ++r) {
      const std::size_t k = 6 * i + r;
      twists_[i][r] = unconstrained[k] + h * (contact_force[k] + friction_force_[k]) / mass[k];
    }
    frames_[i] = advance_frame(frames_[i], twists_[i], h);
  }
  return stats;
}

void StaggeredProjections::set_external_constraints(ExternalConstraints constraints) {
  constraints.check(system_);
  for (const LoopClosure& loop : constraints.loops) {
    contacts_.add_loop(loop.body_a, loop.body_b, loop.point_a, loop.axis_a, loop.radius, loop.height);
  }
  external_ = std::move(constraints);
  friction_impulse_.clear();
}

Energies StaggeredProjections::energies(const Vec3& gravity) const {
  Energies e;
  for (std::size_t i = 0; i < frames_.size(); ++i) {
    const Energies body = body_energies(system_.body_inertia(static_cast<int>(i)), twists_[i], frames_[i].translation, gravity);
    e.kinetic += body.kinetic;
    e.potential += body.potential;
  }
  return e;
}

double StaggeredProjections::joint_drift() const {
  double worst = 0.0;
  for (int i = 0; i < body_count(); ++i) {
    if (contacts_.of(i).normals.empty() && system_.joint(i).kind != JointKind::fixed) continue;
    const JointError error = joint_error(i);
    worst = std::max({worst, linalg::norm(error.translation),
                      linalg::norm(error.rotation) * std::max(system_.joint(i).radius, 1.0)});
  }
  return worst;
}

}  // namespace cholsim::fem::articulated
