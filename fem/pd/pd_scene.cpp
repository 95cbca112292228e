#include "fem/pd/pd_scene.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace cholsim::fem {

double RigidBone::angle_degrees(double frame) const {
  const double turned = std::min(std::abs(degrees_per_frame) * frame, std::abs(max_degrees));
  return degrees_per_frame < 0.0 ? -turned : turned;
}

Vec3 RigidBone::transform(const Vec3& rest_point, double frame) const {
  const double angle = angle_degrees(frame) * std::numbers::pi / 180.0;
  if (angle == 0.0) return rest_point;
  // Rodrigues' rotation of the offset from the pivot.
  const Vec3 offset = rest_point - pivot;
  const double c = std::cos(angle);
  const double s = std::sin(angle);
  const Vec3 rotated = c * offset + s * linalg::cross(axis, offset) +
                       (1.0 - c) * linalg::dot(axis, offset) * axis;
  return pivot + rotated;
}

}  // namespace cholsim::fem
