// fem/cloth/cloth_collisions and cloth_obstacles: closest points of segments and of a triangle
// against brute-force sampling; box distances; what the detector reports for a sheet lying just
// above a box (face contacts with the top normal and the gap, crossings of the box's top
// edges on the cloth's edges, placed on the box edge) and for a nail under a sheet.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "fem/cloth/cloth_collisions.hpp"

namespace cholsim::fem::cloth {
namespace {

Vec3 random_point(std::mt19937& engine) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  return {unit(engine), unit(engine), unit(engine)};
}

TEST(ClothCollisions, SegmentClosestPointsMatchSampling) {
  std::mt19937 engine(7);
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3 p0 = random_point(engine), p1 = random_point(engine), q0 = random_point(engine);
    // Every tenth pair is parallel, the degenerate case of the clamped solve.
    const Vec3 q1 = trial % 10 == 0 ? q0 + 0.7 * (p1 - p0) : random_point(engine);
    const SegmentClosestPoints c = closest_points_of_segments(p0, p1, q0, q1);
    ASSERT_GE(c.s, 0.0);
    ASSERT_LE(c.s, 1.0);
    ASSERT_GE(c.u, 0.0);
    ASSERT_LE(c.u, 1.0);
    EXPECT_NEAR(c.distance, norm((p0 + c.s * (p1 - p0)) - (q0 + c.u * (q1 - q0))), 1e-12);
    double sampled = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= 200; ++i) {
      for (int j = 0; j <= 200; ++j) {
        sampled = std::min(sampled, norm((p0 + (i / 200.0) * (p1 - p0)) - (q0 + (j / 200.0) * (q1 - q0))));
      }
    }
    EXPECT_LE(c.distance, sampled + 1e-12);
    EXPECT_GE(c.distance, sampled - 0.02);  // the sampling grid's resolution
  }
}

TEST(ClothCollisions, TriangleClosestPointMatchesSampling) {
  std::mt19937 engine(3);
  for (int trial = 0; trial < 100; ++trial) {
    const Vec3 a = random_point(engine), b = random_point(engine), c = random_point(engine);
    const Vec3 p = 2.0 * random_point(engine);
    const TriangleClosestPoint found = closest_point_on_triangle(p, a, b, c);
    double sum = 0.0;
    for (double w : found.barycentric) {
      EXPECT_GE(w, -1e-12);
      sum += w;
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
    double sampled = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= 100; ++i) {
      for (int j = 0; i + j <= 100; ++j) {
        const double u = i / 100.0, v = j / 100.0;
        sampled = std::min(sampled, norm(p - ((1.0 - u - v) * a + u * b + v * c)));
      }
    }
    EXPECT_LE(found.distance, sampled + 1e-12);
    EXPECT_GE(found.distance, sampled - 0.03);
  }
}

TEST(ClothCollisions, BoxDistanceAndFeatures) {
  const ClothBox box{{0, 0, 0}, {1, 2, 3}, {0.5, 0, 0}, 1.0, 3.0};
  EXPECT_NEAR(box_distance(box, {0, 0, 3.5}, 0.0).distance, 0.5, 1e-15);
  EXPECT_NEAR(box_distance(box, {0, 0, 2.5}, 0.0).distance, -0.5, 1e-15);
  EXPECT_EQ(box_distance(box, {0, 0, 2.5}, 0.0).normal, (Vec3{0, 0, 1}));
  EXPECT_NEAR(box_distance(box, {2, 3, 0}, 0.0).distance, std::sqrt(2.0), 1e-15);
  // Scripted motion: moving from t = 1 to t = 3 at 0.5 m/s along x.
  EXPECT_EQ(box.center_at(0.5), (Vec3{0, 0, 0}));
  EXPECT_NEAR(box.center_at(2.0).x, 0.5, 1e-15);
  EXPECT_NEAR(box.center_at(10.0).x, 1.0, 1e-15);
  EXPECT_EQ(box.velocity_at(2.0), (Vec3{0.5, 0, 0}));
  EXPECT_EQ(box.velocity_at(4.0), (Vec3{}));
  // Every edge's normals are outward face normals at both its ends, and the edge lies on both
  // faces; every corner is on its three faces.
  ClothObstacles obstacles;
  obstacles.boxes.push_back(box);
  for (int e = 0; e < 12; ++e) {
    const FeatureEdge edge = obstacles.box_edge(0, e, 0.0);
    EXPECT_NEAR(dot(edge.normal_1, edge.normal_2), 0.0, 1e-15);
    for (const Vec3& p : {edge.a, edge.b}) {
      EXPECT_NEAR(box_distance(box, p, 0.0).distance, 0.0, 1e-15);
      EXPECT_NEAR(dot(p, edge.normal_1), dot(box.half_extents, Vec3{std::abs(edge.normal_1.x), std::abs(edge.normal_1.y),
                                                                     std::abs(edge.normal_1.z)}), 1e-15);
    }
  }
  for (int c = 0; c < 8; ++c) {
    const FeatureCorner corner = obstacles.corner(0, c, 0.0);
    for (const Vec3& n : corner.normals) {
      EXPECT_NEAR(box_distance(box, corner.point + 0.1 * n, 0.0).distance, 0.1, 1e-15);
    }
  }
}

TEST(ClothCollisions, SheetAboveABoxReportsFaceContactsAndTopEdgeCrossings) {
  // A 1 × 1 sheet 2 mm above the top of a box whose top edges at x = 0.35 and y = 0.65 pass
  // under it.
  ClothMesh cloth = make_rectangle_cloth(1.0, 1.0, 8, 8, {0, 0, 0.002}, {1, 0, 0}, {0, 1, 0});
  ClothObstacles obstacles;
  obstacles.boxes.push_back({{0.85, 0.15, -0.5}, {0.5, 0.5, 0.5}, {}, 0.0, 1e300});
  const ClothCollisions found = detect_collisions(cloth, obstacles, 0.0, CollisionOptions{});
  Index over_box = 0;
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    const Vec3 p = cloth.position(v);
    if (p.x >= 0.35 && p.y <= 0.65) ++over_box;
  }
  ASSERT_EQ(static_cast<Index>(found.vertex_contacts.size()), over_box);
  for (const VertexContact& c : found.vertex_contacts) {
    EXPECT_EQ(c.normal, (Vec3{0, 0, 1}));
    EXPECT_NEAR(c.gap, 0.002, 1e-15);
  }
  ASSERT_FALSE(found.crossings.empty());
  int corners = 0;
  for (const FeatureCrossing& crossing : found.crossings) {
    if (crossing.attachment.kind == FeatureAttachment::Kind::corner) {
      // The one top corner under the sheet, where the two top edges meet.
      EXPECT_LT(norm(crossing.world_position - Vec3{0.35, 0.65, 0.0}), 1e-12);
      ++corners;
      continue;
    }
    const FeatureEdge edge = obstacles.box_edge(0, crossing.attachment.feature, 0.0);
    EXPECT_EQ(edge.a.z, 0.0);  // a top edge
    const Vec3 on_edge = edge.a + crossing.feature_parameter * (edge.b - edge.a);
    EXPECT_NEAR(norm(on_edge - crossing.world_position), 0.0, 1e-12);
    // The crossing point on the cloth is within the threshold of the box edge point.
    const Index* v = &cloth.triangles[3 * crossing.triangle];
    Vec3 on_cloth;
    for (int k = 0; k < 3; ++k) on_cloth += crossing.barycentric[k] * cloth.position(v[k]);
    EXPECT_LT(norm(on_cloth - crossing.world_position), CollisionOptions{}.threshold);
  }
  EXPECT_EQ(corners, 1);
  // Features off: no crossings.
  CollisionOptions faces_only;
  faces_only.detect_features = false;
  EXPECT_TRUE(detect_collisions(cloth, obstacles, 0.0, faces_only).crossings.empty());
}

TEST(ClothCollisions, NailTipUnderTheSheetIsACornerCrossing) {
  ClothMesh cloth = make_rectangle_cloth(1.0, 1.0, 4, 4, {0, 0, 0.001}, {1, 0, 0}, {0, 1, 0});
  ClothObstacles obstacles;
  obstacles.points.push_back({{0.4, 0.6, 0.0}, {0, 0, 1}});
  const ClothCollisions found = detect_collisions(cloth, obstacles, 0.0, CollisionOptions{});
  ASSERT_EQ(found.crossings.size(), 1u);
  const FeatureCrossing& c = found.crossings[0];
  EXPECT_EQ(c.attachment.kind, FeatureAttachment::Kind::corner);
  EXPECT_EQ(c.attachment.obstacle, 0);
  const Index* v = &cloth.triangles[3 * c.triangle];
  Vec3 on_cloth;
  for (int k = 0; k < 3; ++k) on_cloth += c.barycentric[k] * cloth.position(v[k]);
  EXPECT_NEAR(on_cloth.x, 0.4, 1e-12);
  EXPECT_NEAR(on_cloth.y, 0.6, 1e-12);
}

}  // namespace
}  // namespace cholsim::fem::cloth
