// The memory a factorization will allocate, predicted from the analysis alone (issue 23,
// memory admission): exact for one thread (with and without retained update blocks), and an
// upper bound that holds for any thread count and timing.
#include <gtest/gtest.h>

#include <algorithm>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/numeric/memory_estimate.hpp"
#include "linalg/generators.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

void expect_one_thread_prediction_exact(const linalg::SymmetricCscMatrix& a, const std::shared_ptr<const Symbolic>& symbolic,
                                        const FactorOptions& options) {
  const MemoryEstimate estimate = estimate_factor_memory(*symbolic, options);
  Factor factor(symbolic);
  ASSERT_TRUE(factor.factorize(a, options).ok());
  const FactorStats& stats = factor.stats();
  EXPECT_EQ(estimate.factor_bytes, stats.factor_bytes);
  EXPECT_EQ(estimate.peak_update_bytes, stats.peak_update_bytes);
  EXPECT_EQ(estimate.retained_update_bytes, stats.retained_update_bytes);
  EXPECT_EQ(estimate.update_arena_bytes, stats.update_arena_bytes);
  EXPECT_GE(estimate.peak_update_bound_bytes, estimate.peak_update_bytes);
  if (options.retain_update_blocks) {
    EXPECT_EQ(estimate.update_arena_bytes, 0);  // retained stores allocate block by block
  } else {
    EXPECT_GE(estimate.update_arena_bytes, estimate.peak_update_bytes);
  }
  EXPECT_EQ(estimate.factorization_bytes(),
            estimate.factor_bytes + std::max(estimate.peak_update_bytes, estimate.update_arena_bytes) +
                estimate.bookkeeping_bytes);
}

TEST(MemoryEstimate, OneThreadPeakIsExactOnEveryShape) {
  for (const auto& named : testing::spd_test_matrices()) {
    SCOPED_TRACE(named.name);
    expect_one_thread_prediction_exact(named.matrix, analyze(named.matrix, {}), {.threads = 1});
  }
}

TEST(MemoryEstimate, OneThreadPeakIsExactWithRetainedBlocks) {
  const linalg::SymmetricCscMatrix a = testing::elasticity_cube(6);
  const auto symbolic = testing::analyze_elasticity(a);
  for (const double min_flops : {0.0, 100.0}) {
    SCOPED_TRACE(min_flops);
    const FactorOptions options{.threads = 1, .retain_update_blocks = true, .retain_min_flops_per_entry = min_flops};
    expect_one_thread_prediction_exact(a, symbolic, options);
    EXPECT_GT(estimate_factor_memory(*symbolic, options).retained_update_bytes, 0);
  }
}

TEST(MemoryEstimate, BoundHoldsForTheMeasuredTwoThreadPeak) {
  const linalg::SymmetricCscMatrix a = testing::elasticity_cube(8);
  const auto symbolic = testing::analyze_elasticity(a);
  const MemoryEstimate estimate = estimate_factor_memory(*symbolic, {.threads = 2});
  for (int run = 0; run < 3; ++run) {
    Factor factor(symbolic);
    ASSERT_TRUE(factor.factorize(a, {.threads = 2}).ok());
    EXPECT_LE(factor.stats().peak_update_bytes, estimate.peak_update_bound_bytes);
  }
  EXPECT_GT(estimate.peak_update_bytes, 0);
  EXPECT_LE(estimate.peak_update_bytes, estimate.peak_update_bound_bytes);
}

TEST(MemoryEstimate, SymbolicBytesCoverItsPerColumnArrays) {
  const linalg::SymmetricCscMatrix a = testing::elasticity_cube(4);
  const auto symbolic = testing::analyze_elasticity(a);
  // At least the permutation and its inverse, and the row structure of every supernode.
  std::int64_t rows = 0;
  for (Index s = 0; s < symbolic->supernode_count(); ++s) rows += symbolic->row_count(s);
  EXPECT_GE(symbolic->bytes(), 8 * static_cast<std::int64_t>(a.size()) + 4 * rows);
}

}  // namespace
}  // namespace cholsim::factor
