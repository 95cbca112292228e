// The CPU backend of SchurSystem: S and S + ΔS in host memory, LAPACK potrf / potrs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "factor/schur/schur_dense_backend.hpp"
#include "linalg/blas.hpp"

namespace cholsim::factor {
namespace {

class CpuSchurBackend final : public SchurDenseBackend {
 public:
  CpuSchurBackend(linalg::ConstDenseView s, SchurPrecision precision)
      : base_(s.rows, s.rows), work_(s.rows, s.rows), mixed_(precision == SchurPrecision::mixed) {
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
    factored_in_single_ = false;
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

  int factor() override {
    if (mixed_ && factor_in_single() == 0) return 0;
    // Double precision: in place, unless mixed precision keeps S + ΔS for its refinement.
    if (!mixed_) return linalg::blas::potrf(work_.view());
    factored_in_single_ = false;
    double_factor_ = work_;
    return linalg::blas::potrf(double_factor_.view());
  }

  Index first_non_finite_pivot() override {
    for (Index i = 0; i < work_.rows(); ++i) {
      const double pivot = factored_in_single_ ? static_cast<double>(single_factor_[diagonal(i)])
                                               : (mixed_ ? double_factor_(i, i) : work_(i, i));
      if (!std::isfinite(pivot)) return i;
    }
    return -1;
  }

  void solve(linalg::DenseView b) override {
    if (factored_in_single_ && solve_refined(b)) return;
    if (factored_in_single_) {
      // Refinement did not converge: S + ΔS is too ill-conditioned for a single factor.
      factored_in_single_ = false;
      double_factor_ = work_;
      if (linalg::blas::potrf(double_factor_.view()) != 0) throw std::runtime_error("S + ΔS lost definiteness");
    }
    linalg::blas::potrs((mixed_ ? double_factor_ : work_).view(), b);
  }

 private:
  [[nodiscard]] std::size_t diagonal(Index i) const {
    return static_cast<std::size_t>(i) * static_cast<std::size_t>(work_.rows() + 1);
  }

  // spotrf of S + ΔS rounded to single: half the flops' time (SIMD lanes twice as wide) and
  // half the bytes; 0 on success.
  int factor_in_single() {
    const Index m = work_.rows();
    single_factor_.resize(static_cast<std::size_t>(m) * static_cast<std::size_t>(m));
    for (Index j = 0; j < m; ++j) {
      for (Index i = j; i < m; ++i) {
        single_factor_[static_cast<std::size_t>(j) * static_cast<std::size_t>(m) + static_cast<std::size_t>(i)] =
            static_cast<float>(work_(i, j));
      }
    }
    const int info = linalg::blas::potrf(single_view());
    factored_in_single_ = info == 0;
    return info;
  }

  linalg::BasicDenseView<float> single_view() {
    const Index m = work_.rows();
    return {single_factor_.data(), m, m, m > 0 ? m : 1};
  }

  // x = (S + ΔS)⁻¹b by the single factor, refined in double against S + ΔS (Wilkinson's
  // iterative refinement; converges to double accuracy while κ(S + ΔS)·ε_single < 1). False
  // when the corrections stop shrinking.
  bool solve_refined(linalg::DenseView b) {
    const Index m = b.rows;
    const linalg::DenseMatrix rhs = copy_of(b);
    linalg::DenseMatrix x(m, b.cols);
    linalg::DenseMatrix residual = rhs;
    double previous = std::numeric_limits<double>::infinity();
    for (int step = 0; step < kMaxRefinementSteps; ++step) {
      const double correction = add_single_solution(residual, x);
      double size = 0.0;
      for (Index j = 0; j < x.cols(); ++j) {
        for (Index i = 0; i < m; ++i) size = std::max(size, std::abs(x(i, j)));
      }
      if (correction <= 4.0 * std::numeric_limits<double>::epsilon() * size) break;
      if (!(correction < 0.5 * previous)) return false;
      previous = correction;
      residual = rhs;
      linalg::blas::symm_lower(-1.0, work_.view(), x.view(), 1.0, residual.view());
    }
    for (Index j = 0; j < b.cols; ++j) {
      for (Index i = 0; i < m; ++i) b(i, j) = x(i, j);
    }
    return true;
  }

  // x += (single factor)⁻¹·r; returns the largest correction.
  double add_single_solution(const linalg::DenseMatrix& r, linalg::DenseMatrix& x) {
    const Index m = r.rows();
    std::vector<float> correction(static_cast<std::size_t>(m) * static_cast<std::size_t>(r.cols()));
    for (Index j = 0; j < r.cols(); ++j) {
      for (Index i = 0; i < m; ++i) correction[static_cast<std::size_t>(j * m + i)] = static_cast<float>(r(i, j));
    }
    const linalg::BasicDenseView<float> c{correction.data(), m, r.cols(), m > 0 ? m : 1};
    linalg::blas::potrs(linalg::BasicDenseView<const float>(single_view()), c);
    double largest = 0.0;
    for (Index j = 0; j < r.cols(); ++j) {
      for (Index i = 0; i < m; ++i) {
        const double delta = correction[static_cast<std::size_t>(j * m + i)];
        x(i, j) += delta;
        largest = std::max(largest, std::abs(delta));
      }
    }
    return largest;
  }

  static linalg::DenseMatrix copy_of(linalg::ConstDenseView v) {
    linalg::DenseMatrix copy(v.rows, v.cols);
    for (Index j = 0; j < v.cols; ++j) {
      for (Index i = 0; i < v.rows; ++i) copy(i, j) = v(i, j);
    }
    return copy;
  }

  static constexpr int kMaxRefinementSteps = 8;

  linalg::DenseMatrix base_;  ///< S, lower triangle
  linalg::DenseMatrix work_;  ///< S + ΔS; after a double factor() without mixed precision, its factor
  bool mixed_ = false;
  bool factored_in_single_ = false;
  std::vector<float> single_factor_;   ///< mixed: spotrf of S + ΔS
  linalg::DenseMatrix double_factor_;  ///< mixed: dpotrf of S + ΔS where single was not enough
};

}  // namespace

std::unique_ptr<SchurDenseBackend> make_cpu_schur_backend(linalg::ConstDenseView schur_complement,
                                                          SchurPrecision precision) {
  return std::make_unique<CpuSchurBackend>(schur_complement, precision);
}

}  // namespace cholsim::factor
