#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "fem/cloth/velocity_transfer.hpp"

namespace cholsim::fem::cloth {
namespace {

constexpr double kTight = 1e-12;

/// A world velocity field affine in material space, ẋʷ(X) = w₀ + G X.
struct AffineField {
  Vec3 offset;
  Mat32 gradient;
  [[nodiscard]] Vec3 at(const Vec2& X) const { return offset + gradient * X; }
};

Vec3 random_vec3(std::mt19937& random) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  return {value(random), value(random), value(random)};
}

Vec2 random_vec2(std::mt19937& random) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  return {value(random), value(random)};
}

void expect_near(const Vec3& a, const Vec3& b, double tolerance) {
  EXPECT_NEAR(a.x, b.x, tolerance);
  EXPECT_NEAR(a.y, b.y, tolerance);
  EXPECT_NEAR(a.z, b.z, tolerance);
}

void set_velocity(ClothMesh& cloth, Index v, const Vec3& velocity, const Vec2& material_velocity) {
  for (int k = 0; k < 3; ++k) cloth.velocities[3 * v + k] = velocity[k];
  cloth.material_velocities[2 * v] = material_velocity.u;
  cloth.material_velocities[2 * v + 1] = material_velocity.v;
}

/// A curved, stretched sheet (every triangle has its own F) with random EOL vertices whose
/// generalized velocities realize `field` through the triangle `t`'s F: ẋ = ẋʷ(X) + F Ẋ.
ClothMesh curved_sheet(std::mt19937& random) {
  ClothMesh cloth = make_rectangle_cloth(1.0, 0.8, 4, 4, {}, {1.0, 0.0, 0.0}, {0.0, 1.0, 0.0});
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    const double u = cloth.material[2 * v], w = cloth.material[2 * v + 1];
    const Vec3 x{1.3 * u + 0.2 * w, std::sin(w) + 0.1 * u, 0.4 * u * u - 0.3 * w * u};
    for (int k = 0; k < 3; ++k) cloth.positions[3 * v + k] = x[k];
  }
  for (Index v = 0; v < cloth.vertex_count(); ++v) cloth.eulerian[v] = random() % 2;
  return cloth;
}

void realize_field(ClothMesh& cloth, const AffineField& field, std::span<const Index> vertices, const Mat32& f,
                   std::mt19937& random) {
  for (const Index v : vertices) {
    const Vec2 material_velocity = cloth.is_eulerian(v) ? random_vec2(random) : Vec2{};
    set_velocity(cloth, v, field.at(material_point(cloth, v)) + f * material_velocity, material_velocity);
  }
}

TEST(VelocityTransfer, NewVertexInsideATriangleGetsTheAffineWorldVelocity) {
  // Rules 1 and 2: the vertex created by a face split, with the vertex F of its new star.
  std::mt19937 random(3);
  for (const bool with_eulerian : {false, true}) {
    ClothMesh cloth = curved_sheet(random);
    if (!with_eulerian) std::fill(cloth.eulerian.begin(), cloth.eulerian.end(), 0);
    const AffineField field{random_vec3(random), {random_vec3(random), random_vec3(random)}};
    const Index t = 9;
    const std::array<Index, 3> corners{cloth.triangles[27], cloth.triangles[28], cloth.triangles[29]};
    realize_field(cloth, field, corners, triangle_deformation_gradient(cloth, t), random);
    TriangleTopology topology(cloth);
    const SplitResult split = topology.split_face(t, {0.2, 0.45, 0.35});
    ASSERT_EQ(split.status, EditStatus::done);
    const Index p = split.vertex;
    transfer_to_lagrangian_vertex(cloth, topology.created_vertices().back(), vertex_deformation_gradient(topology, p));
    expect_near(cloth.velocity(p), field.at(material_point(cloth, p)), kTight);
    EXPECT_EQ(material_velocity(cloth, p).u, 0.0);
    EXPECT_EQ(material_velocity(cloth, p).v, 0.0);
  }
}

TEST(VelocityTransfer, NewVertexOnAnEdgeAveragesEquation22OverBothTriangles) {
  // The reference: the eq. 2.4 Jacobian (eol_mapping) of the point in each of the edge's two
  // triangles applied to their generalized velocities, averaged.
  std::mt19937 random(5);
  ClothMesh cloth = curved_sheet(random);
  for (double& value : cloth.velocities) value = std::uniform_real_distribution<double>(-1.0, 1.0)(random);
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    const Vec2 material_velocity = cloth.is_eulerian(v) ? random_vec2(random) : Vec2{};
    cloth.material_velocities[2 * v] = material_velocity.u;
    cloth.material_velocities[2 * v + 1] = material_velocity.v;
  }
  TriangleTopology topology(cloth);
  const Index a = 6, b = 7;  // interior edge
  const EdgeTriangles edge = topology.edge_triangles(a, b);
  ASSERT_TRUE(edge.left >= 0 && edge.right >= 0);
  const double s = 0.35;
  Vec3 reference;
  for (const Index t : {edge.left, edge.right}) {
    std::array<double, 3> barycentric{};
    std::array<double, 15> q{};
    for (int k = 0; k < 3; ++k) {
      const Index v = cloth.triangles[3 * t + k];
      barycentric[k] = v == a ? 1.0 - s : (v == b ? s : 0.0);
      for (int i = 0; i < 3; ++i) q[3 * k + i] = cloth.velocities[3 * v + i];
      for (int i = 0; i < 2; ++i) q[9 + 2 * k + i] = cloth.material_velocities[2 * v + i];
    }
    const PointJacobian jacobian = point_jacobian(barycentric, triangle_deformation_gradient(cloth, t));
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 15; ++j) reference[i] += 0.5 * jacobian[3 * j + i] * q[j];
    }
  }
  const SplitResult split = topology.split_edge(a, b, s);
  ASSERT_EQ(split.status, EditStatus::done);
  transfer_to_lagrangian_vertex(cloth, topology.created_vertices().back(),
                                vertex_deformation_gradient(topology, split.vertex));
  expect_near(cloth.velocity(split.vertex), reference, kTight);
}

TEST(VelocityTransfer, EulerianEdgeSplitInterpolatesAndKeepsTheWorldVelocity) {
  // Rule 3 under one F: interpolating ẋ and Ẋ interpolates ẋ − F Ẋ.
  std::mt19937 random(8);
  ClothMesh cloth = curved_sheet(random);
  const AffineField field{random_vec3(random), {random_vec3(random), random_vec3(random)}};
  TriangleTopology topology(cloth);
  const Index a = 6, b = 7;
  cloth.eulerian[a] = cloth.eulerian[b] = 1;
  const Mat32 f = triangle_deformation_gradient(cloth, topology.edge_triangles(a, b).left);
  const std::array<Index, 2> ends{a, b};
  realize_field(cloth, field, ends, f, random);
  const SplitResult split = topology.split_edge(a, b, 0.6);
  ASSERT_EQ(split.status, EditStatus::done);
  cloth.velocities[3 * split.vertex] = 99.0;  // whatever the split left, rule 3 sets it
  const VertexOrigin& origin = topology.created_vertices().back();
  transfer_to_split_eulerian_vertex(cloth, origin);
  const Index p = split.vertex;
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(cloth.velocities[3 * p + i], 0.4 * cloth.velocities[3 * a + i] + 0.6 * cloth.velocities[3 * b + i],
                kTight);
  }
  expect_near(world_velocity(cloth.velocity(p), material_velocity(cloth, p), f), field.at(material_point(cloth, p)),
              kTight);
  expect_near(interpolated_world_velocity(cloth, origin, f), field.at(material_point(cloth, p)), kTight);
}

/// An orthonormal basis of the column space of F, by Gram–Schmidt (the reference projector).
std::array<Vec3, 2> column_basis(const Mat32& f) {
  const Vec3 e1 = normalized(f.col_u);
  return {e1, normalized(f.col_v - dot(f.col_v, e1) * e1)};
}

TEST(VelocityTransfer, CollisionSplitSolvesEquation213) {
  std::mt19937 random(21);
  for (int trial = 0; trial < 20; ++trial) {
    const Mat32 f{random_vec3(random), random_vec3(random)};
    const Vec3 world = random_vec3(random);
    const Vec2 row = random_vec2(random);

    const GeneralizedVelocity constrained = split_world_velocity(world, f, row);
    EXPECT_NEAR(dot(row, constrained.eulerian), 0.0, kTight);
    expect_near(world_velocity(constrained.lagrangian, constrained.eulerian, f), world, kTight);
    // Reference: Ẋ = s a⊥ minimizing ‖ẋʷ + s F a⊥‖.
    const Vec3 along = f * Vec2{-row.v, row.u};
    const double s = -dot(along, world) / dot(along, along);
    EXPECT_NEAR(constrained.eulerian.u, -s * row.v, 1e-10);
    EXPECT_NEAR(constrained.eulerian.v, s * row.u, 1e-10);

    // Without a row (a corner), ẋ is the part of ẋʷ normal to the cloth: (I − P) ẋʷ.
    const GeneralizedVelocity free = split_world_velocity(world, f, std::nullopt);
    const auto [e1, e2] = column_basis(f);
    expect_near(free.lagrangian, world - dot(world, e1) * e1 - dot(world, e2) * e2, 1e-10);
    expect_near(world_velocity(free.lagrangian, free.eulerian, f), world, kTight);
  }
  const Mat32 rank_one{{1.0, 0.0, 0.0}, {2.0, 0.0, 0.0}};
  EXPECT_FALSE(has_full_rank(rank_one));
  EXPECT_THROW(split_world_velocity({1.0, 2.0, 3.0}, rank_one, std::nullopt), std::invalid_argument);
  // F a⊥ = 0: a⊥ = (2, −1) is F's null direction. The remesher asks first and keeps Ẋ = 0.
  EXPECT_FALSE(moves_along_free_direction(rank_one, Vec2{1.0, 2.0}));
  EXPECT_THROW(split_world_velocity({1.0, 2.0, 3.0}, rank_one, Vec2{1.0, 2.0}), std::invalid_argument);
  // Another row leaves a direction F does move along: solvable although F has rank 1.
  EXPECT_TRUE(moves_along_free_direction(rank_one, Vec2{0.0, 1.0}));
  EXPECT_NO_THROW(split_world_velocity({1.0, 2.0, 3.0}, rank_one, Vec2{0.0, 1.0}));
}

TEST(VelocityTransfer, CollisionVertexAndLiftOffKeepTheWorldVelocity) {
  std::mt19937 random(34);
  ClothMesh cloth = curved_sheet(random);
  TriangleTopology topology(cloth);
  const Index v = 12;  // interior
  const Mat32 f = vertex_deformation_gradient(topology, v);
  const Vec3 world = random_vec3(random);
  const Vec2 row{0.6, 0.8};
  cloth.eulerian[v] = 1;
  transfer_to_collision_eulerian_vertex(cloth, v, world, f, row);
  expect_near(vertex_world_velocity(cloth, v, f), world, kTight);
  EXPECT_NEAR(dot(row, material_velocity(cloth, v)), 0.0, kTight);

  set_velocity(cloth, v, random_vec3(random), random_vec2(random));
  const Vec3 before = vertex_world_velocity(cloth, v, f);
  lift_off(cloth, v, f);
  EXPECT_FALSE(cloth.is_eulerian(v));
  EXPECT_EQ(material_velocity(cloth, v).u, 0.0);
  EXPECT_EQ(material_velocity(cloth, v).v, 0.0);
  expect_near(cloth.velocity(v), before, kTight);
}

TEST(VelocityTransfer, VertexGradientIsTheMeanOfItsTriangles) {
  std::mt19937 random(2);
  ClothMesh cloth = curved_sheet(random);
  const TriangleTopology topology(cloth);
  const std::vector<Mat32> reference = vertex_deformation_gradients(cloth);
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    const Mat32 f = vertex_deformation_gradient(topology, v);
    expect_near(f.col_u, reference[v].col_u, kTight);
    expect_near(f.col_v, reference[v].col_v, kTight);
  }
  EXPECT_THROW(average_deformation_gradient(cloth, {}), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::fem::cloth
