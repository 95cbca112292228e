#include "factor/schur/schur_low_rank.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "linalg/blas.hpp"
#include "linalg/blas_threads.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::factor {

namespace {

// The BLAS threads a call runs with: `threads`, or the current setting for 0.
int blas_threads_for(int threads) { return threads > 0 ? threads : linalg::blas_threads(); }

// Rows per tile of H = S⁻¹W (m × p). Where S⁻¹ fits in a last-level cache, the H tile
// (rows × p) is sized to stay in 256 KB of L2 while S⁻¹'s columns are re-read from L3; where
// S⁻¹ streams from memory, runs of 512 rows (4 KB) of each column keep the prefetcher going
// and the H tile lives in L3. Measured at m = 1672, p = 584 (S⁻¹ 22 MB, L3 32 MB): 56 rows
// 6.3 ms, 512 rows 8–10 ms; at m = 4192, p = 1048 (S⁻¹ 140 MB): 24 rows 55 ms, 128 rows
// 36–45 ms, 512 rows 25–30 ms (two threads, Zen 3). Fixed sizes rather than sysconf's: in a
// VM it reported the host's 256 MB L3 where lscpu saw 32 MB.
Index tile_rows_for(Index m, Index p) {
  constexpr Index kStreamingRows = 512;
  constexpr double kCachedInverseBytes = 32.0 * 1024 * 1024;
  constexpr double kTileBytes = 256.0 * 1024;
  if (8.0 * static_cast<double>(m) * static_cast<double>(m) > kCachedInverseBytes) return kStreamingRows;
  const auto fitting = static_cast<Index>(kTileBytes / (8.0 * static_cast<double>(std::max<Index>(p, 1))));
  return std::clamp<Index>(fitting / 8 * 8, 16, kStreamingRows);
}

// out += weight·in over n entries. Its own function with __restrict: inlined into the tile
// loop, GCC 12 kept the loop's pointers and a vector on the stack (stores in every iteration).
void add_scaled(double* __restrict out, const double* __restrict in, double weight, std::size_t n) {
  for (std::size_t r = 0; r < n; ++r) out[r] += weight * in[r];
}

// out[q] = Σ_k W(row_k, q)·column[row_k] for the springs q ≥ first of W: the entries of
// WᵀH's column from H's. __restrict and plain pointers let GCC keep everything in registers.
void gather_products(const double* __restrict column, const linalg::CscMatrix& w, Index first,
                     double* __restrict out) {
  const linalg::Offset* __restrict starts = w.col_ptr.data();
  const Index* __restrict rows = w.row_idx.data();
  const double* __restrict weights = w.values.data();
  for (Index q = first; q < w.cols; ++q) {
    double sum = 0.0;
    for (auto k = starts[q]; k < starts[q + 1]; ++k) sum += weights[k] * column[rows[k]];
    out[q] = sum;
  }
}

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
  // Measured (docs/benchmarks.md, issue 18; `bench_schur --woodbury 1000,1672,4192`, two
  // threads): the Woodbury route takes 0.16–0.29× the dense refactorization's time at p/m =
  // 0.25, 0.50–0.64× at 0.5, 0.62–0.84× at 0.6 and 0.96–1.41× at 0.8 (the larger ratios at
  // the smaller m). Below p/m = 2/3 it is the faster route at every m measured.
  return 3 * p < 2 * m;
}

const FactorStatus& SchurLowRankSolver::refactor(const linalg::CscMatrix& w, std::span<const double> c) {
  if (w.rows != size() || static_cast<std::size_t>(w.cols) != c.size()) {
    throw std::invalid_argument("SchurLowRankSolver::refactor: W must be " + std::to_string(size()) +
                                " × p with p stiffnesses");
  }
  w_ = w;
  w_by_row_ = linalg::transpose(w);
  status_ = {};
  for (Index q = 0; q < w.cols; ++q) {
    if (!(c[static_cast<std::size_t>(q)] > 0.0)) {
      status_.code = FactorStatusCode::not_positive_definite;
      status_.column = q;
      status_.message = "spring " + std::to_string(q) + " has a stiffness that is not positive";
      return status_;
    }
  }
  form_inverse_times_w();
  form_capacitance(c);
  const linalg::ScopedBlasThreads scope(blas_threads_for(threads_));
  if (const int failed = linalg::blas::potrf(capacitance()); failed != 0) {
    status_.code = FactorStatusCode::not_positive_definite;
    status_.column = failed - 1;
    status_.message = "the capacitance matrix C⁻¹ + WᵀS⁻¹W is not positive definite at spring " +
                      std::to_string(failed - 1);
    return status_;
  }
  status_.code = FactorStatusCode::ok;
  return status_;
}

// H = S⁻¹W, a row tile at a time: for each row i of S that W touches, the tile of S⁻¹'s
// column i (= row i, S⁻¹ is symmetric) is added, weighted, into the tile of each spring's
// column of H — contiguous axpys, each column of S⁻¹ streamed once. (Gathering instead, a
// column of S⁻¹ at a time into a row of H, was 4× slower: ≤ 8 dependent indexed loads per
// spring do not vectorize.) Tiles are independent, so threads take tiles and the result does
// not depend on their number.
void SchurLowRankSolver::form_inverse_times_w() {
  const Index m = size();
  const Index p = w_.cols;
  inverse_times_w_.resize(static_cast<std::size_t>(m) * static_cast<std::size_t>(p));
  const Index tile_rows = tile_rows_for(m, p);
  const Index tiles = (m + tile_rows - 1) / tile_rows;
  linalg::parallel_chunks(tiles, blas_threads_for(threads_), [&](Index first_tile, Index last_tile) {
    for (Index tile = first_tile; tile < last_tile; ++tile) {
      const Index begin = tile * tile_rows;
      const auto rows = static_cast<std::size_t>(std::min(tile_rows, m - begin));
      const auto tile_of = [&](double* matrix, Index column) {
        return matrix + static_cast<std::size_t>(column) * static_cast<std::size_t>(m) + static_cast<std::size_t>(begin);
      };
      for (Index q = 0; q < p; ++q) std::fill_n(tile_of(inverse_times_w_.data(), q), rows, 0.0);
      for (Index i = 0; i < m; ++i) {
        const auto first = w_by_row_.col_ptr[static_cast<std::size_t>(i)];
        const auto last = w_by_row_.col_ptr[static_cast<std::size_t>(i) + 1];
        if (first == last) continue;
        const double* inverse_tile = tile_of(inverse_.data(), i);
        for (auto k = first; k < last; ++k) {
          const double weight = w_by_row_.values[static_cast<std::size_t>(k)];
          add_scaled(tile_of(inverse_times_w_.data(), w_by_row_.row_idx[static_cast<std::size_t>(k)]), inverse_tile, weight, rows);
        }
      }
    }
  }, 1);
}

// C⁻¹ + WᵀH, lower triangle: entry (q1, q2) gathers H's column q2 at spring q1's rows.
// Columns go in pairs q2 and p−1−q2, a long and a short one, so that every pair costs the same
// and the threads' equal shares of pairs are equal shares of the triangle.
void SchurLowRankSolver::form_capacitance(std::span<const double> c) {
  const Index m = size();
  const Index p = w_.cols;
  capacitance_.resize(static_cast<std::size_t>(p) * static_cast<std::size_t>(p));  // lower triangle written below
  const auto fill_column = [&](Index q2) {
    gather_products(inverse_times_w_.data() + static_cast<std::size_t>(q2) * static_cast<std::size_t>(m), w_, q2,
                    &capacitance()(0, q2));
    capacitance()(q2, q2) += 1.0 / c[static_cast<std::size_t>(q2)];
  };
  linalg::parallel_chunks((p + 1) / 2, blas_threads_for(threads_), [&](Index first, Index last) {
    for (Index pair = first; pair < last; ++pair) {
      fill_column(pair);
      if (p - 1 - pair != pair) fill_column(p - 1 - pair);
    }
  }, 32);
}

void SchurLowRankSolver::solve(linalg::DenseView b) const {
  if (!status_.ok()) throw std::logic_error("SchurLowRankSolver::solve without a successful refactor()");
  if (b.rows != size()) throw std::invalid_argument("SchurLowRankSolver::solve: B needs " + std::to_string(size()) + " rows");
  const linalg::ScopedBlasThreads scope(blas_threads_for(threads_));
  const Index m = size();
  const Index p = w_.cols;
  // U = S⁻¹B; y = (C⁻¹ + WᵀS⁻¹W)⁻¹·WᵀU; X = U − H·y.
  linalg::DenseMatrix u(m, b.cols);
  linalg::blas::gemm(linalg::blas::Transpose::no, linalg::blas::Transpose::no, 1.0, inverse_.view(), b, 0.0, u.view());
  linalg::DenseMatrix y(p, b.cols);
  for (Index col = 0; col < b.cols; ++col) {
    for (Index q = 0; q < p; ++q) {
      double sum = 0.0;
      for (auto k = w_.col_ptr[static_cast<std::size_t>(q)]; k < w_.col_ptr[static_cast<std::size_t>(q) + 1]; ++k) {
        sum += w_.values[static_cast<std::size_t>(k)] * u(w_.row_idx[static_cast<std::size_t>(k)], col);
      }
      y(q, col) = sum;
    }
  }
  linalg::blas::potrs(capacitance(), y.view());
  for (Index col = 0; col < b.cols; ++col) {
    for (Index i = 0; i < m; ++i) b(i, col) = u(i, col);
  }
  const linalg::ConstDenseView h{inverse_times_w_.data(), m, p, m > 0 ? m : 1};
  linalg::blas::gemm(linalg::blas::Transpose::no, linalg::blas::Transpose::no, -1.0, h, y.view(), 1.0, b);
}

}  // namespace cholsim::factor
