// fem/cloth/membrane: corotated linear membrane forces (seed 002 §2.4.2) — forces against central
// differences of the energy, the stiffness against central differences of the frozen-rotation
// forces, negative semi-definiteness, rigid motions, and the closed-form energy of a stretch.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

#include "fem/cloth/membrane.hpp"
#include "fem/materials/symmetric_eigensystem.hpp"

namespace cholsim::fem::cloth {
namespace {

const MembraneLame kLame = plane_stress_lame(50.0, 0.3);
const std::array<Vec2, 3> kMaterial{Vec2{0.1, 0.1}, Vec2{0.5, 0.15}, Vec2{0.2, 0.45}};

Mat3 random_rotation(std::mt19937& engine) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const Vec3 axis{unit(engine), unit(engine), unit(engine)};
  return linalg::to_rotation_matrix(linalg::quaternion_from_axis_angle(axis, 3.0 * unit(engine)));
}

// World positions x = Q·(A X, 0) + t: the affine in-plane map A = [[a, b], [c, d]] rotated by Q.
std::array<Vec3, 3> placed(const std::array<double, 4>& a, const Mat3& q, const Vec3& t) {
  std::array<Vec3, 3> x;
  for (std::size_t k = 0; k < 3; ++k) {
    const Vec2& m = kMaterial[k];
    x[k] = q * Vec3{a[0] * m.u + a[1] * m.v, a[2] * m.u + a[3] * m.v, 0.0} + t;
  }
  return x;
}

// Named deformations: a random one, a stretch, a compression, a sheared fold out of plane, a rotation.
std::vector<std::array<Vec3, 3>> deformations() {
  std::mt19937 engine(42);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<std::array<Vec3, 3>> cases;
  std::array<Vec3, 3> random_case;
  for (auto& x : random_case) x = Vec3{unit(engine), unit(engine), unit(engine)};
  cases.push_back(random_case);
  cases.push_back(placed({1.3, 0.0, 0.0, 1.1}, Mat3::identity(), {}));
  cases.push_back(placed({0.7, 0.0, 0.0, 0.8}, random_rotation(engine), {0.1, 0.2, 0.3}));
  cases.push_back(placed({1.1, 0.3, -0.2, 0.9}, random_rotation(engine), {}));
  cases.push_back(placed({1.0, 0.0, 0.0, 1.0}, random_rotation(engine), {1.0, -2.0, 0.5}));
  return cases;
}

std::array<double, 81> dense_stiffness(const MembraneElement& element) {
  std::array<double, 81> k{};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) k[static_cast<std::size_t>(9 * (3 * i + r) + 3 * j + c)] = element.stiffness[static_cast<std::size_t>(3 * i + j)](r, c);
      }
    }
  }
  return k;
}

TEST(Membrane, ForcesAreMinusTheEnergyGradient) {
  for (const auto& x : deformations()) {
    const MembraneElement element = membrane_element(x, kMaterial, kLame);
    const double eps = 1e-6;
    for (std::size_t k = 0; k < 3; ++k) {
      for (int c = 0; c < 3; ++c) {
        auto plus = x, minus = x;
        plus[k][c] += eps;
        minus[k][c] -= eps;
        const double gradient =
            (membrane_element(plus, kMaterial, kLame).energy - membrane_element(minus, kMaterial, kLame).energy) / (2 * eps);
        EXPECT_NEAR(element.forces[k][c], -gradient, 1e-6 * (1.0 + std::abs(gradient))) << "vertex " << k << " comp " << c;
      }
    }
  }
}

TEST(Membrane, StiffnessIsTheDerivativeOfTheFrozenRotationForces) {
  const TriangleShape shape = triangle_shape(kMaterial);
  for (const auto& x : deformations()) {
    const Mat32 rotation = membrane_rotation(triangle_deformation_gradient(shape, x));
    const MembraneElement element = membrane_element(shape, x, kLame, rotation);
    const double eps = 1e-6;
    for (std::size_t j = 0; j < 3; ++j) {
      for (int c = 0; c < 3; ++c) {
        auto plus = x, minus = x;
        plus[j][c] += eps;
        minus[j][c] -= eps;
        const MembraneElement up = membrane_element(shape, plus, kLame, rotation);
        const MembraneElement down = membrane_element(shape, minus, kLame, rotation);
        for (std::size_t i = 0; i < 3; ++i) {
          for (int r = 0; r < 3; ++r) {
            const double derivative = (up.forces[i][r] - down.forces[i][r]) / (2 * eps);
            EXPECT_NEAR(element.stiffness[3 * i + j](r, c), derivative, 1e-6 * (1.0 + std::abs(derivative)));
          }
        }
      }
    }
  }
}

TEST(Membrane, StiffnessIsSymmetricNegativeSemidefinite) {
  for (const auto& x : deformations()) {
    const std::array<double, 81> k = dense_stiffness(membrane_element(x, kMaterial, kLame));
    double scale = 0.0;
    for (int r = 0; r < 9; ++r) {
      for (int c = 0; c < 9; ++c) {
        EXPECT_NEAR(k[static_cast<std::size_t>(9 * r + c)], k[static_cast<std::size_t>(9 * c + r)], 1e-12);
        scale = std::max(scale, std::abs(k[static_cast<std::size_t>(9 * r + c)]));
      }
    }
    for (double eigenvalue : symmetric_eigensystem<9>(k).eigenvalues) EXPECT_LE(eigenvalue, 1e-12 * scale);
  }
}

TEST(Membrane, RigidMotionHasNoEnergyAndNoForce) {
  std::mt19937 engine(9);
  for (int trial = 0; trial < 5; ++trial) {
    const auto x = placed({1.0, 0.0, 0.0, 1.0}, random_rotation(engine), {0.3, -0.7, 1.1});
    const MembraneElement element = membrane_element(x, kMaterial, kLame);
    EXPECT_NEAR(element.energy, 0.0, 1e-13);
    for (const Vec3& f : element.forces) EXPECT_NEAR(norm(f), 0.0, 1e-12);
  }
}

TEST(Membrane, UniformStretchEnergyMatchesTheClosedForm) {
  std::mt19937 engine(13);
  const double area = triangle_shape(kMaterial).area;
  for (const auto& [s1, s2] : {std::pair{1.2, 1.0}, std::pair{0.8, 1.1}, std::pair{1.5, 0.6}}) {
    const auto x = placed({s1, 0.0, 0.0, s2}, random_rotation(engine), {});
    const double expected =
        area * (kLame.mu * ((s1 - 1) * (s1 - 1) + (s2 - 1) * (s2 - 1)) + 0.5 * kLame.lambda * (s1 + s2 - 2) * (s1 + s2 - 2));
    EXPECT_NEAR(membrane_element(x, kMaterial, kLame).energy, expected, 1e-12 * expected);
  }
}

// R has orthonormal columns and RᵀF = S is symmetric positive semi-definite, also for nearly
// and exactly rank-one F (a collapsed triangle).
TEST(Membrane, RotationIsThePolarFactor) {
  std::mt19937 engine(17);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<Mat32> gradients;
  for (int k = 0; k < 10; ++k) gradients.push_back({{unit(engine), unit(engine), unit(engine)}, {unit(engine), unit(engine), unit(engine)}});
  const Vec3 column{0.3, -0.4, 0.5};
  gradients.push_back({column, 2.0 * column});
  gradients.push_back({column, 2.0 * column + Vec3{1e-9, 0.0, 0.0}});
  gradients.push_back({Vec3{}, Vec3{}});
  gradients.push_back({{0.0, 0.0, 1.0}, {0.0, 1.0, 0.0}});  // a reflection-like frame is also orthonormal
  for (const Mat32& f : gradients) {
    const Mat32 r = membrane_rotation(f);
    EXPECT_NEAR(dot(r.col_u, r.col_u), 1.0, 1e-14);
    EXPECT_NEAR(dot(r.col_v, r.col_v), 1.0, 1e-14);
    EXPECT_NEAR(dot(r.col_u, r.col_v), 0.0, 1e-14);
    const double s00 = dot(r.col_u, f.col_u), s01 = dot(r.col_u, f.col_v);
    const double s10 = dot(r.col_v, f.col_u), s11 = dot(r.col_v, f.col_v);
    EXPECT_NEAR(s01, s10, 1e-8);
    EXPECT_GE(s00, -1e-12);
    EXPECT_GE(s11, -1e-12);
    EXPECT_GE(s00 * s11 - s01 * s10, -1e-12);
    // F = R S: the columns of F lie in the span of R.
    const Vec3 residual_u = f.col_u - (s00 * r.col_u + s10 * r.col_v);
    const Vec3 residual_v = f.col_v - (s01 * r.col_u + s11 * r.col_v);
    EXPECT_NEAR(norm(residual_u) + norm(residual_v), 0.0, 1e-8);
  }
}

TEST(Membrane, PlaneStressLameParameters) {
  const MembraneLame lame = plane_stress_lame(50.0, 0.01);
  EXPECT_NEAR(lame.mu, 50.0 / 2.02, 1e-12);
  EXPECT_NEAR(lame.lambda, 50.0 * 0.01 / (1.0 - 1e-4), 1e-12);
  EXPECT_THROW(plane_stress_lame(-1.0, 0.3), std::invalid_argument);
  EXPECT_THROW(plane_stress_lame(50.0, 0.6), std::invalid_argument);
  EXPECT_THROW(plane_stress_lame(50.0, -1.0), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::fem::cloth
