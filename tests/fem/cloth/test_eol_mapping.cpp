// fem/cloth/eol_mapping: the EOL kinematics of seed 002 §2.4 — eq. 2.2/2.4 against central
// differences of eq. 2.1 with moving material coordinates, and the force/stiffness mappings of
// eq. 2.9/2.10 against Jᵀf and JᵀKJ.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

#include "fem/cloth/eol_mapping.hpp"

namespace cholsim::fem::cloth {
namespace {

struct Random {
  std::mt19937 engine;
  std::uniform_real_distribution<double> unit{-1.0, 1.0};
  explicit Random(unsigned seed) : engine(seed) {}
  double operator()() { return unit(engine); }
  Vec3 vec3() { return {(*this)(), (*this)(), (*this)()}; }
  Vec2 vec2() { return {(*this)(), (*this)()}; }
  Mat32 mat32() { return {vec3(), vec3()}; }
  Mat3 mat3() { return Mat3::from_columns(vec3(), vec3(), vec3()); }
};

// A well-shaped counter-clockwise material triangle and a world triangle (any shape).
struct Triangle {
  std::array<Vec3, 3> x;
  std::array<Vec2, 3> material;
};

Triangle random_triangle(Random& random) {
  Triangle t;
  t.material = {Vec2{0.1, 0.2} + 0.05 * random.vec2(), Vec2{0.6, 0.25} + 0.05 * random.vec2(),
                Vec2{0.3, 0.7} + 0.05 * random.vec2()};
  for (auto& x : t.x) x = random.vec3();
  return t;
}

// y = A·v for a column-major rows×cols array.
template <std::size_t size>
std::vector<double> times(const std::array<double, size>& a, int rows, const std::vector<double>& v) {
  std::vector<double> y(static_cast<std::size_t>(rows), 0.0);
  for (std::size_t c = 0; c < v.size(); ++c) {
    for (int r = 0; r < rows; ++r) y[static_cast<std::size_t>(r)] += a[c * static_cast<std::size_t>(rows) + static_cast<std::size_t>(r)] * v[c];
  }
  return y;
}

// The key test of eq. 2.2: a fixed material point X* sits at x(X*) = Σ α_i(X_a, X_b, X_c, X*) x_i
// (eq. 2.1); moving x and X along (ẋ, Ẋ) moves it with velocity J q̇ (eq. 2.4).
TEST(EolMapping, WorldVelocityOfAMaterialPointMatchesCentralDifferencesOfEq21) {
  Random random(7);
  for (int trial = 0; trial < 20; ++trial) {
    const Triangle t = random_triangle(random);
    const double alpha = 0.2 + 0.1 * random(), beta = 0.3 + 0.1 * random();
    const Vec2 point = alpha * t.material[0] + beta * t.material[1] + (1.0 - alpha - beta) * t.material[2];
    std::array<Vec3, 3> xdot;
    std::array<Vec2, 3> material_dot;
    for (auto& v : xdot) v = random.vec3();
    for (auto& v : material_dot) v = random.vec2();

    const auto position_at = [&](double s) {
      std::array<Vec3, 3> x;
      std::array<Vec2, 3> material;
      for (std::size_t k = 0; k < 3; ++k) {
        x[k] = t.x[k] + s * xdot[k];
        material[k] = t.material[k] + s * material_dot[k];
      }
      return world_position(x, barycentric_coordinates(material, point));
    };
    const double eps = 1e-6;
    const Vec3 difference = (position_at(eps) - position_at(-eps)) / (2.0 * eps);

    const Mat32 f = triangle_deformation_gradient(triangle_shape(t.material), t.x);
    const PointJacobian jacobian = point_jacobian(barycentric_coordinates(t.material, point), f);
    std::vector<double> qdot;
    for (const Vec3& v : xdot) qdot.insert(qdot.end(), {v.x, v.y, v.z});
    for (const Vec2& v : material_dot) qdot.insert(qdot.end(), {v.u, v.v});
    const std::vector<double> velocity = times(jacobian, 3, qdot);
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(velocity[static_cast<std::size_t>(c)], difference[c], 1e-7) << "trial " << trial;
  }
}

// At a corner the point Jacobian reduces to (I −F) on that vertex (eq. 2.4's special case).
TEST(EolMapping, VertexJacobianIsThePointJacobianAtACorner) {
  Random random(11);
  const Triangle t = random_triangle(random);
  const Mat32 f = triangle_deformation_gradient(triangle_shape(t.material), t.x);
  const PointJacobian at_corner = point_jacobian(barycentric_coordinates(t.material, t.material[1]), f);
  const VertexJacobian vertex = vertex_jacobian(f);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(vertex[static_cast<std::size_t>(3 * c + r)], at_corner[static_cast<std::size_t>(3 * (3 + c) + r)], 1e-14);
    for (int c = 0; c < 2; ++c) {
      EXPECT_NEAR(vertex[static_cast<std::size_t>(3 * (3 + c) + r)], at_corner[static_cast<std::size_t>(3 * (11 + c) + r)], 1e-14);
    }
  }
  const Vec3 xdot = random.vec3();
  const Vec2 material_dot = random.vec2();
  const std::vector<double> velocity = times(vertex, 3, {xdot.x, xdot.y, xdot.z, material_dot.u, material_dot.v});
  const Vec3 expected = world_velocity(xdot, material_dot, f);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(velocity[static_cast<std::size_t>(c)], expected[c], 1e-14);
}

TEST(EolMapping, BarycentricCoordinatesReproduceThePointAndDeformationGradientMapsEdges) {
  Random random(3);
  const Triangle t = random_triangle(random);
  const Vec2 point{0.35, 0.4};
  const std::array<double, 3> b = barycentric_coordinates(t.material, point);
  EXPECT_NEAR(b[0] + b[1] + b[2], 1.0, 1e-15);
  const Vec2 back = b[0] * t.material[0] + b[1] * t.material[1] + b[2] * t.material[2];
  EXPECT_NEAR(back.u, point.u, 1e-15);
  EXPECT_NEAR(back.v, point.v, 1e-15);
  // F (X_k − X_a) = x_k − x_a (eq. 2.3).
  const Mat32 f = triangle_deformation_gradient(triangle_shape(t.material), t.x);
  for (std::size_t k = 1; k < 3; ++k) {
    const Vec3 mapped = f * (t.material[k] - t.material[0]);
    const Vec3 edge = t.x[k] - t.x[0];
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(mapped[c], edge[c], 1e-14);
  }
  EXPECT_THROW(triangle_shape({Vec2{0, 0}, Vec2{1, 1}, Vec2{2, 2}}), std::invalid_argument);
}

// Generalized force and stiffness blocks are Jᵀf and J_iᵀ K_ij J_j with J = (I −F) (eq. 2.9–2.10).
TEST(EolMapping, ForceAndStiffnessMappingsAreJacobianTransposeProducts) {
  Random random(5);
  const Mat32 f_i = random.mat32(), f_j = random.mat32();
  const Vec3 force = random.vec3();
  const GeneralizedForce mapped = map_force(force, f_i);
  const VertexJacobian j_i = vertex_jacobian(f_i), j_j = vertex_jacobian(f_j);
  for (int c = 0; c < 5; ++c) {
    double expected = 0.0;
    for (int r = 0; r < 3; ++r) expected += j_i[static_cast<std::size_t>(3 * c + r)] * force[r];
    const double got = c < 3 ? mapped.lagrangian[c] : (c == 3 ? mapped.eulerian.u : mapped.eulerian.v);
    EXPECT_NEAR(got, expected, 1e-14);
  }
  const Mat3 block = random.mat3();  // not symmetric: K_ij of i ≠ j
  const GeneralizedBlock generalized = map_stiffness_block(block, f_i, f_j);
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 5; ++c) {
      double expected = 0.0;
      for (int a = 0; a < 3; ++a) {
        for (int b = 0; b < 3; ++b) {
          expected += j_i[static_cast<std::size_t>(3 * r + a)] * block(a, b) * j_j[static_cast<std::size_t>(3 * c + b)];
        }
      }
      EXPECT_NEAR(generalized[static_cast<std::size_t>(5 * c + r)], expected, 1e-13) << r << ", " << c;
    }
  }
}

TEST(EolMapping, VertexDeformationGradientIsTheAverageOfIncidentTriangles) {
  ClothMesh cloth = make_rectangle_cloth(1.0, 1.0, 3, 3, {0, 0, 0}, {1, 0, 0}, {0, 1, 0});
  // An affine deformation gives every triangle, so every vertex, the same F.
  const Mat32 affine{{1.2, 0.1, -0.3}, {0.2, 0.9, 0.4}};
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    const Vec3 x = affine * material_point(cloth, v) + Vec3{0.5, -1.0, 2.0};
    for (int c = 0; c < 3; ++c) cloth.positions[3 * static_cast<std::size_t>(v) + static_cast<std::size_t>(c)] = x[c];
  }
  for (const Mat32& f : vertex_deformation_gradients(cloth)) {
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 2; ++c) EXPECT_NEAR(f(r, c), affine(r, c), 1e-13);
    }
  }
  // A non-affine motion of one vertex: its F is the plain mean of its triangles' F.
  cloth.positions[3 * 5 + 2] += 0.3;
  const std::vector<Mat32> gradients = vertex_deformation_gradients(cloth);
  Mat32 sum;
  int count = 0;
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    for (int k = 0; k < 3; ++k) {
      if (cloth.triangles[3 * static_cast<std::size_t>(t) + static_cast<std::size_t>(k)] != 5) continue;
      sum = sum + triangle_deformation_gradient(cloth, t);
      ++count;
    }
  }
  ASSERT_GT(count, 0);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 2; ++c) EXPECT_NEAR(gradients[5](r, c), sum(r, c) / count, 1e-14);
  }
}

TEST(EolMapping, VertexWorldVelocityIgnoresTheMaterialVelocityOfLagrangianVertices) {
  ClothMesh cloth = make_rectangle_cloth(1.0, 1.0, 1, 1, {0, 0, 0}, {1, 0, 0}, {0, 1, 0});
  cloth.velocities[0] = 1.0;
  cloth.material_velocities[0] = 0.5;  // ignored: vertex 0 is Lagrangian
  const Mat32 f{{2.0, 0.0, 0.0}, {0.0, 1.0, 0.0}};
  EXPECT_DOUBLE_EQ(vertex_world_velocity(cloth, 0, f).x, 1.0);
  cloth.eulerian[0] = 1;
  EXPECT_DOUBLE_EQ(vertex_world_velocity(cloth, 0, f).x, 1.0 - 2.0 * 0.5);
}

}  // namespace
}  // namespace cholsim::fem::cloth
