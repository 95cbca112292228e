#include "fem/articulated/joint_contacts.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "linalg/blas.hpp"

namespace cholsim::fem::articulated {
namespace {

/// A frame whose z axis lies along `axis` (the joint's cylinder or box axis), by the rotation
/// about axis × z that takes the axis to z — the construction REDMAX uses, so that our contact
/// points sit where its do.
Mat3 axis_frame(const Vec3& axis) {
  const double angle = std::acos(std::clamp(axis.z, -1.0, 1.0));
  return axis_angle_rotation(linalg::cross(axis, Vec3{0.0, 0.0, 1.0}), angle);
}

/// Revolute joint: a cylinder of `radius` and `height` about the axis, four points around each
/// end; at each a radial normal and an axial one, and the circumferential tangent whose
/// friction both bound.
JointContactSet revolute_contacts(const RigidTransform& joint_in_body, const JointSpec& joint) {
  const RigidTransform cylinder = joint_in_body * RigidTransform::rotated(axis_frame(joint.axis));
  JointContactSet set;
  for (int k = 0; k < 4; ++k) {
    const double theta = 2.0 * std::numbers::pi * k / 4.0;
    const Vec3 radial{std::cos(theta), std::sin(theta), 0.0};
    const Vec3 around{-std::sin(theta), std::cos(theta), 0.0};
    for (int end = 0; end < 2; ++end) {
      const Vec3 local{joint.radius * radial.x, joint.radius * radial.y, joint.height * (end - 0.5)};
      const Vec3 position = transform_point(cylinder, local);
      const Vec3 axial = (end == 0 ? -1.0 : 1.0) * linalg::cross(around, radial);
      const int first = static_cast<int>(set.normals.size());
      set.normals.push_back({position, cylinder.rotation * (-radial)});
      set.normals.push_back({position, cylinder.rotation * axial});
      set.tangents.push_back({position, cylinder.rotation * around});
      set.tangent_supports.push_back({first, first + 1});
    }
  }
  return set;
}

/// Spherical joint: a ball of `radius`; a point on each of the six half axes with its normal
/// and two tangents.
JointContactSet spherical_contacts(const RigidTransform& joint_in_body, const JointSpec& joint) {
  JointContactSet set;
  for (int k = 0; k < 3; ++k) {
    for (double sign : {1.0, -1.0}) {
      Vec3 n{}, t1{}, t2{};
      (k == 0 ? n.x : k == 1 ? n.y : n.z) = sign;
      (k == 0 ? t1.y : k == 1 ? t1.z : t1.x) = 1.0;
      (k == 0 ? t2.z : k == 1 ? t2.x : t2.y) = 1.0;
      const Vec3 position = transform_point(joint_in_body, -joint.radius * n);
      const int normal = static_cast<int>(set.normals.size());
      set.normals.push_back({position, joint_in_body.rotation * n});
      for (const Vec3& t : {t1, t2}) {
        set.tangents.push_back({position, joint_in_body.rotation * t});
        set.tangent_supports.push_back({normal});
      }
    }
  }
  return set;
}

/// Prismatic joint: a box of `prism_sides` along the axis; at its eight corners two normals
/// across the axis, and the axis as the tangent.
JointContactSet prismatic_contacts(const RigidTransform& joint_in_body, const JointSpec& joint) {
  const RigidTransform box = joint_in_body * RigidTransform::rotated(axis_frame(joint.axis));
  const Vec3 half = 0.5 * joint.prism_sides;
  JointContactSet set;
  for (double z : {-1.0, 1.0}) {
    for (double x : {-1.0, 1.0}) {
      for (double y : {-1.0, 1.0}) {
        const Vec3 position = transform_point(box, {x * half.x, y * half.y, z * half.z});
        const int first = static_cast<int>(set.normals.size());
        set.normals.push_back({position, box.rotation * Vec3{-x, 0.0, 0.0}});
        set.normals.push_back({position, box.rotation * Vec3{0.0, -y, 0.0}});
        set.tangents.push_back({position, box.rotation * Vec3{0.0, 0.0, 1.0}});
        set.tangent_supports.push_back({first, first + 1});
      }
    }
  }
  return set;
}

/// The row of one joint point: the child's twist minus the parent's, seen along the direction.
void fill_point_row(const ArticulatedSystem& system, int link, const JointPoint& point, linalg::DenseMatrix& rows,
                    Index row) {
  const Vec6 child = point_direction_row(point.position, point.direction);
  for (int c = 0; c < 6; ++c) rows(row, 6 * link + c) = child[static_cast<std::size_t>(c)];
  const int parent = system.parent(link);
  if (parent < 0) return;
  const RigidTransform body_to_parent = inverse(system.parent_to_body(link));
  const Vec6 parent_row = point_direction_row(transform_point(body_to_parent, point.position),
                                              body_to_parent.rotation * point.direction);
  for (int c = 0; c < 6; ++c) rows(row, 6 * parent + c) = -parent_row[static_cast<std::size_t>(c)];
}

}  // namespace

JointContacts::JointContacts(const ArticulatedSystem& system) {
  for (int link = 0; link < system.link_count(); ++link) {
    const JointSpec& joint = system.joint(link);
    const RigidTransform joint_in_body = inverse(system.body(link).in_joint);
    JointContactSet set;
    if (joint.kind == JointKind::revolute) set = revolute_contacts(joint_in_body, joint);
    if (joint.kind == JointKind::spherical) set = spherical_contacts(joint_in_body, joint);
    if (joint.kind == JointKind::prismatic) set = prismatic_contacts(joint_in_body, joint);
    normal_offsets_.push_back(normal_count_);
    tangent_offsets_.push_back(tangent_count_);
    normal_count_ += static_cast<int>(set.normals.size());
    tangent_count_ += static_cast<int>(set.tangents.size());
    sets_.push_back(std::move(set));
  }
}

void JointContacts::tangent_matrix(const ArticulatedSystem& system, linalg::DenseMatrix& tangents) const {
  tangents = linalg::DenseMatrix(tangent_count_, system.maximal_dof_count());
  for (int link = 0; link < system.link_count(); ++link) {
    const auto& set = sets_[static_cast<std::size_t>(link)];
    for (std::size_t t = 0; t < set.tangents.size(); ++t) {
      fill_point_row(system, link, set.tangents[t], tangents, first_tangent(link) + static_cast<Index>(t));
    }
  }
}

void JointContacts::distribute_to_joints(const ArticulatedSystem& system, std::span<const double> maximal,
                                         std::vector<Vec6>& joint_wrenches) const {
  const auto links = static_cast<std::size_t>(system.link_count());
  joint_wrenches.assign(links, Vec6{});
  for (std::size_t i = 0; i < links; ++i) {
    for (std::size_t c = 0; c < 6; ++c) joint_wrenches[i][c] = maximal[6 * i + c];
  }
  // Leaf to root: a link's remaining wrench is its own joint's reaction; the parent feels the
  // opposite, so the parent's own joint carries its sum plus this one carried into its frame.
  for (std::size_t i = links; i-- > 0;) {
    const int parent = system.parent(static_cast<int>(i));
    if (parent < 0) continue;
    const Vec6 carried = transpose_times(adjoint(system.parent_to_body(static_cast<int>(i))), joint_wrenches[i]);
    joint_wrenches[static_cast<std::size_t>(parent)] = joint_wrenches[static_cast<std::size_t>(parent)] + carried;
  }
}

void JointContacts::contact_multipliers(const ArticulatedSystem& system, const std::vector<Vec6>& joint_wrenches,
                                        double h, double regularization, std::vector<double>& alpha) const {
  alpha.assign(static_cast<std::size_t>(normal_count_), 0.0);
  for (int link = 0; link < system.link_count(); ++link) {
    const auto& set = sets_[static_cast<std::size_t>(link)];
    const auto nc = static_cast<Index>(set.normals.size());
    if (nc == 0) continue;
    const int parent = system.parent(link);
    const Index width = parent < 0 ? 6 : 12;
    // The joint's two bodies only: N (nc × width), M⁻¹ and the reaction on each.
    linalg::DenseMatrix normals(nc, system.maximal_dof_count());
    for (Index r = 0; r < nc; ++r) fill_point_row(system, link, set.normals[static_cast<std::size_t>(r)], normals, r);
    std::vector<double> inverse_mass(static_cast<std::size_t>(width)), wrench(static_cast<std::size_t>(width));
    std::vector<int> columns(static_cast<std::size_t>(width));
    const Vec6& reaction = joint_wrenches[static_cast<std::size_t>(link)];
    const Vec6 on_parent = parent < 0 ? Vec6{} : -1.0 * transpose_times(adjoint(system.parent_to_body(link)), reaction);
    for (int c = 0; c < 6; ++c) {
      columns[static_cast<std::size_t>(c)] = 6 * link + c;
      inverse_mass[static_cast<std::size_t>(c)] = 1.0 / system.body_inertia(link)[static_cast<std::size_t>(c)];
      wrench[static_cast<std::size_t>(c)] = reaction[static_cast<std::size_t>(c)];
      if (parent >= 0) {
        columns[static_cast<std::size_t>(6 + c)] = 6 * parent + c;
        inverse_mass[static_cast<std::size_t>(6 + c)] = 1.0 / system.body_inertia(parent)[static_cast<std::size_t>(c)];
        wrench[static_cast<std::size_t>(6 + c)] = on_parent[static_cast<std::size_t>(c)];
      }
    }
    linalg::DenseMatrix lhs(nc, nc);
    std::vector<double> rhs(static_cast<std::size_t>(nc), 0.0);
    for (Index a = 0; a < nc; ++a) {
      for (Index k = 0; k < width; ++k) {
        const auto uk = static_cast<std::size_t>(k);
        rhs[static_cast<std::size_t>(a)] += h * normals(a, columns[uk]) * inverse_mass[uk] * wrench[uk];
      }
      for (Index b = 0; b <= a; ++b) {
        double sum = a == b ? regularization : 0.0;
        for (Index k = 0; k < width; ++k) {
          const auto uk = static_cast<std::size_t>(k);
          sum += normals(a, columns[uk]) * inverse_mass[uk] * normals(b, columns[uk]);
        }
        lhs(a, b) = sum;
      }
    }
    if (linalg::blas::potrf(lhs.view()) != 0) {
      throw std::runtime_error("joint contacts: the contact system of link " + std::to_string(link) +
                               " is not positive definite (regularization " + std::to_string(regularization) + ")");
    }
    linalg::blas::potrs(lhs.view(), linalg::DenseView{rhs.data(), nc, 1, nc});
    std::copy(rhs.begin(), rhs.end(), alpha.begin() + first_normal(link));
  }
}

void JointContacts::friction_bounds(std::span<const double> alpha, double friction, std::vector<double>& bounds) const {
  bounds.assign(static_cast<std::size_t>(tangent_count_), 0.0);
  for (std::size_t link = 0; link < sets_.size(); ++link) {
    const auto& set = sets_[link];
    for (std::size_t t = 0; t < set.tangents.size(); ++t) {
      double sum = 0.0;
      for (int n : set.tangent_supports[t]) sum += std::abs(alpha[static_cast<std::size_t>(normal_offsets_[link] + n)]);
      bounds[static_cast<std::size_t>(tangent_offsets_[link]) + t] = friction * sum;
    }
  }
}

}  // namespace cholsim::fem::articulated
