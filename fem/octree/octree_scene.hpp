#pragma once
// The scenes of `cholsim octree` and its benchmark (seed 001 §10): a closed character surface
// whose flesh hangs on a rigid bone moved by a script — up and down and side to side, as the
// paper animates Spike's head (§10) — above a floor it presses its feet on (frictional
// penalty contact, §8).
#include <string>
#include <vector>

#include "fem/contact/obstacles.hpp"
#include "fem/mesh/tet_mesh.hpp"

namespace cholsim::fem::octree {

/// The bone's scripted rigid motion about its centre: a vertical lift and a swing about the
/// vertical axis, both sinusoidal with one period.
struct BoneScript {
  linalg::Vec3 centre;
  double lift = 0.0;    ///< amplitude of the vertical motion (world units)
  double swing = 0.0;   ///< amplitude of the rotation about the vertical axis (radians)
  double period = 2.0;  ///< seconds
  [[nodiscard]] linalg::Vec3 position(const linalg::Vec3& rest, double time) const;
};

struct OctreeScene {
  std::string description;
  SurfaceMesh surface;                   ///< the flesh's closed surface (also the render mesh)
  std::vector<linalg::Vec3> bone_points; ///< embedded points of the bone, at rest
  BoneScript bone;
  std::vector<Obstacle> obstacles;
  double duration = 2.0;                 ///< seconds (one bone period)
};

/// The scene around `surface` (named `name` in the description): a spherical bone of a tenth
/// of the height at the body's volume centroid, sampled by 200 points on its surface and its
/// centre, lifting by a tenth of the height and swinging by 0.3 rad over 2 s, over a floor at
/// the lowest point. Throws std::invalid_argument for a surface without volume.
OctreeScene make_octree_scene(SurfaceMesh surface, const std::string& name);

/// The surface's vertices, embedded in the flesh: the points that meet the obstacles (§8, frictional
/// penalty contact) and carry the render mesh.
std::vector<linalg::Vec3> surface_points(const OctreeScene& scene);

/// The volume centroid of a closed, outward-oriented surface (signed tetrahedra to the origin).
linalg::Vec3 volume_centroid(const SurfaceMesh& surface);

}  // namespace cholsim::fem::octree
