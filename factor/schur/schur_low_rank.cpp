#include "factor/schur/schur_low_rank.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "linalg/blas.hpp"
#include "linalg/blas_threads.hpp"

namespace cholsim::factor {

namespace {

// The BLAS threads a call runs with: `threads`, or the current setting for 0.
int blas_threads_for(int threads) { return threads > 0 ? threads : linalg::blas_threads(); }

}  // namespace

SchurLowRankSolver::SchurLowRankSolver(linalg::ConstDenseView schur_complement, int threads)
    : inverse_(schur_complement.rows, schur_complement.rows), threads_(threads) {
  const Index m = schur_complement.rows;
  for (Index j = 0; j < m; ++j) {
    for (Index i = j; i < m; ++i) inverse_(i, j) = schur_complement(i, j);
  }
  const linalg::ScopedBlasThreads scope(blas_threads_for(threads_));
  if (const int failed = linalg::blas::potrf(inverse_.view()); failed != 0) {
    throw std::runtime_error("Schur complement is not positive definite (row " + std::to_string(failed - 1) + ")");
  }
  linalg::blas::potri(inverse_.view());
  for (Index j = 0; j < m; ++j) {
    for (Index i = j + 1; i < m; ++i) inverse_(j, i) = inverse_(i, j);
  }
}

bool SchurLowRankSolver::prefer_low_rank(Index m, Index p) {
  // Measured on the development machine (docs/benchmarks.md, issue 18): at p/m = 0.41 the
  // Woodbury route took 0.61× the dense refactorization's time, at 0.60 the same, at 0.78
  // 1.4× and at 0.88 2.7× — its capacitance matrix is formed by sparse loops that run well
  // below potrf's rate, so the flop count p³/3 < m³/3 alone would choose it too often.
  return 2 * p < m;
}

const FactorStatus& SchurLowRankSolver::refactor(const linalg::CscMatrix& w, std::span<const double> c) {
  if (w.rows != size() || static_cast<std::size_t>(w.cols) != c.size()) {
    throw std::invalid_argument("SchurLowRankSolver::refactor: W must be " + std::to_string(size()) +
                                " × p with p stiffnesses");
  }
  // The rows W touches, and W renumbered onto them.
  std::vector<Index> local(static_cast<std::size_t>(size()), -1);
  touched_.assign(w.row_idx.begin(), w.row_idx.end());
  std::sort(touched_.begin(), touched_.end());
  touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
  for (std::size_t i = 0; i < touched_.size(); ++i) local[static_cast<std::size_t>(touched_[i])] = static_cast<Index>(i);
  w_ = w;
  for (Index& row : w_.row_idx) row = local[static_cast<std::size_t>(row)];
  const auto r = static_cast<Index>(touched_.size());
  const Index p = w.cols;
  // G = (S⁻¹)_RR gathered once (r × r, contiguous), H = G·W_R (r × p) by axpys down G's
  // columns, then C⁻¹ + W_RᵀH (p × p, lower triangle).
  linalg::DenseMatrix g(r, r);
  for (Index j = 0; j < r; ++j) {
    const double* column = inverse_.data() + static_cast<std::size_t>(touched_[static_cast<std::size_t>(j)]) * static_cast<std::size_t>(size());
    for (Index i = 0; i < r; ++i) g(i, j) = column[touched_[static_cast<std::size_t>(i)]];
  }
  linalg::DenseMatrix h(r, p);
  for (Index q = 0; q < p; ++q) {
    double* out = h.data() + static_cast<std::size_t>(q) * static_cast<std::size_t>(r);
    for (auto k = w_.col_ptr[static_cast<std::size_t>(q)]; k < w_.col_ptr[static_cast<std::size_t>(q) + 1]; ++k) {
      const double weight = w_.values[static_cast<std::size_t>(k)];
      const double* column = g.data() + static_cast<std::size_t>(w_.row_idx[static_cast<std::size_t>(k)]) * static_cast<std::size_t>(r);
      for (Index i = 0; i < r; ++i) out[i] += weight * column[i];
    }
  }
  capacitance_ = linalg::DenseMatrix(p, p);
  for (Index q2 = 0; q2 < p; ++q2) {
    const double* column = h.data() + static_cast<std::size_t>(q2) * static_cast<std::size_t>(r);
    for (Index q1 = q2; q1 < p; ++q1) {
      double sum = 0.0;
      for (auto k = w_.col_ptr[static_cast<std::size_t>(q1)]; k < w_.col_ptr[static_cast<std::size_t>(q1) + 1]; ++k) {
        sum += w_.values[static_cast<std::size_t>(k)] * column[w_.row_idx[static_cast<std::size_t>(k)]];
      }
      capacitance_(q1, q2) = sum;
    }
  }
  status_ = {};
  for (Index q = 0; q < p; ++q) {
    if (!(c[static_cast<std::size_t>(q)] > 0.0)) {
      status_.code = FactorStatusCode::not_positive_definite;
      status_.column = q;
      status_.message = "spring " + std::to_string(q) + " has a stiffness that is not positive";
      return status_;
    }
    capacitance_(q, q) += 1.0 / c[static_cast<std::size_t>(q)];
  }
  const linalg::ScopedBlasThreads scope(blas_threads_for(threads_));
  if (const int failed = linalg::blas::potrf(capacitance_.view()); failed != 0) {
    status_.code = FactorStatusCode::not_positive_definite;
    status_.column = failed - 1;
    status_.message = "the capacitance matrix C⁻¹ + WᵀS⁻¹W is not positive definite at spring " +
                      std::to_string(failed - 1);
    return status_;
  }
  status_.code = FactorStatusCode::ok;
  return status_;
}

void SchurLowRankSolver::solve(linalg::DenseView b) const {
  if (!status_.ok()) throw std::logic_error("SchurLowRankSolver::solve without a successful refactor()");
  if (b.rows != size()) throw std::invalid_argument("SchurLowRankSolver::solve: B needs " + std::to_string(size()) + " rows");
  const linalg::ScopedBlasThreads scope(blas_threads_for(threads_));
  const Index m = size();
  const Index p = w_.cols;
  // u = S⁻¹B; y = (C⁻¹ + WᵀS⁻¹W)⁻¹·Wᵀu; X = u − S⁻¹·W·y.
  linalg::DenseMatrix u(m, b.cols);
  linalg::blas::gemm(linalg::blas::Transpose::no, linalg::blas::Transpose::no, 1.0, inverse_.view(), b, 0.0, u.view());
  linalg::DenseMatrix y(p, b.cols);
  for (Index col = 0; col < b.cols; ++col) {
    for (Index q = 0; q < p; ++q) {
      double sum = 0.0;
      for (auto k = w_.col_ptr[static_cast<std::size_t>(q)]; k < w_.col_ptr[static_cast<std::size_t>(q) + 1]; ++k) {
        sum += w_.values[static_cast<std::size_t>(k)] * u(touched_[static_cast<std::size_t>(w_.row_idx[static_cast<std::size_t>(k)])], col);
      }
      y(q, col) = sum;
    }
  }
  linalg::blas::potrs(capacitance_.view(), y.view());
  // −W·y scattered over S's rows, then X = u + S⁻¹·(−W·y): a second pass over S⁻¹ costs less
  // than gathering its r columns.
  linalg::DenseMatrix z(m, b.cols);
  for (Index col = 0; col < b.cols; ++col) {
    for (Index q = 0; q < p; ++q) {
      for (auto k = w_.col_ptr[static_cast<std::size_t>(q)]; k < w_.col_ptr[static_cast<std::size_t>(q) + 1]; ++k) {
        z(touched_[static_cast<std::size_t>(w_.row_idx[static_cast<std::size_t>(k)])], col) -=
            w_.values[static_cast<std::size_t>(k)] * y(q, col);
      }
    }
  }
  for (Index col = 0; col < b.cols; ++col) {
    for (Index i = 0; i < m; ++i) b(i, col) = u(i, col);
  }
  linalg::blas::gemm(linalg::blas::Transpose::no, linalg::blas::Transpose::no, 1.0, inverse_.view(), z.view(), 1.0, b);
}

}  // namespace cholsim::factor
