// Element kernels of corotational tets (seed 000 §3.1, §4.1) against finite differences and
// identities that hold for every rotation.
#include <gtest/gtest.h>

#include <random>

#include "fem/corotational_element.hpp"
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

ElementVector force_at(const ElasticBody& body, const ElementMatrix& k, std::span<const double> x) {
  return corotated_elastic_force(k, element_rotation(body, 0, x), gather_element(body, 0, x),
                                 gather_element(body, 0, body.rest.positions));
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
  const ElementMatrix k = rest_stiffness(body, 0);
  const ElementMatrix corotated = rotate_element_matrix(k, corotational_frame(element_rotation(body, 0, x)), 1.0);
  std::vector<double> probe(x.begin(), x.end());
  const double h = 1e-6;
  double worst = 0.0;
  for (std::size_t j = 0; j < 12; ++j) {
    probe[j] = x[j] + h;
    const ElementVector plus = force_at(body, k, probe);
    probe[j] = x[j] - h;
    const ElementVector minus = force_at(body, k, probe);
    probe[j] = x[j];
    for (std::size_t i = 0; i < 12; ++i) {
      worst = std::max(worst, std::abs((plus[i] - minus[i]) / (2 * h) + corotated[j * 12 + i]));
    }
  }
  return worst / max_abs(k);
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
  const ElementMatrix k = rest_stiffness(body, 0);
  const ElementVector f = force_at(body, k, posed(body, 0.0, kTilt));
  for (double v : f) EXPECT_NEAR(v, 0.0, 1e-9 * max_abs(k));
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
    const linalg::Mat3 r = element_rotation(body, 0, x);
    EXPECT_NEAR(linalg::determinant(r), 1.0, 1e-12);
    const linalg::Mat3 gram = linalg::transpose_times(r, r);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) EXPECT_NEAR(gram(i, j), i == j ? 1.0 : 0.0, 1e-12);
    }
    // "As uninverted as possible" (Irving et al.): the rotation follows the pose, and the
    // force pushes vertex 3 back through the face toward its rest side.
    EXPECT_LT(linalg::rotation_distance(r, pose), 0.5);
    const ElementVector f = force_at(body, rest_stiffness(body, 0), x);
    const Vec3 back = pose * Vec3{0.0, 0.0, 1.0};
    EXPECT_GT(dot(Vec3{f[9], f[10], f[11]}, back), 0.0);
  }
}

TEST(CorotationalElement, WarpCancelingFrameCancelsTheNodeRotations) {
  // Eq. 5 bracketed by the same per-node rotations (eq. 4) is exactly eq. 3.
  const ElasticBody body = unit_tet_body();
  const ElementMatrix k = rest_stiffness(body, 0);
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
      EXPECT_NEAR(actual[j * 12 + i], expected[j * 12 + i], 1e-12 * max_abs(k));
      dense += expected[j * 12 + i] * v[j];
    }
    EXPECT_NEAR(product[i], dense, 1e-11 * max_abs(k));
  }
}

}  // namespace
}  // namespace cholsim::fem
