#include "fem/octree/octree_scene.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace cholsim::fem::octree {

using linalg::Vec3;

Vec3 BoneScript::position(const Vec3& rest, double time) const {
  const double phase = 2.0 * std::numbers::pi * time / period;
  const double angle = swing * std::sin(phase);
  const Vec3 offset = rest - centre;
  const double c = std::cos(angle);
  const double s = std::sin(angle);
  const Vec3 turned{c * offset.x + s * offset.z, offset.y, -s * offset.x + c * offset.z};
  return centre + turned + Vec3{0.0, lift * std::sin(phase), 0.0};
}

std::vector<Vec3> surface_points(const OctreeScene& scene) {
  std::vector<Vec3> points;
  points.reserve(static_cast<std::size_t>(scene.surface.node_count()));
  for (linalg::Index v = 0; v < scene.surface.node_count(); ++v) points.push_back(node_position(scene.surface.positions, v));
  return points;
}

Vec3 volume_centroid(const SurfaceMesh& surface) {
  double volume = 0.0;
  Vec3 moment;
  for (linalg::Index t = 0; t < surface.triangle_count(); ++t) {
    const Vec3 a = node_position(surface.positions, surface.triangles[3 * t]);
    const Vec3 b = node_position(surface.positions, surface.triangles[3 * t + 1]);
    const Vec3 c = node_position(surface.positions, surface.triangles[3 * t + 2]);
    const double tet_volume = linalg::dot(a, linalg::cross(b, c)) / 6.0;
    volume += tet_volume;
    moment += (tet_volume / 4.0) * (a + b + c);
  }
  if (!(volume > 0.0)) {
    throw std::invalid_argument("octree scene: the surface encloses no positive volume (open or inside-out?)");
  }
  return moment / volume;
}

OctreeScene make_octree_scene(SurfaceMesh surface, const std::string& name) {
  OctreeScene scene;
  const std::array<double, 6> box = bounding_box(surface.positions);
  const double height = box[4] - box[1];
  const Vec3 centre = volume_centroid(surface);
  const double radius = 0.05 * height;
  // The bone: 200 points spread evenly over a sphere (a Fibonacci lattice) and its centre.
  constexpr int kBonePoints = 200;
  const double golden_angle = std::numbers::pi * (3.0 - std::sqrt(5.0));
  for (int k = 0; k < kBonePoints; ++k) {
    const double y = 1.0 - 2.0 * (k + 0.5) / kBonePoints;
    const double ring = std::sqrt(1.0 - y * y);
    const double theta = golden_angle * k;
    scene.bone_points.push_back(centre + radius * Vec3{ring * std::cos(theta), y, ring * std::sin(theta)});
  }
  scene.bone_points.push_back(centre);
  scene.bone = {centre, 0.1 * height, 0.3, 2.0};
  scene.obstacles.push_back(HalfSpace{{0.0, 1.0, 0.0}, box[1]});
  scene.duration = scene.bone.period;
  scene.description = name + " (" + std::to_string(surface.node_count()) + " vertices, " +
                      std::to_string(surface.triangle_count()) + " triangles) on a spherical bone lifting by " +
                      "a tenth of its height and swinging 0.3 rad over 2 s, feet on a frictional floor";
  scene.surface = std::move(surface);
  return scene;
}

}  // namespace cholsim::fem::octree
