#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "linalg/csc_matrix.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::linalg {
namespace {

void expect_dense_near(const DenseMatrix& actual, const DenseMatrix& expected, double tolerance) {
  ASSERT_EQ(actual.rows(), expected.rows());
  ASSERT_EQ(actual.cols(), expected.cols());
  for (Index j = 0; j < expected.cols(); ++j) {
    for (Index i = 0; i < expected.rows(); ++i) {
      EXPECT_NEAR(actual(i, j), expected(i, j), tolerance) << "(" << i << ", " << j << ")";
    }
  }
}

// A random symmetric matrix (lower storage) with about `density` of its entries set and a
// full diagonal, plus its dense twin.
SymmetricCscMatrix random_symmetric(Index n, double density, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Triplets t;
  for (Index j = 0; j < n; ++j) {
    t.add(j, j, 4.0 + uniform(rng));
    for (Index i = j + 1; i < n; ++i) {
      if (std::abs(uniform(rng)) < density) t.add(i, j, uniform(rng));
    }
  }
  return symmetric_from_triplets(n, t);
}

SymmetricCscMatrix small_symmetric() {
  // 4×4 with entries (row ≥ col): (0,0)=4 (2,0)=1 (1,1)=5 (3,1)=2 (2,2)=6 (3,3)=7.
  Triplets t;
  t.add(0, 0, 4.0);
  t.add(2, 0, 1.0);
  t.add(1, 1, 5.0);
  t.add(3, 1, 2.0);
  t.add(2, 2, 6.0);
  t.add(3, 3, 7.0);
  return symmetric_from_triplets(4, t);
}

TEST(CscMatrix, TripletsSumDuplicatesAndSortUnorderedInput) {
  Triplets t;
  t.add(2, 1, 1.0);
  t.add(0, 1, 2.0);
  t.add(2, 1, 3.0);  // duplicate of the first
  t.add(1, 0, -1.0);
  t.add(0, 2, 5.0);
  t.add(0, 1, 0.5);  // duplicate
  const CscMatrix a = csc_from_triplets(3, 3, t);
  EXPECT_NO_THROW(check_valid(a));
  EXPECT_EQ(a.col_ptr, (std::vector<Offset>{0, 1, 3, 4}));
  EXPECT_EQ(a.row_idx, (std::vector<Index>{1, 0, 2, 0}));
  EXPECT_EQ(a.values, (std::vector<double>{-1.0, 2.5, 4.0, 5.0}));
}

TEST(CscMatrix, OutOfRangeTripletsThrow) {
  for (auto [row, col] : {std::pair<Index, Index>{3, 0}, {0, 3}, {-1, 0}, {0, -1}}) {
    Triplets t;
    t.add(0, 0, 1.0);
    t.add(row, col, 1.0);
    EXPECT_THROW(csc_from_triplets(3, 3, t), std::invalid_argument) << row << ", " << col;
    EXPECT_THROW(symmetric_from_triplets(3, t, UpperEntries::transpose), std::invalid_argument);
  }
  Triplets ragged;
  ragged.add(0, 0, 1.0);
  ragged.values.push_back(2.0);
  EXPECT_THROW(csc_from_triplets(3, 3, ragged), std::invalid_argument);
}

TEST(CscMatrix, UpperEntriesRejectTransposeOrDrop) {
  Triplets t;
  t.add(0, 0, 1.0);
  t.add(0, 2, 2.0);  // above the diagonal
  t.add(2, 0, 3.0);
  EXPECT_THROW(symmetric_from_triplets(3, t, UpperEntries::reject), std::invalid_argument);
  const SymmetricCscMatrix transposed = symmetric_from_triplets(3, t, UpperEntries::transpose);
  EXPECT_EQ(transposed.lower.row_idx, (std::vector<Index>{0, 2}));
  EXPECT_EQ(transposed.lower.values, (std::vector<double>{1.0, 5.0}));
  const SymmetricCscMatrix dropped = symmetric_from_triplets(3, t, UpperEntries::drop);
  EXPECT_EQ(dropped.lower.row_idx, (std::vector<Index>{0, 2}));
  EXPECT_EQ(dropped.lower.values, (std::vector<double>{1.0, 3.0}));
  EXPECT_NO_THROW(check_valid(dropped));
}

TEST(CscMatrix, TransposeTwiceIsIdentity) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Triplets t;
  for (int k = 0; k < 40; ++k) {
    t.add(static_cast<Index>(rng() % 7), static_cast<Index>(rng() % 5), uniform(rng));
  }
  const CscMatrix a = csc_from_triplets(7, 5, t);
  const CscMatrix at = transpose(a);
  EXPECT_EQ(at.rows, 5);
  EXPECT_EQ(at.cols, 7);
  EXPECT_NO_THROW(check_valid(at));
  const DenseMatrix d = to_dense(a);
  const DenseMatrix dt = to_dense(at);
  for (Index i = 0; i < 7; ++i) {
    for (Index j = 0; j < 5; ++j) EXPECT_EQ(dt(j, i), d(i, j));
  }
  const CscMatrix back = transpose(at);
  EXPECT_EQ(back.col_ptr, a.col_ptr);
  EXPECT_EQ(back.row_idx, a.row_idx);
  EXPECT_EQ(back.values, a.values);
}

TEST(CscMatrix, ToFullMirrorsTheLowerTriangle) {
  const CscMatrix full = to_full(small_symmetric());
  EXPECT_NO_THROW(check_valid(full));
  EXPECT_EQ(full.nnz(), 8);
  const DenseMatrix d = to_dense(full);
  EXPECT_EQ(d(0, 2), 1.0);
  EXPECT_EQ(d(2, 0), 1.0);
  EXPECT_EQ(d(1, 3), 2.0);
  EXPECT_EQ(d(3, 1), 2.0);
  EXPECT_EQ(d(3, 3), 7.0);
  EXPECT_EQ(d(0, 1), 0.0);
  // A pattern-only matrix stays pattern-only.
  SymmetricCscMatrix pattern = small_symmetric();
  pattern.lower.values.clear();
  const CscMatrix full_pattern = to_full(pattern);
  EXPECT_TRUE(full_pattern.values.empty());
  EXPECT_EQ(full_pattern.row_idx, full.row_idx);
  // ... which has no dense copy.
  EXPECT_THROW((void)to_dense(full_pattern), std::invalid_argument);
}

TEST(CscMatrix, SymmetricMultiplyMatchesDense) {
  const Index n = 23;
  const Index count = 3;
  const SymmetricCscMatrix a = random_symmetric(n, 0.3, 5);
  const DenseMatrix d = to_dense(a);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(n * count));
  for (double& v : x) v = uniform(rng);
  std::vector<double> y(x.size());
  symmetric_multiply(a, x, y, count);
  std::vector<double> y_single(static_cast<std::size_t>(n));
  for (Index v = 0; v < count; ++v) {
    const std::span<const double> xv(x.data() + v * n, static_cast<std::size_t>(n));
    symmetric_multiply(a, xv, y_single);
    for (Index i = 0; i < n; ++i) {
      double expected = 0.0;
      for (Index j = 0; j < n; ++j) expected += d(i, j) * x[static_cast<std::size_t>(j + v * n)];
      EXPECT_NEAR(y[static_cast<std::size_t>(i + v * n)], expected, 1e-13);
      EXPECT_NEAR(y_single[static_cast<std::size_t>(i)], expected, 1e-13);
    }
  }
  // The general multiply on the expanded matrix agrees.
  std::vector<double> y_full(static_cast<std::size_t>(n));
  multiply(to_full(a), std::span<const double>(x.data(), static_cast<std::size_t>(n)), y_full);
  for (Index i = 0; i < n; ++i) EXPECT_NEAR(y_full[static_cast<std::size_t>(i)], y[static_cast<std::size_t>(i)], 1e-13);
  std::vector<double> wrong(static_cast<std::size_t>(n - 1));
  EXPECT_THROW(symmetric_multiply(a, wrong, y_single), std::invalid_argument);
  EXPECT_THROW(symmetric_multiply(a, x, y_single, count), std::invalid_argument);
}

TEST(CscMatrix, PermuteSymmetricEqualsDensePermutation) {
  const Index n = 17;
  const SymmetricCscMatrix a = random_symmetric(n, 0.25, 13);
  std::vector<Index> perm(static_cast<std::size_t>(n));
  for (Index k = 0; k < n; ++k) perm[static_cast<std::size_t>(k)] = (7 * k + 3) % n;  // perm[new] = old
  const SymmetricCscMatrix b = permute_symmetric(a, perm);
  EXPECT_NO_THROW(check_valid(b));
  EXPECT_EQ(b.nnz_lower(), a.nnz_lower());
  // (P·A·Pᵀ)(i, j) = A(perm[i], perm[j]).
  const DenseMatrix da = to_dense(a);
  DenseMatrix expected(n, n);
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < n; ++i) {
      expected(i, j) = da(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(j)]);
    }
  }
  expect_dense_near(to_dense(b), expected, 0.0);
}

TEST(CscMatrix, PermutationChecksReportErrors) {
  const std::vector<Index> good{2, 0, 1};
  EXPECT_EQ(invert_permutation(good), (std::vector<Index>{1, 2, 0}));
  EXPECT_NO_THROW(check_permutation(good, 3, "test"));
  EXPECT_THROW(invert_permutation(std::vector<Index>{0, 0, 1}), std::invalid_argument);
  EXPECT_THROW(invert_permutation(std::vector<Index>{0, 3, 1}), std::invalid_argument);
  EXPECT_THROW(invert_permutation(std::vector<Index>{0, -1, 1}), std::invalid_argument);
  try {
    check_permutation(good, 4, "my ordering");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("my ordering"), std::string::npos);
  }
  EXPECT_THROW(permute_symmetric(small_symmetric(), good), std::invalid_argument);
}

TEST(CscMatrix, CheckValidCatchesEachMalformation) {
  const SymmetricCscMatrix good = small_symmetric();
  EXPECT_NO_THROW(check_valid(good));
  auto expect_invalid = [](const CscMatrix& a, const char* what) {
    EXPECT_THROW(check_valid(a), std::invalid_argument) << what;
  };
  {
    CscMatrix a = good.lower;
    a.rows = -1;
    expect_invalid(a, "negative dimensions");
  }
  {
    CscMatrix a = good.lower;
    a.col_ptr.pop_back();
    expect_invalid(a, "col_ptr length");
  }
  {
    CscMatrix a = good.lower;
    a.col_ptr.front() = 1;
    expect_invalid(a, "col_ptr[0]");
  }
  {
    CscMatrix a = good.lower;
    a.col_ptr.back() += 1;
    expect_invalid(a, "col_ptr[cols] vs nnz");
  }
  {
    CscMatrix a = good.lower;
    a.values.pop_back();
    expect_invalid(a, "values length");
  }
  {
    CscMatrix a = good.lower;
    std::swap(a.col_ptr[1], a.col_ptr[2]);
    expect_invalid(a, "decreasing col_ptr");
  }
  {
    CscMatrix a = good.lower;
    a.row_idx[1] = 4;
    expect_invalid(a, "row out of range");
  }
  {
    CscMatrix a = good.lower;
    std::swap(a.row_idx[0], a.row_idx[1]);
    expect_invalid(a, "unsorted rows");
  }
  {
    CscMatrix a = good.lower;
    a.row_idx[1] = a.row_idx[0];
    expect_invalid(a, "duplicate rows");
  }
  {
    SymmetricCscMatrix upper = good;
    upper.lower.row_idx[2] = 0;  // column 1 starting at row 0: above the diagonal
    EXPECT_THROW(check_valid(upper), std::invalid_argument);
    EXPECT_NO_THROW(check_valid(upper.lower));
  }
  {
    SymmetricCscMatrix rectangular;
    rectangular.lower.rows = 2;
    rectangular.lower.cols = 1;
    rectangular.lower.col_ptr = {0, 0};
    EXPECT_THROW(check_valid(rectangular), std::invalid_argument);
  }
}

}  // namespace
}  // namespace cholsim::linalg
