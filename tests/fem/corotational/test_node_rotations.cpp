// Per-node rotations by Horn's quaternion method (seed 000 §3.3).
#include "fem/corotational/node_rotations.hpp"

#include <gtest/gtest.h>

#include <random>

#include "linalg/polar_decomposition.hpp"
#include "test_corotational_scenes.hpp"

namespace cholsim::fem {
namespace {

using linalg::Mat3;
using linalg::Vec3;

TEST(NodeRotations, SymmetricEigen4SolvesTheEigenproblem) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    std::array<double, 16> a{};
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j <= i; ++j) {
        a[static_cast<std::size_t>(4 * i + j)] = a[static_cast<std::size_t>(4 * j + i)] = uniform(rng);
      }
    }
    const SymmetricEigen4 eigen = symmetric_eigen4(a);
    for (std::size_t k = 0; k < 4; ++k) {
      if (k > 0) {
        EXPECT_LE(eigen.values[k - 1], eigen.values[k]);
      }
      for (std::size_t i = 0; i < 4; ++i) {
        double av = 0.0;
        for (std::size_t j = 0; j < 4; ++j) av += a[4 * i + j] * eigen.vectors[4 * k + j];
        EXPECT_NEAR(av, eigen.values[k] * eigen.vectors[4 * k + i], 1e-13);
      }
      for (std::size_t l = 0; l < 4; ++l) {
        double vv = 0.0;
        for (std::size_t j = 0; j < 4; ++j) vv += eigen.vectors[4 * k + j] * eigen.vectors[4 * l + j];
        EXPECT_NEAR(vv, k == l ? 1.0 : 0.0, 1e-13);
      }
    }
  }
}

// The positions turned by a random rotation of up to `max_angle`, shifted by `translation`,
// then each coordinate moved by a uniform random amount in [−jitter, jitter].
std::vector<double> rotated_and_jittered(const std::vector<double>& positions, std::mt19937_64& rng, double max_angle,
                                         double jitter, const Vec3& translation) {
  std::vector<double> moved = test::rigidly_moved(
      positions, linalg::to_rotation_matrix(linalg::random_rotation(rng, max_angle)), {}, translation);
  std::uniform_real_distribution<double> offset(-jitter, jitter);
  for (double& v : moved) v += offset(rng);
  return moved;
}

// S = Σ_j p_j·q_jᵀ over node i's one-ring: rest offsets p, current offsets q.
Mat3 one_ring_covariance(const NodeRotationFitter& fitter, const std::vector<double>& rest,
                         const std::vector<double>& current, Index i) {
  const auto ii = static_cast<std::size_t>(i);
  Mat3 covariance = Mat3::zero();
  for (const Index j : fitter.neighbours(i)) {
    const auto jj = static_cast<std::size_t>(j);
    covariance += linalg::outer(test::node(rest, jj) - test::node(rest, ii), test::node(current, jj) - test::node(current, ii));
  }
  return covariance;
}

TEST(NodeRotations, RigidlyRotatedMeshGivesThatRotationAtEveryNode) {
  const TetMesh mesh = linalg::structured_tet_box(3, 2, 2, 0.1);
  const NodeRotationFitter fitter(mesh);
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 4; ++trial) {
    const Mat3 rotation = linalg::to_rotation_matrix(linalg::random_rotation(rng, 3.1));
    const auto moved = test::rigidly_moved(mesh.positions, rotation, {0.1, 0.2, 0.3}, {1.0, -2.0, 0.5});
    std::vector<Mat3> rotations(static_cast<std::size_t>(mesh.node_count()));
    fitter.fit(mesh.positions, moved, rotations, 2);
    for (const Mat3& r : rotations) {
      for (std::size_t k = 0; k < 9; ++k) EXPECT_NEAR(r.entries[k], rotation.entries[k], 1e-12);
    }
  }
}

TEST(NodeRotations, HornMatchesThePolarRotationOfTheCovariance) {
  // Horn's quaternion maximizes Σ q_jᵀ·R·p_j = tr(Rᵀ·Sᵀ): the polar rotation of Sᵀ.
  const TetMesh mesh = linalg::structured_tet_box(2, 2, 2, 0.5);
  const NodeRotationFitter fitter(mesh);
  std::mt19937_64 rng(5);
  const std::vector<double> deformed = rotated_and_jittered(mesh.positions, rng, 2.0, 0.1, {});
  std::vector<Mat3> rotations(static_cast<std::size_t>(mesh.node_count()));
  fitter.fit(mesh.positions, deformed, rotations, 1);
  for (Index i = 0; i < mesh.node_count(); ++i) {
    const auto ii = static_cast<std::size_t>(i);
    const Mat3 covariance = one_ring_covariance(fitter, mesh.positions, deformed, i);
    EXPECT_LT(linalg::rotation_distance(rotations[ii], linalg::polar_rotation(linalg::transpose(covariance))), 1e-10);
  }
}

// fit() warm-starts each node from the rotation passed in. Whatever that start — the
// identity, a fresh zero array, a rotation far from the answer (up to a half turn away) —
// the result is Horn's eigenvector rotation of the same covariance.
TEST(NodeRotations, WarmStartedFitAgreesWithHornFromAnyStart) {
  const TetMesh mesh = linalg::structured_tet_box(3, 2, 2, 0.2);
  const NodeRotationFitter fitter(mesh);
  std::mt19937_64 rng(17);
  const std::vector<double> deformed = rotated_and_jittered(mesh.positions, rng, 2.5, 0.03, {0.3, 0.0, -1.0});
  const auto nodes = static_cast<std::size_t>(mesh.node_count());
  std::vector<std::vector<Mat3>> starts{std::vector<Mat3>(nodes, Mat3::identity()), std::vector<Mat3>(nodes)};
  std::vector<Mat3> random_starts(nodes);
  for (Mat3& r : random_starts) r = linalg::to_rotation_matrix(linalg::random_rotation(rng, 3.1));
  starts.push_back(random_starts);
  for (std::vector<Mat3>& rotations : starts) {
    fitter.fit(mesh.positions, deformed, rotations, 2);
    for (std::size_t i = 0; i < nodes; ++i) {
      const Mat3 covariance = one_ring_covariance(fitter, mesh.positions, deformed, static_cast<Index>(i));
      EXPECT_LT(linalg::rotation_distance(rotations[i], linalg::to_rotation_matrix(horn_rotation(covariance))), 1e-10)
          << "node " << i;
    }
  }
}

TEST(NodeRotations, OneRingHoldsTheNodesSharingATet) {
  TetMesh mesh;
  mesh.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
  mesh.tets = {0, 1, 2, 3, 1, 2, 3, 4};
  const NodeRotationFitter fitter(mesh);
  EXPECT_EQ(std::vector<Index>(fitter.neighbours(0).begin(), fitter.neighbours(0).end()), (std::vector<Index>{1, 2, 3}));
  EXPECT_EQ(std::vector<Index>(fitter.neighbours(1).begin(), fitter.neighbours(1).end()), (std::vector<Index>{0, 2, 3, 4}));
  EXPECT_EQ(std::vector<Index>(fitter.neighbours(4).begin(), fitter.neighbours(4).end()), (std::vector<Index>{1, 2, 3}));
}

}  // namespace
}  // namespace cholsim::fem
