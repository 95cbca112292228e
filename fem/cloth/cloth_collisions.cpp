#include "fem/cloth/cloth_collisions.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_set>

namespace cholsim::fem::cloth {

namespace {

/// Crossings this close to a segment's end are left to the corner (or the vertex) there.
constexpr double kEndSlack = 1e-6;

bool attached_to(const ClothMesh& cloth, Index v, FeatureAttachment::Kind kind, int obstacle, int feature) {
  const FeatureAttachment& a = cloth.attachments[static_cast<std::size_t>(v)];
  return a.kind == kind && a.obstacle == obstacle && a.feature == feature;
}

void detect_vertex_contacts(const ClothMesh& cloth, const ClothObstacles& obstacles, double t,
                            const CollisionOptions& options, ClothCollisions& out) {
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    if (cloth.attachments[static_cast<std::size_t>(v)].kind != FeatureAttachment::Kind::none) continue;
    const Vec3 p = cloth.position(v);
    const double reach = options.threshold + 2.0 * options.look_ahead * norm(cloth.velocity(v));
    for (int o = 0; o < static_cast<int>(obstacles.boxes.size()); ++o) {
      const BoxDistance d = box_distance(obstacles.boxes[static_cast<std::size_t>(o)], p, t);
      if (d.distance < reach) out.vertex_contacts.push_back({v, o, d.normal, d.distance});
    }
  }
}

/// One crossing per cloth edge that passes within the threshold of a box edge, away from
/// both ends of either (those are corners or existing vertices).
void detect_edge_crossings(const ClothMesh& cloth, const ClothObstacles& obstacles, double t,
                           const CollisionOptions& options, ClothCollisions& out) {
  const Index triangles = cloth.triangle_count();
  for (int o = 0; o < static_cast<int>(obstacles.boxes.size()); ++o) {
    for (int e = 0; e < obstacles.edge_count(o); ++e) {
      const FeatureEdge edge = obstacles.box_edge(o, e, t);
      // An interior cloth edge belongs to two triangles: report it once.
      std::unordered_set<std::uint64_t> visited;
      for (Index tri = 0; tri < triangles; ++tri) {
        for (int k = 0; k < 3; ++k) {
          const Index a = cloth.triangles[3 * tri + k];
          const Index b = cloth.triangles[3 * tri + (k + 1) % 3];
          const SegmentClosestPoints c =
              closest_points_of_segments(cloth.position(a), cloth.position(b), edge.a, edge.b);
          if (c.distance >= options.threshold) continue;
          if (c.s <= kEndSlack || c.s >= 1.0 - kEndSlack || c.u <= kEndSlack || c.u >= 1.0 - kEndSlack) continue;
          if (attached_to(cloth, a, FeatureAttachment::Kind::edge, o, e) &&
              attached_to(cloth, b, FeatureAttachment::Kind::edge, o, e)) {
            continue;  // already a conformal edge on this feature
          }
          const auto key = (static_cast<std::uint64_t>(std::min(a, b)) << 32) | static_cast<std::uint64_t>(std::max(a, b));
          if (!visited.insert(key).second) continue;
          FeatureCrossing crossing;
          crossing.attachment = {FeatureAttachment::Kind::edge, o, e};
          crossing.triangle = tri;
          crossing.barycentric[k] = 1.0 - c.s;
          crossing.barycentric[(k + 1) % 3] = c.s;
          crossing.barycentric[(k + 2) % 3] = 0.0;
          crossing.world_position = edge.a + c.u * (edge.b - edge.a);
          crossing.feature_parameter = c.u;
          out.crossings.push_back(crossing);
        }
      }
    }
  }
}

void detect_corner_crossings(const ClothMesh& cloth, const ClothObstacles& obstacles, double t,
                             const CollisionOptions& options, ClothCollisions& out) {
  for (int o = 0; o < obstacles.count(); ++o) {
    for (int c = 0; c < obstacles.corner_count(o); ++c) {
      bool tracked = false;
      for (Index v = 0; v < cloth.vertex_count() && !tracked; ++v) {
        tracked = attached_to(cloth, v, FeatureAttachment::Kind::corner, o, c);
      }
      if (tracked) continue;
      const FeatureCorner corner = obstacles.corner(o, c, t);
      TriangleClosestPoint best;
      best.distance = std::numeric_limits<double>::infinity();
      Index best_triangle = -1;
      for (Index tri = 0; tri < cloth.triangle_count(); ++tri) {
        const Index* v = &cloth.triangles[3 * tri];
        const TriangleClosestPoint p =
            closest_point_on_triangle(corner.point, cloth.position(v[0]), cloth.position(v[1]), cloth.position(v[2]));
        if (p.distance < best.distance) {
          best = p;
          best_triangle = tri;
        }
      }
      if (best_triangle < 0 || best.distance >= options.threshold) continue;
      FeatureCrossing crossing;
      crossing.attachment = {FeatureAttachment::Kind::corner, o, c};
      crossing.triangle = best_triangle;
      for (int k = 0; k < 3; ++k) crossing.barycentric[k] = best.barycentric[static_cast<std::size_t>(k)];
      crossing.world_position = corner.point;
      crossing.feature_parameter = 0.0;
      out.crossings.push_back(crossing);
    }
  }
}

}  // namespace

ClothCollisions detect_collisions(const ClothMesh& cloth, const ClothObstacles& obstacles, double t,
                                  const CollisionOptions& options) {
  ClothCollisions out;
  detect_vertex_contacts(cloth, obstacles, t, options, out);
  if (options.detect_features) {
    detect_edge_crossings(cloth, obstacles, t, options, out);
    detect_corner_crossings(cloth, obstacles, t, options, out);
  }
  return out;
}

SegmentClosestPoints closest_points_of_segments(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1) {
  // Minimize |p0 + s·d1 − q0 − u·d2|² over the unit square: the unconstrained stationary
  // point, clamped one coordinate at a time (each clamp re-solves the other exactly).
  const Vec3 d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const double a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r);
  double s = 0.0, u = 0.0;
  if (a <= 0.0 && e <= 0.0) {
    return {0.0, 0.0, norm(r)};
  }
  if (a <= 0.0) {
    u = std::clamp(f / e, 0.0, 1.0);
  } else {
    const double c = dot(d1, r);
    if (e <= 0.0) {
      s = std::clamp(-c / a, 0.0, 1.0);
    } else {
      const double b = dot(d1, d2);
      const double denominator = a * e - b * b;
      s = denominator > 0.0 ? std::clamp((b * f - c * e) / denominator, 0.0, 1.0) : 0.0;
      u = (b * s + f) / e;
      if (u < 0.0) {
        u = 0.0;
        s = std::clamp(-c / a, 0.0, 1.0);
      } else if (u > 1.0) {
        u = 1.0;
        s = std::clamp((b - c) / a, 0.0, 1.0);
      }
    }
  }
  return {s, u, norm((p0 + s * d1) - (q0 + u * d2))};
}

TriangleClosestPoint closest_point_on_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  // Ericson, Real-Time Collision Detection §5.1.5: test the Voronoi regions of the vertices,
  // then of the edges, else the face.
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = dot(ab, ap), d2 = dot(ac, ap);
  const auto result = [&](double wa, double wb, double wc) {
    const Vec3 q = wa * a + wb * b + wc * c;
    return TriangleClosestPoint{{wa, wb, wc}, norm(p - q)};
  };
  if (d1 <= 0.0 && d2 <= 0.0) return result(1.0, 0.0, 0.0);
  const Vec3 bp = p - b;
  const double d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (d3 >= 0.0 && d4 <= d3) return result(0.0, 1.0, 0.0);
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
    const double v = d1 / (d1 - d3);
    return result(1.0 - v, v, 0.0);
  }
  const Vec3 cp = p - c;
  const double d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (d6 >= 0.0 && d5 <= d6) return result(0.0, 0.0, 1.0);
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
    const double w = d2 / (d2 - d6);
    return result(1.0 - w, 0.0, w);
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
    const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    return result(0.0, 1.0 - w, w);
  }
  const double denominator = 1.0 / (va + vb + vc);
  const double v = vb * denominator, w = vc * denominator;
  return result(1.0 - v - w, v, w);
}

}  // namespace cholsim::fem::cloth
