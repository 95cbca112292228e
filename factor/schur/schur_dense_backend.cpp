// The CPU backend of SchurSystem: S and S + ΔS in host memory, LAPACK potrf / potrs.
#include <algorithm>
#include <cmath>

#include "factor/schur/schur_dense_backend.hpp"
#include "linalg/blas.hpp"

namespace cholsim::factor {
namespace {

class CpuSchurBackend final : public SchurDenseBackend {
 public:
  explicit CpuSchurBackend(linalg::ConstDenseView s) : base_(s.rows, s.rows), work_(s.rows, s.rows) {
    for (Index j = 0; j < s.rows; ++j) {
      for (Index i = j; i < s.rows; ++i) base_(i, j) = s(i, j);
    }
  }

  void reset() override {
    // Only the lower triangle: potrf reads nothing else.
    const Index m = base_.rows();
    for (Index j = 0; j < m; ++j) {
      const double* source = base_.data() + static_cast<std::size_t>(j) * m;
      std::copy(source + j, source + m, work_.data() + static_cast<std::size_t>(j) * m + j);
    }
  }

  void add_dense(linalg::ConstDenseView delta) override {
    for (Index j = 0; j < delta.cols; ++j) {
      for (Index i = j; i < delta.rows; ++i) work_(i, j) += delta(i, j);
    }
  }

  void add_sparse(const linalg::SymmetricCscMatrix& delta) override {
    const linalg::CscMatrix& l = delta.lower;
    for (Index c = 0; c < l.cols; ++c) {
      for (linalg::Offset p = l.col_ptr[c]; p < l.col_ptr[c + 1]; ++p) work_(l.row_idx[p], c) += l.values[p];
    }
  }

  void add_low_rank(const linalg::CscMatrix& w, std::span<const double> c) override {
    // Column q adds c_q·w_q·w_qᵀ; rows increase within a column, so (later, earlier) is lower.
    for (Index q = 0; q < w.cols; ++q) {
      for (linalg::Offset a = w.col_ptr[q]; a < w.col_ptr[q + 1]; ++a) {
        const double scaled = c[q] * w.values[a];
        for (linalg::Offset b = a; b < w.col_ptr[q + 1]; ++b) {
          work_(w.row_idx[b], w.row_idx[a]) += scaled * w.values[b];
        }
      }
    }
  }

  int factor() override { return linalg::blas::potrf(work_.view()); }

  Index first_non_finite_pivot() override {
    for (Index i = 0; i < work_.rows(); ++i) {
      if (!std::isfinite(work_(i, i))) return i;
    }
    return -1;
  }

  void solve(linalg::DenseView b) override { linalg::blas::potrs(work_.view(), b); }

 private:
  linalg::DenseMatrix base_;  ///< S, lower triangle
  linalg::DenseMatrix work_;  ///< S + ΔS, after factor() its Cholesky factor
};

}  // namespace

std::unique_ptr<SchurDenseBackend> make_cpu_schur_backend(linalg::ConstDenseView schur_complement) {
  return std::make_unique<CpuSchurBackend>(schur_complement);
}

}  // namespace cholsim::factor
