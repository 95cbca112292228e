// The left-looking top (left_looking_top.hpp, issue 23): the supernodes with the largest update
// blocks and their ancestors pull their updates from L instead of receiving update blocks. The
// factor must be the multifrontal one up to rounding on every shape and at every threshold,
// reproducible bit for bit, fail at the same pivot, and need the memory predicted for it.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/numeric/left_looking_top.hpp"
#include "factor/numeric/memory_estimate.hpp"
#include "factor/numeric/update_stack_profile.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

std::int64_t largest_update_block_bytes(const Symbolic& symbolic) {
  std::int64_t largest = 0;
  for (Index s = 0; s < symbolic.supernode_count(); ++s) largest = std::max(largest, update_block_bytes(symbolic, s));
  return largest;
}

std::vector<double> factor_values(const std::shared_ptr<const Symbolic>& symbolic, const linalg::SymmetricCscMatrix& a,
                                  const FactorOptions& options) {
  Factor factor(symbolic);
  EXPECT_TRUE(factor.factorize(a, options).ok()) << factor.status().message;
  return {factor.values().begin(), factor.values().end()};
}

// Factors `a` with the top at `min_bytes` and multifrontal; expects the same factor up to
// rounding and an accurate solve.
void expect_same_as_multifrontal(const linalg::SymmetricCscMatrix& a, const std::shared_ptr<const Symbolic>& symbolic,
                                 std::int64_t min_bytes, int threads) {
  const std::vector<double> multifrontal = factor_values(symbolic, a, {.threads = threads});
  Factor factor(symbolic);
  ASSERT_TRUE(factor.factorize(a, {.threads = threads, .left_looking_update_bytes = min_bytes}).ok());
  EXPECT_EQ(factor.stats().left_looking_supernodes, LeftLookingTop(*symbolic, min_bytes).supernode_count());
  if (a.size() == 0) return;
  EXPECT_LT(testing::relative_max_difference(factor.values(), multifrontal), 1e-12);
  std::vector<double> b(static_cast<std::size_t>(a.size()));
  std::iota(b.begin(), b.end(), 1.0);
  std::vector<double> x = b;
  factor.solve(x);
  EXPECT_LT(testing::relative_residual(a, x, b), 1e-12);
}

TEST(LeftLookingTop, MatchesMultifrontalOnEveryShapeAtEveryThreshold) {
  for (const auto& named : testing::spd_test_matrices()) {
    const auto symbolic = analyze(named.matrix, {});
    const std::int64_t largest = largest_update_block_bytes(*symbolic);
    for (const std::int64_t min_bytes : {std::int64_t{0}, largest / 4, largest, largest + 1}) {
      SCOPED_TRACE(named.name + ", top from " + std::to_string(min_bytes) + " bytes");
      expect_same_as_multifrontal(named.matrix, symbolic, min_bytes, 1);
    }
  }
}

TEST(LeftLookingTop, MatchesMultifrontalOnAnElasticityBoxOnTwoThreads) {
  const linalg::SymmetricCscMatrix a = testing::elasticity_cube(8);
  const auto symbolic = testing::analyze_elasticity(a);
  const std::int64_t largest = largest_update_block_bytes(*symbolic);
  for (const std::int64_t min_bytes : {std::int64_t{0}, largest / 16, largest / 2}) {
    SCOPED_TRACE(min_bytes);
    ASSERT_GT(LeftLookingTop(*symbolic, min_bytes).supernode_count(), 0);
    expect_same_as_multifrontal(a, symbolic, min_bytes, 2);
  }
}

TEST(LeftLookingTop, TopIsClosedUnderAncestorsAndBlocksKeepTheRest) {
  const linalg::SymmetricCscMatrix a = testing::elasticity_cube(6);
  const auto symbolic = testing::analyze_elasticity(a);
  const Symbolic& sym = *symbolic;
  const LeftLookingTop top(sym, largest_update_block_bytes(sym) / 8);
  ASSERT_GT(top.supernode_count(), 0);
  ASSERT_LT(top.supernode_count(), sym.supernode_count());
  std::vector<Index> owner(static_cast<std::size_t>(sym.size()));
  for (Index s = 0; s < sym.supernode_count(); ++s) {
    std::fill_n(owner.begin() + sym.first_column(s), sym.column_count(s), s);
  }
  std::int64_t rows_in_top_columns = 0;
  for (Index s = 0; s < sym.supernode_count(); ++s) {
    const Index p = sym.parent(s);
    if (top.is_left_looking(s) && p != -1) {
      EXPECT_TRUE(top.is_left_looking(p)) << s;
    }
    if (!top.is_left_looking(s)) {
      EXPECT_LT(update_block_bytes(sym, s), largest_update_block_bytes(sym) / 8) << s;
    }
    // Kept columns: exactly the update rows that belong to multifrontal supernodes.
    const auto rows = sym.rows(s);
    Index multifrontal_rows = 0;
    for (Index i = sym.column_count(s); i < sym.row_count(s); ++i) {
      if (top.is_left_looking(owner[rows[i]])) {
        ++rows_in_top_columns;
      } else {
        ++multifrontal_rows;
      }
    }
    EXPECT_EQ(top.kept_columns()[s], top.is_left_looking(s) ? 0 : multifrontal_rows) << s;
  }
  // Every row of every supernode in a left-looking column is one source's, once.
  std::int64_t source_rows = 0;
  for (Index t = 0; t < sym.supernode_count(); ++t) {
    const auto sources = top.sources(t);
    if (!top.is_left_looking(t)) {
      EXPECT_TRUE(sources.empty());
    }
    for (std::size_t i = 0; i < sources.size(); ++i) {
      if (i > 0) {
        EXPECT_LT(sources[i - 1].source, sources[i].source);
      }
      const auto rows = sym.rows(sources[i].source);
      for (Index r = 0; r < sources[i].rows_in_target; ++r) EXPECT_EQ(owner[rows[sources[i].first_row + r]], t);
      source_rows += sources[i].rows_in_target;
    }
  }
  EXPECT_EQ(source_rows, rows_in_top_columns);
}

TEST(LeftLookingTop, IsBitwiseReproducibleAcrossRunsAndThreadCounts) {
  const linalg::SymmetricCscMatrix a = testing::elasticity_cube(8);
  const auto symbolic = testing::analyze_elasticity(a);
  const FactorOptions one{.threads = 1, .left_looking_update_bytes = largest_update_block_bytes(*symbolic) / 16};
  FactorOptions two = one;
  two.threads = 2;
  const std::vector<double> reference = factor_values(symbolic, a, one);
  for (int run = 0; run < 3; ++run) EXPECT_TRUE(factor_values(symbolic, a, two) == reference) << run;
}

TEST(LeftLookingTop, ReportsTheSameFailingPivotAsMultifrontal) {
  linalg::SymmetricCscMatrix a = testing::elasticity_cube(5);
  const auto symbolic = testing::analyze_elasticity(a);
  // A negative pivot in a column eliminated in the middle of the top, and one near the root.
  for (const Index elimination_column : {symbolic->size() / 2, symbolic->size() - 2}) {
    linalg::SymmetricCscMatrix bad = a;
    const Index column = symbolic->permutation()[elimination_column];
    for (linalg::Offset p = bad.lower.col_ptr[column]; p < bad.lower.col_ptr[column + 1]; ++p) {
      if (bad.lower.row_idx[p] == column) bad.lower.values[p] = -1.0;
    }
    Factor multifrontal(symbolic);
    Factor left_looking(symbolic);
    const FactorStatus expected = multifrontal.factorize(bad, {.threads = 2});
    const FactorStatus status = left_looking.factorize(bad, {.threads = 2, .left_looking_update_bytes = 0});
    ASSERT_EQ(expected.code, FactorStatusCode::not_positive_definite);
    EXPECT_EQ(status.code, expected.code);
    EXPECT_EQ(status.column, expected.column);
  }
}

TEST(LeftLookingTop, OneThreadMemoryPredictionIsExactAndSmaller) {
  const linalg::SymmetricCscMatrix a = testing::elasticity_cube(8);
  const auto symbolic = testing::analyze_elasticity(a);
  const FactorOptions options{.threads = 1, .left_looking_update_bytes = largest_update_block_bytes(*symbolic) / 16};
  const MemoryEstimate estimate = estimate_factor_memory(*symbolic, options);
  const MemoryEstimate multifrontal = estimate_factor_memory(*symbolic, {.threads = 1});
  Factor factor(symbolic);
  ASSERT_TRUE(factor.factorize(a, options).ok());
  EXPECT_EQ(estimate.peak_update_bytes, factor.stats().peak_update_bytes);
  EXPECT_EQ(estimate.update_arena_bytes, factor.stats().update_arena_bytes);
  EXPECT_EQ(estimate.left_looking_supernodes, factor.stats().left_looking_supernodes);
  EXPECT_GT(estimate.left_looking_workspace_bytes, 0);
  EXPECT_LT(estimate.peak_update_bytes, multifrontal.peak_update_bytes / 2);
  EXPECT_LT(estimate.factorization_bytes(), multifrontal.factorization_bytes());
  EXPECT_EQ(estimate.factorization_bytes(), estimate.factor_bytes + estimate.update_block_memory_bytes() +
                                                estimate.left_looking_workspace_bytes + estimate.bookkeeping_bytes);
}

TEST(LeftLookingTop, AppliesToFullAndPartialCpuFactorizationsButNotWithRetainedBlocksOrDerivative) {
  const linalg::SymmetricCscMatrix a = testing::elasticity_cube(5);
  const auto symbolic = testing::analyze_elasticity(a);
  Factor retaining(symbolic);
  ASSERT_TRUE(retaining.factorize(a, {.retain_update_blocks = true, .left_looking_update_bytes = 0}).ok());
  EXPECT_EQ(retaining.stats().left_looking_supernodes, 0);
  EXPECT_TRUE(left_looking_top_for(*symbolic, {.left_looking_update_bytes = 0}, true).empty());

  // The automatic device on a problem below gpu_min_total_flops computes on the CPU: with the top.
  Factor automatic(symbolic);
  ASSERT_LT(symbolic->stats().flops, FactorOptions{}.gpu_min_total_flops);
  ASSERT_TRUE(automatic.factorize(a, {.left_looking_update_bytes = 0, .device = FactorDevice::automatic}).ok());
  EXPECT_EQ(automatic.stats().left_looking_supernodes, symbolic->supernode_count());

  // A partial factorization: its Schur supernode pulls into S and stays unfactored.
  AnalyzeOptions with_schur;
  with_schur.dofs_per_node = 3;
  for (Index i = 0; i < 30; ++i) with_schur.schur_set.push_back(i);
  const auto partial = analyze(a, with_schur);
  const LeftLookingTop top(*partial, 0);
  EXPECT_TRUE(top.is_left_looking(partial->eliminated_supernode_count()));
  EXPECT_TRUE(factor_values(partial, a, {.left_looking_update_bytes = 0}) ==
              factor_values(partial, a, {.left_looking_update_bytes = 0, .device = FactorDevice::automatic}));
  EXPECT_LT(testing::relative_max_difference(factor_values(partial, a, {.left_looking_update_bytes = 0}),
                                             factor_values(partial, a, {.left_looking_update_bytes = kNoLeftLookingTop})),
            1e-12);
}

}  // namespace
}  // namespace cholsim::factor
