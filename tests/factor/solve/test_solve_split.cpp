// The substitutions split over the tree (factor/solve/solve_split): the cut covers every
// eliminated supernode once, and a factor made on two threads solves — fully or in the three
// phases of a partial factorization — to what the one-thread factor gives, up to rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/schur/schur_complement.hpp"
#include "factor/schur/schur_system.hpp"
#include "factor/solve/solve_split.hpp"
#include "linalg/generators.hpp"

namespace cholsim::factor {
namespace {

// A 3D Laplacian whose factor holds several million values: past kMinParallelSolveValues.
linalg::SymmetricCscMatrix split_test_laplacian() { return linalg::laplacian_3d(28, 28, 28); }

linalg::DenseMatrix split_test_right_hand_sides(Index n, Index count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  linalg::DenseMatrix b(n, count);
  for (Index c = 0; c < count; ++c) {
    for (Index i = 0; i < n; ++i) b(i, c) = value(rng);
  }
  return b;
}

double split_test_difference(const linalg::DenseMatrix& a, const linalg::DenseMatrix& b) {
  double difference = 0.0;
  double scale = 0.0;
  for (Index c = 0; c < a.cols(); ++c) {
    for (Index i = 0; i < a.rows(); ++i) {
      difference = std::max(difference, std::abs(a(i, c) - b(i, c)));
      scale = std::max(scale, std::abs(b(i, c)));
    }
  }
  return difference / scale;
}

void expect_split_covers_tree(const Symbolic& sym, const SolveSplit& split) {
  std::vector<int> seen(static_cast<std::size_t>(sym.eliminated_supernode_count()), 0);
  for (const auto& ranges : split.subtrees) {
    for (const IndexRange& range : ranges) {
      ASSERT_LT(range.begin, range.end);
      // A range is one whole subtree: its last supernode's.
      EXPECT_EQ(sym.subtree_begin(range.end - 1), range.begin);
      for (Index s = range.begin; s < range.end; ++s) ++seen[static_cast<std::size_t>(s)];
    }
  }
  for (Index s : split.top) {
    ++seen[static_cast<std::size_t>(s)];
    const Index first = sym.first_column(s);
    const bool shared = std::any_of(split.shared_rows.begin(), split.shared_rows.end(), [&](const IndexRange& rows) {
      return rows.begin <= first && first + sym.column_count(s) <= rows.end;
    });
    EXPECT_TRUE(shared) << "top supernode " << s << "'s rows are not shared";
  }
  for (std::size_t s = 0; s < seen.size(); ++s) EXPECT_EQ(seen[s], 1) << "supernode " << s;
}

TEST(SolveSplit, CoversEveryEliminatedSupernodeOnce) {
  const auto a = split_test_laplacian();
  const auto sym = analyze(a);
  ASSERT_GT(sym->stats().nnz_l, kMinParallelSolveValues);
  for (const int threads : {2, 3, 4}) {
    SCOPED_TRACE(threads);
    const SolveSplit split = split_for_solve(*sym, threads);
    ASSERT_TRUE(split.parallel());
    EXPECT_EQ(split.subtrees.size(), static_cast<std::size_t>(threads));
    EXPECT_FALSE(split.top.empty());
    expect_split_covers_tree(*sym, split);
  }
}

TEST(SolveSplit, SerialForOneThreadAndForSmallFactors) {
  EXPECT_FALSE(split_for_solve(*analyze(split_test_laplacian()), 1).parallel());
  EXPECT_FALSE(split_for_solve(*analyze(linalg::laplacian_3d(6, 6, 6)), 2).parallel());
}

TEST(SolveSplit, SchurRowsAreShared) {
  const auto a = split_test_laplacian();
  AnalyzeOptions options;
  for (Index i = 0; i < 600; ++i) options.schur_set.push_back(35 * i);
  const auto sym = analyze(a, options);
  const SolveSplit split = split_for_solve(*sym, 2);
  ASSERT_TRUE(split.parallel());
  expect_split_covers_tree(*sym, split);
  ASSERT_FALSE(split.shared_rows.empty());
  EXPECT_EQ(split.shared_rows.back().end, sym->size());
  EXPECT_LE(split.shared_rows.back().begin, sym->size() - sym->schur_size());
}

// Every kernel width: 1 (BLAS on wide supernodes), 2–4 (the top supernodes' steps cut over the
// threads, supernodal_solve.cpp: the root separator here holds 784² values, past the 2¹⁷ from
// which they are), 5 (two kernel groups).
TEST(SolveSplit, TwoThreadSolveEqualsOneThreadSolve) {
  const auto a = split_test_laplacian();
  const auto sym = analyze(a);
  const Index root = sym->eliminated_supernode_count() - 1;
  ASSERT_GE(std::int64_t{sym->row_count(root)} * sym->column_count(root), std::int64_t{1} << 17);
  Factor one_thread(sym);
  Factor two_threads(sym);
  for (const auto& [threads, factor] : {std::pair{1, &one_thread}, std::pair{2, &two_threads}}) {
    FactorOptions options;
    options.threads = threads;
    ASSERT_TRUE(factor->factorize(a, options).ok());
  }
  for (const Index count : {1, 2, 3, 4, 5}) {
    const linalg::DenseMatrix b = split_test_right_hand_sides(a.size(), count, 5);
    linalg::DenseMatrix one = b;
    linalg::DenseMatrix two = b;
    one_thread.solve(one.view());
    two_threads.solve(two.view());
    EXPECT_LT(split_test_difference(two, one), 1e-12) << count << " right-hand sides";
    // And it solves: A·x = b, every column.
    for (Index c = 0; c < count; ++c) {
      std::vector<double> column(two.data() + c * a.size(), two.data() + (c + 1) * a.size());
      std::vector<double> product(static_cast<std::size_t>(a.size()));
      linalg::symmetric_multiply(a, column, product);
      double residual = 0.0;
      for (Index i = 0; i < a.size(); ++i) residual = std::max(residual, std::abs(product[i] - b(i, c)));
      EXPECT_LT(residual, 1e-10) << count << " right-hand sides, column " << c;
    }
  }
}

TEST(SolveSplit, TwoThreadThreePhaseSolveEqualsOneThread) {
  const auto a = split_test_laplacian();
  AnalyzeOptions analyze_options;
  for (Index i = 0; i < 600; ++i) analyze_options.schur_set.push_back(36 * i + 3);
  const auto sym = analyze(a, analyze_options);
  const linalg::DenseMatrix b = split_test_right_hand_sides(a.size(), 3, 6);
  linalg::DenseMatrix one = b;
  linalg::DenseMatrix two = b;
  for (const auto& [threads, x] : {std::pair{1, &one}, std::pair{2, &two}}) {
    SchurComplementFactor partial(sym);
    FactorOptions options;
    options.threads = threads;
    ASSERT_TRUE(partial.factorize(a, options).ok());
    SchurSystem schur(partial.schur_complement(), partial.schur_set());
    ASSERT_TRUE(schur.refactor().ok());
    partial.solve(schur, x->view());
  }
  EXPECT_LT(split_test_difference(two, one), 1e-12);
}

}  // namespace
}  // namespace cholsim::factor
