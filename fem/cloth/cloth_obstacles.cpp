#include "fem/cloth/cloth_obstacles.hpp"

#include <algorithm>
#include <cmath>

namespace cholsim::fem::cloth {

namespace {

/// Box corner c has sign (±1) per axis from its bits: bit k set → +half_extent along axis k.
Vec3 corner_signs(int corner) {
  return {(corner & 1) ? 1.0 : -1.0, (corner & 2) ? 1.0 : -1.0, (corner & 4) ? 1.0 : -1.0};
}

Vec3 axis_vector(int axis, double sign) {
  Vec3 v;
  v[axis] = sign;
  return v;
}

double moving_time(const ClothBox& box, double t) {
  return std::clamp(t, box.move_from, box.move_until) - box.move_from;
}

}  // namespace

Vec3 ClothBox::center_at(double t) const {
  if (t <= move_from) return center;
  return center + moving_time(*this, t) * velocity;
}

Vec3 ClothBox::velocity_at(double t) const { return (t >= move_from && t < move_until) ? velocity : Vec3{}; }

FeatureEdge ClothObstacles::box_edge(int obstacle, int edge, double t) const {
  // Edges 4·axis + k run along `axis`; k's two bits pick the signs of the other two axes.
  const ClothBox& box = boxes[static_cast<std::size_t>(obstacle)];
  const int axis = edge / 4;
  const int other_1 = (axis + 1) % 3;
  const int other_2 = (axis + 2) % 3;
  const double sign_1 = (edge & 1) ? 1.0 : -1.0;
  const double sign_2 = (edge & 2) ? 1.0 : -1.0;
  const Vec3 c = box.center_at(t);
  Vec3 offset;
  offset[other_1] = sign_1 * box.half_extents[other_1];
  offset[other_2] = sign_2 * box.half_extents[other_2];
  Vec3 along;
  along[axis] = box.half_extents[axis];
  return {c + offset - along, c + offset + along, axis_vector(other_1, sign_1), axis_vector(other_2, sign_2)};
}

FeatureCorner ClothObstacles::corner(int obstacle, int corner_index, double t) const {
  if (!is_box(obstacle)) {
    const ClothPoint& nail = points[static_cast<std::size_t>(obstacle) - boxes.size()];
    return {nail.position, {normalized(nail.normal), Vec3{}, Vec3{}}, 1};
  }
  const ClothBox& box = boxes[static_cast<std::size_t>(obstacle)];
  const Vec3 s = corner_signs(corner_index);
  const Vec3 c = box.center_at(t);
  const Vec3 p{c.x + s.x * box.half_extents.x, c.y + s.y * box.half_extents.y, c.z + s.z * box.half_extents.z};
  return {p, {axis_vector(0, s.x), axis_vector(1, s.y), axis_vector(2, s.z)}, 3};
}

Vec3 ClothObstacles::velocity(int obstacle, double t) const {
  return is_box(obstacle) ? boxes[static_cast<std::size_t>(obstacle)].velocity_at(t) : Vec3{};
}

Vec3 nearest_feature_point(const ClothObstacles& obstacles, bool edge, int obstacle, int feature, const Vec3& p,
                           double t) {
  if (!edge) return obstacles.corner(obstacle, feature, t).point;
  const FeatureEdge e = obstacles.box_edge(obstacle, feature, t);
  const Vec3 d = e.b - e.a;
  return e.a + std::clamp(dot(p - e.a, d) / dot(d, d), 0.0, 1.0) * d;
}

BoxDistance box_distance(const ClothBox& box, const Vec3& p, double t) {
  const Vec3 local = p - box.center_at(t);
  Vec3 outside;  // per axis, how far p is beyond the face (0 inside the slab)
  double deepest = -1e300;  // inside: the largest (least negative) face distance
  int deepest_axis = 0;
  for (int k = 0; k < 3; ++k) {
    const double beyond = std::abs(local[k]) - box.half_extents[k];
    outside[k] = std::max(beyond, 0.0);
    if (beyond > deepest) {
      deepest = beyond;
      deepest_axis = k;
    }
  }
  if (deepest <= 0.0) {
    return {deepest, axis_vector(deepest_axis, local[deepest_axis] >= 0.0 ? 1.0 : -1.0)};
  }
  Vec3 direction;
  for (int k = 0; k < 3; ++k) direction[k] = local[k] >= 0.0 ? outside[k] : -outside[k];
  const double d = norm(direction);
  return {d, direction / d};
}

}  // namespace cholsim::fem::cloth
