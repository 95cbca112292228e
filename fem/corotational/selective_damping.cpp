#include "fem/corotational/selective_damping.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

using linalg::Mat3;
using linalg::Vec3;

namespace {

Vec3 node_vector(std::span<const double> values, Index node) {
  const auto k = 3 * static_cast<std::size_t>(node);
  return {values[k], values[k + 1], values[k + 2]};
}

void set_node_vector(std::span<double> values, Index node, const Vec3& v) {
  const auto k = 3 * static_cast<std::size_t>(node);
  values[k] = v.x;
  values[k + 1] = v.y;
  values[k + 2] = v.z;
}

}  // namespace

void scale_node_velocities(std::span<const double> node_factors, std::span<double> velocities) {
  if (velocities.size() != 3 * node_factors.size()) {
    throw std::invalid_argument("scale_node_velocities: " + std::to_string(node_factors.size()) + " factors for " +
                                std::to_string(velocities.size()) + " velocity components");
  }
  for (std::size_t k = 0; k < velocities.size(); ++k) velocities[k] *= node_factors[k / 3];
}

void damp_toward_rigid_motion(std::span<const Index> nodes, double strength, std::span<const double> masses,
                              std::span<const double> positions, std::span<double> velocities) {
  double total_mass = 0.0;
  Vec3 center, momentum;
  for (const Index i : nodes) {
    const double m = masses[static_cast<std::size_t>(i)];
    total_mass += m;
    center += m * node_vector(positions, i);
    momentum += m * node_vector(velocities, i);
  }
  if (!(total_mass > 0.0)) return;
  center = center / total_mass;
  const Vec3 center_velocity = momentum / total_mass;
  Vec3 angular_momentum;
  Mat3 inertia = Mat3::zero();
  for (const Index i : nodes) {
    const double m = masses[static_cast<std::size_t>(i)];
    const Vec3 r = node_vector(positions, i) - center;
    angular_momentum += m * cross(r, node_vector(velocities, i) - center_velocity);
    inertia += m * (squared_norm(r) * Mat3::identity() - linalg::outer(r, r));
  }
  Vec3 angular_velocity;
  const double det = linalg::determinant(inertia);
  const double size = linalg::trace(inertia);
  if (size > 0.0 && std::abs(det) > 1e-12 * size * size * size) angular_velocity = linalg::inverse(inertia) * angular_momentum;
  for (const Index i : nodes) {
    const Vec3 v = node_vector(velocities, i);
    const Vec3 rigid = center_velocity + cross(angular_velocity, node_vector(positions, i) - center);
    set_node_vector(velocities, i, v + strength * (rigid - v));
  }
}

}  // namespace cholsim::fem
