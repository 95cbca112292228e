// Supernodal forward and backward substitution: Factor::solve and its refinement.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "factor/cholesky_factor.hpp"
#include "linalg/blas.hpp"

namespace cholsim::factor {
namespace {

namespace blas = linalg::blas;

double max_abs(std::span<const double> v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

}  // namespace

// Solves L·Y = Y in place (elimination numbering), supernode by supernode: a triangular solve
// with the diagonal block, then the block below scatters its product into later rows.
// A partial factorization stops before the Schur supernode: rows of the Schur set are left
// holding b₂ − L21·y₁, the first phase of the three-phase solve (seed 004 §4.4, eq. 16).
void Factor::forward_substitution(linalg::DenseView y) const {
  const Symbolic& sym = *symbolic_;
  const Index count = y.cols;
  std::vector<double> work(static_cast<std::size_t>(sym.stats().largest_front) * static_cast<std::size_t>(count));
  for (Index s = 0; s < sym.eliminated_supernode_count(); ++s) {
    const Index k = sym.column_count(s);
    const Index m = sym.row_count(s);
    const linalg::ConstDenseView block{values_.data() + sym.value_offset(s), m, k, m};
    const linalg::DenseView ys = y.block(sym.first_column(s), 0, k, count);
    const auto below_rows = sym.rows(s).subspan(static_cast<std::size_t>(k));
    const Index r = m - k;
    if (count == 1) {
      blas::trsv(blas::Transpose::no, blas::Diagonal::non_unit, block.block(0, 0, k, k), ys.data);
      if (r == 0) continue;
      blas::gemv(blas::Transpose::no, 1.0, block.block(k, 0, r, k), ys.data, 0.0, work.data());
      for (Index i = 0; i < r; ++i) y.data[below_rows[i]] -= work[i];
    } else {
      blas::trsm(blas::Side::left, blas::Transpose::no, blas::Diagonal::non_unit, 1.0,
                 block.block(0, 0, k, k), ys);
      if (r == 0) continue;
      const linalg::DenseView w{work.data(), r, count, r};
      blas::gemm(blas::Transpose::no, blas::Transpose::no, 1.0, block.block(k, 0, r, k), ys, 0.0, w);
      for (Index c = 0; c < count; ++c) {
        for (Index i = 0; i < r; ++i) y(below_rows[i], c) -= w(i, c);
      }
    }
  }
}

// Solves Lᵀ·Y = Y in place, supernodes in reverse: gather the rows below, subtract the block's
// transposed product, then the transposed triangular solve. For a partial factorization the
// Schur rows hold x₂ and are only read: x₁ = L11⁻ᵀ(y₁ − L21ᵀx₂) (seed 004 §4.4, eq. 18).
void Factor::backward_substitution(linalg::DenseView y) const {
  const Symbolic& sym = *symbolic_;
  const Index count = y.cols;
  std::vector<double> work(static_cast<std::size_t>(sym.stats().largest_front) * static_cast<std::size_t>(count));
  for (Index s = sym.eliminated_supernode_count() - 1; s >= 0; --s) {
    const Index k = sym.column_count(s);
    const Index m = sym.row_count(s);
    const linalg::ConstDenseView block{values_.data() + sym.value_offset(s), m, k, m};
    const linalg::DenseView ys = y.block(sym.first_column(s), 0, k, count);
    const auto below_rows = sym.rows(s).subspan(static_cast<std::size_t>(k));
    const Index r = m - k;
    if (count == 1) {
      if (r > 0) {
        for (Index i = 0; i < r; ++i) work[i] = y.data[below_rows[i]];
        blas::gemv(blas::Transpose::yes, -1.0, block.block(k, 0, r, k), work.data(), 1.0, ys.data);
      }
      blas::trsv(blas::Transpose::yes, blas::Diagonal::non_unit, block.block(0, 0, k, k), ys.data);
    } else {
      if (r > 0) {
        const linalg::DenseView w{work.data(), r, count, r};
        for (Index c = 0; c < count; ++c) {
          for (Index i = 0; i < r; ++i) w(i, c) = y(below_rows[i], c);
        }
        blas::gemm(blas::Transpose::yes, blas::Transpose::no, -1.0, block.block(k, 0, r, k), w, 1.0, ys);
      }
      blas::trsm(blas::Side::left, blas::Transpose::yes, blas::Diagonal::non_unit, 1.0,
                 block.block(0, 0, k, k), ys);
    }
  }
}

void Factor::solve(std::span<double> b) const {
  solve(linalg::DenseView{b.data(), static_cast<Index>(b.size()), 1,
                          std::max<Index>(1, static_cast<Index>(b.size()))});
}

void Factor::solve(linalg::DenseView b) const {
  require_factored("solve");
  const Symbolic& sym = *symbolic_;
  if (sym.schur_size() > 0) {
    throw std::logic_error("solve: this is a partial factorization (Schur set of " +
                           std::to_string(sym.schur_size()) +
                           " unknowns); solve it in three phases with SchurComplementFactor");
  }
  if (b.rows != sym.size()) {
    throw std::invalid_argument("solve: right-hand side has " + std::to_string(b.rows) +
                                " rows, the matrix has " + std::to_string(sym.size()));
  }
  const Index n = sym.size();
  const auto perm = sym.permutation();
  linalg::DenseMatrix y(n, b.cols);
  for (Index c = 0; c < b.cols; ++c) {
    for (Index i = 0; i < n; ++i) y(i, c) = b(perm[i], c);
  }
  forward_substitution(y.view());
  backward_substitution(y.view());
  for (Index c = 0; c < b.cols; ++c) {
    for (Index i = 0; i < n; ++i) b(perm[i], c) = y(i, c);
  }
}

SolveStats Factor::solve_refined(const linalg::SymmetricCscMatrix& a, std::span<double> b,
                                 int max_steps, double tolerance) const {
  const auto start = std::chrono::steady_clock::now();
  SolveStats stats;
  const std::vector<double> rhs(b.begin(), b.end());
  const double rhs_norm = std::max(max_abs(rhs), std::numeric_limits<double>::min());
  solve(b);
  std::vector<double> residual(b.size());
  auto update_residual = [&] {
    linalg::symmetric_multiply(a, b, residual);
    for (std::size_t i = 0; i < b.size(); ++i) residual[i] = rhs[i] - residual[i];
    stats.residual = max_abs(residual) / rhs_norm;
  };
  update_residual();
  while (stats.refinement_steps < max_steps && stats.residual > tolerance) {
    solve(residual);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] += residual[i];
    ++stats.refinement_steps;
    update_residual();
  }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace cholsim::factor
