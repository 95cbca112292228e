// The level profile of the assembly tree accounts for every supernode once: its sums are the
// analysis' totals (n columns, nnz(L), flops), it has AnalyzeStats::tree_levels levels, and
// each supernode's depth is the length of its walk up to a root.
#include <gtest/gtest.h>

#include <algorithm>

#include "factor/analysis/symbolic.hpp"
#include "factor/analysis/tree_level_profile.hpp"
#include "linalg/generators.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

Index walk_to_root(const Symbolic& symbolic, Index s) {
  Index steps = 0;
  for (Index up = symbolic.parent(s); up != -1; up = symbolic.parent(up)) ++steps;
  return steps;
}

void expect_profile_accounts_for_every_supernode(const Symbolic& symbolic) {
  const std::vector<Index> depth = supernode_depths(symbolic);
  for (Index s = 0; s < symbolic.supernode_count(); ++s) EXPECT_EQ(depth[s], walk_to_root(symbolic, s)) << s;

  const std::vector<TreeLevel> profile = tree_level_profile(symbolic);
  const AnalyzeStats& stats = symbolic.stats();
  EXPECT_EQ(static_cast<std::int64_t>(profile.size()), stats.tree_levels);
  Index supernodes = 0, columns = 0, largest_front = 0;
  std::int64_t entries = 0;
  double flops = 0.0;
  for (const TreeLevel& level : profile) {
    EXPECT_GT(level.supernodes, 0);
    EXPECT_LE(level.largest_front, level.front_rows);
    EXPECT_LE(level.front_rows, std::int64_t{level.largest_front} * level.supernodes);
    supernodes += level.supernodes;
    columns += level.columns;
    entries += level.factor_entries;
    flops += level.flops;
    largest_front = std::max(largest_front, level.largest_front);
  }
  EXPECT_EQ(supernodes, stats.supernodes);
  EXPECT_EQ(columns, stats.n);
  EXPECT_EQ(entries, stats.nnz_l);
  EXPECT_NEAR(flops, stats.flops, 1e-9 * stats.flops);
  EXPECT_EQ(largest_front, stats.largest_front);
}

TEST(TreeLevelProfile, SumsToTheAnalysisTotalsOnEveryShape) {
  for (const auto& named : testing::spd_test_matrices()) {
    SCOPED_TRACE(named.name);
    expect_profile_accounts_for_every_supernode(*analyze(named.matrix));
  }
}

TEST(TreeLevelProfile, SumsToTheAnalysisTotalsOnANestedDissectionTree) {
  const auto symbolic = analyze(linalg::laplacian_3d(9, 8, 7));
  ASSERT_GT(symbolic->stats().tree_levels, 3);
  expect_profile_accounts_for_every_supernode(*symbolic);
}

}  // namespace
}  // namespace cholsim::factor
