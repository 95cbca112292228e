#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <numbers>
#include <set>

#include "fem/cloth/cloth_constraints.hpp"
#include "fem/cloth/conformal_remesher.hpp"
#include "fem/cloth/eol_mapping.hpp"
#include "fem/cloth/triangle_topology.hpp"
#include "fem/cloth/velocity_transfer.hpp"

namespace cholsim::fem::cloth {
namespace {

using Kind = FeatureAttachment::Kind;

/// A flat sheet tilted out of the xy-plane: x = origin + u axis_u + v axis_v.
struct Sheet {
  Vec3 origin{0.1, 0.2, 0.3};
  Vec3 axis_u{1.0, 0.0, 0.0};
  Vec3 axis_v{0.0, std::cos(0.5), std::sin(0.5)};
  [[nodiscard]] Vec3 at(double u, double v) const { return origin + u * axis_u + v * axis_v; }
  [[nodiscard]] ClothMesh cloth(double width, double height, int cells_u, int cells_v) const {
    return make_rectangle_cloth(width, height, cells_u, cells_v, origin, axis_u, axis_v);
  }
};

/// A straight obstacle edge lying on the sheet: the world points origin + s direction,
/// s ∈ [start, end].
struct FeatureLine {
  FeatureAttachment attachment;
  Vec3 origin;
  Vec3 direction;  ///< unit
  double start = -std::numeric_limits<double>::infinity();
  double end = std::numeric_limits<double>::infinity();

  [[nodiscard]] double distance(const Vec3& x) const { return norm(cross(x - origin, direction)); }
};

FeatureLine line_on_sheet(const Sheet& sheet, Vec2 material_origin, Vec2 material_direction, int feature) {
  const Vec3 direction = normalized(material_direction.u * sheet.axis_u + material_direction.v * sheet.axis_v);
  return {{Kind::edge, 0, feature}, sheet.at(material_origin.u, material_origin.v), direction};
}

/// What a collision detector reports for `line` on a cloth lying in the plane with normal
/// `normal`: each cloth edge the line crosses, in world space, as a point on the edge.
std::vector<FeatureCrossing> crossings_of(const ClothMesh& cloth, const FeatureLine& line, const Vec3& normal) {
  const Vec3 across = normalized(cross(normal, line.direction));
  std::vector<FeatureCrossing> crossings;
  std::set<std::pair<Index, Index>> seen;
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    for (int k = 0; k < 3; ++k) {
      const Index a = cloth.triangles[3 * t + k], b = cloth.triangles[3 * t + (k + 1) % 3];
      if (!seen.insert({std::min(a, b), std::max(a, b)}).second) continue;
      const double qa = dot(cloth.position(a) - line.origin, across);
      const double qb = dot(cloth.position(b) - line.origin, across);
      const bool along = std::abs(qa) < 1e-12 && std::abs(qb) < 1e-12;  // an edge lying on the line
      if ((qa > 0.0 && qb > 0.0) || (qa < 0.0 && qb < 0.0) || along) continue;
      const double tau = qa / (qa - qb);
      const double s =
          dot(cloth.position(a) + tau * (cloth.position(b) - cloth.position(a)) - line.origin, line.direction);
      if (s < line.start || s > line.end) continue;
      FeatureCrossing crossing;
      crossing.attachment = line.attachment;
      crossing.triangle = t;
      crossing.barycentric[k] = 1.0 - tau;
      crossing.barycentric[(k + 1) % 3] = tau;
      crossing.world_position = line.origin + s * line.direction;
      crossing.feature_parameter = s;
      crossings.push_back(crossing);
    }
  }
  return crossings;
}

std::vector<Index> vertices_on(const ClothMesh& cloth, const FeatureAttachment& attachment) {
  std::vector<Index> result;
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    if (cloth.attachments[v] == attachment) result.push_back(v);
  }
  return result;
}

double smallest_material_area(const ClothMesh& cloth) {
  double smallest = std::numeric_limits<double>::infinity();
  for (Index t = 0; t < cloth.triangle_count(); ++t) smallest = std::min(smallest, material_area(cloth, t));
  return smallest;
}

/// ẋʷ(X) = w₀ + G X on every vertex of a Lagrangian cloth.
struct AffineVelocityField {
  Vec3 offset{0.3, -0.2, 0.5};
  Mat32 gradient{{0.7, 0.1, -0.4}, {-0.2, 0.9, 0.3}};
  [[nodiscard]] Vec3 at(const Vec2& X) const { return offset + gradient * X; }
  void apply(ClothMesh& cloth) const {
    for (Index v = 0; v < cloth.vertex_count(); ++v) {
      const Vec3 velocity = at(material_point(cloth, v));
      for (int k = 0; k < 3; ++k) cloth.velocities[3 * v + k] = velocity[k];
    }
  }
};

Vec3 sheet_normal(const Sheet& sheet) { return normalized(cross(sheet.axis_u, sheet.axis_v)); }

/// The vertices on `line`, ordered along it, are joined by mesh edges from border to border
/// and lie on the line in world space.
void expect_conformal_chain(const ClothMesh& cloth, const FeatureLine& line) {
  std::vector<Index> chain = vertices_on(cloth, line.attachment);
  ASSERT_GE(chain.size(), 2u);
  std::sort(chain.begin(), chain.end(), [&](Index a, Index b) {
    return dot(cloth.position(a) - line.origin, line.direction) < dot(cloth.position(b) - line.origin, line.direction);
  });
  ClothMesh copy = cloth;
  const TriangleTopology topology(copy);
  for (const Index v : chain) EXPECT_LT(line.distance(cloth.position(v)), 1e-9) << "vertex " << v;
  for (std::size_t k = 0; k + 1 < chain.size(); ++k) {
    EXPECT_TRUE(topology.is_edge(chain[k], chain[k + 1])) << chain[k] << " - " << chain[k + 1];
  }
  EXPECT_TRUE(topology.is_border_vertex(chain.front()));
  EXPECT_TRUE(topology.is_border_vertex(chain.back()));
}

TEST(ConformalRemesher, DiagonalBoxEdgeBecomesAChainOfConformalEdges) {
  const Sheet sheet;
  ClothMesh cloth = sheet.cloth(1.0, 0.8, 24, 20);
  const AffineVelocityField field;
  field.apply(cloth);
  const FeatureLine line = line_on_sheet(sheet, {-0.05, 0.1}, {1.0, 0.55}, 2);
  const std::vector<FeatureCrossing> crossings = crossings_of(cloth, line, sheet_normal(sheet));
  const double reference_area = 0.5 * (1.0 / 24) * (0.8 / 20);

  const RemeshStats stats = remesh_conformal(cloth, crossings);
  ASSERT_NO_THROW(validate_cloth(cloth));
  expect_conformal_chain(cloth, line);
  EXPECT_GT(stats.vertices_inserted, 0);
  EXPECT_EQ(stats.connections_skipped, 0);
  EXPECT_TRUE(stats.converged);
  EXPECT_GT(smallest_material_area(cloth), 0.02 * reference_area);
  // Material points of conformal vertices: on the material line, or within the snap distance.
  const double snap = RemeshOptions{}.snap_fraction * RemeshOptions{}.collapse_length_fraction * 1.0;
  const Vec2 m0{-0.05, 0.1}, m1{1.0, 0.55};
  for (const Index v : vertices_on(cloth, line.attachment)) {
    EXPECT_LT(std::abs(cross(m1, material_point(cloth, v) - m0)) / std::hypot(m1.u, m1.v), snap + 1e-12);
    EXPECT_TRUE(cloth.is_eulerian(v));
  }

  // §2.6.2: every vertex keeps the world velocity of the affine field at its material point,
  // and a new interior EOL vertex's Ẋ satisfies its Eulerian equality row (Alg. 2.2).
  const std::vector<Mat32> gradients = vertex_deformation_gradients(cloth);
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    const Vec3 world = vertex_world_velocity(cloth, v, gradients[v]);
    const Vec3 expected = field.at(material_point(cloth, v));
    EXPECT_NEAR(norm(world - expected), 0.0, 1e-12) << "vertex " << v;
    if (!cloth.is_eulerian(v)) continue;
    const auto row = eulerian_constraint_direction(cloth, v);
    EXPECT_NEAR(row[0] * cloth.material_velocities[2 * v] + row[1] * cloth.material_velocities[2 * v + 1], 0.0, 1e-12);
  }

  // Remeshing the conformal cloth with the crossings its detector now reports changes nothing.
  ClothMesh again = cloth;
  const RemeshStats repeat = remesh_conformal(again, crossings_of(cloth, line, sheet_normal(sheet)));
  EXPECT_TRUE(again == cloth);
  EXPECT_EQ(repeat.vertices_inserted + repeat.vertices_snapped + repeat.edges_split + repeat.faces_split +
                repeat.edges_flipped + repeat.edges_collapsed,
            0);
  EXPECT_GT(repeat.crossings_tracked, 0);
}

TEST(ConformalRemesher, ConformalLagrangianModeMakesNoEulerianVertices) {
  const Sheet sheet;
  ClothMesh cloth = sheet.cloth(1.0, 1.0, 16, 16);
  const AffineVelocityField field;
  field.apply(cloth);
  const FeatureLine line = line_on_sheet(sheet, {0.2, -0.1}, {0.35, 1.0}, 0);
  RemeshOptions options;
  options.make_eulerian = false;
  remesh_conformal(cloth, crossings_of(cloth, line, sheet_normal(sheet)), options);
  ASSERT_NO_THROW(validate_cloth(cloth));
  expect_conformal_chain(cloth, line);
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    EXPECT_FALSE(cloth.is_eulerian(v));
    EXPECT_NEAR(norm(cloth.velocity(v) - field.at(material_point(cloth, v))), 0.0, 1e-12);
  }
}

TEST(ConformalRemesher, BoxEdgeEndingAtACornerJoinsTheCornerVertex) {
  const Sheet sheet;
  ClothMesh cloth = sheet.cloth(1.0, 1.0, 20, 20);
  // A box corner touching the sheet at material (0.43, 0.37), one of its edges leaving it
  // along material direction (1, 0.3) off the sheet.
  const Vec2 corner_point{0.43, 0.37};
  FeatureLine line = line_on_sheet(sheet, corner_point, {1.0, 0.3}, 5);
  line.start = 0.0;
  std::vector<FeatureCrossing> crossings = crossings_of(cloth, line, sheet_normal(sheet));
  FeatureCrossing corner;
  corner.attachment = {Kind::corner, 0, 1};
  corner.world_position = line.origin;
  // Grid cell (8, 7) holds the corner; find its triangle and the barycentric coordinates.
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    const std::array<Vec2, 3> X = triangle_material(cloth, t);
    const std::array<double, 3> weights = barycentric_coordinates(X, corner_point);
    if (std::min({weights[0], weights[1], weights[2]}) < 0.0) continue;
    corner.triangle = t;
    std::copy(weights.begin(), weights.end(), corner.barycentric);
  }
  ASSERT_GE(corner.triangle, 0);
  crossings.push_back(corner);

  const RemeshStats stats = remesh_conformal(cloth, crossings);
  ASSERT_NO_THROW(validate_cloth(cloth));
  EXPECT_EQ(stats.connections_skipped, 0);
  const std::vector<Index> corners = vertices_on(cloth, corner.attachment);
  ASSERT_EQ(corners.size(), 1u);
  EXPECT_LT(norm(cloth.position(corners[0]) - corner.world_position), 1e-12);
  EXPECT_TRUE(cloth.is_eulerian(corners[0]));
  // The chain: the corner, then the edge's vertices in order to the border.
  std::vector<Index> chain = vertices_on(cloth, line.attachment);
  std::sort(chain.begin(), chain.end(), [&](Index a, Index b) {
    return dot(cloth.position(a) - line.origin, line.direction) < dot(cloth.position(b) - line.origin, line.direction);
  });
  chain.insert(chain.begin(), corners[0]);
  ClothMesh copy = cloth;
  const TriangleTopology topology(copy);
  for (std::size_t k = 0; k + 1 < chain.size(); ++k) EXPECT_TRUE(topology.is_edge(chain[k], chain[k + 1]));
  for (const Index v : chain) EXPECT_LT(line.distance(cloth.position(v)), 1e-9);
  EXPECT_TRUE(topology.is_border_vertex(chain.back()));
  // A corner vertex has no Eulerian equality row: eq. 2.13 leaves ẋ normal to the flat sheet.
  EXPECT_NEAR(dot(cloth.velocity(corners[0]), sheet.axis_u), 0.0, 1e-12);
  EXPECT_NEAR(dot(cloth.velocity(corners[0]), sheet.axis_v), 0.0, 1e-12);
}

TEST(ConformalRemesher, SnapsACornerCrossingNextToAVertex) {
  const Sheet sheet;
  ClothMesh cloth = sheet.cloth(1.0, 1.0, 10, 10);
  const Index near = 5 * 11 + 4;  // grid vertex (4, 5) at material (0.4, 0.5)
  FeatureCrossing corner;
  corner.attachment = {Kind::corner, 3, 0};
  corner.triangle = cloth.triangle_count() / 2;  // any triangle descending towards the point works
  corner.world_position = sheet.at(0.4 + 1e-3, 0.5) + 1e-4 * sheet_normal(sheet);
  // The point, as barycentric coordinates of one triangle at the vertex.
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    const std::array<double, 3> weights = barycentric_coordinates(triangle_material(cloth, t), {0.4 + 1e-3, 0.5});
    if (std::min({weights[0], weights[1], weights[2]}) < 0.0) continue;
    corner.triangle = t;
    std::copy(weights.begin(), weights.end(), corner.barycentric);
  }
  const Index vertices = cloth.vertex_count();
  const RemeshStats stats = remesh_conformal(cloth, std::span(&corner, 1));
  EXPECT_EQ(stats.vertices_snapped, 1);
  EXPECT_EQ(cloth.vertex_count(), vertices);
  EXPECT_EQ(cloth.attachments[near], corner.attachment);
  EXPECT_EQ(cloth.position(near), corner.world_position);
  ASSERT_NO_THROW(validate_cloth(cloth));
}

TEST(ConformalRemesher, NoConformalEdgeAtAShallowAngleToTheBorder) {
  const Sheet sheet;
  ClothMesh cloth = sheet.cloth(1.0, 1.0, 16, 16);
  // Enters through the bottom border at 10°, leaves through the right border at 80°.
  const double angle = 10.0 * std::numbers::pi / 180.0;
  const FeatureLine line = line_on_sheet(sheet, {0.51, 0.0}, {std::cos(angle), std::sin(angle)}, 1);
  const RemeshStats stats = remesh_conformal(cloth, crossings_of(cloth, line, sheet_normal(sheet)));
  ASSERT_NO_THROW(validate_cloth(cloth));
  EXPECT_GE(stats.crossings_skipped + stats.connections_skipped, 1);
  ClothMesh copy = cloth;
  const TriangleTopology topology(copy);
  bool right_border = false;
  for (const Index v : vertices_on(cloth, line.attachment)) {
    if (!topology.is_border_vertex(v)) continue;
    EXPECT_GT(cloth.material[2 * v + 1], 0.0) << "a conformal vertex on the bottom border";
    right_border = right_border || cloth.material[2 * v] == 1.0;
  }
  EXPECT_TRUE(right_border);
}

TEST(ConformalRemesher, ReleasedVerticesBecomeFreeWithTheirWorldVelocity) {
  const Sheet sheet;
  ClothMesh cloth = sheet.cloth(1.0, 1.0, 12, 12);
  const FeatureLine line = line_on_sheet(sheet, {-0.1, 0.3}, {1.0, 0.4}, 0);
  remesh_conformal(cloth, crossings_of(cloth, line, sheet_normal(sheet)));
  // The step since then made the EOL vertices slide: give them Eulerian velocities.
  std::vector<Index> conformal = vertices_on(cloth, line.attachment);
  ASSERT_FALSE(conformal.empty());
  for (const Index v : conformal) {
    cloth.material_velocities[2 * v] = 0.1 * static_cast<double>(v % 7);
    cloth.material_velocities[2 * v + 1] = -0.05 * static_cast<double>(v % 5);
  }
  const std::vector<Mat32> gradients = vertex_deformation_gradients(cloth);
  std::vector<Vec3> world(static_cast<std::size_t>(cloth.vertex_count()));
  for (Index v = 0; v < cloth.vertex_count(); ++v) world[v] = vertex_world_velocity(cloth, v, gradients[v]);

  // One through the API for a single vertex, the rest through the remesher's release list.
  release_conformal(cloth, conformal.back());
  conformal.pop_back();
  const RemeshStats stats = remesh_conformal(cloth, {}, conformal);
  EXPECT_EQ(stats.vertices_released, static_cast<Index>(conformal.size()));
  ASSERT_NO_THROW(validate_cloth(cloth));
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    EXPECT_EQ(cloth.attachments[v].kind, Kind::none);
    EXPECT_FALSE(cloth.is_eulerian(v));
    EXPECT_EQ(cloth.material_velocities[2 * v], 0.0);
    EXPECT_NEAR(norm(cloth.velocity(v) - world[v]), 0.0, 1e-14);
  }
}

TEST(ConformalRemesher, RejectsMalformedCrossings) {
  ClothMesh cloth = Sheet{}.cloth(1.0, 1.0, 4, 4);
  FeatureCrossing crossing;
  crossing.triangle = 0;
  crossing.barycentric[0] = crossing.barycentric[1] = crossing.barycentric[2] = 1.0 / 3.0;
  EXPECT_THROW(remesh_conformal(cloth, std::span(&crossing, 1)), std::invalid_argument);  // no attachment
  crossing.attachment = {Kind::corner, 0, 0};
  crossing.triangle = cloth.triangle_count();
  EXPECT_THROW(remesh_conformal(cloth, std::span(&crossing, 1)), std::invalid_argument);
  crossing.triangle = 0;
  crossing.barycentric[0] = 0.9;
  EXPECT_THROW(remesh_conformal(cloth, std::span(&crossing, 1)), std::invalid_argument);
  const std::array<Index, 1> released{cloth.vertex_count()};
  EXPECT_THROW(remesh_conformal(cloth, {}, released), std::invalid_argument);
  RemeshOptions options;
  options.min_angle_degrees = 70.0;
  EXPECT_THROW(remesh_conformal(cloth, {}, options), std::invalid_argument);
}

TEST(ConformalRemesher, TimingOnAThreeThousandFaceCloth) {
  const Sheet sheet;
  ClothMesh cloth = sheet.cloth(1.0, 1.0, 39, 39);  // 3,042 triangles
  const FeatureLine line = line_on_sheet(sheet, {-0.02, 0.13}, {1.0, 0.71}, 0);
  const std::vector<FeatureCrossing> crossings = crossings_of(cloth, line, sheet_normal(sheet));
  const RemeshStats stats = remesh_conformal(cloth, crossings);
  ASSERT_NO_THROW(validate_cloth(cloth));
  expect_conformal_chain(cloth, line);
  ClothMesh again = cloth;
  const RemeshStats repeat = remesh_conformal(again, crossings_of(cloth, line, sheet_normal(sheet)));
  EXPECT_TRUE(again == cloth);
  std::cout << "remesh of " << 2 * 39 * 39 << " faces, " << crossings.size() << " crossings: " << 1e3 * stats.seconds
            << " ms (inserted " << stats.vertices_inserted << ", snapped " << stats.vertices_snapped << ", split "
            << stats.edges_split << "+" << stats.faces_split << ", flipped " << stats.edges_flipped << ", collapsed "
            << stats.edges_collapsed << ", iterations " << stats.iterations << ", ill-conditioned left "
            << stats.ill_conditioned_triangles << "); repeat on the conformal mesh: " << 1e3 * repeat.seconds
            << " ms\n";
  RecordProperty("remesh_ms", std::to_string(1e3 * stats.seconds));
}

}  // namespace
}  // namespace cholsim::fem::cloth
