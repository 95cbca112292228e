#include "fem/contact/obstacles.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cholsim::fem {

namespace {

// Any unit vector orthogonal to `axis` (unit): the normal used when a point lies exactly on
// an obstacle's axis or centre, where the nearest surface direction is not unique.
Vec3 any_orthogonal(const Vec3& axis) {
  const Vec3 helper = std::abs(axis.x) < 0.9 ? Vec3{1.0, 0.0, 0.0} : Vec3{0.0, 1.0, 0.0};
  return linalg::normalized(linalg::cross(axis, helper));
}

ObstacleProximity proximity_to(const HalfSpace& plane, const Vec3& point) {
  return {linalg::dot(plane.normal, point) - plane.offset, plane.normal, {}};
}

ObstacleProximity proximity_to(const Sphere& sphere, const Vec3& point) {
  const Vec3 offset = point - sphere.center;
  const double length = linalg::norm(offset);
  const Vec3 normal = length > 0.0 ? offset / length : Vec3{0.0, 1.0, 0.0};
  return {length - sphere.radius, normal, {}};
}

ObstacleProximity proximity_to(const Cylinder& cylinder, const Vec3& point) {
  const Vec3 axis_vector = cylinder.end_b - cylinder.end_a;
  const double height = linalg::norm(axis_vector);
  const Vec3 axis = axis_vector / height;
  const double along = linalg::dot(point - cylinder.end_a, axis);
  const Vec3 radial_vector = point - cylinder.end_a - along * axis;
  const double radial = linalg::norm(radial_vector);
  const Vec3 radial_direction = radial > 0.0 ? radial_vector / radial : any_orthogonal(axis);
  // Signed distances to the infinite tube and to the slab between the caps; the solid is
  // their intersection (the standard capped-cylinder distance).
  const double to_tube = radial - cylinder.radius;
  const double to_slab = std::max(-along, along - height);
  const Vec3 cap_normal = along < 0.5 * height ? -axis : axis;
  if (to_tube <= 0.0 && to_slab <= 0.0) {  // inside: leave through the nearer surface
    return to_tube > to_slab ? ObstacleProximity{to_tube, radial_direction, {}}
                             : ObstacleProximity{to_slab, cap_normal, {}};
  }
  const double outside_tube = std::max(to_tube, 0.0);
  const double outside_slab = std::max(to_slab, 0.0);
  const Vec3 direction = outside_tube * radial_direction + outside_slab * cap_normal;
  return {std::hypot(outside_tube, outside_slab), linalg::normalized(direction), {}};
}

// The solid of all points within `radius` of a core curve, seen from `point` whose nearest
// core point is `core_point`: the offset from the core gives both distance and normal.
// `fallback_normal` is used on the core itself, where every direction is equally near.
ObstacleProximity proximity_to_swept_ball(const Vec3& point, const Vec3& core_point, double radius,
                                          const Vec3& fallback_normal) {
  const Vec3 offset = point - core_point;
  const double length = linalg::norm(offset);
  return {length - radius, length > 0.0 ? offset / length : fallback_normal, {}};
}

ObstacleProximity proximity_to(const Capsule& capsule, const Vec3& point) {
  const Vec3 segment = capsule.end_b - capsule.end_a;
  const double squared_length = linalg::squared_norm(segment);
  const double along =
      squared_length > 0.0 ? std::clamp(linalg::dot(point - capsule.end_a, segment) / squared_length, 0.0, 1.0) : 0.0;
  const Vec3 fallback = squared_length > 0.0 ? any_orthogonal(segment / std::sqrt(squared_length)) : Vec3{0.0, 1.0, 0.0};
  return proximity_to_swept_ball(point, capsule.end_a + along * segment, capsule.radius, fallback);
}

ObstacleProximity proximity_to(const HalfTorus& arch, const Vec3& point) {
  const Vec3 axis = linalg::normalized(arch.axis);
  const Vec3 start = linalg::normalized(arch.start_direction - linalg::dot(arch.start_direction, axis) * axis);
  const Vec3 quarter = linalg::cross(axis, start);  // the arc's midpoint direction
  const Vec3 offset = point - arch.center;
  const double along_start = linalg::dot(offset, start);
  const double along_quarter = linalg::dot(offset, quarter);
  // On the arc's side of the start–end line the nearest circle point (the radial one) is on the
  // half circle; on the other side the arc's nearest point is the end on the point's side.
  Vec3 direction;
  if (along_quarter >= 0.0) {
    const Vec3 in_plane = along_start * start + along_quarter * quarter;
    const double in_plane_length = linalg::norm(in_plane);
    // On the axis every arc point is equally near; take the midpoint.
    direction = in_plane_length > 0.0 ? in_plane / in_plane_length : quarter;
  } else {
    direction = along_start >= 0.0 ? start : -start;
  }
  return proximity_to_swept_ball(point, arch.center + arch.arch_radius * direction, arch.tube_radius, axis);
}

ObstacleProximity proximity_to(const Bowl& bowl, const Vec3& point) {
  const Vec3 offset = point - bowl.center;
  if (offset.y <= 0.0) {
    // In the cavity (or beyond its wall): the wall is the sphere seen from inside.
    const double length = linalg::norm(offset);
    const Vec3 normal = length > 0.0 ? -offset / length : Vec3{0.0, 1.0, 0.0};
    return {bowl.radius - length, normal, {}};
  }
  // Above the rim: the nearest solid point is on the rim circle.
  const Vec3 radial{offset.x, 0.0, offset.z};
  const double radial_length = linalg::norm(radial);
  const Vec3 rim = bowl.center + (radial_length > 0.0 ? radial / radial_length : Vec3{1.0, 0.0, 0.0}) * bowl.radius;
  const Vec3 away = point - rim;
  const double distance = linalg::norm(away);
  return {distance, distance > 0.0 ? away / distance : Vec3{0.0, 1.0, 0.0}, {}};
}

ObstacleProximity proximity_to(const MovingBox& box, const Vec3& point, double time) {
  const Vec3 local = point - box.center_at(time);
  Vec3 outside;        // per axis, how far beyond the face (0 when within the slab)
  double deepest = -std::numeric_limits<double>::infinity();
  int deepest_axis = 0;
  for (int axis = 0; axis < 3; ++axis) {
    const double beyond = std::abs(local[axis]) - box.half_extents[axis];
    outside[axis] = std::max(beyond, 0.0) * (local[axis] < 0.0 ? -1.0 : 1.0);
    if (beyond > deepest) {
      deepest = beyond;
      deepest_axis = axis;
    }
  }
  const double outside_length = linalg::norm(outside);
  if (outside_length > 0.0) return {outside_length, outside / outside_length, box.velocity_at(time)};
  Vec3 normal;  // inside: leave through the nearest face
  normal[deepest_axis] = local[deepest_axis] < 0.0 ? -1.0 : 1.0;
  return {deepest, normal, box.velocity_at(time)};
}

}  // namespace

Vec3 MovingBox::center_at(double time) const {
  // Seconds travelled along `velocity`: the forward stroke, less what came back since return_time.
  const double stroke = std::max(stop_time - start_time, 0.0);
  const double forward = std::clamp(time - start_time, 0.0, stroke);
  const double back = std::clamp(time - return_time, 0.0, stroke);
  return start_center + (forward - back) * velocity;
}

Vec3 MovingBox::velocity_at(double time) const {
  if (time >= start_time && time < stop_time) return velocity;
  if (time >= return_time && time < return_time + (stop_time - start_time)) return -velocity;
  return {};
}

ObstacleProximity proximity(const Obstacle& obstacle, const Vec3& point, double time) {
  return std::visit(
      [&](const auto& shape) {
        if constexpr (std::is_same_v<std::decay_t<decltype(shape)>, MovingBox>) {
          return proximity_to(shape, point, time);
        } else {
          return proximity_to(shape, point);
        }
      },
      obstacle);
}

ObstacleProximity nearest_obstacle(const std::vector<Obstacle>& obstacles, const Vec3& point,
                                   double time) {
  ObstacleProximity nearest{std::numeric_limits<double>::infinity(), {}, {}};
  for (const Obstacle& obstacle : obstacles) {
    const ObstacleProximity candidate = proximity(obstacle, point, time);
    if (candidate.distance < nearest.distance) nearest = candidate;
  }
  return nearest;
}

}  // namespace cholsim::fem
