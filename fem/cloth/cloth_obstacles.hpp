#pragma once
// The rigid obstacles of EOL cloth (seed 002 §2.7) and their sharp features — the box edges
// and corners and nail tips that conformal vertices are attached to (§2.5.2, §2.6.1).
//
// A box is axis-aligned and may translate at a scripted velocity from a start time (PUSH,
// THROW). A wire is a long box of small square cross-section: its top edge is the sharp
// feature the cloth slides over. A nail tip is a point with the one normal of its cone.
#include <array>
#include <vector>

#include "linalg/small_matrix.hpp"

namespace cholsim::fem::cloth {

using linalg::Vec3;

struct ClothBox {
  Vec3 center;
  Vec3 half_extents{0.5, 0.5, 0.5};
  Vec3 velocity;          ///< scripted translation velocity (m/s) …
  double move_from = 0.0;  ///< … from this time on
  double move_until = 1e300;  ///< … until this time

  /// The centre at time t (the scripted translation integrated exactly).
  [[nodiscard]] Vec3 center_at(double t) const;
  /// The box's velocity at time t.
  [[nodiscard]] Vec3 velocity_at(double t) const;
};

/// A nail tip: a sharp point the cloth slides over, with the outward normal of its cone.
struct ClothPoint {
  Vec3 position;
  Vec3 normal{0.0, 0.0, 1.0};
};

/// A sharp edge of an obstacle at some time: the segment a→b and the outward normals of its
/// two faces.
struct FeatureEdge {
  Vec3 a, b;
  Vec3 normal_1, normal_2;
};

/// A sharp corner: its point and the outward normals of the faces meeting there (three for a
/// box corner, one for a nail tip).
struct FeatureCorner {
  Vec3 point;
  std::array<Vec3, 3> normals;
  int normal_count = 3;
};

/// The obstacles of a scene. Obstacle index o < boxes.size() is boxes[o]; the nail tips
/// follow, points[o − boxes.size()].
struct ClothObstacles {
  std::vector<ClothBox> boxes;
  std::vector<ClothPoint> points;

  [[nodiscard]] int count() const { return static_cast<int>(boxes.size() + points.size()); }
  [[nodiscard]] bool is_box(int obstacle) const { return obstacle < static_cast<int>(boxes.size()); }
  /// Edge e (0..11) of box `obstacle` at time t.
  [[nodiscard]] FeatureEdge box_edge(int obstacle, int edge, double t) const;
  /// Corner c (0..7) of box `obstacle` at time t, or the tip of a nail (corner 0).
  [[nodiscard]] FeatureCorner corner(int obstacle, int corner, double t) const;
  [[nodiscard]] int edge_count(int obstacle) const { return is_box(obstacle) ? 12 : 0; }
  [[nodiscard]] int corner_count(int obstacle) const { return is_box(obstacle) ? 8 : 1; }
  /// The obstacle's velocity at time t (zero for nails).
  [[nodiscard]] Vec3 velocity(int obstacle, double t) const;
};

/// The point of an obstacle's feature (edge `feature` of box `obstacle`, or corner
/// `feature`) nearest p at time t: the clamped projection onto the edge, or the corner.
Vec3 nearest_feature_point(const ClothObstacles& obstacles, bool edge, int obstacle, int feature, const Vec3& p,
                           double t);

/// Signed distance of p to box (negative inside), with the outward normal of the closest
/// face (inside) or the direction from the closest surface point (outside).
struct BoxDistance {
  double distance = 0.0;
  Vec3 normal;
};
BoxDistance box_distance(const ClothBox& box, const Vec3& p, double t);

}  // namespace cholsim::fem::cloth
