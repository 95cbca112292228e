// fem/cloth/cloth_step_system: the linearly implicit EOL step (seed 002 eq. 2.11–2.12) — M̃ and f
// against a dense reference built from J (eq. 2.4), quadrature of the inertia and the element
// kernels; M̃ PSD (PD when Lagrangian); the kinetic energy against quadrature of ½∫ρ|ẋʷ|²; free
// fall; forces as −∂V/∂x; pattern reuse; and the generalized DOF numbering.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <iostream>
#include <random>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "fem/cloth/bending.hpp"
#include "fem/cloth/cloth_step_system.hpp"
#include "fem/cloth/membrane.hpp"
#include "fem/materials/symmetric_eigensystem.hpp"
#include "linalg/blas.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::fem::cloth {
namespace {

constexpr std::array<Index, 2> kEolVertices{5, 10};  // interior vertices of the 3×3-cell sheet
constexpr std::size_t kLagrangianSize = 48;          // 16 vertices × 3
constexpr std::size_t kEolSize = kLagrangianSize + 4;

// A 3×3-cell sheet, stretched and curved, with random velocities; with `eol`, two interior
// vertices carry Eulerian DOFs, have slid in material space and move there.
ClothMesh test_cloth(bool eol, unsigned seed = 1) {
  ClothMesh cloth = make_rectangle_cloth(1.0, 1.0, 3, 3, {0, 0, 0}, {1, 0, 0}, {0, 1, 0});
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    const Vec2 m = material_point(cloth, v);
    const Vec3 x{1.05 * m.u + 0.02 * unit(engine), 0.97 * m.v + 0.02 * unit(engine),
                 0.1 * std::sin(3 * m.u) * std::cos(2 * m.v) + 0.02 * unit(engine)};
    for (std::size_t c = 0; c < 3; ++c) {
      cloth.positions[3 * static_cast<std::size_t>(v) + c] = x[static_cast<int>(c)];
      cloth.velocities[3 * static_cast<std::size_t>(v) + c] = unit(engine);
    }
  }
  if (eol) {
    for (Index v : kEolVertices) {
      cloth.eulerian[static_cast<std::size_t>(v)] = 1;
      for (std::size_t c = 0; c < 2; ++c) {
        cloth.material[2 * static_cast<std::size_t>(v) + c] += 0.03 * unit(engine);
        cloth.material_velocities[2 * static_cast<std::size_t>(v) + c] = unit(engine);
      }
    }
  }
  return cloth;
}

using Dense = std::vector<double>;  // column-major square

template <std::size_t n>
std::array<double, n> eigenvalues(const Dense& a) {
  std::array<double, n * n> copy{};
  std::copy(a.begin(), a.end(), copy.begin());
  return symmetric_eigensystem<n>(copy).eigenvalues;
}

double max_abs(const Dense& a) {
  double m = 0.0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}

// M, f and M̃ built directly from the definitions: world K and world forces from the element
// kernels, J = diag(I, (I −F_v)) (eq. 2.4 at the vertices, eq. 2.9–2.10), and M = Σ_t ∫ρ J_tᵀJ_t dA
// by the edge-midpoint rule (exact for eq. 2.5's quadratic integrand).
struct DenseReference {
  Dense mass, matrix;
  std::vector<double> forces;
};

DenseReference dense_reference(const ClothMesh& cloth, const ClothMaterial& material, const ClothStepOptions& options) {
  const ClothDofs dofs = ClothDofs::of(cloth);
  const auto size = static_cast<std::size_t>(dofs.size);
  const std::size_t world = 3 * static_cast<std::size_t>(cloth.vertex_count());
  Dense stiffness(world * world, 0.0);
  std::vector<double> world_forces(world, 0.0);
  const auto add_element = [&](std::span<const Index> vertices, const auto& forces, const auto& block) {
    for (std::size_t i = 0; i < vertices.size(); ++i) {
      const auto vi = static_cast<std::size_t>(vertices[i]);
      for (std::size_t r = 0; r < 3; ++r) world_forces[3 * vi + r] += forces[i][static_cast<int>(r)];
      for (std::size_t j = 0; j < vertices.size(); ++j) {
        const auto vj = static_cast<std::size_t>(vertices[j]);
        for (std::size_t r = 0; r < 3; ++r) {
          for (std::size_t c = 0; c < 3; ++c) stiffness[3 * vi + r + (3 * vj + c) * world] += block(i, j, r, c);
        }
      }
    }
  };
  const MembraneLame lame = plane_stress_lame(material.youngs, material.poisson);
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    const MembraneElement e = membrane_element(triangle_positions(cloth, t), triangle_material(cloth, t), lame);
    add_element(std::span(&cloth.triangles[3 * static_cast<std::size_t>(t)], 3), e.forces,
                [&](std::size_t i, std::size_t j, std::size_t r, std::size_t c) {
                  return e.stiffness[3 * i + j](static_cast<int>(r), static_cast<int>(c));
                });
  }
  for (const BendingHinge& hinge : bending_hinges(cloth)) {
    std::array<Vec2, 4> m;
    std::array<Vec3, 4> x;
    for (std::size_t k = 0; k < 4; ++k) {
      m[k] = material_point(cloth, hinge.vertices[k]);
      x[k] = cloth.position(hinge.vertices[k]);
    }
    const BendingElement e = bending_element(hinge_weights(m), x, material.bending);
    add_element(hinge.vertices, e.forces, [&](std::size_t i, std::size_t j, std::size_t r, std::size_t c) {
      return r == c ? e.coupling[4 * i + j] : 0.0;
    });
  }
  const std::vector<double> masses = vertex_masses(cloth, material.density);
  for (std::size_t v = 0; v < masses.size(); ++v) {
    for (std::size_t r = 0; r < 3; ++r) world_forces[3 * v + r] += masses[v] * options.gravity[static_cast<int>(r)];
  }

  // J: world (3n) × generalized (size).
  const std::vector<Mat32> gradients = vertex_deformation_gradients(cloth);
  Dense jacobian(world * size, 0.0);
  for (std::size_t v = 0; v < masses.size(); ++v) {
    const Index e = dofs.eulerian_offset[v];
    for (std::size_t r = 0; r < 3; ++r) {
      jacobian[3 * v + r + 3 * v * world + r * world] = 1.0;
      for (std::size_t k = 0; e >= 0 && k < 2; ++k) {
        jacobian[3 * v + r + (static_cast<std::size_t>(e) + k) * world] = -gradients[v](static_cast<int>(r), static_cast<int>(k));
      }
    }
  }
  DenseReference ref;
  ref.forces.assign(size, 0.0);
  ref.matrix.assign(size * size, 0.0);
  ref.mass.assign(size * size, 0.0);
  for (std::size_t a = 0; a < size; ++a) {
    for (std::size_t w = 0; w < world; ++w) ref.forces[a] += jacobian[w + a * world] * world_forces[w];
    for (std::size_t b = 0; b < size; ++b) {
      double product = 0.0;  // (Jᵀ K J)(a, b)
      for (std::size_t w1 = 0; w1 < world; ++w1) {
        const double ja = jacobian[w1 + a * world];
        if (ja == 0.0) continue;
        for (std::size_t w2 = 0; w2 < world; ++w2) product += ja * stiffness[w1 + w2 * world] * jacobian[w2 + b * world];
      }
      ref.matrix[a + b * size] = -options.time_step * options.time_step * product;
    }
  }
  // Mass: J_t at the edge midpoints of each triangle, with the triangle's F.
  const std::array<std::array<double, 3>, 3> midpoints{{{0.5, 0.5, 0.0}, {0.0, 0.5, 0.5}, {0.5, 0.0, 0.5}}};
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    const Mat32 f = triangle_deformation_gradient(cloth, t);
    const double weight = material.density * std::abs(material_area(cloth, t)) / 3.0;
    for (const auto& alpha : midpoints) {
      Dense point(3 * size, 0.0);  // 3 × size
      for (std::size_t k = 0; k < 3; ++k) {
        const auto v = static_cast<std::size_t>(cloth.triangles[3 * static_cast<std::size_t>(t) + k]);
        const Index e = dofs.eulerian_offset[v];
        for (std::size_t r = 0; r < 3; ++r) {
          point[r + (3 * v + r) * 3] += alpha[k];
          for (std::size_t c = 0; e >= 0 && c < 2; ++c) {
            point[r + (static_cast<std::size_t>(e) + c) * 3] -= alpha[k] * f(static_cast<int>(r), static_cast<int>(c));
          }
        }
      }
      for (std::size_t a = 0; a < size; ++a) {
        for (std::size_t b = 0; b < size; ++b) {
          double product = 0.0;
          for (std::size_t r = 0; r < 3; ++r) product += point[r + a * 3] * point[r + b * 3];
          ref.mass[a + b * size] += weight * product;
        }
      }
    }
  }
  for (std::size_t k = 0; k < size * size; ++k) ref.matrix[k] += ref.mass[k];
  return ref;
}

std::vector<double> times(const Dense& a, const std::vector<double>& x) {
  std::vector<double> y(x.size(), 0.0);
  for (std::size_t c = 0; c < x.size(); ++c) {
    for (std::size_t r = 0; r < x.size(); ++r) y[r] += a[r + c * x.size()] * x[c];
  }
  return y;
}

TEST(ClothStepSystem, MatrixAndForcesMatchTheDenseReference) {
  for (bool eol : {false, true}) {
    const ClothMesh cloth = test_cloth(eol);
    const ClothMaterial material;
    const ClothStepOptions options;
    const ClothStepSystem system = assemble_cloth_step(cloth, material, options);
    const DenseReference ref = dense_reference(cloth, material, options);
    const Dense matrix = linalg::to_dense(system.matrix).storage();
    ASSERT_EQ(matrix.size(), ref.matrix.size());
    const double scale = max_abs(ref.matrix);
    for (std::size_t k = 0; k < matrix.size(); ++k) EXPECT_NEAR(matrix[k], ref.matrix[k], 1e-13 * scale) << "entry " << k;
    double force_scale = 0.0;
    for (double f : ref.forces) force_scale = std::max(force_scale, std::abs(f));
    for (std::size_t k = 0; k < ref.forces.size(); ++k) EXPECT_NEAR(system.forces[k], ref.forces[k], 1e-13 * force_scale);
    // f̃ = M q̇ + h f.
    const std::vector<double> momentum = times(ref.mass, gather_velocities(cloth, system.dofs));
    for (std::size_t k = 0; k < momentum.size(); ++k) {
      EXPECT_NEAR(system.rhs[k], momentum[k] + options.time_step * ref.forces[k], 1e-13 * (1.0 + std::abs(momentum[k])));
    }
  }
}

// The pattern holds exactly the DOF pairs of vertices that share a triangle or a hinge (the
// elements' dense blocks): counted here from the vertex pairs, against the assembler's pattern
// written from its own vertex graph.
TEST(ClothStepSystem, ThePatternIsTheElementBlocks) {
  const ClothMesh cloth = test_cloth(true);
  const ClothStepSystem system = assemble_cloth_step(cloth, {}, {});
  std::set<std::pair<Index, Index>> pairs;
  const auto add_element = [&](std::span<const Index> vertices) {
    for (const Index v : vertices) {
      for (const Index w : vertices) pairs.insert({v, w});
    }
  };
  for (std::size_t t = 0; t < cloth.triangles.size(); t += 3) add_element({&cloth.triangles[t], 3});
  for (const BendingHinge& hinge : bending_hinges(cloth)) add_element(hinge.vertices);
  std::set<std::pair<Index, Index>> expected;  // (row, col), row ≥ col
  for (const auto& [v, w] : pairs) {
    std::vector<Index> dofs_v{3 * v, 3 * v + 1, 3 * v + 2}, dofs_w{3 * w, 3 * w + 1, 3 * w + 2};
    for (Index c = 0; system.dofs.is_eulerian(v) && c < 2; ++c) dofs_v.push_back(system.dofs.eulerian_offset[static_cast<std::size_t>(v)] + c);
    for (Index c = 0; system.dofs.is_eulerian(w) && c < 2; ++c) dofs_w.push_back(system.dofs.eulerian_offset[static_cast<std::size_t>(w)] + c);
    for (const Index r : dofs_v) {
      for (const Index c : dofs_w) {
        if (r >= c) expected.insert({r, c});
      }
    }
  }
  std::set<std::pair<Index, Index>> stored;
  const linalg::CscMatrix& lower = system.matrix.lower;
  for (Index c = 0; c < lower.cols; ++c) {
    for (auto k = lower.col_ptr[static_cast<std::size_t>(c)]; k < lower.col_ptr[static_cast<std::size_t>(c) + 1]; ++k) {
      if (k > lower.col_ptr[static_cast<std::size_t>(c)]) {
        EXPECT_LT(lower.row_idx[static_cast<std::size_t>(k) - 1], lower.row_idx[static_cast<std::size_t>(k)]) << "column " << c;
      }
      stored.insert({lower.row_idx[static_cast<std::size_t>(k)], c});
    }
  }
  EXPECT_EQ(static_cast<std::size_t>(lower.nnz()), stored.size());
  EXPECT_EQ(stored, expected);
}

TEST(ClothStepSystem, MatrixIsPsdWithEolVerticesAndPdWithout) {
  const ClothMaterial material;
  const ClothStepOptions options;
  {
    const ClothStepSystem system = assemble_cloth_step(test_cloth(true), material, options);
    const Dense matrix = linalg::to_dense(system.matrix).storage();
    ASSERT_EQ(matrix.size(), kEolSize * kEolSize);
    const auto values = eigenvalues<kEolSize>(matrix);
    const double largest = *std::max_element(values.begin(), values.end());
    for (double e : values) EXPECT_GE(e, -1e-12 * largest);
  }
  {
    const ClothStepSystem system = assemble_cloth_step(test_cloth(false), material, options);
    const auto values = eigenvalues<kLagrangianSize>(linalg::to_dense(system.matrix).storage());
    const double largest = *std::max_element(values.begin(), values.end());
    for (double e : values) EXPECT_GT(e, 1e-6 * largest);
  }
}

// ½ q̇ᵀ M q̇ = ½∫ρ|ẋʷ|² dA with ẋʷ = Σ α_i (ẋ_i − F Ẋ_i) (eq. 2.2), integrated exactly by the
// edge-midpoint rule.
TEST(ClothStepSystem, KineticEnergyIsTheIntegralOfTheWorldVelocity) {
  for (bool lumped : {false, true}) {
    const ClothMesh cloth = test_cloth(true, 4);
    double expected = 0.0;
    for (Index t = 0; t < cloth.triangle_count(); ++t) {
      const Mat32 f = triangle_deformation_gradient(cloth, t);
      std::array<Vec3, 3> corner_velocity;
      for (std::size_t k = 0; k < 3; ++k) {
        const Index v = cloth.triangles[3 * static_cast<std::size_t>(t) + k];
        const Vec2 material_dot = cloth.is_eulerian(v) ? material_velocity(cloth, v) : Vec2{};
        corner_velocity[k] = world_velocity(cloth.velocity(v), material_dot, f);
      }
      // Midpoints (consistent, exact) or corners (lumped: the vertex rule).
      const double weight = 0.05 * std::abs(material_area(cloth, t)) / 3.0;
      for (std::size_t k = 0; k < 3; ++k) {
        const Vec3 velocity = lumped ? corner_velocity[k] : 0.5 * (corner_velocity[k] + corner_velocity[(k + 1) % 3]);
        expected += 0.5 * weight * squared_norm(velocity);
      }
    }
    ClothMaterial material;
    material.lumped_mass = lumped;
    ClothStepOptions options;
    options.time_step = 1e-9;  // M̃ = M − h²K ≈ M to 1e-17
    const ClothStepSystem system = assemble_cloth_step(cloth, material, options);
    EXPECT_NEAR(system.kinetic_energy, expected, 1e-13 * expected);
    const std::vector<double> qdot = gather_velocities(cloth, system.dofs);
    std::vector<double> mq(qdot.size(), 0.0);
    linalg::symmetric_multiply(system.matrix, qdot, mq);
    double quadratic = 0.0;
    for (std::size_t k = 0; k < qdot.size(); ++k) quadratic += 0.5 * qdot[k] * mq[k];
    EXPECT_NEAR(quadratic, expected, 1e-10 * expected);
  }
}

// A flat, undeformed Lagrangian sheet at rest falls: every vertex's new velocity is h·g, for both
// mass models (K annihilates translations; M·1 is the vertex masses).
TEST(ClothStepSystem, RestingLagrangianSheetFallsFreely) {
  for (bool lumped : {false, true}) {
    ClothMesh cloth = make_rectangle_cloth(1.0, 0.8, 5, 4, {0.1, 0.2, 1.0}, {1, 0, 0}, {0, 1, 0.2});
    ClothMaterial material;
    material.lumped_mass = lumped;
    ClothStepOptions options;
    options.time_step = 0.01;
    const ClothStepSystem system = assemble_cloth_step(cloth, material, options);
    EXPECT_NEAR(system.membrane_energy + system.bending_energy, 0.0, 1e-20);
    const auto n = static_cast<Index>(system.dofs.size);
    linalg::DenseMatrix h = linalg::to_dense(system.matrix);
    ASSERT_EQ(linalg::blas::potrf(h.view()), 0);
    linalg::DenseMatrix velocity(n, 1);
    velocity.storage() = system.rhs;
    linalg::blas::potrs(h.view(), velocity.view());
    for (Index v = 0; v < cloth.vertex_count(); ++v) {
      for (int c = 0; c < 3; ++c) EXPECT_NEAR(velocity(3 * v + c, 0), options.time_step * options.gravity[c], 1e-12);
    }
  }
}

// The Lagrangian generalized forces are −∂V/∂x for V = membrane + bending + gravity potential.
TEST(ClothStepSystem, LagrangianForcesAreMinusThePotentialGradient) {
  ClothMesh cloth = test_cloth(true, 6);
  const ClothMaterial material;
  const ClothStepOptions options;
  ClothStepAssembler assembler;
  const std::vector<double> forces = assembler.assemble(cloth, material, options).forces;
  const double eps = 1e-7;
  for (std::size_t dof : {0u, 7u, 15u, 17u, 31u, 47u}) {
    const double x = cloth.positions[dof];
    cloth.positions[dof] = x + eps;
    const double up = assembler.assemble(cloth, material, options).potential_energy();
    cloth.positions[dof] = x - eps;
    const double down = assembler.assemble(cloth, material, options).potential_energy();
    cloth.positions[dof] = x;
    const double gradient = (up - down) / (2 * eps);
    EXPECT_NEAR(forces[dof], -gradient, 1e-6 * (1.0 + std::abs(gradient))) << "dof " << dof;
  }
}

TEST(ClothStepSystem, ExternalForcesAreMappedByEq29) {
  const ClothMesh cloth = test_cloth(true);
  const ClothMaterial material;
  ClothStepOptions options;
  const ClothStepSystem without = assemble_cloth_step(cloth, material, options);
  std::vector<double> pull(3 * static_cast<std::size_t>(cloth.vertex_count()), 0.0);
  const Index pulled = kEolVertices[0];
  const Vec3 force{0.3, -0.2, 0.5};
  for (int c = 0; c < 3; ++c) pull[3 * static_cast<std::size_t>(pulled) + static_cast<std::size_t>(c)] = force[c];
  options.external_forces = pull;
  const ClothStepSystem with = assemble_cloth_step(cloth, material, options);
  const GeneralizedForce expected = map_force(force, vertex_deformation_gradients(cloth)[static_cast<std::size_t>(pulled)]);
  for (std::size_t k = 0; k < with.forces.size(); ++k) {
    double delta = 0.0;
    if (k / 3 == static_cast<std::size_t>(pulled) && k < kLagrangianSize) delta = expected.lagrangian[static_cast<int>(k % 3)];
    const auto e = static_cast<std::size_t>(with.dofs.eulerian_offset[static_cast<std::size_t>(pulled)]);
    if (k == e) delta = expected.eulerian.u;
    if (k == e + 1) delta = expected.eulerian.v;
    EXPECT_NEAR(with.forces[k] - without.forces[k], delta, 1e-14) << "dof " << k;
  }
}

TEST(ClothStepSystem, AssemblerRefillsThePatternUntilTheMeshChanges) {
  ClothMesh cloth = test_cloth(true, 2);
  const ClothMaterial material;
  const ClothStepOptions options;
  ClothStepAssembler assembler;
  EXPECT_TRUE(assembler.assemble(cloth, material, options).pattern_rebuilt);
  cloth = test_cloth(true, 3);  // new positions and velocities, same triangles and EOL flags
  const ClothStepSystem& refilled = assembler.assemble(cloth, material, options);
  EXPECT_FALSE(refilled.pattern_rebuilt);
  const ClothStepSystem fresh = assemble_cloth_step(cloth, material, options);
  EXPECT_EQ(refilled.matrix.lower.row_idx, fresh.matrix.lower.row_idx);
  const double scale = max_abs(fresh.matrix.lower.values);
  for (std::size_t k = 0; k < fresh.matrix.lower.values.size(); ++k) {
    EXPECT_NEAR(refilled.matrix.lower.values[k], fresh.matrix.lower.values[k], 1e-15 * scale);
  }
  EXPECT_EQ(refilled.rhs, fresh.rhs);
  cloth.eulerian[1] = 1;  // a new EOL vertex (on the border): a new numbering and pattern
  const ClothStepSystem& rebuilt = assembler.assemble(cloth, material, options);
  EXPECT_TRUE(rebuilt.pattern_rebuilt);
  EXPECT_EQ(rebuilt.dofs.size, static_cast<Index>(kEolSize + 2));
}

TEST(ClothStepSystem, RejectsBadInput) {
  const ClothMesh cloth = test_cloth(false);
  ClothStepOptions options;
  options.time_step = 0.0;
  EXPECT_THROW(assemble_cloth_step(cloth, {}, options), std::invalid_argument);
  options.time_step = 0.01;
  const std::vector<double> short_forces(5, 0.0);
  options.external_forces = short_forces;
  EXPECT_THROW(assemble_cloth_step(cloth, {}, options), std::invalid_argument);
  ClothMesh degenerate = cloth;
  for (std::size_t k = 0; k < degenerate.material.size(); ++k) degenerate.material[k] = 0.5;
  EXPECT_THROW(assemble_cloth_step(degenerate, {}, ClothStepOptions{}), std::invalid_argument);
  ClothMaterial soft;
  soft.density = 0.0;
  EXPECT_THROW(assemble_cloth_step(cloth, soft, ClothStepOptions{}), std::invalid_argument);
}

TEST(ClothDofs, NumbersEulerianDofsAfterAllLagrangianOnesAndRoundTripsVelocities) {
  ClothMesh cloth = test_cloth(true);
  const ClothDofs dofs = ClothDofs::of(cloth);
  EXPECT_EQ(dofs.size, static_cast<Index>(kEolSize));
  EXPECT_EQ(dofs.eulerian_vertex_count(), 2);
  EXPECT_EQ(dofs.eulerian_offset[static_cast<std::size_t>(kEolVertices[0])], 48);
  EXPECT_EQ(dofs.eulerian_offset[static_cast<std::size_t>(kEolVertices[1])], 50);
  EXPECT_EQ(dofs.eulerian_offset[0], -1);
  const std::vector<double> qdot = gather_velocities(cloth, dofs);
  EXPECT_EQ(qdot[49], cloth.material_velocities[2 * static_cast<std::size_t>(kEolVertices[0]) + 1]);
  ClothMesh copy = cloth;
  std::fill(copy.velocities.begin(), copy.velocities.end(), 0.0);
  std::fill(copy.material_velocities.begin(), copy.material_velocities.end(), 7.0);
  scatter_velocities(qdot, dofs, copy);
  EXPECT_EQ(copy.velocities, cloth.velocities);
  EXPECT_EQ(copy.material_velocities, cloth.material_velocities);  // zero on Lagrangian vertices
  EXPECT_THROW(scatter_velocities(std::vector<double>(3, 0.0), dofs, copy), std::invalid_argument);
}

// The public-scene size: 39×39 cells, 3,042 faces. Prints the fill time of the first assembly
// (pattern built) and of a refill.
TEST(ClothStepSystem, FillTimeOfA3042FaceCloth) {
  ClothMesh cloth = make_rectangle_cloth(1.0, 1.0, 39, 39, {0, 0, 1}, {1, 0, 0}, {0, 1, 0});
  ASSERT_EQ(cloth.triangle_count(), 3042);
  for (Index v : {500, 800}) cloth.eulerian[static_cast<std::size_t>(v)] = 1;
  ClothStepAssembler assembler;
  const double build = assembler.assemble(cloth, {}, {}).fill_seconds;
  double refill = 1e30;
  for (int step = 0; step < 3; ++step) {
    cloth.positions[2] += 1e-3;
    const ClothStepSystem& system = assembler.assemble(cloth, {}, {});
    EXPECT_FALSE(system.pattern_rebuilt);
    refill = std::min(refill, system.fill_seconds);
  }
  std::cout << "[ cloth fill ] 3042 faces, " << assembler.system().dofs.size << " dofs, "
            << assembler.system().matrix.nnz_lower() << " lower nonzeros: build " << 1e3 * build << " ms, refill "
            << 1e3 * refill << " ms\n";
}

}  // namespace
}  // namespace cholsim::fem::cloth
