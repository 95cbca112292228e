// Stabilized one-point hexahedron kernels (seed 001 §4.1–4.2, Algorithm 1, §7.4, §8) against
// finite differences, the dense element matrix, and identities that hold for every rotation.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>

#include "fem/elements/stabilized_hex.hpp"
#include "linalg/svd3.hpp"

namespace cholsim::fem {
namespace {

using linalg::Mat3;
using linalg::Vec3;
using Vector24 = std::array<double, 24>;

constexpr double kH = 0.4;
constexpr Lame kHexLame{2.0, 5.0};
const Vec3 kOrigin{0.3, -0.7, 1.1};

Vec3 corner_parameter(int a) { return {double(a & 1), double((a >> 1) & 1), double((a >> 2) & 1)}; }

HexNodes rest_nodes() {
  HexNodes x;
  for (int a = 0; a < 8; ++a) x[static_cast<std::size_t>(a)] = kOrigin + kH * corner_parameter(a);
  return x;
}

/// x_a = A X_a + t.
HexNodes affine_nodes(const Mat3& a, const Vec3& t) {
  HexNodes x = rest_nodes();
  for (Vec3& p : x) p = a * p + t;
  return x;
}

Vector24 flatten(const HexNodes& nodes) {
  Vector24 v{};
  for (std::size_t a = 0; a < 8; ++a) {
    for (int i = 0; i < 3; ++i) v[3 * a + static_cast<std::size_t>(i)] = nodes[a][i];
  }
  return v;
}

HexNodes unflatten(const Vector24& v) {
  HexNodes nodes;
  for (std::size_t a = 0; a < 8; ++a) nodes[a] = {v[3 * a], v[3 * a + 1], v[3 * a + 2]};
  return nodes;
}

HexNodes axpy(const HexNodes& x, double s, const HexNodes& dx) {
  HexNodes y = x;
  for (std::size_t a = 0; a < 8; ++a) y[a] += s * dx[a];
  return y;
}

double max_abs(const HexNodes& nodes) {
  double worst = 0.0;
  for (const Vec3& p : nodes) worst = std::max({worst, std::abs(p.x), std::abs(p.y), std::abs(p.z)});
  return worst;
}

double max_abs_difference(const HexNodes& a, const HexNodes& b) {
  double worst = 0.0;
  for (std::size_t n = 0; n < 8; ++n) {
    const Vec3 d = a[n] - b[n];
    worst = std::max({worst, std::abs(d.x), std::abs(d.y), std::abs(d.z)});
  }
  return worst;
}

double dot(const HexNodes& a, const HexNodes& b) {
  double sum = 0.0;
  for (std::size_t n = 0; n < 8; ++n) sum += linalg::dot(a[n], b[n]);
  return sum;
}

class Random {
 public:
  double normal() { return normal_(engine_); }
  Vec3 vector() { return {normal(), normal(), normal()}; }
  Mat3 matrix() { return Mat3::from_rows(vector(), vector(), vector()); }
  Mat3 rotation() {
    const linalg::Quaternion q{normal(), normal(), normal(), normal()};
    return linalg::to_rotation_matrix(linalg::normalized(q));
  }
  HexNodes nodes(double scale) {
    HexNodes x;
    for (Vec3& p : x) p = scale * vector();
    return x;
  }
  /// A random deformed element: a large rotation, a stretch and non-affine (hourglass) noise.
  HexNodes deformed_element() {
    const Mat3 f = rotation() * (Mat3::identity() + 0.25 * matrix());
    return axpy(affine_nodes(f, vector()), 0.1 * kH, nodes(1.0));
  }
  /// An element whose centre F has det F < 0, σ's well separated (σ2 + σ3 stays away from 0).
  HexNodes inverted_element() {
    const Mat3 f = rotation() * Mat3::diagonal({1.3, 0.9, -0.4}) * rotation() + 0.05 * matrix();
    return axpy(affine_nodes(f, vector()), 0.05 * kH, nodes(1.0));
  }

 private:
  std::mt19937_64 engine_{20240611};
  std::normal_distribution<double> normal_;
};

HexNodes forces_at(const HexNodes& x) {
  HexNodes f{};
  add_hex_forces(x, kH, kHexLame, f);
  return f;
}

HexLinearization linearization_at(const HexNodes& x, bool definite) {
  return linearize_hex(hex_center_deformation_gradient(x, kH), kHexLame, definite);
}

HexNodes product(const HexLinearization& lin, const HexNodes& dx) {
  HexNodes y{};
  add_hex_stiffness_product(lin, dx, kH, kHexLame, y);
  return y;
}

double max_abs(const HexMatrix& k) {
  double worst = 0.0;
  for (double v : k) worst = std::max(worst, std::abs(v));
  return worst;
}

/// LAPACK's symmetric eigensolver (in OpenBLAS, which cholsim links): eigenvalues ascending.
extern "C" void dsyev_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
                       double* work, const int* lwork, int* info);

double smallest_eigenvalue(HexMatrix k) {  // k is symmetric: row- and column-major agree
  std::array<double, 24> eigenvalues{};
  std::array<double, 24 * 24> work{};
  const int n = 24;
  const int lwork = static_cast<int>(work.size());
  int info = 0;
  dsyev_("N", "U", &n, k.data(), &n, eigenvalues.data(), work.data(), &lwork, &info);
  EXPECT_EQ(info, 0);
  return eigenvalues[0];
}

/// (Wᵀ K W)_(bi),(bi) from the dense element matrix.
HexNodes projected_diagonal(const HexMatrix& k, const HangingNodeWeights& w) {
  HexNodes diagonal{};
  for (std::size_t b = 0; b < 8; ++b) {
    for (std::size_t i = 0; i < 3; ++i) {
      double sum = 0.0;
      for (std::size_t a = 0; a < 8; ++a) {
        for (std::size_t c = 0; c < 8; ++c) sum += w[a][b] * w[c][b] * k[24 * (3 * a + i) + 3 * c + i];
      }
      diagonal[b][static_cast<int>(i)] = sum;
    }
  }
  return diagonal;
}

HangingNodeWeights identity_weights() {
  HangingNodeWeights w{};
  for (std::size_t a = 0; a < 8; ++a) w[a][a] = 1.0;
  return w;
}

// §3.2, edge-hanging: a larger neighbour (edge 2h) owns the edge from corner 0 to ξ = (2,0,0);
// primary node 1 at ξ = (1,0,0) is its midpoint and hangs. Conforming node 1 is that edge's far
// end at ξ̃_1 = (2,0,0); the others coincide with their primary nodes. The larger element
// interpolates linearly along its edge, so W_1· = ½e_0 + ½e_1; every other row is e_a.
HangingNodeWeights edge_hanging_weights() {
  HangingNodeWeights w = identity_weights();
  w[1] = {0.5, 0.5, 0, 0, 0, 0, 0, 0};
  return w;
}

// §3.2, face-hanging: the larger neighbour below owns the face z = 0 spanning ξ ∈ [0,2]². Primary
// nodes 1 = (1,0,0) and 2 = (0,1,0) are mid-edge (edge-hanging), 3 = (1,1,0) is the face centre
// (face-hanging). Conforming nodes: ξ̃_1 = (2,0,0), ξ̃_2 = (0,2,0), ξ̃_3 = (2,2,0). The face is
// bilinear on the larger element: its centre is the mean of its 4 corners.
HangingNodeWeights face_hanging_weights() {
  HangingNodeWeights w = identity_weights();
  w[1] = {0.5, 0.5, 0, 0, 0, 0, 0, 0};
  w[2] = {0.5, 0, 0.5, 0, 0, 0, 0, 0};
  w[3] = {0.25, 0.25, 0.25, 0.25, 0, 0, 0, 0};
  return w;
}

/// Ñ_b(ξ) = Σ_a W_ab N_a(ξ) must be 1 at its own conforming node and 0 at the others — W_ab =
/// Ñ_b(ξ_a) is then the right W (the check that the hand-built W's above are consistent).
void expect_modified_shape_functions_interpolate(const HangingNodeWeights& w,
                                                 const std::array<Vec3, 8>& conforming_parameters) {
  for (std::size_t c = 0; c < 8; ++c) {
    const std::array<double, 8> n = trilinear_weights(conforming_parameters[c]);
    for (std::size_t b = 0; b < 8; ++b) {
      double modified = 0.0;
      for (std::size_t a = 0; a < 8; ++a) modified += w[a][b] * n[a];
      EXPECT_NEAR(modified, b == c ? 1.0 : 0.0, 1e-15) << "b " << b << " at conforming node " << c;
    }
  }
}

std::array<Vec3, 8> primary_parameters() {
  std::array<Vec3, 8> xi;
  for (int a = 0; a < 8; ++a) xi[static_cast<std::size_t>(a)] = corner_parameter(a);
  return xi;
}

void expect_diagonal_matches_projection(const HexLinearization& lin, const HangingNodeWeights& w) {
  HexNodes diagonal{};
  add_hex_stiffness_diagonal(lin, w, kH, kHexLame, diagonal);
  const HexMatrix k = hex_stiffness_matrix(lin, kH, kHexLame);
  const HexNodes reference = projected_diagonal(k, w);
  EXPECT_LE(max_abs_difference(diagonal, reference), 1e-13 * max_abs(reference));
  // The 3×3 node blocks of Wᵀ·K·W, off-diagonal entries included.
  std::array<Mat3, 8> blocks{};
  add_hex_stiffness_block_diagonal(lin, w, kH, kHexLame, blocks);
  for (std::size_t b = 0; b < 8; ++b) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        double sum = 0.0;
        for (std::size_t a = 0; a < 8; ++a) {
          for (std::size_t c = 0; c < 8; ++c) sum += w[a][b] * w[c][b] * k[24 * (3 * a + i) + 3 * c + j];
        }
        EXPECT_NEAR(blocks[b](i, j), sum, 1e-13 * max_abs(reference)) << "node " << b << " entry " << i << j;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------

TEST(StabilizedHex, RestStateHasZeroForces) {
  const HexNodes f = forces_at(rest_nodes());
  EXPECT_LE(max_abs(f), 1e-12 * kHexLame.mu * kH);
}

TEST(StabilizedHex, RigidMotionsHaveZeroForcesAndEnergy) {
  Random random;
  for (int trial = 0; trial < 20; ++trial) {
    const HexNodes x = affine_nodes(random.rotation(), random.vector());
    EXPECT_LE(max_abs(forces_at(x)), 1e-12 * kHexLame.mu * kH) << "trial " << trial;
    EXPECT_NEAR(hex_energy(x, kH, kHexLame), 0.0, 1e-12 * kHexLame.mu * kH * kH * kH);
  }
}

// A stretched element must have non-zero forces: otherwise the two tests above prove nothing.
TEST(StabilizedHex, StretchedElementHasRestoringForces) {
  const HexNodes x = affine_nodes(Mat3::diagonal({1.2, 1.0, 1.0}), {});
  const HexNodes f = forces_at(x);
  EXPECT_GT(max_abs(f), 0.01 * kHexLame.mu * kH * kH);
  EXPECT_LT(f[1].x, 0.0);  // corner 1 sits at ξ_x = 1: pulled back towards −x
  EXPECT_GT(f[0].x, 0.0);
}

TEST(StabilizedHex, ForcesFromTheLinearizationEqualTheDirectForces) {
  Random random;
  for (int trial = 0; trial < 10; ++trial) {
    const HexNodes x = trial % 2 == 1 ? random.inverted_element() : random.deformed_element();
    HexNodes direct = forces_at(x);
    HexNodes linearized{};
    add_hex_forces(x, linearization_at(x, true), kH, kHexLame, linearized);
    EXPECT_LT(max_abs_difference(direct, linearized), 1e-12 * max_abs(direct));
  }
}

TEST(StabilizedHex, AffinePatchGivesExactGradientAndConsistentForces) {
  Random random;
  for (int trial = 0; trial < 10; ++trial) {
    const Mat3 a = random.rotation() * (Mat3::identity() + 0.3 * random.matrix());
    const HexNodes x = affine_nodes(a, random.vector());
    const Mat3 f = hex_center_deformation_gradient(x, kH);
    EXPECT_LE(frobenius_norm(f - a), 1e-14 * 10.0 * frobenius_norm(a)) << "trial " << trial;
    // −V P(A) g_a with P = P_Δ + P_aux = 2μA + κR: the edge rule is exact for an affine field.
    const linalg::Svd3 svd = linalg::svd3(a);
    const Mat3 r = svd.u * transpose(svd.v);
    const double trace_s = svd.singular_values.x + svd.singular_values.y + svd.singular_values.z;
    const Mat3 p = 2.0 * kHexLame.mu * a + (kHexLame.lambda * (trace_s - 3.0) - 2.0 * kHexLame.mu) * r;
    HexNodes expected;
    for (int c = 0; c < 8; ++c) {
      expected[static_cast<std::size_t>(c)] = -(kH * kH * kH) * (p * hex_center_shape_gradient(c, kH));
    }
    EXPECT_LE(max_abs_difference(forces_at(x), expected), 1e-12 * max_abs(expected)) << "trial " << trial;
  }
}

void expect_forces_are_negative_energy_gradient(const HexNodes& x) {
  const HexNodes f = forces_at(x);
  const double step = 1e-6 * kH;
  HexNodes numerical;
  for (std::size_t a = 0; a < 8; ++a) {
    for (int i = 0; i < 3; ++i) {
      HexNodes plus = x, minus = x;
      plus[a][i] += step;
      minus[a][i] -= step;
      numerical[a][i] = -(hex_energy(plus, kH, kHexLame) - hex_energy(minus, kH, kHexLame)) / (2.0 * step);
    }
  }
  EXPECT_LE(max_abs_difference(f, numerical), 1e-6 * max_abs(f));
}

TEST(StabilizedHex, ForcesAreNegativeEnergyGradient) {
  Random random;
  for (int trial = 0; trial < 5; ++trial) expect_forces_are_negative_energy_gradient(random.deformed_element());
}

TEST(StabilizedHex, ForcesAreNegativeEnergyGradientWhenInverted) {
  Random random;
  for (int trial = 0; trial < 5; ++trial) {
    const HexNodes x = random.inverted_element();
    ASSERT_LT(determinant(hex_center_deformation_gradient(x, kH)), 0.0);
    expect_forces_are_negative_energy_gradient(x);
  }
}

void expect_exact_product_matches_force_differences(const HexNodes& x, Random& random) {
  const HexLinearization lin = linearization_at(x, /*definite=*/false);
  for (int direction = 0; direction < 3; ++direction) {
    const HexNodes dx = random.nodes(kH);
    const double step = 1e-6;
    const HexNodes f_plus = forces_at(axpy(x, step, dx));
    const HexNodes f_minus = forces_at(axpy(x, -step, dx));
    HexNodes numerical;
    for (std::size_t a = 0; a < 8; ++a) numerical[a] = (-1.0 / (2.0 * step)) * (f_plus[a] - f_minus[a]);
    const HexNodes analytic = product(lin, dx);
    EXPECT_LE(max_abs_difference(analytic, numerical), 1e-6 * max_abs(analytic));
  }
}

TEST(StabilizedHex, ExactProductMatchesForceDifferences) {
  Random random;
  for (int trial = 0; trial < 5; ++trial) expect_exact_product_matches_force_differences(random.deformed_element(), random);
}

TEST(StabilizedHex, ExactProductMatchesForceDifferencesWhenInverted) {
  Random random;
  for (int trial = 0; trial < 5; ++trial) expect_exact_product_matches_force_differences(random.inverted_element(), random);
}

// Symmetry through the product alone (dyᵀK dx = dxᵀK dy), independent of hex_stiffness_matrix.
TEST(StabilizedHex, StiffnessProductIsSymmetric) {
  Random random;
  for (bool definite : {false, true}) {
    for (int trial = 0; trial < 6; ++trial) {
      const HexNodes x = trial % 2 == 0 ? random.deformed_element() : random.inverted_element();
      const HexLinearization lin = linearization_at(x, definite);
      const HexNodes dx = random.nodes(1.0), dy = random.nodes(1.0);
      const double forward = dot(dy, product(lin, dx)), backward = dot(dx, product(lin, dy));
      EXPECT_NEAR(forward, backward, 1e-13 * (std::abs(forward) + max_abs(product(lin, dx)) * 24.0));
    }
  }
}

TEST(StabilizedHex, MatrixColumnsEqualProductsOfUnitVectors) {
  Random random;
  for (bool definite : {false, true}) {
    for (int trial = 0; trial < 4; ++trial) {
      const HexNodes x = trial % 2 == 0 ? random.deformed_element() : random.inverted_element();
      const HexLinearization lin = linearization_at(x, definite);
      const HexMatrix k = hex_stiffness_matrix(lin, kH, kHexLame);
      const double scale = max_abs(k);
      for (std::size_t j = 0; j < 24; ++j) {
        Vector24 unit{};
        unit[j] = 1.0;
        const Vector24 column = flatten(product(lin, unflatten(unit)));
        for (std::size_t row = 0; row < 24; ++row) {
          EXPECT_NEAR(k[24 * row + j], column[row], 1e-14 * scale) << "entry " << row << ", " << j;
        }
      }
    }
  }
}

TEST(StabilizedHex, ExactMatrixIsSymmetric) {
  Random random;
  const HexMatrix k = hex_stiffness_matrix(linearization_at(random.inverted_element(), false), kH, kHexLame);
  for (std::size_t r = 0; r < 24; ++r) {
    for (std::size_t c = 0; c < r; ++c) EXPECT_NEAR(k[24 * r + c], k[24 * c + r], 1e-14 * max_abs(k));
  }
}

TEST(StabilizedHex, DefiniteMatrixIsPositiveSemidefinite) {
  Random random;
  bool exact_was_indefinite = false;
  for (int trial = 0; trial < 20; ++trial) {
    const HexNodes x = trial % 2 == 0 ? random.deformed_element() : random.inverted_element();
    const HexMatrix definite = hex_stiffness_matrix(linearization_at(x, true), kH, kHexLame);
    EXPECT_GE(smallest_eigenvalue(definite), -1e-10 * max_abs(definite)) << "trial " << trial;
    const HexMatrix exact = hex_stiffness_matrix(linearization_at(x, false), kH, kHexLame);
    exact_was_indefinite |= smallest_eigenvalue(exact) < -1e-6 * max_abs(exact);
  }
  // The inverted elements must have exercised the clamp of Algorithm 1.
  EXPECT_TRUE(exact_was_indefinite);
}

TEST(StabilizedHex, DefiniteEqualsExactWhereNoClampIsActive) {
  Random random;
  // A rotated, slightly stretched element: every ℓ_i = κ / (σ_j + σ_k) lies above −μ.
  const Mat3 f = random.rotation() * Mat3::diagonal({1.04, 1.02, 1.01}) * random.rotation();
  const HexNodes x = axpy(affine_nodes(f, {}), 0.002 * kH, random.nodes(1.0));
  const HexLinearization exact = linearization_at(x, false);
  ASSERT_GT(exact.singular_values.z, 1.0);  // stretched in every direction: no clamp active
  const HexMatrix k_exact = hex_stiffness_matrix(exact, kH, kHexLame);
  const HexMatrix k_definite = hex_stiffness_matrix(linearization_at(x, true), kH, kHexLame);
  for (std::size_t e = 0; e < k_exact.size(); ++e) EXPECT_NEAR(k_exact[e], k_definite[e], 1e-14 * max_abs(k_exact));
}

TEST(StabilizedHex, RigidModesAreInKernelOfRotatedRestState) {
  Random random;
  const Mat3 rotation = random.rotation();
  const HexNodes x = affine_nodes(rotation, random.vector());
  for (bool definite : {false, true}) {
    const HexLinearization lin = linearization_at(x, definite);
    const Vec3 translation = random.vector(), spin = random.vector();
    HexNodes rigid;
    for (std::size_t a = 0; a < 8; ++a) rigid[a] = translation + cross(spin, x[a]);
    EXPECT_LE(max_abs(product(lin, rigid)), 1e-12 * kHexLame.mu * kH * max_abs(rigid));
  }
}

TEST(StabilizedHex, CollapsedAndHalfInvertedGradientsStayFinite) {
  // σ = (2, 1, −1): σ2 + σ3 = 0, where the exact ∂R/∂F is unbounded; and F = 0.
  for (const Mat3& f : {Mat3::diagonal({2.0, 1.0, -1.0}), Mat3::zero(), Mat3::diagonal({1.0, 0.0, 0.0})}) {
    for (bool definite : {false, true}) {
      const HexLinearization lin = linearize_hex(f, kHexLame, definite);
      const HexMatrix k = hex_stiffness_matrix(lin, kH, kHexLame);
      for (double v : k) ASSERT_TRUE(std::isfinite(v));
      if (definite) {
        EXPECT_GE(smallest_eigenvalue(k), -1e-10 * max_abs(k));
      }
    }
    const HexNodes x = affine_nodes(f, {});
    for (const Vec3& p : forces_at(x)) ASSERT_TRUE(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z));
  }
}

TEST(StabilizedHex, DiagonalMatchesMatrixWithoutHangingNodes) {
  Random random;
  for (bool definite : {false, true}) {
    expect_diagonal_matches_projection(linearization_at(random.deformed_element(), definite), identity_weights());
    expect_diagonal_matches_projection(linearization_at(random.inverted_element(), definite), identity_weights());
  }
  // §7.4.2: with no hanging nodes the Laplacian part is 3μV / 2h² on every entry.
  HexNodes laplacian_only{};
  add_hex_stiffness_diagonal(HexLinearization{}, identity_weights(), kH, Lame{kHexLame.mu, 0.0}, laplacian_only);
  for (const Vec3& entry : laplacian_only) EXPECT_NEAR(entry.y, 1.5 * kHexLame.mu * kH, 1e-14);  // V / h² = h
}

TEST(StabilizedHex, HangingNodeWeightsInterpolateTheConformingNodes) {
  std::array<Vec3, 8> edge = primary_parameters();
  edge[1] = {2, 0, 0};
  expect_modified_shape_functions_interpolate(edge_hanging_weights(), edge);
  std::array<Vec3, 8> face = primary_parameters();
  face[1] = {2, 0, 0};
  face[2] = {0, 2, 0};
  face[3] = {2, 2, 0};
  expect_modified_shape_functions_interpolate(face_hanging_weights(), face);
}

TEST(StabilizedHex, DiagonalMatchesProjectedMatrixWithEdgeHangingNode) {
  Random random;
  for (bool definite : {false, true}) {
    expect_diagonal_matches_projection(linearization_at(random.deformed_element(), definite), edge_hanging_weights());
    expect_diagonal_matches_projection(linearization_at(random.inverted_element(), definite), edge_hanging_weights());
  }
}

TEST(StabilizedHex, DiagonalMatchesProjectedMatrixWithFaceHangingNode) {
  Random random;
  for (bool definite : {false, true}) {
    expect_diagonal_matches_projection(linearization_at(random.deformed_element(), definite), face_hanging_weights());
    expect_diagonal_matches_projection(linearization_at(random.inverted_element(), definite), face_hanging_weights());
  }
}

// The §7.4 formula holds for any W, not only the 0/½/¼ ones; and W's off-diagonal coupling
// matters: the primary-node diagonal alone would give a different answer.
TEST(StabilizedHex, DiagonalMatchesProjectedMatrixForGeneralWeights) {
  Random random;
  HangingNodeWeights w{};
  for (auto& row : w) {
    for (double& v : row) v = random.normal();
  }
  const HexLinearization lin = linearization_at(random.deformed_element(), true);
  expect_diagonal_matches_projection(lin, w);
  HexNodes hanging{}, primary{};
  add_hex_stiffness_diagonal(lin, face_hanging_weights(), kH, kHexLame, hanging);
  add_hex_stiffness_diagonal(lin, identity_weights(), kH, kHexLame, primary);
  EXPECT_GT(max_abs_difference(hanging, primary), 1e-3 * max_abs(primary));
}

TEST(StabilizedHex, TrilinearWeightsInterpolateAndReproduceLinearFields) {
  for (int b = 0; b < 8; ++b) {
    const std::array<double, 8> n = trilinear_weights(corner_parameter(b));
    for (int a = 0; a < 8; ++a) EXPECT_EQ(n[static_cast<std::size_t>(a)], a == b ? 1.0 : 0.0);
  }
  const Vec3 xi{0.2, 0.7, 0.45};
  const std::array<double, 8> n = trilinear_weights(xi);
  double total = 0.0;
  for (double v : n) total += v;
  EXPECT_NEAR(total, 1.0, 1e-15);
  Vec3 point;
  const HexNodes corners = rest_nodes();
  for (std::size_t a = 0; a < 8; ++a) point += n[a] * corners[a];
  const Vec3 expected = kOrigin + kH * xi;
  EXPECT_NEAR(point.x, expected.x, 1e-15);
  EXPECT_NEAR(point.y, expected.y, 1e-15);
  EXPECT_NEAR(point.z, expected.z, 1e-15);
}

/// ½ dxᵀK dx of a coarse element's trilinear field dx (corner values) on the present ones of
/// its 2×2×2 one-point children (bit q of `children`), every child at the linearization `lin`
/// and 8/n times `lame` (the §7.3 average over the whole element): PᵀAP of the children.
double children_energy(const HexLinearization& lin, const HexNodes& dx, std::uint8_t children) {
  const double scale = 8.0 / std::popcount(children);
  double energy = 0.0;
  for (int q = 0; q < 8; ++q) {
    if ((children >> q & 1) == 0) continue;
    HexNodes child;
    for (int a = 0; a < 8; ++a) {
      const Vec3 xi = 0.5 * (corner_parameter(q) + corner_parameter(a));
      const std::array<double, 8> n = trilinear_weights(xi);
      for (std::size_t c = 0; c < 8; ++c) child[static_cast<std::size_t>(a)] += n[c] * dx[c];
    }
    HexNodes y{};
    add_hex_stiffness_product(lin, child, 0.5 * kH, kHexLame, y);
    energy += 0.5 * scale * dot(child, y);
  }
  return energy;
}

// A merged element is its children's Galerkin operator, whichever of them are present; with all
// eight its hourglass modes are softer than the one-point element's.
TEST(StabilizedHex, MergedElementEqualsItsChildrensGalerkinOperator) {
  Random random;
  for (const int children : {0xFF, 0x01, 0x80, 0x0F, 0x3C, 0x96, 0x7F}) {
    for (int trial = 0; trial < 3; ++trial) {
      const HexLinearization lin = linearization_at(trial % 2 == 0 ? random.deformed_element() : random.inverted_element(), true);
      const HexNodes dx = random.nodes(1.0);
      HexNodes merged{};
      add_merged_hex_stiffness_product(lin, dx, kH, kHexLame, static_cast<std::uint8_t>(children), merged);
      const double galerkin = children_energy(lin, dx, static_cast<std::uint8_t>(children));
      EXPECT_NEAR(0.5 * dot(dx, merged), galerkin, 1e-12 * galerkin) << "children " << children << ", trial " << trial;
    }
  }
  // An hourglass mode (x_a = s_ax·s_ay·e_z): the one-point element charges it by its edges only.
  HexNodes hourglass{};
  for (int a = 0; a < 8; ++a) hourglass[static_cast<std::size_t>(a)].z = ((a & 1) != 0) == ((a & 2) != 0) ? 1.0 : -1.0;
  const HexLinearization rest = linearization_at(rest_nodes(), true);
  HexNodes plain{}, merged{};
  add_hex_stiffness_product(rest, hourglass, kH, kHexLame, plain);
  add_merged_hex_stiffness_product(rest, hourglass, kH, kHexLame, 0xFF, merged);
  EXPECT_LT(dot(hourglass, merged), 0.9 * dot(hourglass, plain));
}

// Its matrix, diagonal blocks (through W) and product are one operator.
TEST(StabilizedHex, MergedMatrixAndBlocksMatchTheProduct) {
  Random random;
  for (const int children : {0xFF, 0x5A}) {
    const HexLinearization lin = linearization_at(random.deformed_element(), true);
    const HexMatrix k = merged_hex_stiffness_matrix(lin, kH, kHexLame, static_cast<std::uint8_t>(children));
    const double scale = max_abs(k);
    for (std::size_t j = 0; j < 24; ++j) {
      Vector24 unit{};
      unit[j] = 1.0;
      HexNodes column{};
      add_merged_hex_stiffness_product(lin, unflatten(unit), kH, kHexLame, static_cast<std::uint8_t>(children), column);
      const Vector24 flat = flatten(column);
      for (std::size_t row = 0; row < 24; ++row) EXPECT_NEAR(k[24 * row + j], flat[row], 1e-14 * scale);
    }
    for (const HangingNodeWeights& w : {identity_weights(), face_hanging_weights()}) {
      std::array<Mat3, 8> blocks{};
      add_merged_hex_stiffness_block_diagonal(lin, w, kH, kHexLame, static_cast<std::uint8_t>(children), blocks);
      HexNodes diagonal{};
      add_merged_hex_stiffness_diagonal(lin, w, kH, kHexLame, static_cast<std::uint8_t>(children), diagonal);
      for (std::size_t b = 0; b < 8; ++b) {
        for (int i = 0; i < 3; ++i) EXPECT_NEAR(diagonal[b][i], blocks[b](i, i), 1e-14 * scale);
      }
      for (std::size_t b = 0; b < 8; ++b) {
        for (int i = 0; i < 3; ++i) {
          for (int j = 0; j < 3; ++j) {
            double expected = 0.0;  // (Wᵀ K W) entry (b i, b j)
            for (std::size_t a = 0; a < 8; ++a) {
              for (std::size_t c = 0; c < 8; ++c) {
                expected += w[a][b] * k[24 * (3 * a + static_cast<std::size_t>(i)) + 3 * c + static_cast<std::size_t>(j)] * w[c][b];
              }
            }
            EXPECT_NEAR(blocks[b](i, j), expected, 1e-13 * scale) << "children " << children << ", node " << b;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace cholsim::fem
