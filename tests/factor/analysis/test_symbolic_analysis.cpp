// The symbolic analysis: elimination tree, column counts and supernodes against brute force.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "factor/analysis/column_counts.hpp"
#include "factor/analysis/elimination_tree.hpp"
#include "factor/analysis/symbolic.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

// Symbolic Cholesky by brute force: the structure of every column of L.
std::vector<std::set<Index>> brute_force_structure(const linalg::SymmetricCscMatrix& a) {
  const Index n = a.size();
  std::vector<std::set<Index>> columns(static_cast<std::size_t>(n));
  for (Index c = 0; c < n; ++c) {
    for (linalg::Offset p = a.lower.col_ptr[c]; p < a.lower.col_ptr[c + 1]; ++p) columns[c].insert(a.lower.row_idx[p]);
    columns[c].insert(c);
  }
  for (Index c = 0; c < n; ++c) {
    // Column c's structure below the diagonal propagates to its parent: min row > c.
    auto above = columns[c].upper_bound(c);
    if (above == columns[c].end()) continue;
    const Index parent = *above;
    for (auto it = above; it != columns[c].end(); ++it) columns[parent].insert(*it);
  }
  return columns;
}

class SymbolicAnalysis : public ::testing::TestWithParam<int> {};

TEST_P(SymbolicAnalysis, TreeCountsAndSupernodesMatchBruteForce) {
  const auto named = testing::spd_test_matrices()[static_cast<std::size_t>(GetParam())];
  SCOPED_TRACE(named.name);
  const auto symbolic = analyze(named.matrix);
  const linalg::SymmetricCscMatrix permuted = linalg::permute_symmetric(named.matrix, symbolic->permutation());
  const auto structure = brute_force_structure(permuted);
  const Index n = permuted.size();

  const std::vector<Index> parent = elimination_tree(permuted);
  std::vector<Index> identity(static_cast<std::size_t>(n));
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(postorder(parent), identity) << "the analysis' ordering must already be postordered";
  const std::vector<Index> counts = column_counts(permuted, parent, identity);
  std::int64_t exact = 0;
  for (Index c = 0; c < n; ++c) {
    const auto above = structure[c].upper_bound(c);
    EXPECT_EQ(parent[c], above == structure[c].end() ? -1 : *above) << "parent of " << c;
    EXPECT_EQ(counts[c], static_cast<Index>(structure[c].size())) << "count of " << c;
    exact += static_cast<std::int64_t>(structure[c].size());
  }
  EXPECT_EQ(symbolic->stats().nnz_l_exact, exact);

  // Every column's structure is inside its supernode's rows; supernodes tile the columns.
  Index covered = 0;
  for (Index s = 0; s < symbolic->supernode_count(); ++s) {
    EXPECT_EQ(symbolic->first_column(s), covered);
    covered += symbolic->column_count(s);
    const auto rows = symbolic->rows(s);
    EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
    for (Index c = symbolic->first_column(s); c < symbolic->first_column(s) + symbolic->column_count(s); ++c) {
      for (Index r : structure[c]) EXPECT_TRUE(std::binary_search(rows.begin(), rows.end(), r));
    }
    const Index p = symbolic->parent(s);
    if (p != -1) {
      const auto parent_rows = symbolic->rows(p);
      const auto positions = symbolic->parent_positions(s);
      const auto below = rows.subspan(static_cast<std::size_t>(symbolic->column_count(s)));
      ASSERT_EQ(positions.size(), below.size());
      for (std::size_t i = 0; i < below.size(); ++i) EXPECT_EQ(parent_rows[positions[i]], below[i]);
    }
  }
  EXPECT_EQ(covered, n);
  EXPECT_GE(symbolic->stats().nnz_l, exact);
}

INSTANTIATE_TEST_SUITE_P(AllShapes, SymbolicAnalysis, ::testing::Range(0, 13));

TEST(SymbolicAnalysisOptions, FundamentalSupernodesHoldNoExplicitZeros) {
  const auto named = testing::spd_test_matrices().back();
  AnalyzeOptions options;
  options.amalgamation.enabled = false;
  const auto symbolic = analyze(named.matrix, options);
  EXPECT_EQ(symbolic->stats().nnz_l, symbolic->stats().nnz_l_exact);
  EXPECT_EQ(symbolic->stats().supernodes, symbolic->stats().fundamental_supernodes);
  const auto relaxed = analyze(named.matrix);
  EXPECT_LE(relaxed->stats().supernodes, symbolic->stats().supernodes);
}

TEST(SymbolicAnalysisOptions, GivenPermutationIsUsedUpToPostorder) {
  const auto named = testing::spd_test_matrices()[3];  // tridiagonal: a chain, postorder = identity
  AnalyzeOptions options;
  options.ordering = OrderingMethod::given;
  options.given_permutation.resize(static_cast<std::size_t>(named.matrix.size()));
  std::iota(options.given_permutation.rbegin(), options.given_permutation.rend(), 0);
  const auto symbolic = analyze(named.matrix, options);
  EXPECT_TRUE(std::equal(symbolic->permutation().begin(), symbolic->permutation().end(),
                         options.given_permutation.begin()));
}

}  // namespace
}  // namespace cholsim::factor
