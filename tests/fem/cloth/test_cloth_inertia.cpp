// fem/cloth/cloth_inertia: the generalized inertia of eq. 2.8 against quadrature of ∫ρ JᵀJ dA
// (J of eq. 2.4), the consistent and lumped mass, and the §2.5.2 null space ẋ = F Ẋ.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

#include "fem/cloth/cloth_inertia.hpp"
#include "fem/materials/symmetric_eigensystem.hpp"

namespace cholsim::fem::cloth {
namespace {

constexpr double kDensity = 0.05;

struct Case {
  std::array<Vec2, 3> material{Vec2{0.1, 0.1}, Vec2{0.6, 0.2}, Vec2{0.25, 0.55}};
  Mat32 f;
  double area = 0.0;
};

Case random_case(unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  Case c;
  std::array<Vec3, 3> x;
  for (auto& p : x) p = Vec3{unit(engine), unit(engine), unit(engine)};
  const TriangleShape shape = triangle_shape(c.material);
  c.f = triangle_deformation_gradient(shape, x);
  c.area = shape.area;
  return c;
}

// Σ_q w_q ρ J(q)ᵀJ(q) for quadrature points given by barycentric coordinates.
TriangleInertia quadrature(const Case& c, const std::vector<std::array<double, 3>>& points, double weight) {
  TriangleInertia m{};
  for (const auto& point : points) {
    const PointJacobian j = point_jacobian(point, c.f);
    for (std::size_t a = 0; a < 15; ++a) {
      for (std::size_t b = 0; b < 15; ++b) {
        double product = 0.0;
        for (std::size_t r = 0; r < 3; ++r) product += j[3 * a + r] * j[3 * b + r];
        m[15 * b + a] += weight * kDensity * product;
      }
    }
  }
  return m;
}

// The edge-midpoint rule integrates quadratics exactly; JᵀJ is quadratic in (α, β, γ).
TEST(ClothInertia, Eq28IsTheExactIntegralOfJTransposeJ) {
  for (unsigned seed : {1u, 2u, 3u}) {
    const Case c = random_case(seed);
    const TriangleInertia expected = quadrature(c, {{0.5, 0.5, 0.0}, {0.0, 0.5, 0.5}, {0.5, 0.0, 0.5}}, c.area / 3.0);
    const TriangleInertia inertia = triangle_generalized_inertia(kDensity, c.area, c.f);
    for (std::size_t k = 0; k < 225; ++k) EXPECT_NEAR(inertia[k], expected[k], 1e-15) << "entry " << k;
  }
}

TEST(ClothInertia, LumpedInertiaIsTheVertexRule) {
  const Case c = random_case(4);
  const TriangleInertia expected = quadrature(c, {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, c.area / 3.0);
  const TriangleInertia inertia = triangle_generalized_inertia(kDensity, c.area, c.f, MassModel::lumped);
  for (std::size_t k = 0; k < 225; ++k) EXPECT_NEAR(inertia[k], expected[k], 1e-15);
}

TEST(ClothInertia, LagrangianBlockIsTheMassMatrixOfTotalMassRhoA) {
  const Case c = random_case(5);
  for (MassModel model : {MassModel::consistent, MassModel::lumped}) {
    const TriangleInertia inertia = triangle_generalized_inertia(kDensity, c.area, c.f, model);
    const TriangleMass mass = triangle_mass(kDensity, c.area, model);
    for (std::size_t a = 0; a < 9; ++a) {
      for (std::size_t b = 0; b < 9; ++b) EXPECT_DOUBLE_EQ(mass[9 * b + a], inertia[15 * b + a]);
    }
    for (std::size_t component = 0; component < 3; ++component) {
      double total = 0.0;
      for (std::size_t i = 0; i < 3; ++i) {
        for (std::size_t j = 0; j < 3; ++j) total += mass[9 * (3 * j + component) + 3 * i + component];
      }
      EXPECT_NEAR(total, kDensity * c.area, 1e-15);
    }
  }
}

// M is PSD of rank 9: ẋ_i = F w_i, Ẋ_i = w_i moves no material (seed 002 §2.5.2).
TEST(ClothInertia, InertiaIsPsdWithTheNoMotionNullSpace) {
  const Case c = random_case(6);
  const TriangleInertia inertia = triangle_generalized_inertia(kDensity, c.area, c.f);
  const auto eigen = symmetric_eigensystem<15>(inertia);
  double largest = 0.0;
  for (double e : eigen.eigenvalues) largest = std::max(largest, e);
  int zeros = 0;
  for (double e : eigen.eigenvalues) {
    EXPECT_GE(e, -1e-13 * largest);
    if (e < 1e-12 * largest) ++zeros;
  }
  EXPECT_EQ(zeros, 6);
  std::array<double, 15> qdot{};
  const std::array<Vec2, 3> w{Vec2{0.3, -0.2}, Vec2{1.0, 0.5}, Vec2{-0.4, 0.7}};
  for (std::size_t i = 0; i < 3; ++i) {
    const Vec3 x = c.f * w[i];
    for (std::size_t r = 0; r < 3; ++r) qdot[3 * i + r] = x[static_cast<int>(r)];
    qdot[9 + 2 * i] = w[i].u;
    qdot[9 + 2 * i + 1] = w[i].v;
  }
  for (std::size_t r = 0; r < 15; ++r) {
    double product = 0.0;
    for (std::size_t k = 0; k < 15; ++k) product += inertia[15 * k + r] * qdot[k];
    EXPECT_NEAR(product, 0.0, 1e-15);
  }
}

TEST(ClothInertia, VertexMassesSumToTheClothMass) {
  const ClothMesh cloth = make_rectangle_cloth(2.0, 1.0, 4, 3, {0, 0, 0}, {1, 0, 0}, {0, 0, 1});
  double total = 0.0;
  for (double m : vertex_masses(cloth, kDensity)) total += m;
  EXPECT_NEAR(total, kDensity * 2.0, 1e-14);
  EXPECT_THROW(triangle_mass(-1.0, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::fem::cloth
