#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "linalg/blas.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::linalg {
namespace {

using blas::Diagonal;
using blas::Side;
using blas::Transpose;

DenseMatrix random_matrix(Index rows, Index cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  DenseMatrix a(rows, cols);
  for (double& v : a.storage()) v = uniform(rng);
  return a;
}

// A well-conditioned lower-triangular matrix (diagonal away from zero).
DenseMatrix random_lower(Index n, unsigned seed) {
  DenseMatrix l = random_matrix(n, n, seed);
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < j; ++i) l(i, j) = 0.0;
    l(j, j) = 2.0 + std::abs(l(j, j));
  }
  return l;
}

DenseMatrix random_spd(Index n, unsigned seed) {
  const DenseMatrix b = random_matrix(n, n, seed);
  DenseMatrix a(n, n);
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < n; ++i) {
      double sum = i == j ? static_cast<double>(n) : 0.0;
      for (Index k = 0; k < n; ++k) sum += b(i, k) * b(j, k);
      a(i, j) = sum;
    }
  }
  return a;
}

// op(A)(i, j) read from a view.
double op(ConstDenseView a, Transpose t, Index i, Index j) {
  return t == Transpose::no ? a(i, j) : a(j, i);
}

DenseMatrix naive_product(ConstDenseView a, Transpose ta, ConstDenseView b, Transpose tb) {
  const Index m = ta == Transpose::no ? a.rows : a.cols;
  const Index k = ta == Transpose::no ? a.cols : a.rows;
  const Index n = tb == Transpose::no ? b.cols : b.rows;
  DenseMatrix c(m, n);
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < m; ++i) {
      double sum = 0.0;
      for (Index p = 0; p < k; ++p) sum += op(a, ta, i, p) * op(b, tb, p, j);
      c(i, j) = sum;
    }
  }
  return c;
}

// Copies `a` into the interior of a larger buffer and returns the sub-block view, so the
// wrappers are exercised with ld > rows and non-zero offsets.
struct Padded {
  DenseMatrix storage;
  DenseView view;
};

Padded padded(const DenseMatrix& a, double fill = 1e30) {
  Padded p{DenseMatrix(a.rows() + 3, a.cols() + 2, fill), {}};
  p.view = p.storage.view().block(2, 1, a.rows(), a.cols());
  for (Index j = 0; j < a.cols(); ++j) {
    for (Index i = 0; i < a.rows(); ++i) p.view(i, j) = a(i, j);
  }
  return p;
}

TEST(Blas, GemmMatchesNaiveProductForAllTransposesOnSubBlocks) {
  const double alpha = 0.7;
  const double beta = -1.3;
  for (Transpose ta : {Transpose::no, Transpose::yes}) {
    for (Transpose tb : {Transpose::no, Transpose::yes}) {
      const DenseMatrix a = ta == Transpose::no ? random_matrix(5, 4, 1) : random_matrix(4, 5, 1);
      const DenseMatrix b = tb == Transpose::no ? random_matrix(4, 3, 2) : random_matrix(3, 4, 2);
      const DenseMatrix c0 = random_matrix(5, 3, 3);
      Padded pa = padded(a);
      Padded pb = padded(b);
      Padded pc = padded(c0, 0.0);
      blas::gemm(ta, tb, alpha, pa.view, pb.view, beta, pc.view);
      const DenseMatrix ab = naive_product(a.view(), ta, b.view(), tb);
      for (Index j = 0; j < 3; ++j) {
        for (Index i = 0; i < 5; ++i) {
          EXPECT_NEAR(pc.view(i, j), alpha * ab(i, j) + beta * c0(i, j), 1e-13);
        }
      }
      EXPECT_EQ(pc.storage(0, 0), 0.0);  // outside the block: untouched
    }
  }
}

TEST(Blas, SyrkAndSyr2kUpdateTheLowerTriangleOnly) {
  const Index n = 6;
  const Index k = 4;
  const DenseMatrix a = random_matrix(n, k, 4);
  const DenseMatrix b = random_matrix(n, k, 5);
  const DenseMatrix c0 = random_matrix(n, n, 6);
  for (Transpose t : {Transpose::no, Transpose::yes}) {
    const DenseMatrix operand = t == Transpose::no ? a : random_matrix(k, n, 7);
    Padded pa = padded(operand);
    Padded pc = padded(c0, 0.0);
    blas::syrk(t, 2.0, pa.view, 0.5, pc.view);
    // syrk computes op(A)·op(A)ᵀ with op(A) = A (no) or Aᵀ (yes).
    const Transpose other = t == Transpose::no ? Transpose::yes : Transpose::no;
    const DenseMatrix aat = naive_product(operand.view(), t, operand.view(), other);
    for (Index j = 0; j < n; ++j) {
      for (Index i = 0; i < n; ++i) {
        const double expected = i >= j ? 2.0 * aat(i, j) + 0.5 * c0(i, j) : c0(i, j);
        EXPECT_NEAR(pc.view(i, j), expected, 1e-13) << "syrk (" << i << ", " << j << ")";
      }
    }
  }
  Padded pa = padded(a);
  Padded pb = padded(b);
  Padded pc = padded(c0, 0.0);
  blas::syr2k(-1.5, pa.view, pb.view, 1.0, pc.view);
  const DenseMatrix abt = naive_product(a.view(), Transpose::no, b.view(), Transpose::yes);
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < n; ++i) {
      const double expected = i >= j ? -1.5 * (abt(i, j) + abt(j, i)) + c0(i, j) : c0(i, j);
      EXPECT_NEAR(pc.view(i, j), expected, 1e-13) << "syr2k (" << i << ", " << j << ")";
    }
  }
}

TEST(Blas, TrsmSolvesAllSidesAndTransposes) {
  const Index n = 5;
  const DenseMatrix l = random_lower(n, 8);
  for (Side side : {Side::left, Side::right}) {
    for (Transpose t : {Transpose::no, Transpose::yes}) {
      for (Diagonal diag : {Diagonal::non_unit, Diagonal::unit}) {
        DenseMatrix l_used = l;
        if (diag == Diagonal::unit) {
          for (Index i = 0; i < n; ++i) l_used(i, i) = 1.0;
        }
        const DenseMatrix b = side == Side::left ? random_matrix(n, 3, 9) : random_matrix(3, n, 9);
        Padded pl = padded(l);  // the unit variant must ignore the stored diagonal
        Padded px = padded(b);
        blas::trsm(side, t, diag, 2.0, pl.view, px.view);
        const DenseMatrix x = [&] {
          DenseMatrix copy(b.rows(), b.cols());
          for (Index j = 0; j < b.cols(); ++j) {
            for (Index i = 0; i < b.rows(); ++i) copy(i, j) = px.view(i, j);
          }
          return copy;
        }();
        // Residual: op(L)·X (left) or X·op(L) (right) equals 2·B.
        const DenseMatrix product = side == Side::left
                                        ? naive_product(l_used.view(), t, x.view(), Transpose::no)
                                        : naive_product(x.view(), Transpose::no, l_used.view(), t);
        for (Index j = 0; j < b.cols(); ++j) {
          for (Index i = 0; i < b.rows(); ++i) EXPECT_NEAR(product(i, j), 2.0 * b(i, j), 1e-12);
        }
      }
    }
  }
}

// trmm multiplies by the lower triangle only (the padded upper part must be ignored).
TEST(Blas, TrmmMultipliesAllSidesAndTransposes) {
  const Index n = 5;
  DenseMatrix l = random_lower(n, 10);
  DenseMatrix l_with_upper = l;
  for (Index j = 1; j < n; ++j) l_with_upper(0, j) = 100.0;
  for (Side side : {Side::left, Side::right}) {
    for (Transpose t : {Transpose::no, Transpose::yes}) {
      const DenseMatrix b = side == Side::left ? random_matrix(n, 3, 11) : random_matrix(3, n, 11);
      Padded pl = padded(l_with_upper);
      Padded pb = padded(b);
      blas::trmm(side, t, Diagonal::non_unit, -0.5, pl.view, pb.view);
      const DenseMatrix product = side == Side::left
                                      ? naive_product(l.view(), t, b.view(), Transpose::no)
                                      : naive_product(b.view(), Transpose::no, l.view(), t);
      for (Index j = 0; j < b.cols(); ++j) {
        for (Index i = 0; i < b.rows(); ++i) EXPECT_NEAR(pb.view(i, j), -0.5 * product(i, j), 1e-13);
      }
    }
  }
}

TEST(Blas, TrsvSolvesWithStride) {
  const Index n = 6;
  const DenseMatrix l = random_lower(n, 10);
  const DenseMatrix b = random_matrix(n, 1, 11);
  for (Transpose t : {Transpose::no, Transpose::yes}) {
    std::vector<double> strided(static_cast<std::size_t>(2 * n), 0.0);
    for (Index i = 0; i < n; ++i) strided[static_cast<std::size_t>(2 * i)] = b(i, 0);
    Padded pl = padded(l);
    blas::trsv(t, Diagonal::non_unit, pl.view, strided.data(), 2);
    for (Index i = 0; i < n; ++i) {
      double sum = 0.0;
      for (Index j = 0; j < n; ++j) sum += op(l.view(), t, i, j) * strided[static_cast<std::size_t>(2 * j)];
      EXPECT_NEAR(sum, b(i, 0), 1e-12);
    }
  }
}

TEST(Blas, PotrfAndPotrsSolveSpdSystems) {
  const Index n = 7;
  const DenseMatrix a = random_spd(n, 12);
  Padded factor = padded(a);
  ASSERT_EQ(blas::potrf(factor.view), 0);
  // L·Lᵀ reproduces the lower triangle of A; the strict upper part is untouched.
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < n; ++i) {
      if (i < j) {
        EXPECT_EQ(factor.view(i, j), a(i, j));
        continue;
      }
      double sum = 0.0;
      for (Index k = 0; k <= j; ++k) sum += factor.view(i, k) * factor.view(j, k);
      EXPECT_NEAR(sum, a(i, j), 1e-12);
    }
  }
  const DenseMatrix b = random_matrix(n, 2, 13);
  Padded x = padded(b);
  blas::potrs(factor.view, x.view);
  for (Index c = 0; c < 2; ++c) {
    for (Index i = 0; i < n; ++i) {
      double sum = 0.0;
      for (Index j = 0; j < n; ++j) sum += a(i, j) * x.view(j, c);
      EXPECT_NEAR(sum, b(i, c), 1e-11);
    }
  }
}

TEST(Blas, PotrfReportsTheFailingMinor) {
  // Leading minors of order 1 and 2 are positive; the third pivot is 1 - 2 < 0.
  DenseMatrix a(4, 4);
  for (Index i = 0; i < 4; ++i) a(i, i) = 1.0;
  a(2, 0) = a(0, 2) = 1.0;
  a(2, 1) = a(1, 2) = 1.0;
  EXPECT_EQ(blas::potrf(a.view()), 3);
  DenseMatrix negative(2, 2);
  negative(0, 0) = -1.0;
  negative(1, 1) = 1.0;
  EXPECT_EQ(blas::potrf(negative.view()), 1);
}

TEST(Blas, ShapeMismatchesThrow) {
  DenseMatrix a(3, 4);
  DenseMatrix b(5, 2);
  DenseMatrix c(3, 2);
  DenseMatrix square(3, 3);
  DenseMatrix rectangular(3, 2);
  EXPECT_THROW(blas::gemm(Transpose::no, Transpose::no, 1.0, a.view(), b.view(), 0.0, c.view()),
               std::invalid_argument);  // inner 4 vs 5
  EXPECT_THROW(blas::gemm(Transpose::yes, Transpose::no, 1.0, a.view(), b.view(), 0.0, c.view()),
               std::invalid_argument);
  EXPECT_THROW(blas::syrk(Transpose::no, 1.0, a.view(), 0.0, rectangular.view()),
               std::invalid_argument);
  EXPECT_THROW(blas::syr2k(1.0, a.view(), b.view(), 0.0, square.view()), std::invalid_argument);
  EXPECT_THROW(blas::trsm(Side::left, Transpose::no, Diagonal::non_unit, 1.0, rectangular.view(),
                          c.view()),
               std::invalid_argument);
  EXPECT_THROW(blas::trsm(Side::right, Transpose::no, Diagonal::non_unit, 1.0, square.view(),
                          c.view()),
               std::invalid_argument);  // C has 2 columns, L is 3×3
  double x[3] = {};
  EXPECT_THROW(blas::trsv(Transpose::no, Diagonal::non_unit, rectangular.view(), x),
               std::invalid_argument);
  EXPECT_THROW(blas::trsv(Transpose::no, Diagonal::non_unit, square.view(), x, 0),
               std::invalid_argument);
  EXPECT_THROW(blas::potrf(rectangular.view()), std::invalid_argument);
  EXPECT_THROW(blas::potrs(square.view(), b.view()), std::invalid_argument);
  DenseView bad_ld = square.view();
  bad_ld.ld = 2;
  EXPECT_THROW(blas::potrf(bad_ld), std::invalid_argument);
}

TEST(Blas, TridiagonalEigenvaluesOfTheSecondDifferenceMatrix) {
  // tridiag(−1, 2, −1) of order n has eigenvalues 2 − 2·cos(kπ/(n + 1)), k = 1…n.
  const int n = 40;
  const std::vector<double> values =
      blas::tridiagonal_eigenvalues(std::vector<double>(n, 2.0), std::vector<double>(n - 1, -1.0));
  ASSERT_EQ(values.size(), static_cast<std::size_t>(n));
  const double pi = std::acos(-1.0);
  for (int k = 1; k <= n; ++k) EXPECT_NEAR(values[k - 1], 2.0 - 2.0 * std::cos(k * pi / (n + 1)), 1e-12) << k;
  EXPECT_EQ(blas::tridiagonal_eigenvalues({3.5}, {}), std::vector<double>{3.5});
  EXPECT_TRUE(blas::tridiagonal_eigenvalues({}, {}).empty());
  EXPECT_THROW((void)blas::tridiagonal_eigenvalues({1.0, 2.0}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::linalg
