#include "fem/articulated/articulated_system.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace cholsim::fem::articulated {
namespace {

/// The right Jacobian of the rotation exponential, J_r(r) = I − a[r] + b[r]², which maps ṙ to
/// the body angular velocity, and its time derivative for the rate ṙ.
struct RightJacobian {
  Mat3 value;
  Mat3 rate;
};

RightJacobian right_jacobian(const Vec3& r, const Vec3& rdot) {
  const double theta2 = linalg::squared_norm(r);
  const double theta = std::sqrt(theta2);
  double a, b, a_rate, b_rate;  // a(θ), b(θ), a'(θ)/θ, b'(θ)/θ
  if (theta < 1e-2) {           // series: the closed forms cancel catastrophically near 0
    a = 0.5 - theta2 / 24.0;
    b = 1.0 / 6.0 - theta2 / 120.0;
    a_rate = -1.0 / 12.0 + theta2 / 180.0;
    b_rate = -1.0 / 60.0 + theta2 / 1260.0;
  } else {
    const double s = std::sin(theta), c = std::cos(theta);
    a = (1.0 - c) / theta2;
    b = (theta - s) / (theta2 * theta);
    a_rate = (theta * s - 2.0 * (1.0 - c)) / (theta2 * theta2);
    b_rate = ((1.0 - c) * theta - 3.0 * (theta - s)) / (theta2 * theta2 * theta);
  }
  const Mat3 rx = linalg::skew(r);
  const Mat3 rdx = linalg::skew(rdot);
  const Mat3 rx2 = rx * rx;
  const double r_dot_rdot = linalg::dot(r, rdot);
  RightJacobian j;
  j.value = Mat3::identity() - a * rx + b * rx2;
  j.rate = -(a_rate * r_dot_rdot) * rx - a * rdx + (b_rate * r_dot_rdot) * rx2 + b * (rdx * rx + rx * rdx);
  return j;
}

void set_column_block(Mat6& m, int row, int col, const Mat3& b) {
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) m(row + i, col + j) = b(i, j);
  }
}

void check_finite(const Vec3& v, const std::string& what) {
  if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z)) {
    throw std::invalid_argument(what + " holds NaN or Inf");
  }
}

/// The principal moments and the mass (three times) of a uniform body.
Vec6 principal_inertia(const BodySpec& body) {
  const Vec3 s = body.sides;
  switch (body.shape) {
    case BodyShape::sphere: {
      const double r = 0.5 * s.x, m = body.density * 4.0 / 3.0 * std::numbers::pi * r * r * r, i = 0.4 * m * r * r;
      return {i, i, i, m, m, m};
    }
    case BodyShape::cylinder: {
      const double r = 0.5 * s.x, m = body.density * std::numbers::pi * r * r * s.z;
      const double across = m / 12.0 * (3.0 * r * r + s.z * s.z);
      return {across, across, 0.5 * m * r * r, m, m, m};
    }
    case BodyShape::cuboid: break;
  }
  const double m = body.density * s.x * s.y * s.z;
  return {m / 12.0 * (s.y * s.y + s.z * s.z), m / 12.0 * (s.z * s.z + s.x * s.x), m / 12.0 * (s.x * s.x + s.y * s.y), m, m, m};
}

}  // namespace

Vec6 body_wrench(const Vec6& inertia, const Vec6& twist, const Mat3& body_to_world, const Vec3& gravity) {
  Vec6 momentum{};
  for (std::size_t r = 0; r < 6; ++r) momentum[r] = inertia[r] * twist[r];
  Vec6 wrench = transpose_times(lie_bracket(twist), momentum);
  const Vec3 weight = inertia[3] * (linalg::transpose(body_to_world) * gravity);
  wrench[3] += weight.x, wrench[4] += weight.y, wrench[5] += weight.z;
  return wrench;
}

Energies body_energies(const Vec6& inertia, const Vec6& twist, const Vec3& position, const Vec3& gravity) {
  Energies e;
  for (std::size_t r = 0; r < 6; ++r) e.kinetic += 0.5 * inertia[r] * twist[r] * twist[r];
  e.potential = -inertia[3] * linalg::dot(gravity, position);
  return e;
}

int dof_count(JointKind kind) {
  switch (kind) {
    case JointKind::fixed: return 0;
    case JointKind::revolute:
    case JointKind::prismatic: return 1;
    case JointKind::spherical: return 3;
    case JointKind::free: return 6;
  }
  return 0;
}

std::size_t ArticulatedSystem::index(int link) const {
  if (link < 0 || link >= link_count()) {
    throw std::out_of_range("articulated system: no link " + std::to_string(link));
  }
  return static_cast<std::size_t>(link);
}

int ArticulatedSystem::add_link(BodySpec body, JointSpec joint) {
  const int id = link_count();
  const std::string name = "link " + std::to_string(id) + (body.name.empty() ? "" : " (" + body.name + ")");
  if (joint.parent < -1 || joint.parent >= id) {
    throw std::invalid_argument(name + ": the parent must be an earlier link or −1 (the world), got " +
                                std::to_string(joint.parent));
  }
  check_finite(body.sides, name + ": sides");
  check_finite(joint.axis, name + ": axis");
  if (!(body.sides.x > 0.0 && body.sides.y > 0.0 && body.sides.z > 0.0) || !(body.density > 0.0) ||
      !std::isfinite(body.density)) {
    throw std::invalid_argument(name + ": sides and density must be positive and finite");
  }
  if ((joint.kind == JointKind::revolute || joint.kind == JointKind::prismatic) &&
      std::abs(linalg::norm(joint.axis) - 1.0) > 1e-9) {
    throw std::invalid_argument(name + ": the joint axis must have unit length");
  }
  const auto dofs = static_cast<std::size_t>(dof_count(joint.kind));
  for (const auto* initial : {&joint.initial_positions, &joint.initial_velocities}) {
    if (!initial->empty() && initial->size() != dofs) {
      throw std::invalid_argument(name + ": " + std::to_string(initial->size()) + " initial values for a joint of " +
                                  std::to_string(dofs) + " DOFs");
    }
  }
  Link link;
  link.dof_offset = reduced_dof_count();
  link.inertia = principal_inertia(body);
  for (std::size_t k = 0; k < dofs; ++k) {
    positions_.push_back(joint.initial_positions.empty() ? 0.0 : joint.initial_positions[k]);
    velocities_.push_back(joint.initial_velocities.empty() ? 0.0 : joint.initial_velocities[k]);
  }
  link.rest_positions.assign(positions_.end() - static_cast<std::ptrdiff_t>(dofs), positions_.end());
  link.body = std::move(body);
  link.joint = std::move(joint);
  links_.push_back(std::move(link));
  update();
  return id;
}

void ArticulatedSystem::joint_kinematics(Link& link) const {
  const auto offset = static_cast<std::size_t>(link.dof_offset);
  const double* q = positions_.data() + offset;
  const double* qdot = velocities_.data() + offset;
  const Vec3 axis = link.joint.axis;
  RigidTransform motion;  // Q(q)
  link.motion_subspace = Mat6{};
  link.motion_subspace_rate = Mat6{};
  Mat6& s = link.motion_subspace;
  switch (link.joint.kind) {
    case JointKind::fixed: break;
    case JointKind::revolute:
      motion = RigidTransform::rotated(axis_angle_rotation(axis, q[0]));
      s(0, 0) = axis.x, s(1, 0) = axis.y, s(2, 0) = axis.z;
      break;
    case JointKind::prismatic:
      motion = RigidTransform::translated(q[0] * axis);
      s(3, 0) = axis.x, s(4, 0) = axis.y, s(5, 0) = axis.z;
      break;
    case JointKind::spherical: {
      const Vec3 r{q[0], q[1], q[2]};
      const RightJacobian jr = right_jacobian(r, {qdot[0], qdot[1], qdot[2]});
      motion = RigidTransform::rotated(rotation_exponential(r));
      set_column_block(s, 0, 0, jr.value);
      set_column_block(link.motion_subspace_rate, 0, 0, jr.rate);
      break;
    }
    case JointKind::free: {
      // Q = [R, R p]: rotate, then translate in the rotated frame (REDMAX's free joint), so
      // S = [J_r 0; −[p]J_r I].
      const Vec3 r{q[0], q[1], q[2]}, p{q[3], q[4], q[5]}, pdot{qdot[3], qdot[4], qdot[5]};
      const RightJacobian jr = right_jacobian(r, {qdot[0], qdot[1], qdot[2]});
      const Mat3 rotation = rotation_exponential(r);
      motion = {rotation, rotation * p};
      set_column_block(s, 0, 0, jr.value);
      set_column_block(s, 3, 0, -(linalg::skew(p) * jr.value));
      set_column_block(s, 3, 3, Mat3::identity());
      set_column_block(link.motion_subspace_rate, 0, 0, jr.rate);
      set_column_block(link.motion_subspace_rate, 3, 0,
                       -(linalg::skew(pdot) * jr.value + linalg::skew(p) * jr.rate));
      break;
    }
  }
  link.joint_to_parent = link.joint.in_parent * motion;
}

void ArticulatedSystem::update() {
  for (Link& link : links_) {
    joint_kinematics(link);
    const int dofs = dof_count(link.joint.kind);
    const auto offset = static_cast<std::size_t>(link.dof_offset);
    Vec6 own{};
    for (int c = 0; c < dofs; ++c) {
      for (int r = 0; r < 6; ++r) own[static_cast<std::size_t>(r)] += link.motion_subspace(r, c) * velocities_[offset + static_cast<std::size_t>(c)];
    }
    if (link.joint.parent < 0) {
      link.joint_to_world = link.joint_to_parent;
      link.joint_twist = own;
    } else {
      const Link& parent = links_[static_cast<std::size_t>(link.joint.parent)];
      link.joint_to_world = parent.joint_to_world * link.joint_to_parent;
      link.joint_twist = own + adjoint(inverse(link.joint_to_parent)) * parent.joint_twist;
    }
    link.body_to_world = link.joint_to_world * link.body.in_joint;
    link.twist = adjoint(inverse(link.body.in_joint)) * link.joint_twist;
  }
}

void ArticulatedSystem::reparameterize() {
  constexpr double pi = std::numbers::pi;
  bool changed = false;
  for (Link& link : links_) {
    if (link.joint.kind != JointKind::spherical && link.joint.kind != JointKind::free) continue;
    const auto offset = static_cast<std::size_t>(link.dof_offset);
    double* q = positions_.data() + offset;
    double* qdot = velocities_.data() + offset;
    const Vec3 r{q[0], q[1], q[2]};
    const double theta = linalg::norm(r);
    if (theta <= 1.5 * pi) continue;  // REDMAX's threshold: away from the singularity at 2π, not at π
    // The same rotation by the shorter way round; the angular velocity J_r(r)ṙ is kept.
    const Vec3 shorter = (1.0 - 2.0 * pi / theta) * r;
    const Vec3 omega = right_jacobian(r, {}).value * Vec3{qdot[0], qdot[1], qdot[2]};
    const Vec3 rate = linalg::inverse(right_jacobian(shorter, {}).value) * omega;
    q[0] = shorter.x, q[1] = shorter.y, q[2] = shorter.z;
    qdot[0] = rate.x, qdot[1] = rate.y, qdot[2] = rate.z;
    changed = true;
  }
  if (changed) update();
}

RigidTransform ArticulatedSystem::parent_to_body(int link) const {
  const Link& l = links_[index(link)];
  if (l.joint.parent < 0) return {};
  return inverse(l.body_to_world) * links_[static_cast<std::size_t>(l.joint.parent)].body_to_world;
}

void ArticulatedSystem::jacobian(linalg::DenseMatrix& jacobian, linalg::DenseMatrix* jacobian_rate) const {
  const Index rows = maximal_dof_count(), cols = reduced_dof_count();
  jacobian = linalg::DenseMatrix(rows, cols);
  if (jacobian_rate != nullptr) *jacobian_rate = linalg::DenseMatrix(rows, cols);
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const Link& link = links_[i];
    const Index row = 6 * static_cast<Index>(i);
    const Mat6 body_from_joint = adjoint(inverse(link.body.in_joint));
    const Mat6 own = body_from_joint * link.motion_subspace;
    const Mat6 own_rate = body_from_joint * link.motion_subspace_rate;
    for (int c = 0; c < dof_count(link.joint.kind); ++c) {
      for (int r = 0; r < 6; ++r) {
        jacobian(row + r, link.dof_offset + c) = own(r, c);
        if (jacobian_rate != nullptr) (*jacobian_rate)(row + r, link.dof_offset + c) = own_rate(r, c);
      }
    }
    if (link.joint.parent < 0) continue;
    // The ancestors' columns: J(i, a) = Ad_ip J(p, a), J̇(i, a) = Ad_ip J̇(p, a) + Ȧd_ip J(p, a),
    // with Ȧd_ip = Ad_ip ad(φ_p) − ad(φ_i) Ad_ip. The parent's row block is zero outside its
    // ancestors' columns, so whole rows are carried.
    const auto p = static_cast<std::size_t>(link.joint.parent);
    const Index parent_row = 6 * static_cast<Index>(p);
    const Mat6 ad_ip = adjoint(parent_to_body(static_cast<int>(i)));
    const Mat6 ad_ip_rate = ad_ip * lie_bracket(links_[p].twist) - lie_bracket(link.twist) * ad_ip;
    for (Index c = 0; c < link.dof_offset; ++c) {
      Vec6 parent_column{}, parent_rate{};
      for (int r = 0; r < 6; ++r) {
        parent_column[static_cast<std::size_t>(r)] = jacobian(parent_row + r, c);
        if (jacobian_rate != nullptr) parent_rate[static_cast<std::size_t>(r)] = (*jacobian_rate)(parent_row + r, c);
      }
      const Vec6 column = ad_ip * parent_column;
      for (int r = 0; r < 6; ++r) jacobian(row + r, c) = column[static_cast<std::size_t>(r)];
      if (jacobian_rate != nullptr) {
        const Vec6 rate = ad_ip * parent_rate + ad_ip_rate * parent_column;
        for (int r = 0; r < 6; ++r) (*jacobian_rate)(row + r, c) = rate[static_cast<std::size_t>(r)];
      }
    }
  }
}

void ArticulatedSystem::mass_diagonal(std::span<double> mass) const {
  for (std::size_t i = 0; i < links_.size(); ++i) {
    for (std::size_t r = 0; r < 6; ++r) mass[6 * i + r] = links_[i].inertia[r];
  }
}

void ArticulatedSystem::maximal_forces(const Vec3& gravity, std::span<double> forces) const {
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const Link& link = links_[i];
    const Vec6 wrench = body_wrench(link.inertia, link.twist, link.body_to_world.rotation, gravity);
    for (std::size_t r = 0; r < 6; ++r) forces[6 * i + r] = wrench[r];
  }
}

void ArticulatedSystem::reduced_forces(std::span<double> forces) const {
  for (const Link& link : links_) {
    for (int c = 0; c < dof_count(link.joint.kind); ++c) {
      const auto k = static_cast<std::size_t>(link.dof_offset + c);
      forces[k] = -link.joint.stiffness * (positions_[k] - link.rest_positions[static_cast<std::size_t>(c)]);
    }
  }
}

Energies ArticulatedSystem::energies(const Vec3& gravity) const {
  Energies e;
  for (const Link& link : links_) {
    const Energies body = body_energies(link.inertia, link.twist, link.body_to_world.translation, gravity);
    e.kinetic += body.kinetic;
    e.potential += body.potential;
    for (int c = 0; c < dof_count(link.joint.kind); ++c) {
      const double dq = positions_[static_cast<std::size_t>(link.dof_offset + c)] - link.rest_positions[static_cast<std::size_t>(c)];
      e.potential += 0.5 * link.joint.stiffness * dq * dq;
    }
  }
  return e;
}

}  // namespace cholsim::fem::articulated
