#include "factor/numeric/front_cholesky.hpp"

#include "linalg/blas.hpp"

namespace cholsim::factor {

namespace blas = linalg::blas;
using linalg::Index;

int factor_front_columns(linalg::DenseView front) {
  const Index k = front.cols;
  const Index rows = front.rows;
  if (k <= kFrontLeafColumns) {
    const int info = blas::potrf(front.block(0, 0, k, k));
    if (info != 0 || rows == k) return info;
    blas::trsm(blas::Side::right, blas::Transpose::yes, blas::Diagonal::non_unit, 1.0, front.block(0, 0, k, k),
               front.block(k, 0, rows - k, k));
    return 0;
  }
  // Split at a multiple of the leaf width so that every leaf but the last is full.
  const Index left = (k / 2 + kFrontLeafColumns - 1) / kFrontLeafColumns * kFrontLeafColumns;
  const Index right = k - left;
  if (const int info = factor_front_columns(front.block(0, 0, rows, left)); info != 0) return info;
  // The right columns lose the left columns' contribution: F22 −= L21·L21ᵀ on the diagonal
  // block (syrk), and on every row below it (gemm).
  const linalg::ConstDenseView middle = front.block(left, 0, right, left);
  blas::syrk(blas::Transpose::no, -1.0, middle, 1.0, front.block(left, left, right, right));
  if (rows > k) {
    blas::gemm(blas::Transpose::no, blas::Transpose::yes, -1.0, front.block(k, 0, rows - k, left), middle, 1.0,
               front.block(k, left, rows - k, right));
  }
  const int info = factor_front_columns(front.block(left, left, rows - left, right));
  return info == 0 ? 0 : left + info;
}

}  // namespace cholsim::factor
