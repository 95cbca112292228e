// The update-block stack computed from the symbolic structure alone predicts what a
// one-thread factorization holds: its peak equals the UpdateBlockStore's measured
// FactorStats::peak_update_bytes, and every block is released by the end.
#include <gtest/gtest.h>

#include <algorithm>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/numeric/update_stack_profile.hpp"
#include "linalg/generators.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

/// Returns the predicted peak.
std::int64_t expect_stack_matches_one_thread_factorization(const linalg::SymmetricCscMatrix& a, const AnalyzeOptions& options) {
  const auto symbolic = analyze(a, options);
  const UpdateStackProfile stack = sequential_update_stack(*symbolic);
  EXPECT_EQ(static_cast<Index>(stack.bytes_while_computing.size()), symbolic->supernode_count());
  if (symbolic->supernode_count() > 0) {
    EXPECT_EQ(stack.bytes_after_release.back(), 0);
  }
  EXPECT_EQ(stack.peak_bytes,
            stack.bytes_while_computing.empty()
                ? 0
                : *std::max_element(stack.bytes_while_computing.begin(), stack.bytes_while_computing.end()));

  Factor factor(symbolic);
  EXPECT_TRUE(factor.factorize(a, {.threads = 1}).ok());
  EXPECT_EQ(stack.peak_bytes, factor.stats().peak_update_bytes);
  return stack.peak_bytes;
}

TEST(UpdateStackProfile, PeakEqualsTheOneThreadFactorizationOnEveryShape) {
  for (const auto& named : testing::spd_test_matrices()) {
    SCOPED_TRACE(named.name);
    expect_stack_matches_one_thread_factorization(named.matrix, {});
  }
}

TEST(UpdateStackProfile, PeakEqualsTheOneThreadFactorizationOnElasticity) {
  linalg::ElasticityBoxOptions box;
  box.nx = box.ny = box.nz = 5;
  AnalyzeOptions options;
  options.dofs_per_node = 3;
  EXPECT_GT(expect_stack_matches_one_thread_factorization(linalg::elasticity_matrix(box), options), 0);
}

}  // namespace
}  // namespace cholsim::factor
