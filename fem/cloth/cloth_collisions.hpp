#pragma once
// Collision detection of cloth against its obstacles (Algorithm 2.1 line 2 of seed 002): the
// contacts of free vertices with box faces (velocity constraints, §2.5.1), and where the
// obstacles' sharp features — box edges and corners, nail tips — meet the cloth, handed to the
// conformal remesher as FeatureCrossings (§2.6.1).
#include <vector>

#include "fem/cloth/cloth_mesh.hpp"
#include "fem/cloth/cloth_obstacles.hpp"
#include "fem/cloth/conformal_remesher.hpp"

namespace cholsim::fem::cloth {

/// A free vertex within the detection distance of (or inside) a box.
struct VertexContact {
  Index vertex = 0;
  int obstacle = 0;
  Vec3 normal;        ///< outward normal of the closest face
  double gap = 0.0;   ///< signed distance to the box (negative: penetration)
};

struct CollisionOptions {
  /// Contacts and crossings are reported within this distance (m): the public EDGE scene's
  /// obstacle threshold.
  double threshold = 5e-3;
  /// Report sharp features as crossings (conformal methods); off for the regular Lagrangian
  /// method, which sees only the faces.
  bool detect_features = true;
  /// A free vertex moving at speed |ẋ| is also reported within 2·look_ahead·|ẋ| of a box, so
  /// that a fast vertex is constrained before it could cross the threshold in one step (the
  /// simulation sets this to its time step).
  double look_ahead = 0.0;
};

struct ClothCollisions {
  std::vector<VertexContact> vertex_contacts;
  std::vector<FeatureCrossing> crossings;
};

/// Everything the cloth touches at time t. Conformal vertices (attachment not none) are not
/// reported as vertex contacts: their constraints come from their feature (Algorithm 2.2).
ClothCollisions detect_collisions(const ClothMesh& cloth, const ClothObstacles& obstacles, double t,
                                  const CollisionOptions& options);

/// Closest points of segments p0–p1 and q0–q1: parameters s (on p) and u (on q) in [0, 1].
struct SegmentClosestPoints {
  double s = 0.0;
  double u = 0.0;
  double distance = 0.0;
};
SegmentClosestPoints closest_points_of_segments(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1);

/// Closest point of triangle (a, b, c) to p, as barycentric coordinates, and its distance.
struct TriangleClosestPoint {
  std::array<double, 3> barycentric{};
  double distance = 0.0;
};
TriangleClosestPoint closest_point_on_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c);

}  // namespace cholsim::fem::cloth
