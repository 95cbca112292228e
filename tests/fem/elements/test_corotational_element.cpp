// Element kernels of corotational tets (seed 000 §3.1, §4.1) against finite differences and
// identities that hold for every rotation.
#include <gtest/gtest.h>

#include <random>

#include "fem/elements/corotational_element.hpp"
#include "linalg/polar_decomposition.hpp"

namespace cholsim::fem {
namespace {

using linalg::Vec3;

ElasticBody unit_tet_body() {
  TetMesh mesh;
  mesh.positions = {0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0};
  mesh.tets = {0, 1, 2, 3};
  return make_elastic_body(std::move(mesh), Material{1e6, 0.3, 1000.0}, "unit tet");
}

// Kₑ from linalg's dense element routine: the independent reference for the compact kernels.
ElementMatrix dense_stiffness(const ElasticBody& body) {
  return linalg::linear_tet::elastic_stiffness(body.rest.tet_points(0), body.lame[0]);
}

linalg::Mat3 rotation_at(const ElasticBody& body, std::span<const double> x) {
  return linalg::polar_rotation(deformation_gradient(body, 0, x));
}

ElementVector force_at(const ElasticBody& body, std::span<const double> x) {
  return corotated_elastic_force(isotropic_tet(body, 0), rotation_at(body, x), deformation_gradient(body, 0, x));
}

double max_abs(const ElementMatrix& m) {
  double worst = 0.0;
  for (double v : m) worst = std::max(worst, std::abs(v));
  return worst;
}

// The largest entry of (central-difference Jacobian of the elastic force) + (eq. 3 matrix):
// the corotated force's Jacobian is −Rₑ·Kₑ·Rₑᵀ up to the rotation-gradient term, which
// vanishes with the strain.
double tangent_mismatch(const ElasticBody& body, std::span<const double> x) {
  const ElementMatrix corotated = rotate_element_matrix(isotropic_tet(body, 0), corotational_frame(rotation_at(body, x)), 1.0);
  std::vector<double> probe(x.begin(), x.end());
  const double h = 1e-6;
  double worst = 0.0;
  for (std::size_t j = 0; j < 12; ++j) {
    probe[j] = x[j] + h;
    const ElementVector plus = force_at(body, probe);
    probe[j] = x[j] - h;
    const ElementVector minus = force_at(body, probe);
    probe[j] = x[j];
    for (std::size_t i = 0; i < 12; ++i) {
      worst = std::max(worst, std::abs((plus[i] - minus[i]) / (2 * h) + corotated[j * 12 + i]));
    }
  }
  return worst / max_abs(dense_stiffness(body));
}

std::vector<double> posed(const ElasticBody& body, double strain, const linalg::Mat3& rotation) {
  // A shear-and-stretch F₀ = I + strain·G, then a rotation and a translation.
  const linalg::Mat3 g{{0.7, 0.3, -0.2, 0.1, -0.4, 0.5, 0.2, 0.6, 0.3}};
  const linalg::Mat3 f = rotation * (linalg::Mat3::identity() + strain * g);
  std::vector<double> x(12);
  for (std::size_t a = 0; a < 4; ++a) {
    const Vec3 m{body.rest.positions[3 * a], body.rest.positions[3 * a + 1], body.rest.positions[3 * a + 2]};
    const Vec3 p = f * m + Vec3{0.3, -1.2, 2.0};
    x[3 * a] = p.x;
    x[3 * a + 1] = p.y;
    x[3 * a + 2] = p.z;
  }
  return x;
}

const linalg::Mat3 kTilt = linalg::to_rotation_matrix(linalg::quaternion_from_axis_angle({1.0, 2.0, -0.5}, 1.1));

// A skewed tet with generic gradients (the unit tet's are axis-aligned).
ElasticBody skewed_tet_body() {
  TetMesh mesh;
  mesh.positions = {0.1, -0.2, 0.05, 1.3, 0.1, -0.2, 0.2, 0.9, 0.3, -0.1, 0.25, 1.1};
  mesh.tets = {0, 1, 2, 3};
  return make_elastic_body(std::move(mesh), Material{3e5, 0.27, 900.0}, "skewed tet");
}

// y = B·K·Bᵀ·v and B·K·Bᵀ formed densely, 12×12 at a time.
ElementMatrix dense_rotated(const ElementMatrix& k, const ElementFrame& frame, double scale) {
  auto b = [&](std::size_t i, std::size_t j) {
    return i / 3 == j / 3 ? frame[i / 3](static_cast<int>(i % 3), static_cast<int>(j % 3)) : 0.0;
  };
  ElementMatrix out{};
  for (std::size_t i = 0; i < 12; ++i) {
    for (std::size_t j = 0; j < 12; ++j) {
      double sum = 0.0;
      for (std::size_t p = 0; p < 12; ++p) {
        for (std::size_t q = 0; q < 12; ++q) sum += b(i, p) * k[q * 12 + p] * b(j, q);
      }
      out[j * 12 + i] = scale * sum;
    }
  }
  return out;
}

TEST(CorotationalElement, CompactKernelsEqualTheDenseStiffnessInAnyFrame) {
  const ElasticBody body = skewed_tet_body();
  const ElementMatrix k = dense_stiffness(body);
  const IsotropicTet tet = isotropic_tet(body, 0);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> entry(-1.0, 1.0);
  ElementFrame frame;  // general 3×3 blocks, not only rotations
  for (Mat3& q : frame) {
    for (double& e : q.entries) e = entry(rng);
  }
  ElementVector v{};
  for (double& e : v) e = entry(rng);
  const ElementMatrix expected = dense_rotated(k, frame, 0.7);
  const ElementMatrix actual = rotate_element_matrix(tet, frame, 0.7);
  const ElementVector product = rotated_matrix_times(tet, frame, 0.7, v);
  const double tolerance = 1e-12 * max_abs(k);
  for (std::size_t i = 0; i < 12; ++i) {
    double dense = 0.0;
    for (std::size_t j = 0; j < 12; ++j) {
      EXPECT_NEAR(actual[j * 12 + i], expected[j * 12 + i], tolerance) << "entry (" << i << ", " << j << ")";
      dense += expected[j * 12 + i] * v[j];
    }
    EXPECT_NEAR(product[i], dense, 10 * tolerance) << "row " << i;
  }
}

TEST(CorotationalElement, ForceEqualsTheDenseCorotatedForce) {
  // f = −R·K·(Rᵀ·x − m) with K dense, for a stretched, sheared, rotated and moved element.
  const ElasticBody body = skewed_tet_body();
  const ElementMatrix k = dense_stiffness(body);
  const std::vector<double> x = posed(body, 0.2, kTilt);
  const Mat3 r = rotation_at(body, x);
  ElementVector displacement{};
  for (std::size_t a = 0; a < 4; ++a) {
    const Vec3 current{x[3 * a], x[3 * a + 1], x[3 * a + 2]};
    const Vec3 rest{body.rest.positions[3 * a], body.rest.positions[3 * a + 1], body.rest.positions[3 * a + 2]};
    const Vec3 d = linalg::transpose(r) * current - rest;
    displacement[3 * a] = d.x;
    displacement[3 * a + 1] = d.y;
    displacement[3 * a + 2] = d.z;
  }
  const ElementVector force = force_at(body, x);
  for (std::size_t a = 0; a < 4; ++a) {
    Vec3 rest_frame{};
    for (std::size_t j = 0; j < 12; ++j) {
      rest_frame += displacement[j] * Vec3{k[j * 12 + 3 * a], k[j * 12 + 3 * a + 1], k[j * 12 + 3 * a + 2]};
    }
    const Vec3 expected = -(r * rest_frame);
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(force[3 * a + static_cast<std::size_t>(c)], expected[c], 1e-10 * max_abs(k)) << "vertex " << a;
    }
  }
}

TEST(CorotationalElement, StiffnessIsTheForceJacobianOfARotatedElement) {
  const ElasticBody body = unit_tet_body();
  EXPECT_LT(tangent_mismatch(body, posed(body, 0.0, kTilt)), 1e-6);
}

TEST(CorotationalElement, StiffnessMismatchOfADeformedElementShrinksWithTheStrain) {
  const ElasticBody body = unit_tet_body();
  const double coarse = tangent_mismatch(body, posed(body, 1e-2, kTilt));
  const double fine = tangent_mismatch(body, posed(body, 1e-3, kTilt));
  EXPECT_GT(coarse, 1e-5);  // the rotation-gradient term is really there
  EXPECT_LT(coarse, 0.1);
  EXPECT_NEAR(coarse / fine, 10.0, 2.0);  // and first order in the strain
}

TEST(CorotationalElement, RigidMotionHasNoElasticForce) {
  const ElasticBody body = unit_tet_body();
  const ElementVector f = force_at(body, posed(body, 0.0, kTilt));
  for (double v : f) EXPECT_NEAR(v, 0.0, 1e-9 * max_abs(dense_stiffness(body)));
}

TEST(CorotationalElement, InvertedElementGetsAProperRotationAndARestoringForce) {
  const ElasticBody body = unit_tet_body();
  for (const linalg::Mat3& pose : {linalg::Mat3::identity(), kTilt}) {
    // Vertex 3 pushed through the opposite face, then the whole element rotated.
    std::vector<double> x = body.rest.positions;
    x[9] = 0.1;
    x[10] = 0.1;
    x[11] = -0.3;
    for (std::size_t a = 0; a < 4; ++a) {
      const Vec3 p = pose * Vec3{x[3 * a], x[3 * a + 1], x[3 * a + 2]};
      x[3 * a] = p.x;
      x[3 * a + 1] = p.y;
      x[3 * a + 2] = p.z;
    }
    ASSERT_LT(linalg::determinant(deformation_gradient(body, 0, x)), 0.0);
    const linalg::Mat3 r = rotation_at(body, x);
    EXPECT_NEAR(linalg::determinant(r), 1.0, 1e-12);
    const linalg::Mat3 gram = linalg::transpose_times(r, r);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) EXPECT_NEAR(gram(i, j), i == j ? 1.0 : 0.0, 1e-12);
    }
    // "As uninverted as possible" (Irving et al.): the rotation follows the pose, and the
    // force pushes vertex 3 back through the face toward its rest side.
    EXPECT_LT(linalg::rotation_distance(r, pose), 0.5);
    const ElementVector f = force_at(body, x);
    const Vec3 back = pose * Vec3{0.0, 0.0, 1.0};
    EXPECT_GT(dot(Vec3{f[9], f[10], f[11]}, back), 0.0);
  }
}

TEST(CorotationalElement, WarpCancelingFrameCancelsTheNodeRotations) {
  // Eq. 5 bracketed by the same per-node rotations (eq. 4) is exactly eq. 3.
  const ElasticBody body = unit_tet_body();
  const IsotropicTet k = isotropic_tet(body, 0);
  const double k_scale = max_abs(dense_stiffness(body));
  std::mt19937_64 rng(7);
  std::array<linalg::Mat3, 4> nodes;
  for (auto& r : nodes) r = linalg::to_rotation_matrix(linalg::random_rotation(rng, 3.0));
  const ElementFrame canceling = warp_canceling_frame(kTilt, nodes);
  ElementFrame bracketed;
  for (std::size_t a = 0; a < 4; ++a) bracketed[a] = nodes[a] * canceling[a];
  const ElementMatrix expected = rotate_element_matrix(k, corotational_frame(kTilt), 2.5);
  const ElementMatrix actual = rotate_element_matrix(k, bracketed, 2.5);
  ElementVector v{};
  for (std::size_t i = 0; i < 12; ++i) v[i] = std::sin(1.0 + static_cast<double>(i));
  const ElementVector product = rotated_matrix_times(k, bracketed, 2.5, v);
  for (std::size_t i = 0; i < 12; ++i) {
    double dense = 0.0;
    for (std::size_t j = 0; j < 12; ++j) {
      EXPECT_NEAR(actual[j * 12 + i], expected[j * 12 + i], 1e-12 * k_scale);
      dense += expected[j * 12 + i] * v[j];
    }
    EXPECT_NEAR(product[i], dense, 1e-11 * k_scale);
  }
}

}  // namespace
}  // namespace cholsim::fem
