// The GPU solve (issue 22, factor/gpu/gpu_solve.hpp): on a machine with a CUDA GPU, its
// solutions against Factor::solve and the residual on the factor test matrices, wide supernodes
// cut into several solve units, the lanes layout of the operator-splitting step, and repeated
// solves (the kernels' counters are reset between them). Without a GPU those skip, saying why,
// and the tests of what happens without one run instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "factor/gpu/gpu_solve.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

using testing::relative_max_difference;

#define REQUIRE_GPU()                                                    \
  do {                                                                   \
    std::string why_not;                                                 \
    if (!gpu_available(&why_not)) GTEST_SKIP() << "no GPU: " << why_not; \
  } while (false)

std::vector<double> random_columns(Index n, Index columns, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> b(static_cast<std::size_t>(n) * static_cast<std::size_t>(columns));
  for (double& entry : b) entry = value(rng);
  return b;
}

linalg::DenseView view(std::vector<double>& values, Index n, Index columns) {
  return {values.data(), n, columns, std::max<Index>(n, 1)};
}

// Solves n×columns random right-hand sides on both devices: the GPU's solution must match the
// CPU's and leave a small residual in every column.
void expect_gpu_solve_matches(const linalg::SymmetricCscMatrix& a, const Factor& factor, GpuSolveFactor& gpu,
                              Index columns, const std::string& label) {
  const Index n = a.size();
  const std::vector<double> b = random_columns(n, columns, static_cast<unsigned>(n + columns));
  std::vector<double> x_cpu = b;
  std::vector<double> x_gpu = b;
  factor.solve(view(x_cpu, n, columns));
  gpu.solve(view(x_gpu, n, columns));
  EXPECT_LE(relative_max_difference(x_gpu, x_cpu), 1e-10) << label << ", " << columns << " columns";
  for (Index c = 0; c < columns; ++c) {
    const auto first = static_cast<std::ptrdiff_t>(c) * n;
    const std::vector<double> x(x_gpu.begin() + first, x_gpu.begin() + first + n);
    const std::vector<double> column(b.begin() + first, b.begin() + first + n);
    EXPECT_LE(testing::relative_residual(a, x, column), 1e-12) << label << ", column " << c;
  }
}

TEST(GpuSolve, RefusesAFactorWithoutASuccessfulFullFactorization) {
  const auto a = testing::elasticity_cube(3);
  const Factor unfactored(analyze(a));
  EXPECT_THROW(GpuSolveFactor{unfactored}, std::logic_error);
  AnalyzeOptions partial;
  partial.schur_set = {0, 1, 2};
  Factor schur(analyze(a, partial));
  ASSERT_TRUE(schur.factorize(a).ok());
  EXPECT_THROW(GpuSolveFactor{schur}, std::logic_error);
}

TEST(GpuSolve, WithoutAGpuTheConstructorSaysWhy) {
  std::string why_not;
  if (gpu_available(&why_not)) GTEST_SKIP() << "a GPU is present: the no-GPU behaviour is not observable here";
  const auto a = testing::elasticity_cube(3);
  Factor factor(analyze(a));
  ASSERT_TRUE(factor.factorize(a).ok());
  try {
    GpuSolveFactor gpu(factor);
    ADD_FAILURE() << "constructed without a GPU";
  } catch (const GpuError& error) {
    EXPECT_NE(std::string(error.what()).find(why_not), std::string::npos) << error.what();
  }
}

TEST(GpuSolve, EqualsTheCpuSolveOnTheFactorTestMatrices) {
  REQUIRE_GPU();
  auto matrices = testing::spd_test_matrices();
  matrices.push_back({"elasticity_cube_10", testing::elasticity_cube(10)});
  for (const auto& named : matrices) {
    if (named.matrix.size() == 0) continue;  // nothing to solve (and 0/0 in the comparison)
    Factor factor(analyze(named.matrix));
    ASSERT_TRUE(factor.factorize(named.matrix).ok()) << named.name;
    GpuSolveFactor gpu(factor);
    EXPECT_EQ(gpu.size(), named.matrix.size());
    EXPECT_GT(gpu.device_bytes(), 0);
    for (const Index columns : {1, 3, 4, 7}) expect_gpu_solve_matches(named.matrix, factor, gpu, columns, named.name);
  }
}

// A dense 1300×1300 matrix is one supernode of 1300 columns: more than a solve unit holds, so
// it is solved as two units, the second waiting for the first.
TEST(GpuSolve, CutsWideSupernodesIntoUnits) {
  REQUIRE_GPU();
  const Index n = 1300;
  std::vector<std::pair<Index, Index>> edges;
  for (Index j = 0; j < n; ++j) {
    for (Index i = j + 1; i < n; ++i) edges.emplace_back(i, j);
  }
  const auto a = testing::spd_from_edges(n, edges, 7);
  Factor factor(analyze(a));
  ASSERT_TRUE(factor.factorize(a).ok());
  GpuSolveFactor gpu(factor);
  EXPECT_GE(gpu.unit_count(), 2);
  for (const Index columns : {1, 4}) expect_gpu_solve_matches(a, factor, gpu, columns, "dense 1300");
}

// The operator-splitting step's layout: permuted rows of four lanes and a work row, solved in
// place from the caller's buffer and from the object's own page-locked one, all four lanes or
// the three used; repeated solves give the same answer (the counters the kernels synchronize
// through are reset every time).
TEST(GpuSolve, SolvesLanesFromAnyBufferAndItsOwnRepeatedly) {
  REQUIRE_GPU();
  const auto a = testing::elasticity_cube(8);
  const Index n = a.size();
  Factor factor(analyze(a));
  ASSERT_TRUE(factor.factorize(a).ok());
  GpuSolveFactor gpu(factor);
  const std::vector<double> b = random_columns(n, 3, 11);
  std::vector<double> expected = b;
  factor.solve(view(expected, n, 3));

  const auto permutation = gpu.permutation();
  std::vector<double> lanes(GpuSolveFactor::kLaneWidth * static_cast<std::size_t>(n + 1), 0.0);
  for (Index k = 0; k < n; ++k) {
    for (Index c = 0; c < 3; ++c) lanes[4 * static_cast<std::size_t>(k) + c] = b[static_cast<std::size_t>(c * n + permutation[k])];
  }
  const std::vector<double> right_hand_sides = lanes;
  std::span<double> pinned = gpu.pinned_lanes();
  ASSERT_EQ(pinned.size(), lanes.size());
  std::copy(lanes.begin(), lanes.end(), pinned.begin());
  gpu.solve_lanes(lanes);
  for (int repeat = 0; repeat < 3; ++repeat) {
    std::copy(right_hand_sides.begin(), right_hand_sides.end(), pinned.begin());
    gpu.solve_lanes(pinned, 3);  // the fourth lane is zero: the same solution, less work
    EXPECT_LE(relative_max_difference(pinned, lanes), 1e-13) << "repeat " << repeat;
  }
  EXPECT_GT(gpu.last_solve().device_seconds, 0.0);
  // The kernels read and write the three solved lanes of the mapped buffer, not the fourth.
  EXPECT_EQ(gpu.last_solve().bytes_to_device, static_cast<std::int64_t>(3 * 8 * n));
  EXPECT_EQ(gpu.last_solve().bytes_from_device, static_cast<std::int64_t>(3 * 8 * n));
  std::vector<double> solved(static_cast<std::size_t>(3 * n));
  for (Index k = 0; k < n; ++k) {
    for (Index c = 0; c < 3; ++c) solved[static_cast<std::size_t>(c * n + permutation[k])] = lanes[4 * static_cast<std::size_t>(k) + c];
  }
  EXPECT_LE(relative_max_difference(solved, expected), 1e-10);
  std::vector<double> too_short(lanes.size() - 4);
  EXPECT_THROW(gpu.solve_lanes(too_short), std::invalid_argument);
  EXPECT_THROW(gpu.solve_lanes(lanes, 0), std::invalid_argument);
  EXPECT_THROW(gpu.solve_lanes(lanes, 5), std::invalid_argument);
}

// The recorded timelines show the dependencies the kernels wait for: forward, a unit is ready
// only after every unit signalling it is done; backward, only after the unit it waits for.
TEST(GpuSolve, UnitTimelinesRespectTheTreeOrder) {
  REQUIRE_GPU();
  const auto a = testing::elasticity_cube(8);
  Factor factor(analyze(a));
  ASSERT_TRUE(factor.factorize(a).ok());
  GpuSolveFactor gpu(factor);
  gpu.record_unit_timings(true);
  std::vector<double> b = random_columns(a.size(), 3, 5);
  gpu.solve(view(b, a.size(), 3));
  const auto& forward = gpu.forward_timings();
  const auto& backward = gpu.backward_timings();
  ASSERT_EQ(forward.size(), static_cast<std::size_t>(gpu.unit_count()));
  ASSERT_EQ(backward.size(), forward.size());
  for (std::size_t u = 0; u < forward.size(); ++u) {
    for (const auto* timings : {&forward, &backward}) {
      const GpuSolveUnitTiming& t = (*timings)[u];
      EXPECT_LE(t.claimed, t.ready) << "unit " << u;
      EXPECT_LE(t.ready, t.done) << "unit " << u;
    }
    const Index parent = forward[u].parent_unit;
    if (parent < 0) continue;
    EXPECT_LE(forward[u].done, forward[parent].ready) << "unit " << u << " → " << parent;
    EXPECT_LE(backward[parent].done, backward[u].ready) << "unit " << parent << " → " << u;
  }
  gpu.record_unit_timings(false);
  gpu.solve(view(b, a.size(), 3));
  EXPECT_TRUE(gpu.forward_timings().empty());
}

}  // namespace
}  // namespace cholsim::factor
