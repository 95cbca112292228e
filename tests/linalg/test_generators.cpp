#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "linalg/blas.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/dense_matrix.hpp"
#include "linalg/generators.hpp"
#include "linalg/linear_tetrahedron.hpp"
#include "linalg/vector_norms.hpp"

namespace cholsim::linalg {
namespace {

bool is_positive_definite(const SymmetricCscMatrix& a) {
  DenseMatrix d = to_dense(a);
  return blas::potrf(d.view()) == 0;
}

std::vector<double> times(const SymmetricCscMatrix& a, const std::vector<double>& x) {
  std::vector<double> y(x.size());
  symmetric_multiply(a, x, y);
  return y;
}

// ---- structured_tet_box -------------------------------------------------------------------

TEST(Generators, BoxTetsArePositiveAndFillTheBox) {
  const double h = 0.5;
  const TetMesh mesh = structured_tet_box(3, 2, 4, h);
  EXPECT_EQ(mesh.node_count(), 4 * 3 * 5);
  EXPECT_EQ(mesh.tet_count(), 6 * 3 * 2 * 4);
  double total = 0.0;
  for (Index t = 0; t < mesh.tet_count(); ++t) {
    const double volume = linear_tet::signed_volume(mesh.tet_points(t));
    EXPECT_NEAR(volume, h * h * h / 6.0, 1e-15) << "tet " << t;
    total += volume;
  }
  EXPECT_NEAR(total, 1.5 * 1.0 * 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(mesh.positions[3 * static_cast<std::size_t>(mesh.node_count() - 1) + 2], 2.0);
}

TEST(Generators, BoxIsConforming) {
  // Conforming ⇔ every triangle is shared by two tets except those on the surface, which
  // are the 2 triangles of each of the 2·(nx·ny + ny·nz + nx·nz) boundary squares.
  const Index nx = 3, ny = 2, nz = 4;
  const TetMesh mesh = structured_tet_box(nx, ny, nz, 1.0);
  std::map<std::array<Index, 3>, int> face_count;
  for (Index t = 0; t < mesh.tet_count(); ++t) {
    for (int skip = 0; skip < 4; ++skip) {
      std::array<Index, 3> face{};
      int f = 0;
      for (int s = 0; s < 4; ++s) {
        if (s != skip) face[static_cast<std::size_t>(f++)] = mesh.tets[4 * static_cast<std::size_t>(t) + static_cast<std::size_t>(s)];
      }
      std::sort(face.begin(), face.end());
      ++face_count[face];
    }
  }
  int boundary = 0;
  for (const auto& [face, count] : face_count) {
    EXPECT_LE(count, 2);
    if (count == 1) ++boundary;
  }
  EXPECT_EQ(boundary, 2 * 2 * (nx * ny + ny * nz + nx * nz));
}

TEST(Generators, BoxRejectsBadArguments) {
  EXPECT_THROW(structured_tet_box(-1, 2, 2, 1.0), std::invalid_argument);
  EXPECT_THROW(structured_tet_box(2, 2, 2, 0.0), std::invalid_argument);
  EXPECT_THROW(structured_tet_box(2000, 2000, 2000, 1.0), std::invalid_argument);
  EXPECT_EQ(structured_tet_box(0, 0, 0, 1.0).tet_count(), 0);
}

// ---- linear tetrahedron -------------------------------------------------------------------

const linear_tet::Points skewed_tet{{{0.1, -0.2, 0.05}, {1.2, 0.1, -0.1}, {0.3, 0.9, 0.2},
                                     {-0.1, 0.25, 1.1}}};

TEST(Generators, ShapeGradientsReproduceLinearFunctions) {
  // Σₐ xₐ gₐᵀ = I and Σₐ gₐ = 0: linear fields are interpolated exactly.
  const auto g = linear_tet::shape_gradients(skewed_tet);
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t j = 0; j < 3; ++j) {
      double sum = 0.0;
      for (std::size_t a = 0; a < 4; ++a) sum += skewed_tet[a][i] * g[a][j];
      EXPECT_NEAR(sum, i == j ? 1.0 : 0.0, 1e-14);
    }
    EXPECT_NEAR(g[0][i] + g[1][i] + g[2][i] + g[3][i], 0.0, 1e-14);
  }
  EXPECT_GT(linear_tet::signed_volume(skewed_tet), 0.0);
  linear_tet::Points flat = skewed_tet;
  flat[3] = flat[2];
  EXPECT_THROW(linear_tet::shape_gradients(flat), std::invalid_argument);
}

TEST(Generators, LameParametersFromYoungsAndPoisson) {
  const LameParameters lame = lame_from_youngs_poisson(1.0, 0.25);
  EXPECT_NEAR(lame.lambda, 0.4, 1e-15);
  EXPECT_NEAR(lame.mu, 0.4, 1e-15);
  EXPECT_THROW(lame_from_youngs_poisson(1.0, 0.5), std::invalid_argument);
  EXPECT_THROW(lame_from_youngs_poisson(0.0, 0.3), std::invalid_argument);
}

// Linear-elastic energy V·(μ ε:ε + λ/2 tr(ε)²) of displacements u (12 values) computed from the
// strain directly, independent of the stiffness formula.
double elastic_energy(const linear_tet::Points& x, LameParameters material,
                      const std::array<double, 12>& u) {
  const auto g = linear_tet::shape_gradients(x);
  double grad_u[3][3] = {};
  for (std::size_t a = 0; a < 4; ++a) {
    for (std::size_t i = 0; i < 3; ++i) {
      for (std::size_t j = 0; j < 3; ++j) grad_u[i][j] += u[3 * a + i] * g[a][j];
    }
  }
  double strain_norm2 = 0.0;
  double trace = 0.0;
  for (int i = 0; i < 3; ++i) {
    trace += grad_u[i][i];
    for (int j = 0; j < 3; ++j) {
      const double e = 0.5 * (grad_u[i][j] + grad_u[j][i]);
      strain_norm2 += e * e;
    }
  }
  return std::abs(linear_tet::signed_volume(x)) *
         (material.mu * strain_norm2 + 0.5 * material.lambda * trace * trace);
}

TEST(Generators, ElasticStiffnessMatchesFiniteDifferencesOfEnergy) {
  const LameParameters material = lame_from_youngs_poisson(3.0, 0.3);
  const auto k = linear_tet::elastic_stiffness(skewed_tet, material);
  // The energy is quadratic, so second central differences give K exactly up to rounding.
  const double step = 1e-3;
  double scale = 0.0;
  for (double v : k) scale = std::max(scale, std::abs(v));
  for (std::size_t a = 0; a < 12; ++a) {
    for (std::size_t b = 0; b < 12; ++b) {
      auto shifted = [&](double sa, double sb) {
        std::array<double, 12> u{};
        u[a] += sa;
        u[b] += sb;
        return elastic_energy(skewed_tet, material, u);
      };
      const double fd = (shifted(step, step) - shifted(step, -step) - shifted(-step, step) +
                         shifted(-step, -step)) / (4.0 * step * step);
      EXPECT_NEAR(k[a + 12 * b], fd, 1e-7 * scale) << "entry (" << a << ", " << b << ")";
    }
  }
}

TEST(Generators, ScalarStiffnessIsTheDirichletEnergyHessian) {
  // ½·uᵀ(V·GᵀG)u = ½·V·|∇u|² for the linear interpolant u; rows sum to zero.
  const auto k = linear_tet::scalar_stiffness(skewed_tet);
  const auto g = linear_tet::shape_gradients(skewed_tet);
  const double volume = linear_tet::signed_volume(skewed_tet);
  const std::array<double, 4> u{0.3, -1.1, 0.7, 2.0};
  std::array<double, 3> gradient{};
  for (std::size_t a = 0; a < 4; ++a) {
    for (std::size_t i = 0; i < 3; ++i) gradient[i] += u[a] * g[a][i];
  }
  double quadratic = 0.0;
  for (std::size_t a = 0; a < 4; ++a) {
    double row_sum = 0.0;
    for (std::size_t b = 0; b < 4; ++b) {
      quadratic += u[a] * k[a + 4 * b] * u[b];
      row_sum += k[a + 4 * b];
      EXPECT_DOUBLE_EQ(k[a + 4 * b], k[b + 4 * a]);
    }
    EXPECT_NEAR(row_sum, 0.0, 1e-14);
  }
  const double norm2 = gradient[0] * gradient[0] + gradient[1] * gradient[1] + gradient[2] * gradient[2];
  EXPECT_NEAR(quadratic, volume * norm2, 1e-12);
  EXPECT_NEAR(linear_tet::lumped_vertex_mass(skewed_tet, 1000.0), 250.0 * volume, 1e-12);
}

// ---- elasticity matrices ------------------------------------------------------------------

ElasticityBoxOptions small_box() {
  ElasticityBoxOptions options;
  options.nx = 3;
  options.ny = 2;
  options.nz = 2;
  options.cell_size = 0.25;
  return options;
}

TEST(Generators, ElasticityMatrixIsSymmetricPositiveDefinite) {
  const ElasticityBoxOptions options = small_box();
  const SymmetricCscMatrix a = elasticity_matrix(options);
  EXPECT_EQ(a.size(), 3 * 4 * 3 * 3);
  EXPECT_NO_THROW(check_valid(a));
  EXPECT_TRUE(is_positive_definite(a));
}

TEST(Generators, StiffnessAloneHasRigidBodyModesInItsNullSpace) {
  ElasticityBoxOptions options = small_box();
  options.density = 0.0;  // with Δt = 1 the matrix is K alone
  options.time_step = 1.0;
  const SymmetricCscMatrix k = elasticity_matrix(options);
  const TetMesh mesh = structured_tet_box(options.nx, options.ny, options.nz, options.cell_size);
  const auto n = static_cast<std::size_t>(k.size());
  double k_scale = 0.0;
  for (double v : k.lower.values) k_scale = std::max(k_scale, std::abs(v));
  for (std::size_t axis = 0; axis < 3; ++axis) {
    std::vector<double> translation(n, 0.0);
    std::vector<double> rotation(n, 0.0);
    for (std::size_t v = 0; v < n / 3; ++v) {
      translation[3 * v + axis] = 1.0;
      // u = eₐₓᵢₛ × x, an infinitesimal rotation about the axis.
      const double* x = &mesh.positions[3 * v];
      const std::size_t p = (axis + 1) % 3;
      const std::size_t q = (axis + 2) % 3;
      rotation[3 * v + p] = -x[q];
      rotation[3 * v + q] = x[p];
    }
    EXPECT_LT(max_abs(times(k, translation)), 1e-12 * k_scale) << "translation " << axis;
    EXPECT_LT(max_abs(times(k, rotation)), 1e-12 * k_scale) << "rotation " << axis;
  }
  // Not everything is in the null space: a stretch costs energy.
  std::vector<double> stretch(n, 0.0);
  for (std::size_t v = 0; v < n / 3; ++v) stretch[3 * v] = mesh.positions[3 * v];
  EXPECT_GT(max_abs(times(k, stretch)), 1e-3 * k_scale);
}

TEST(Generators, ElasticityMatrixIsMassPlusTimeStepSquaredStiffness) {
  ElasticityBoxOptions options = small_box();
  const SymmetricCscMatrix a = elasticity_matrix(options);
  options.density = 0.0;
  options.time_step = 1.0;
  const SymmetricCscMatrix k = elasticity_matrix(options);
  ASSERT_EQ(a.lower.row_idx, k.lower.row_idx);
  const double dt2 = (1.0 / 60.0) * (1.0 / 60.0);
  // A - Δt²K is the lumped mass: diagonal, summing to ρ·V_box per component.
  double mass = 0.0;
  for (Index c = 0; c < a.size(); ++c) {
    for (Offset p = a.lower.col_ptr[static_cast<std::size_t>(c)];
         p < a.lower.col_ptr[static_cast<std::size_t>(c) + 1]; ++p) {
      const auto q = static_cast<std::size_t>(p);
      const double difference = a.lower.values[q] - dt2 * k.lower.values[q];
      if (a.lower.row_idx[q] == c) {
        mass += difference;
      } else {
        EXPECT_NEAR(difference, 0.0, 1e-12 * std::abs(a.lower.values[q]) + 1e-18);
      }
    }
  }
  const double box_volume = 0.75 * 0.5 * 0.5;
  EXPECT_NEAR(mass, 3.0 * 1000.0 * box_volume, 1e-9);
}

// On a mesh that is not a box (a two-tet bipyramid, then scaled and sheared), A·t for a
// rigid translation t is the lumped mass times t — the stiffness annihilates translations —
// so each component's column sums add up to ρ·V of the mesh.
TEST(Generators, ElasticityMatrixOnAnyMeshKeepsTranslationsStiffnessFree) {
  TetMesh mesh;
  mesh.positions = {0.0, 0.0, 0.0, 1.0, 0.1, 0.0, 0.2, 0.9, 0.0, 0.3, 0.2, 0.8, 0.4, 0.3, -0.7};
  mesh.tets = {0, 1, 2, 3, 0, 2, 1, 4};
  ElasticityBoxOptions material;
  material.youngs_modulus = 3e6;
  const SymmetricCscMatrix a = elasticity_matrix(mesh, material);
  ASSERT_EQ(a.size(), 15);
  double volume = 0.0;
  for (Index t = 0; t < mesh.tet_count(); ++t) volume += linear_tet::signed_volume(mesh.tet_points(t));
  ASSERT_GT(volume, 0.0);
  for (Index component = 0; component < 3; ++component) {
    std::vector<double> translation(15, 0.0), product(15, 0.0);
    for (Index node = 0; node < 5; ++node) translation[static_cast<std::size_t>(3 * node + component)] = 1.0;
    symmetric_multiply(a, translation, product);
    double total = 0.0;
    for (Index node = 0; node < 5; ++node) {
      for (Index other = 0; other < 3; ++other) {
        const double value = product[static_cast<std::size_t>(3 * node + other)];
        if (other == component) {
          EXPECT_GT(value, 0.0);
          total += value;
        } else {
          EXPECT_NEAR(value, 0.0, 1e-9);
        }
      }
    }
    EXPECT_NEAR(total, material.density * volume, 1e-9 * material.density * volume);
  }
}

TEST(Generators, ScalarElasticityMatrixIsMassPlusScaledLaplacian) {
  const ElasticityBoxOptions options = small_box();
  const SymmetricCscMatrix a = scalar_elasticity_matrix(options);
  const TetMesh mesh = structured_tet_box(options.nx, options.ny, options.nz, options.cell_size);
  EXPECT_EQ(a.size(), mesh.node_count());
  EXPECT_NO_THROW(check_valid(a));
  EXPECT_TRUE(is_positive_definite(a));
  // The Laplacian part annihilates constants, so A·1 is the lumped mass, summing to ρ·V_box.
  const std::vector<double> ones(static_cast<std::size_t>(a.size()), 1.0);
  const std::vector<double> row_sums = times(a, ones);
  EXPECT_NEAR(std::accumulate(row_sums.begin(), row_sums.end(), 0.0), 1000.0 * 0.75 * 0.5 * 0.5,
              1e-9);
  // On the Kuhn mesh the P1 Laplacian of an interior node is h times the 7-point stencil,
  // so with ρ = 0, Δt = 1 an interior column is 2μh·(6, -1 ×6) and nothing else.
  ElasticityBoxOptions stiffness_only = options;
  stiffness_only.density = 0.0;
  stiffness_only.time_step = 1.0;
  const SymmetricCscMatrix k = scalar_elasticity_matrix(stiffness_only);
  const double mu = lame_from_youngs_poisson(options.youngs_modulus, options.poisson_ratio).mu;
  const DenseMatrix kd = to_dense(k);
  const Index interior = 1 + 4 * (1 + 3 * 1);  // node (1, 1, 1)
  const double scale = 2.0 * mu * options.cell_size;
  for (Index r = 0; r < k.size(); ++r) {
    const Index offset = std::abs(r - interior);
    const double expected = r == interior ? 6.0 : (offset == 1 || offset == 4 || offset == 12) ? -1.0 : 0.0;
    EXPECT_NEAR(kd(r, interior) / scale, expected, 1e-12) << "row " << r;
  }
}

TEST(Generators, ElasticityOptionsAreValidated) {
  ElasticityBoxOptions options = small_box();
  options.poisson_ratio = 0.5;
  EXPECT_THROW(elasticity_matrix(options), std::invalid_argument);
  options = small_box();
  options.time_step = 0.0;
  EXPECT_THROW(scalar_elasticity_matrix(options), std::invalid_argument);
  options = small_box();
  options.density = -1.0;
  EXPECT_THROW(elasticity_matrix(options), std::invalid_argument);
}

// ---- Laplacians ---------------------------------------------------------------------------

TEST(Generators, Laplacian2dHasFivePointStructure) {
  const Index nx = 5, ny = 4;
  const SymmetricCscMatrix a = laplacian_2d(nx, ny);
  EXPECT_NO_THROW(check_valid(a));
  EXPECT_EQ(a.size(), nx * ny);
  EXPECT_EQ(a.nnz_lower(), nx * ny + (nx - 1) * ny + nx * (ny - 1));
  // Row sum = number of missing neighbours (Dirichlet boundary): 0 inside, 1 on edges, 2 at corners.
  const std::vector<double> sums = times(a, std::vector<double>(static_cast<std::size_t>(nx * ny), 1.0));
  for (Index j = 0; j < ny; ++j) {
    for (Index i = 0; i < nx; ++i) {
      const int missing = (i == 0) + (i == nx - 1) + (j == 0) + (j == ny - 1);
      EXPECT_DOUBLE_EQ(sums[static_cast<std::size_t>(i + nx * j)], missing) << i << ", " << j;
    }
  }
  EXPECT_TRUE(is_positive_definite(a));
}

TEST(Generators, Laplacian3dHasSevenPointStructure) {
  const Index nx = 4, ny = 3, nz = 5;
  const SymmetricCscMatrix a = laplacian_3d(nx, ny, nz);
  EXPECT_NO_THROW(check_valid(a));
  EXPECT_EQ(a.size(), nx * ny * nz);
  EXPECT_EQ(a.nnz_lower(),
            nx * ny * nz + (nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1));
  const std::vector<double> sums =
      times(a, std::vector<double>(static_cast<std::size_t>(nx * ny * nz), 1.0));
  for (Index k = 0; k < nz; ++k) {
    for (Index j = 0; j < ny; ++j) {
      for (Index i = 0; i < nx; ++i) {
        const int missing = (i == 0) + (i == nx - 1) + (j == 0) + (j == ny - 1) + (k == 0) + (k == nz - 1);
        EXPECT_DOUBLE_EQ(sums[static_cast<std::size_t>(i + nx * (j + ny * k))], missing);
      }
    }
  }
  EXPECT_TRUE(is_positive_definite(a));
  EXPECT_THROW(laplacian_3d(2, -1, 2), std::invalid_argument);
  EXPECT_THROW(laplacian_2d(100000, 100000), std::invalid_argument);
  EXPECT_EQ(laplacian_2d(0, 3).size(), 0);
}

TEST(Generators, RampRightHandSideIsTheMatrixTimesOneToN) {
  // The 1×3 grid: 4 on the diagonal, −1 between neighbours; A·(1, 2, 3) = (2, 4, 10).
  const SymmetricCscMatrix a = laplacian_2d(3, 1);
  EXPECT_EQ(ramp_right_hand_side(a), (std::vector<double>{2.0, 4.0, 10.0}));
}

TEST(Generators, RandomDominantSpdMatrixIsSymmetricDominantAndReproducible) {
  const Index m = 40;
  const DenseMatrix a = random_dominant_spd_matrix(m, 7);
  for (Index j = 0; j < m; ++j) {
    double off_diagonal = 0.0;
    for (Index i = 0; i < m; ++i) {
      EXPECT_EQ(a(i, j), a(j, i));
      if (i != j) off_diagonal += std::abs(a(i, j));
    }
    EXPECT_GT(a(j, j), off_diagonal);  // > m − 1 against m − 1 entries below 1 in magnitude
  }
  DenseMatrix factor = a;
  EXPECT_EQ(blas::potrf(factor.view()), 0);
  EXPECT_EQ(random_dominant_spd_matrix(m, 7).storage(), a.storage());
  EXPECT_NE(random_dominant_spd_matrix(m, 8).storage(), a.storage());
  EXPECT_THROW(random_dominant_spd_matrix(-1, 7), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::linalg
