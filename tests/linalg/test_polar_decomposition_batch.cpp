// The vectorized batch APD (linalg/polar_decomposition_batch) against the scalar APD and the
// SVD polar rotation: near-rotations (the vector path), inverted and arbitrary matrices (the
// scalar fallback), partial blocks and sub-ranges, and size checks.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <stdexcept>
#include <vector>

#include "linalg/polar_decomposition.hpp"
#include "linalg/polar_decomposition_batch.hpp"

namespace cholsim::linalg {
namespace {

/// Structure-of-arrays copies of a list of matrices and warm starts.
struct SoA {
  std::array<std::vector<double>, 9> f;
  std::array<std::vector<double>, 4> q;

  SoA(const std::vector<Mat3>& gradients, const std::vector<Quaternion>& warm) {
    for (auto& a : f) a.resize(gradients.size());
    for (auto& a : q) a.resize(gradients.size());
    for (std::size_t e = 0; e < gradients.size(); ++e) {
      for (std::size_t k = 0; k < 9; ++k) f[k][e] = gradients[e].entries[k];
      q[0][e] = warm[e].w;
      q[1][e] = warm[e].x;
      q[2][e] = warm[e].y;
      q[3][e] = warm[e].z;
    }
  }
  Mat3Arrays gradients() const {
    Mat3Arrays g;
    for (std::size_t k = 0; k < 9; ++k) g.entries[k] = f[k];
    return g;
  }
  QuaternionArrays rotations() { return {q[0], q[1], q[2], q[3]}; }
};

TEST(PolarDecompositionBatch, NearRotationsMatchTheScalarApdWithoutFallback) {
  std::mt19937_64 rng(7);
  const std::size_t count = 8 * 5 + 3;  // a partial last block
  std::vector<Mat3> gradients(count);
  for (Mat3& f : gradients) f = random_near_rotation(rng);
  const std::vector<Quaternion> warm(count);  // identity: the 10° cold start of seed 003 §4
  SoA data(gradients, warm);
  ApdOptions options;
  options.tolerance = 1e-10;
  const ApdBatchStats stats = analytic_polar_decomposition_batch(data.gradients(), data.rotations(), options);
  EXPECT_EQ(stats.scalar_fallbacks, 0);
  EXPECT_GT(stats.vector_iterations, 0);
  for (std::size_t e = 0; e < count; ++e) {
    const Mat3 batch = to_rotation_matrix(data.rotations().get(static_cast<Index>(e)));
    EXPECT_LT(rotation_distance(batch, polar_rotation(gradients[e])), 1e-9) << "element " << e;
    EXPECT_NEAR(norm(data.rotations().get(static_cast<Index>(e))), 1.0, 1e-12);
  }
}

TEST(PolarDecompositionBatch, InvertedAndArbitraryMatricesFallBackToTheScalarResult) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> entry(-1.0, 1.0);
  std::vector<Mat3> gradients;
  for (int k = 0; k < 12; ++k) gradients.push_back(random_near_rotation(rng));
  gradients.push_back(Mat3::diagonal({-1.0, 1.0, 1.0}));  // reflected rest state (seed 003 Fig. 5)
  gradients.push_back(-1.0 * Mat3::diagonal({1.0, 2.0, 3.0}));
  for (int k = 0; k < 10; ++k) {
    Mat3 a;
    for (double& x : a.entries) x = entry(rng);
    gradients.push_back(a);
  }
  const std::vector<Quaternion> warm(gradients.size());
  SoA data(gradients, warm);
  const ApdOptions options;
  const ApdBatchStats stats = analytic_polar_decomposition_batch(data.gradients(), data.rotations(), options);
  EXPECT_GE(stats.scalar_fallbacks, 2);  // at least the two inverted diagonal matrices
  for (std::size_t e = 0; e < gradients.size(); ++e) {
    const Mat3 batch = to_rotation_matrix(data.rotations().get(static_cast<Index>(e)));
    const Mat3 scalar = to_rotation_matrix(analytic_polar_decomposition(gradients[e], Quaternion{}, options));
    // Same maximizer of tr(Rᵀ·F): compare the objective (degenerate F have many maximizers).
    EXPECT_NEAR(trace(transpose_times(batch, gradients[e])), trace(transpose_times(scalar, gradients[e])), 1e-9)
        << "element " << e;
    EXPECT_NEAR(determinant(batch), 1.0, 1e-12);
  }
}

TEST(PolarDecompositionBatch, RangeLeavesOtherElementsUntouched) {
  std::mt19937_64 rng(3);
  std::vector<Mat3> gradients(20);
  for (Mat3& f : gradients) f = random_near_rotation(rng);
  SoA data(gradients, std::vector<Quaternion>(gradients.size()));
  analytic_polar_decomposition_batch(data.gradients(), data.rotations(), 5, 13);
  for (Index e = 0; e < 20; ++e) {
    const bool inside = e >= 5 && e < 13;
    const Quaternion q = data.rotations().get(e);
    if (inside) {
      EXPECT_LT(rotation_distance(to_rotation_matrix(q), polar_rotation(gradients[static_cast<std::size_t>(e)])), 1e-9);
    } else {
      EXPECT_EQ(q, Quaternion{});
    }
  }
}

TEST(PolarDecompositionBatch, InterleavedBlocksMatchTheScalarApdAndPadTheirLanes) {
  std::mt19937_64 rng(11);
  std::array<ApdBlock, kApdInterleavedBlocks> blocks{};
  std::array<int, kApdInterleavedBlocks> lanes{};
  std::vector<std::vector<Mat3>> gradients(blocks.size());
  std::vector<std::vector<Quaternion>> warm(blocks.size());
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    lanes[b] = b == 0 ? static_cast<int>(kApdBatchLanes) : 3;  // a full and a partial block
    for (int l = 0; l < static_cast<int>(kApdBatchLanes); ++l) {
      // The padding lanes hold garbage the routine must replace.
      const Mat3 f = l < lanes[b] ? random_near_rotation(rng) : Mat3{{std::nan(""), 1e300, -7.0, 0, 0, 0, 0, 0, 0}};
      const Quaternion q = l < lanes[b] ? random_rotation(rng, 0.2) : Quaternion{3.0, 0.0, 0.0, 0.0};
      for (std::size_t k = 0; k < 9; ++k) blocks[b].f[k][l] = f.entries[k];
      blocks[b].q[0][l] = q.w;
      blocks[b].q[1][l] = q.x;
      blocks[b].q[2][l] = q.y;
      blocks[b].q[3][l] = q.z;
      gradients[b].push_back(f);
      warm[b].push_back(q);
    }
  }
  ApdOptions options;
  options.tolerance = 1e-10;
  const ApdBatchStats stats = analytic_polar_decomposition_blocks(blocks, lanes, options);
  EXPECT_EQ(stats.scalar_fallbacks, 0);
  EXPECT_EQ(stats.unconverged, 0);
  EXPECT_GE(stats.vector_iterations, 2 * static_cast<std::int64_t>(blocks.size()));  // per block, not per pair
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    for (int l = 0; l < static_cast<int>(kApdBatchLanes); ++l) {
      const Quaternion q{blocks[b].q[0][l], blocks[b].q[1][l], blocks[b].q[2][l], blocks[b].q[3][l]};
      if (l >= lanes[b]) {
        EXPECT_EQ(q, Quaternion{}) << "padding lane " << l << " of block " << b;
        continue;
      }
      const Quaternion scalar = analytic_polar_decomposition(gradients[b][static_cast<std::size_t>(l)],
                                                             warm[b][static_cast<std::size_t>(l)], options);
      EXPECT_LT(rotation_distance(to_rotation_matrix(q), to_rotation_matrix(scalar)), 1e-9) << b << "," << l;
      EXPECT_LT(rotation_distance(to_rotation_matrix(q), polar_rotation(gradients[b][static_cast<std::size_t>(l)])), 1e-9);
      EXPECT_NEAR(norm(q), 1.0, 1e-12);
    }
  }
}

TEST(PolarDecompositionBatch, SinglePrecisionBlocksReachThePolarRotationToFloatAccuracy) {
  // Float blocks (16 lanes): near-rotations on the vector path, one reflected lane on the scalar
  // fallback (computed in double, rounded back), a partial block whose padding holds garbage.
  using Block = ApdBlockOf<float>;
  static_assert(Block::kLanes == 16);
  std::mt19937_64 rng(23);
  std::array<Block, kApdInterleavedBlocks> blocks{};
  std::array<int, kApdInterleavedBlocks> lanes = {Block::kLanes, 5};
  std::vector<std::vector<Mat3>> gradients(blocks.size());
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    for (int l = 0; l < Block::kLanes; ++l) {
      Mat3 f = random_near_rotation(rng);
      if (b == 0 && l == 7) f = Mat3::diagonal({-1.0, 1.0, 1.0});  // reflected rest state (seed 003 Fig. 5)
      const Quaternion q = l < lanes[b] ? random_rotation(rng, 0.2) : Quaternion{3.0, 0.0, 0.0, 0.0};
      for (std::size_t k = 0; k < 9; ++k) blocks[b].f[k][l] = l < lanes[b] ? static_cast<float>(f.entries[k]) : 1e30f;
      blocks[b].q[0][l] = static_cast<float>(q.w);
      blocks[b].q[1][l] = static_cast<float>(q.x);
      blocks[b].q[2][l] = static_cast<float>(q.y);
      blocks[b].q[3][l] = static_cast<float>(q.z);
      // The matrix the routine sees: f rounded to float.
      for (double& x : f.entries) x = static_cast<float>(x);
      gradients[b].push_back(f);
    }
  }
  ApdOptions options;
  options.tolerance = 1e-4;  // well above float rounding of the step (~1e-7)
  const ApdBatchStats stats = analytic_polar_decomposition_blocks(blocks, lanes, options);
  EXPECT_EQ(stats.scalar_fallbacks, 1);
  EXPECT_EQ(stats.unconverged, 0);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    for (int l = 0; l < Block::kLanes; ++l) {
      const Quaternion q{blocks[b].q[0][l], blocks[b].q[1][l], blocks[b].q[2][l], blocks[b].q[3][l]};
      if (l >= lanes[b]) {
        EXPECT_EQ(q, Quaternion{}) << "padding lane " << l << " of block " << b;
        continue;
      }
      const Mat3& f = gradients[b][static_cast<std::size_t>(l)];
      const Mat3 r = to_rotation_matrix(normalized(q));
      const Mat3 reference = to_rotation_matrix(analytic_polar_decomposition(f, Quaternion{}, options));
      // Same maximizer of tr(Rᵀ·F) (the reflected lane has several): compare the objective.
      EXPECT_NEAR(trace(transpose_times(r, f)), trace(transpose_times(reference, f)), 1e-5) << b << "," << l;
      if (!(b == 0 && l == 7)) {
        EXPECT_LT(rotation_distance(r, polar_rotation(f)), 1e-5) << b << "," << l;
      }
      EXPECT_NEAR(norm(q), 1.0, 1e-6);
    }
  }
}

TEST(PolarDecompositionBatch, BlocksRejectBadCounts) {
  std::array<ApdBlock, kApdInterleavedBlocks + 1> blocks{};
  std::array<int, kApdInterleavedBlocks + 1> lanes{};
  EXPECT_THROW(analytic_polar_decomposition_blocks(blocks, lanes), std::invalid_argument);
  EXPECT_THROW(analytic_polar_decomposition_blocks(std::span(blocks).first(1), std::span<const int>(lanes).first(2)),
               std::invalid_argument);
  lanes[0] = static_cast<int>(kApdBatchLanes) + 1;
  EXPECT_THROW(analytic_polar_decomposition_blocks(std::span(blocks).first(1), std::span<const int>(lanes).first(1)),
               std::invalid_argument);
}

TEST(PolarDecompositionBatch, RejectsMismatchedArrays) {
  SoA data(std::vector<Mat3>(4, Mat3::identity()), std::vector<Quaternion>(4));
  data.q[2].resize(3);
  EXPECT_THROW(analytic_polar_decomposition_batch(data.gradients(), data.rotations()), std::invalid_argument);
  SoA ok(std::vector<Mat3>(4, Mat3::identity()), std::vector<Quaternion>(4));
  EXPECT_THROW(analytic_polar_decomposition_batch(ok.gradients(), ok.rotations(), 2, 5), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::linalg
