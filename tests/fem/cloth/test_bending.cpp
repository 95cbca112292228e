// fem/cloth/bending: Bergou et al.'s quadratic bending (seed 002 §2.4.2, refs. [31, 34]) — the
// hinge stencil, Q symmetric PSD with the flat (affine) sheets as its null space, invariance to
// rigid motions, the exact energy of an isometric fold, and curvature² scaling on a cylinder.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <random>

#include "fem/cloth/bending.hpp"
#include "fem/materials/symmetric_eigensystem.hpp"

namespace cholsim::fem::cloth {
namespace {

constexpr double kStiffness = 1e-5;

ClothMesh flat_cloth(int cells) {
  return make_rectangle_cloth(1.0, 1.0, cells, cells, {0, 0, 0}, {1, 0, 0}, {0, 1, 0});
}

void set_positions(ClothMesh& cloth, const std::function<Vec3(const Vec2&)>& map) {
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    const Vec3 x = map(material_point(cloth, v));
    for (int c = 0; c < 3; ++c) cloth.positions[3 * static_cast<std::size_t>(v) + static_cast<std::size_t>(c)] = x[c];
  }
}

struct ClothBending {
  double energy = 0.0;
  std::vector<Vec3> forces;
};

ClothBending cloth_bending(const ClothMesh& cloth) {
  ClothBending total;
  total.forces.assign(static_cast<std::size_t>(cloth.vertex_count()), Vec3{});
  for (const BendingHinge& hinge : bending_hinges(cloth)) {
    std::array<Vec2, 4> material;
    std::array<Vec3, 4> x;
    for (std::size_t k = 0; k < 4; ++k) {
      material[k] = material_point(cloth, hinge.vertices[k]);
      x[k] = cloth.position(hinge.vertices[k]);
    }
    const BendingElement element = bending_element(hinge_weights(material), x, kStiffness);
    total.energy += element.energy;
    for (std::size_t k = 0; k < 4; ++k) total.forces[static_cast<std::size_t>(hinge.vertices[k])] += element.forces[k];
  }
  return total;
}

TEST(Bending, HingesAreTheInteriorEdgesWithTheirOppositeVertices) {
  const ClothMesh cloth = flat_cloth(4);
  const std::vector<BendingHinge> hinges = bending_hinges(cloth);
  // 4×4 cells: 20 + 20 grid edges and 16 diagonals, 16 of them on the border.
  EXPECT_EQ(hinges.size(), 40u);
  for (const BendingHinge& hinge : hinges) {
    const auto& v = hinge.vertices;
    // (v0, v1, v2) is a triangle with the edge running v0 → v1; (v1, v0, v3) the other one.
    const auto has_triangle = [&](Index a, Index b, Index c) {
      for (Index t = 0; t < cloth.triangle_count(); ++t) {
        const Index* w = &cloth.triangles[3 * static_cast<std::size_t>(t)];
        for (int k = 0; k < 3; ++k) {
          if (w[k] == a && w[(k + 1) % 3] == b && w[(k + 2) % 3] == c) return true;
        }
      }
      return false;
    };
    EXPECT_TRUE(has_triangle(v[0], v[1], v[2]));
    EXPECT_TRUE(has_triangle(v[1], v[0], v[3]));
  }
}

// Q = Σ (3/A_e) w wᵀ per coordinate: symmetric, PSD, and zero on 1, u and v — so every affine
// (flat, even stretched) image of the material sheet has no bending energy.
TEST(Bending, QIsSymmetricPsdWithAffineNullSpace) {
  const ClothMesh cloth = flat_cloth(4);
  constexpr std::size_t n = 25;
  std::array<double, n * n> q{};
  for (const BendingHinge& hinge : bending_hinges(cloth)) {
    std::array<Vec2, 4> material;
    for (std::size_t k = 0; k < 4; ++k) material[k] = material_point(cloth, hinge.vertices[k]);
    const HingeWeights weights = hinge_weights(material);
    const BendingElement element = bending_element(weights, {}, 1.0);
    for (std::size_t i = 0; i < 4; ++i) {
      for (std::size_t j = 0; j < 4; ++j) {
        q[n * static_cast<std::size_t>(hinge.vertices[i]) + static_cast<std::size_t>(hinge.vertices[j])] -= element.coupling[4 * i + j];
      }
    }
  }
  double scale = 0.0;
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < n; ++c) {
      EXPECT_NEAR(q[n * r + c], q[n * c + r], 1e-12);
      scale = std::max(scale, std::abs(q[n * r + c]));
    }
  }
  const auto eigen = symmetric_eigensystem<n>(q);
  int zero_count = 0;
  for (double eigenvalue : eigen.eigenvalues) {
    EXPECT_GE(eigenvalue, -1e-12 * scale);
    if (std::abs(eigenvalue) < 1e-10 * scale) ++zero_count;
  }
  EXPECT_GE(zero_count, 3);  // 1, u, v
  for (int field = 0; field < 3; ++field) {
    for (std::size_t r = 0; r < n; ++r) {
      double product = 0.0;
      for (std::size_t c = 0; c < n; ++c) {
        const Vec2 m = material_point(cloth, static_cast<Index>(c));
        product += q[n * r + c] * (field == 0 ? 1.0 : (field == 1 ? m.u : m.v));
      }
      EXPECT_NEAR(product, 0.0, 1e-12 * scale);
    }
  }
}

TEST(Bending, FlatStretchedSheetHasNoEnergyAndNoForce) {
  ClothMesh cloth = flat_cloth(5);
  const Mat32 affine{{1.3, 0.2, -0.4}, {0.1, 0.8, 0.6}};
  set_positions(cloth, [&](const Vec2& m) { return affine * m + Vec3{0.2, 0.3, -0.1}; });
  const ClothBending bending = cloth_bending(cloth);
  EXPECT_NEAR(bending.energy, 0.0, 1e-18);
  for (const Vec3& f : bending.forces) EXPECT_NEAR(norm(f), 0.0, 1e-15);
}

// The energy is ½ k_b xᵀQx with Σ w = 0: a rigid motion x → Rx + t keeps it, and rotates the
// forces with R.
TEST(Bending, RigidMotionKeepsTheEnergyAndRotatesTheForces) {
  ClothMesh cloth = flat_cloth(4);
  std::mt19937 engine(3);
  std::uniform_real_distribution<double> unit(-0.05, 0.05);
  set_positions(cloth, [&](const Vec2& m) { return Vec3{m.u, m.v, 0.3 * m.u * m.u + unit(engine)}; });
  const ClothBending before = cloth_bending(cloth);
  ASSERT_GT(before.energy, 0.0);
  const Mat3 rotation = linalg::to_rotation_matrix(linalg::quaternion_from_axis_angle({0.3, -1.0, 0.5}, 1.2));
  const Vec3 shift{0.4, -1.5, 2.0};
  ClothMesh moved = cloth;
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    const Vec3 x = rotation * cloth.position(v) + shift;
    for (int c = 0; c < 3; ++c) moved.positions[3 * static_cast<std::size_t>(v) + static_cast<std::size_t>(c)] = x[c];
  }
  const ClothBending after = cloth_bending(moved);
  EXPECT_NEAR(after.energy, before.energy, 1e-12 * before.energy);
  for (std::size_t v = 0; v < before.forces.size(); ++v) {
    const Vec3 expected = rotation * before.forces[v];
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(after.forces[v][c], expected[c], 1e-12 * norm(before.forces[0]) + 1e-15);
  }
}

TEST(Bending, ForcesAreMinusTheEnergyGradientAndLinearThroughTheCoupling) {
  std::mt19937 engine(5);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const std::array<Vec2, 4> material{Vec2{0.0, 0.0}, Vec2{1.0, 0.1}, Vec2{0.4, 0.8}, Vec2{0.6, -0.7}};
  const HingeWeights weights = hinge_weights(material);
  std::array<Vec3, 4> x;
  for (auto& p : x) p = Vec3{unit(engine), unit(engine), unit(engine)};
  const BendingElement element = bending_element(weights, x, kStiffness);
  const double eps = 1e-6;
  for (std::size_t k = 0; k < 4; ++k) {
    Vec3 coupled;
    for (std::size_t j = 0; j < 4; ++j) coupled += element.coupling[4 * k + j] * x[j];
    for (int c = 0; c < 3; ++c) {
      auto plus = x, minus = x;
      plus[k][c] += eps;
      minus[k][c] -= eps;
      const double gradient =
          (bending_element(weights, plus, kStiffness).energy - bending_element(weights, minus, kStiffness).energy) / (2 * eps);
      EXPECT_NEAR(element.forces[k][c], -gradient, 1e-6 * std::abs(gradient) + 1e-14);
      EXPECT_NEAR(element.forces[k][c], coupled[c], 1e-15);
    }
  }
}

// Folding the sheet along the grid line u = ½ by θ is an isometry, so each hinge on the fold has
// |Σ w x| = 2‖e‖ sin(θ/2) exactly: E = ½ k_b Σ 3‖e‖²/A_e · 4 sin²(θ/2), the other hinges stay flat.
TEST(Bending, IsometricFoldEnergyIsTheHingeFormula) {
  const int cells = 6;
  ClothMesh cloth = flat_cloth(cells);
  for (double theta : {0.1, 0.8, 2.0}) {
    set_positions(cloth, [&](const Vec2& m) {
      if (m.u <= 0.5) return Vec3{m.u, m.v, 0.0};
      const double d = m.u - 0.5;
      return Vec3{0.5 + d * std::cos(theta), m.v, d * std::sin(theta)};
    });
    const double edge = 1.0 / cells;
    const double hinge_area = edge * edge;  // two right triangles of legs `edge`
    const double expected = 0.5 * kStiffness * cells * 3.0 * edge * edge / hinge_area * 4.0 * std::pow(std::sin(theta / 2), 2);
    EXPECT_NEAR(cloth_bending(cloth).energy, expected, 1e-12 * expected) << "theta " << theta;
  }
}

// Wrapping the sheet around a cylinder of curvature κ: the energy grows as κ². On this grid, bent
// about a grid axis, only the hinges along the axis bend (by ℓκ), so E ≈ ½ k_b · 3ℓ²κ² per hinge:
// 3× the continuum ½ k_b κ² per unit area (the mesh-dependent constant documented in bending.hpp).
TEST(Bending, CylinderEnergyScalesWithCurvatureSquared) {
  const int cells = 10;
  ClothMesh cloth = flat_cloth(cells);
  const auto energy_at = [&](double curvature) {
    set_positions(cloth, [&](const Vec2& m) {
      return Vec3{std::sin(curvature * m.u) / curvature, m.v, (1.0 - std::cos(curvature * m.u)) / curvature};
    });
    return cloth_bending(cloth).energy;
  };
  const double low = energy_at(0.25), high = energy_at(0.5);
  EXPECT_NEAR(high / low, 4.0, 4e-3);
  const double edge = 1.0 / cells;
  const double axis_hinges = (cells - 1) * cells;
  const double predicted = 0.5 * kStiffness * 3.0 * edge * edge * 0.5 * 0.5 * axis_hinges;
  EXPECT_NEAR(high, predicted, 1e-2 * predicted);
}

TEST(Bending, DegenerateHingeThrows) {
  EXPECT_THROW(hinge_weights({Vec2{0, 0}, Vec2{1, 0}, Vec2{2, 0}, Vec2{0.5, -1}}), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::fem::cloth
