// The recursive dense Cholesky of a front's pivot columns (front_cholesky.hpp) against
// LAPACK's potrf of the whole matrix, across the leaf width, and its failing-pivot column.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "factor/numeric/front_cholesky.hpp"
#include "linalg/blas.hpp"
#include "linalg/blas_threads.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::factor {
namespace {

using linalg::DenseView;
using linalg::Index;

// A random SPD m×m matrix (B·Bᵀ + m·I), column-major.
std::vector<double> random_spd(Index m, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> b(static_cast<std::size_t>(m * m));
  for (double& v : b) v = uniform(generator);
  std::vector<double> a(static_cast<std::size_t>(m * m), 0.0);
  const DenseView view{a.data(), m, m, m};
  linalg::blas::gemm(linalg::blas::Transpose::no, linalg::blas::Transpose::yes, 1.0, {b.data(), m, m, m},
                     {b.data(), m, m, m}, 0.0, view);
  for (Index i = 0; i < m; ++i) view(i, i) += static_cast<double>(m);
  return a;
}

// The first k columns of chol(a) computed by LAPACK on the whole matrix.
std::vector<double> reference_columns(std::vector<double> a, Index m, Index k) {
  EXPECT_EQ(linalg::blas::potrf({a.data(), m, m, m}), 0);
  a.resize(static_cast<std::size_t>(m * k));
  return a;
}

// factor_front_columns as the factorization runs it: in the arena of `threads` threads with
// BLAS on one thread, so that its work is cut into tasks (dense_tasks.hpp).
int factor_in_arena(std::vector<double>& front, Index m, Index k, int threads) {
  int info = 0;
  linalg::thread_arena(threads).execute([&] {
    const linalg::ScopedBlasThreads one_blas_thread(1);
    info = factor_front_columns({front.data(), m, k, m});
  });
  return info;
}

class FrontCholesky : public ::testing::TestWithParam<std::tuple<Index, Index>> {};

TEST_P(FrontCholesky, EqualsLapackOnTheWholeMatrix) {
  const auto [k, below] = GetParam();
  const Index m = k + below;
  const std::vector<double> a = random_spd(m, static_cast<unsigned>(7 * k + below));
  std::vector<double> front(a.begin(), a.begin() + m * k);
  ASSERT_EQ(factor_in_arena(front, m, k, 2), 0);
  const std::vector<double> expected = reference_columns(a, m, k);
  double largest = 0.0;
  double difference = 0.0;
  for (Index j = 0; j < k; ++j) {
    for (Index i = j; i < m; ++i) {  // the strict upper part is not part of the result
      largest = std::max(largest, std::abs(expected[j * m + i]));
      difference = std::max(difference, std::abs(front[j * m + i] - expected[j * m + i]));
    }
  }
  EXPECT_LE(difference, 1e-13 * largest);
}

// Leaf and split boundaries of the recursion (kFrontLeafColumns = 64), fronts wide enough for
// the right-looking panels with lookahead (512 columns and more: full panels, a last partial
// one), with and without rows below, and the 1-row, 1-column corners.
INSTANTIATE_TEST_SUITE_P(Widths, FrontCholesky,
                         ::testing::Combine(::testing::Values(Index{1}, Index{63}, Index{64}, Index{65}, Index{128},
                                                              Index{200}, Index{257}, Index{512}, Index{700}),
                                            ::testing::Values(Index{0}, Index{1}, Index{150})));

TEST(FrontCholesky, ReportsTheFirstColumnWhosePivotIsNotPositive) {
  const Index k = 700;
  const Index m = 760;
  for (const Index failing : {Index{0}, Index{30}, Index{63}, Index{64}, Index{100}, Index{199}, Index{256}, Index{300},
                              Index{699}}) {
    SCOPED_TRACE(failing);
    std::vector<double> a = random_spd(m, 11);
    // Lower A's diagonal entry at `failing` by its pivot plus one: the pivots before it are
    // unchanged and its own becomes −1.
    const std::vector<double> l = reference_columns(a, m, k);  // the unchanged matrix's pivots
    const double pivot = l[failing * m + failing];
    a[failing * m + failing] -= pivot * pivot + 1.0;
    std::vector<double> front(a.begin(), a.begin() + m * k);
    EXPECT_EQ(factor_in_arena(front, m, k, 2), failing + 1);
    front.assign(a.begin(), a.begin() + m * k);
    EXPECT_EQ(factor_front_columns({front.data(), m, k, m}), failing + 1);  // plain BLAS calls
  }
}

// The pieces depend on the sizes only: one thread and two give the same bits, and so does
// the call outside any arena with BLAS on one thread.
TEST(FrontCholesky, SameBitsOnEveryThreadCount) {
  const Index k = 1100;
  const Index m = 1500;
  const std::vector<double> a = random_spd(m, 5);
  std::vector<double> one(a.begin(), a.begin() + m * k);
  std::vector<double> two = one;
  ASSERT_EQ(factor_in_arena(one, m, k, 1), 0);
  ASSERT_EQ(factor_in_arena(two, m, k, 2), 0);
  EXPECT_TRUE(one == two);
}

}  // namespace
}  // namespace cholsim::factor
