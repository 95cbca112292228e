#include "fem/articulated/joint_contacts.hpp"

#include <algorithm>
#include <array>
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

}  // namespace

/// Revolute joint: a cylinder of `radius` and `height` about the axis, four points around each
/// end; at each a radial normal and an axial one, and the circumferential tangent whose
/// friction both bound.
JointContactSet cylinder_contacts(const RigidTransform& joint_in_body, const Vec3& axis, double radius, double height) {
  const RigidTransform cylinder = joint_in_body * RigidTransform::rotated(axis_frame(axis));
  JointContactSet set;
  for (int k = 0; k < 4; ++k) {
    const double theta = 2.0 * std::numbers::pi * k / 4.0;
    const Vec3 radial{std::cos(theta), std::sin(theta), 0.0};
    const Vec3 around{-std::sin(theta), std::cos(theta), 0.0};
    for (int end = 0; end < 2; ++end) {
      const Vec3 local{radius * radial.x, radius * radial.y, height * (end - 0.5)};
      const Vec3 position = transform_point(cylinder, local);
      const Vec3 axial = (end == 0 ? -1.0 : 1.0) * linalg::cross(around, radial);
      const int first = static_cast<int>(set.normals.size());
      set.normals.push_back({position, cylinder.rotation * (-radial)});
      set.normals.push_back({position, cylinder.rotation * axial});
      set.tangents.push_back({position, cylinder.rotation * around});
      set.tangent_supports.push_back({first, first + 1});
    }
  }
  set.one_dof = true;
  return set;
}

namespace {

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
  set.one_dof = true;
  return set;
}

/// The row of one joint point, split by body: N φ = own·φ_body − on_other·φ_other is the
/// relative velocity of the two bodies along the direction there.
struct PairRow {
  Vec6 own{};
  Vec6 on_other{};
};

PairRow pair_row(std::span<const RigidTransform> frames, int body, int other, const JointPoint& point) {
  PairRow row{point_direction_row(point.position, point.direction), {}};
  if (other >= 0) {
    const RigidTransform body_to_other =
        inverse(frames[static_cast<std::size_t>(other)]) * frames[static_cast<std::size_t>(body)];
    row.on_other = point_direction_row(transform_point(body_to_other, point.position), body_to_other.rotation * point.direction);
  }
  return row;
}

/// The same row written into a matrix with 6·bodies columns.
void fill_pair_row(std::span<const RigidTransform> frames, int body, int other, const JointPoint& point,
                   linalg::DenseMatrix& rows, Index row) {
  const PairRow values = pair_row(frames, body, other, point);
  for (int c = 0; c < 6; ++c) {
    rows(row, 6 * body + c) = values.own[static_cast<std::size_t>(c)];
    if (other >= 0) rows(row, 6 * other + c) = -values.on_other[static_cast<std::size_t>(c)];
  }
}

}  // namespace

std::vector<RigidTransform> body_frames(const ArticulatedSystem& system) {
  std::vector<RigidTransform> frames;
  for (int i = 0; i < system.link_count(); ++i) frames.push_back(system.body_to_world(i));
  return frames;
}

JointContacts::JointContacts(const ArticulatedSystem& system) {
  for (int link = 0; link < system.link_count(); ++link) {
    inertia_.push_back(system.body_inertia(link));
    const JointSpec& joint = system.joint(link);
    const RigidTransform joint_in_body = inverse(system.body(link).in_joint);
    ContactGroup group{link, joint.parent, {}};
    if (joint.kind == JointKind::revolute) group.set = cylinder_contacts(joint_in_body, joint.axis, joint.radius, joint.height);
    if (joint.kind == JointKind::spherical) group.set = spherical_contacts(joint_in_body, joint);
    if (joint.kind == JointKind::prismatic) group.set = prismatic_contacts(joint_in_body, joint);
    add_group(std::move(group));
  }
}

void JointContacts::add_group(ContactGroup group) {
  normal_offsets_.push_back(normal_count_);
  tangent_offsets_.push_back(tangent_count_);
  normal_count_ += static_cast<int>(group.set.normals.size());
  tangent_count_ += static_cast<int>(group.set.tangents.size());
  groups_.push_back(std::move(group));
}

int JointContacts::add_loop(int body, int other, const Vec3& origin, const Vec3& axis, double radius, double height) {
  const int bodies = static_cast<int>(inertia_.size());
  if (body < 0 || body >= bodies || other < -1 || other >= bodies || other == body) {
    throw std::invalid_argument("loop joint: bodies " + std::to_string(body) + " and " + std::to_string(other) +
                                " are not two different bodies of the system");
  }
  add_group({body, other, cylinder_contacts(RigidTransform::translated(origin), axis, radius, height)});
  return group_count() - 1;
}

void JointContacts::tangent_matrix(std::span<const RigidTransform> frames, linalg::DenseMatrix& tangents) const {
  tangents = linalg::DenseMatrix(tangent_count_, 6 * static_cast<Index>(frames.size()));
  for (int g = 0; g < group_count(); ++g) {
    const ContactGroup& group = groups_[static_cast<std::size_t>(g)];
    for (std::size_t t = 0; t < group.set.tangents.size(); ++t) {
      fill_pair_row(frames, group.body, group.other, group.set.tangents[t], tangents, first_tangent(g) + static_cast<Index>(t));
    }
  }
}

int JointContacts::friction_row_count(FrictionRows rows) const {
  if (rows == FrictionRows::per_tangent) return tangent_count_;
  int count = 0;
  for (const ContactGroup& group : groups_) {
    count += group.set.one_dof && !group.set.tangents.empty() ? 1 : static_cast<int>(group.set.tangents.size());
  }
  return count;
}

void JointContacts::friction_matrix(std::span<const RigidTransform> frames, FrictionRows rows,
                                    linalg::DenseMatrix& matrix) const {
  if (rows == FrictionRows::per_tangent) {
    tangent_matrix(frames, matrix);
    return;
  }
  matrix = linalg::DenseMatrix(friction_row_count(rows), 6 * static_cast<Index>(frames.size()));
  Index row = 0;
  for (int g = 0; g < group_count(); ++g) {
    const ContactGroup& group = groups_[static_cast<std::size_t>(g)];
    const auto count = static_cast<double>(group.set.tangents.size());
    for (std::size_t t = 0; t < group.set.tangents.size(); ++t) {
      // Every tangent of a 1-DOF joint measures the same relative motion, so Σβᵢ Tᵢ acts on it
      // as (Σβᵢ)·mean(T): one variable (bounded by the sum of the bounds, friction_bounds).
      const PairRow values = pair_row(frames, group.body, group.other, group.set.tangents[t]);
      const double weight = group.set.one_dof ? 1.0 / count : 1.0;
      for (int c = 0; c < 6; ++c) {
        matrix(row, 6 * group.body + c) += weight * values.own[static_cast<std::size_t>(c)];
        if (group.other >= 0) matrix(row, 6 * group.other + c) -= weight * values.on_other[static_cast<std::size_t>(c)];
      }
      if (!group.set.one_dof) ++row;
    }
    if (group.set.one_dof && !group.set.tangents.empty()) ++row;
  }
}

void JointContacts::normal_matrix(std::span<const RigidTransform> frames, linalg::DenseMatrix& normals) const {
  normals = linalg::DenseMatrix(normal_count_, 6 * static_cast<Index>(frames.size()));
  for (int g = 0; g < group_count(); ++g) {
    const ContactGroup& group = groups_[static_cast<std::size_t>(g)];
    for (std::size_t n = 0; n < group.set.normals.size(); ++n) {
      fill_pair_row(frames, group.body, group.other, group.set.normals[n], normals, first_normal(g) + static_cast<Index>(n));
    }
  }
}

void JointContacts::distribute_to_joints(const ArticulatedSystem& system, std::span<const double> maximal,
                                         std::vector<Vec6>& wrenches, bool previous_in_order) const {
  const auto links = static_cast<std::size_t>(system.link_count());
  wrenches.assign(groups_.size(), Vec6{});
  for (std::size_t i = 0; i < links; ++i) {
    for (std::size_t c = 0; c < 6; ++c) wrenches[i][c] = maximal[6 * i + c];
  }
  // Leaf to root: a link's remaining wrench is its own joint's reaction; the parent feels the
  // opposite, so the parent's own joint carries its sum plus this one carried into its frame.
  for (std::size_t i = links; i-- > 0;) {
    const int parent = system.parent(static_cast<int>(i));
    if (parent < 0) continue;
    const Vec6 carried = transpose_times(adjoint(system.parent_to_body(static_cast<int>(i))), wrenches[i]);
    const std::size_t to = previous_in_order ? i - 1 : static_cast<std::size_t>(parent);
    wrenches[to] = wrenches[to] + carried;
  }
}

void JointContacts::contact_multipliers(std::span<const RigidTransform> frames, const std::vector<Vec6>& wrenches,
                                        double h, double regularization, std::vector<double>& alpha) const {
  MultiplierSystems systems;
  prepare_contact_multipliers(frames, regularization, systems);
  contact_multipliers(systems, wrenches, h, alpha);
}

void JointContacts::prepare_contact_multipliers(std::span<const RigidTransform> frames, double regularization,
                                                MultiplierSystems& systems) const {
  systems.groups.resize(static_cast<std::size_t>(group_count()));
  for (int g = 0; g < group_count(); ++g) {
    const ContactGroup& group = groups_[static_cast<std::size_t>(g)];
    MultiplierSystems::Group& system = systems.groups[static_cast<std::size_t>(g)];
    const auto nc = static_cast<Index>(group.set.normals.size());
    const Index width = group.other < 0 ? 6 : 12;
    // The group's two bodies only: N (nc × width) scaled by M⁻¹ column by column.
    std::array<double, 12> inverse_mass{};
    for (std::size_t c = 0; c < 6; ++c) {
      inverse_mass[c] = 1.0 / inertia_[static_cast<std::size_t>(group.body)][c];
      if (width == 12) inverse_mass[6 + c] = 1.0 / inertia_[static_cast<std::size_t>(group.other)][c];
    }
    linalg::DenseMatrix normals(nc, width);
    system.weighted_normals = linalg::DenseMatrix(nc, width);
    for (Index r = 0; r < nc; ++r) {
      const PairRow row = pair_row(frames, group.body, group.other, group.set.normals[static_cast<std::size_t>(r)]);
      for (std::size_t c = 0; c < 6; ++c) {
        normals(r, static_cast<Index>(c)) = row.own[c];
        if (width == 12) normals(r, static_cast<Index>(6 + c)) = -row.on_other[c];
      }
      for (Index c = 0; c < width; ++c) {
        system.weighted_normals(r, c) = normals(r, c) * inverse_mass[static_cast<std::size_t>(c)];
      }
    }
    system.factor = linalg::DenseMatrix(nc, nc);
    for (Index a = 0; a < nc; ++a) {
      for (Index b = 0; b <= a; ++b) {
        double sum = a == b ? regularization : 0.0;
        for (Index k = 0; k < width; ++k) sum += system.weighted_normals(a, k) * normals(b, k);
        system.factor(a, b) = sum;
      }
    }
    if (nc > 0 && linalg::blas::potrf(system.factor.view()) != 0) {
      throw std::runtime_error("joint contacts: the contact system of joint " + std::to_string(g) +
                               " is not positive definite (regularization " + std::to_string(regularization) + ")");
    }
    if (group.other >= 0) {
      system.other_in_body = adjoint(inverse(frames[static_cast<std::size_t>(group.body)]) *
                                     frames[static_cast<std::size_t>(group.other)]);
    }
  }
}

void JointContacts::contact_multipliers(const MultiplierSystems& systems, const std::vector<Vec6>& wrenches, double h,
                                        std::vector<double>& alpha) const {
  alpha.assign(static_cast<std::size_t>(normal_count_), 0.0);
  for (int g = 0; g < group_count(); ++g) {
    const MultiplierSystems::Group& system = systems.groups[static_cast<std::size_t>(g)];
    const Index nc = system.factor.rows();
    if (nc == 0) continue;
    // f on `body`, and on `other` the opposite reaction in its own frame.
    const Vec6& reaction = wrenches[static_cast<std::size_t>(g)];
    std::array<double, 12> wrench{};
    std::copy(reaction.begin(), reaction.end(), wrench.begin());
    if (system.weighted_normals.cols() == 12) {
      const Vec6 on_other = -1.0 * transpose_times(system.other_in_body, reaction);
      std::copy(on_other.begin(), on_other.end(), wrench.begin() + 6);
    }
    double* rhs = alpha.data() + first_normal(g);
    for (Index a = 0; a < nc; ++a) {
      double sum = 0.0;
      for (Index k = 0; k < system.weighted_normals.cols(); ++k) {
        sum += system.weighted_normals(a, k) * wrench[static_cast<std::size_t>(k)];
      }
      rhs[a] = h * sum;
    }
    linalg::blas::potrs(system.factor.view(), linalg::DenseView{rhs, nc, 1, nc});
  }
}

void JointContacts::friction_bounds(std::span<const double> alpha, double friction, FrictionRows rows,
                                    std::vector<double>& bounds) const {
  bounds.clear();
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const auto& set = groups_[g].set;
    const bool merged = rows == FrictionRows::per_dof && set.one_dof;
    double total = 0.0;
    for (std::size_t t = 0; t < set.tangents.size(); ++t) {
      double sum = 0.0;
      for (int n : set.tangent_supports[t]) sum += std::abs(alpha[static_cast<std::size_t>(normal_offsets_[g] + n)]);
      if (!merged) bounds.push_back(friction * sum);
      total += friction * sum;
    }
    if (merged && !set.tangents.empty()) bounds.push_back(total);
  }
}

}  // namespace cholsim::fem::articulated
