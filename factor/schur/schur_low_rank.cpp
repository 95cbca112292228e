#include "factor/schur/schur_low_rank.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "factor/numeric/front_cholesky.hpp"
#include "linalg/blas.hpp"
#include "linalg/blas_threads.hpp"
#include "linalg/parallel_loops.hpp"
#include "linalg/simd_clones.hpp"
#include "linalg/unaligned_vector.hpp"

namespace cholsim::factor {

namespace {

// The BLAS threads a call runs with: `threads`, or the current setting for 0.
int blas_threads_for(int threads) { return threads > 0 ? threads : linalg::blas_threads(); }

// Rows of S⁻¹'s row tiles, which are also the row tiles of U and H. A tile of S⁻¹ (1 MB at
// m = 4192) streams from memory once and stays in L2 while H's tile is gathered from its
// columns; 32 rows of U for three right-hand sides are 12 AVX-512 registers.
constexpr Index kTileRows = 32;

Index tile_count(Index m) { return (m + kTileRows - 1) / kTileRows; }
Index tile_start(Index tile) { return tile * kTileRows; }
Index tile_rows(Index m, Index tile) { return std::min<Index>(kTileRows, m - tile_start(tile)); }

// Where a row tile of U = S⁻¹B (column-major, m rows) and of H = S⁻¹W (row-major, p columns)
// lies: U's column c's tile starts at c·m + begin, H's row begin + i at (begin + i)·p.
struct RowTile {
  double* u;
  double* h;  ///< null when H is not formed
  Index m;
  Index p;
  Index begin;
  [[nodiscard]] double* u_column(Index column) const {
    return u + static_cast<std::size_t>(column) * static_cast<std::size_t>(m) + static_cast<std::size_t>(begin);
  }
  [[nodiscard]] double& h_entry(Index row_in_tile, Index spring) const {
    return h[static_cast<std::size_t>(begin + row_in_tile) * static_cast<std::size_t>(p) + static_cast<std::size_t>(spring)];
  }
};

// The kernels below take the tile's row count as a template argument where the tile is full,
// so that their loops have a known trip count and their accumulators live in registers.

// U(tile, c…c+k) = S⁻¹(tile, :)·B(:, c…c+k) for k = kColumns (1 to 3) right-hand sides.
template <Index kFullRows, int kColumns>
[[gnu::always_inline]] inline void multiply_right_hand_sides(linalg::ConstDenseView columns, linalg::ConstDenseView b,
                                                             Index first, const RowTile& tile) {
  const Index rows = kFullRows > 0 ? kFullRows : columns.rows;
  double sums[kColumns][kTileRows] = {};
  for (Index j = 0; j < columns.cols; ++j) {
    const double* __restrict column = &columns(0, j);
    for (int c = 0; c < kColumns; ++c) {
      const double weight = b(j, first + c);
      for (Index r = 0; r < rows; ++r) sums[c][r] += weight * column[r];
    }
  }
  for (int c = 0; c < kColumns; ++c) std::copy_n(sums[c], rows, tile.u_column(first + c));
}

// H(tile, q) = Σ_k W(k, q)·S⁻¹(tile, k) for every spring q, from ≤ 8 columns of the tile of
// S⁻¹ in L2, stored into H's rows (row-major, so that the capacitance matrix is formed from
// contiguous rows; the tile's rows of H, p·256 bytes, stay in L2 too). A full tile's sum is
// four vectors of eight (GCC vectorized the loop over the spring's entries instead, with its
// sum on the stack).
CHOLSIM_UNALIGNED_VECTOR(EightDoubles, double, 8, may_alias);

template <Index kFullRows>
[[gnu::always_inline]] inline void gather_spring_columns(linalg::ConstDenseView columns, const linalg::CscMatrix& w,
                                                         const RowTile& tile) {
  const Index rows = kFullRows > 0 ? kFullRows : columns.rows;
  for (Index q = 0; q < w.cols; ++q) {
    const auto first = w.col_ptr[static_cast<std::size_t>(q)];
    const auto last = w.col_ptr[static_cast<std::size_t>(q) + 1];
    double sum[kTileRows] = {};
    if constexpr (kFullRows > 0) {
      static_assert(kFullRows % 8 == 0);
      EightDoubles vectors[kFullRows / 8] = {};
      for (auto e = first; e < last; ++e) {
        const auto* column = reinterpret_cast<const EightDoubles*>(&columns(0, w.row_idx[static_cast<std::size_t>(e)]));
        const double weight = w.values[static_cast<std::size_t>(e)];
        for (Index v = 0; v < kFullRows / 8; ++v) vectors[v] += weight * column[v];
      }
      for (Index v = 0; v < kFullRows / 8; ++v) reinterpret_cast<EightDoubles*>(sum)[v] = vectors[v];
    } else {
      for (auto e = first; e < last; ++e) {
        const double* column = &columns(0, w.row_idx[static_cast<std::size_t>(e)]);
        const double weight = w.values[static_cast<std::size_t>(e)];
        for (Index r = 0; r < rows; ++r) sum[r] += weight * column[r];
      }
    }
    for (Index r = 0; r < rows; ++r) tile.h_entry(r, q) = sum[r];
  }
}

template <Index kFullRows>
[[gnu::always_inline]] inline void tile_products(linalg::ConstDenseView columns, linalg::ConstDenseView b,
                                                 const linalg::CscMatrix& w, const RowTile& tile) {
  Index c = 0;
  for (; c + 3 <= b.cols; c += 3) multiply_right_hand_sides<kFullRows, 3>(columns, b, c, tile);
  for (; c < b.cols; ++c) multiply_right_hand_sides<kFullRows, 1>(columns, b, c, tile);
  if (tile.h != nullptr) gather_spring_columns<kFullRows>(columns, w, tile);
}

// A row tile of U = S⁻¹B and of H = S⁻¹W (when tile.h is set) from S⁻¹'s tile (rows × m).
// Cloned for the machine's vector width.
CHOLSIM_SIMD_CLONES void add_tile_products(linalg::ConstDenseView columns, linalg::ConstDenseView b,
                                           const linalg::CscMatrix& w, const RowTile& tile) {
  if (columns.rows == kTileRows) {
    tile_products<kTileRows>(columns, b, w, tile);
  } else {
    tile_products<0>(columns, b, w, tile);
  }
}

// Column q of the capacitance matrix's lower triangle from H's rows (row-major, p columns):
// out(q…p−1) = Σ_k W(k, q)·H(k, q…p−1), ≤ 8 contiguous axpys. Cloned for the vector width.
CHOLSIM_SIMD_CLONES void capacitance_column(const double* h, const linalg::CscMatrix& w, Index q, double* out) {
  const Index p = w.cols;
  const auto length = static_cast<std::size_t>(p - q);
  std::fill_n(out, length, 0.0);
  for (auto e = w.col_ptr[static_cast<std::size_t>(q)]; e < w.col_ptr[static_cast<std::size_t>(q) + 1]; ++e) {
    const double* __restrict row = h + static_cast<std::size_t>(w.row_idx[static_cast<std::size_t>(e)]) * static_cast<std::size_t>(p) +
                                   static_cast<std::size_t>(q);
    const double weight = w.values[static_cast<std::size_t>(e)];
    double* __restrict column = out;
    for (std::size_t i = 0; i < length; ++i) column[i] += weight * row[i];
  }
}

// X(i, :) = U(i, :) − H(i, :)·y for the rows first…last − 1, H row-major (p = y.rows columns):
// a dot product of H's contiguous row with each column of y, in eight running sums (a vector)
// so that it vectorizes without reassociating at the compiler's discretion. Cloned for the
// vector width.
CHOLSIM_SIMD_CLONES void subtract_row_products(const double* h, linalg::ConstDenseView y, linalg::ConstDenseView u,
                                               linalg::DenseView x, Index first, Index last) {
  const auto p = static_cast<std::size_t>(y.rows);
  const std::size_t vectors = p / 8;
  for (Index i = first; i < last; ++i) {
    const double* row = h + static_cast<std::size_t>(i) * p;
    for (Index c = 0; c < y.cols; ++c) {
      const double* column = y.data + static_cast<std::size_t>(c) * static_cast<std::size_t>(y.ld);  // y may have no rows
      EightDoubles sums = {};
      for (std::size_t v = 0; v < vectors; ++v) {
        sums += reinterpret_cast<const EightDoubles*>(row)[v] * reinterpret_cast<const EightDoubles*>(column)[v];
      }
      double sum = 0.0;
      for (int lane = 0; lane < 8; ++lane) sum += sums[lane];
      for (std::size_t q = 8 * vectors; q < p; ++q) sum += row[q] * column[q];
      x(i, c) = u(i, c) - sum;
    }
  }
}

}  // namespace

SchurLowRankSolver::SchurLowRankSolver(linalg::ConstDenseView schur_complement, int threads)
    : size_(schur_complement.rows), threads_(threads) {
  const Index m = size_;
  linalg::DenseMatrix inverse(m, m);
  for (Index j = 0; j < m; ++j) {
    for (Index i = j; i < m; ++i) inverse(i, j) = schur_complement(i, j);
  }
  const linalg::ScopedBlasThreads scope(blas_threads_for(threads_));
  if (const int failed = linalg::blas::potrf(inverse.view()); failed != 0) {
    throw std::runtime_error("Schur complement is not positive definite (row " + std::to_string(failed - 1) + ")");
  }
  linalg::blas::potri(inverse.view());  // its lower triangle
  inverse_tiles_.resize(static_cast<std::size_t>(m) * static_cast<std::size_t>(m));
  for (Index tile = 0; tile < tile_count(m); ++tile) {
    const linalg::DenseView rows = inverse_tile(tile);
    for (Index j = 0; j < m; ++j) {
      for (Index i = 0; i < rows.rows; ++i) {
        const Index row = tile_start(tile) + i;
        rows(i, j) = row >= j ? inverse(row, j) : inverse(j, row);
      }
    }
  }
}

linalg::DenseView SchurLowRankSolver::inverse_tile(Index tile) {
  const Index rows = tile_rows(size_, tile);
  return {inverse_tiles_.data() + tile_offset(tile), rows, size_, std::max<Index>(rows, 1)};
}

linalg::ConstDenseView SchurLowRankSolver::inverse_tile(Index tile) const {
  const Index rows = tile_rows(size_, tile);
  return {inverse_tiles_.data() + tile_offset(tile), rows, size_, std::max<Index>(rows, 1)};
}

std::size_t SchurLowRankSolver::tile_offset(Index tile) const {
  return static_cast<std::size_t>(tile_start(tile)) * static_cast<std::size_t>(size_);
}

bool SchurLowRankSolver::prefer_low_rank(Index m, Index p) {
  // Measured with refactor_and_solve (docs/benchmarks.md, issue 18, stop 48;
  // `bench_schur --woodbury 373,1000,1672,4192 --spring-ratios 0.5,0.67,0.8,1.0`, two threads):
  // the Woodbury route takes 0.27–0.41× the dense refactorization's time at p/m = 0.5,
  // 0.46–0.61× at 0.67, 0.72–0.87× at 0.8 and 1.12–1.29× at 1. Below p/m = 0.85 it is the
  // faster route at every m measured.
  return 20 * p < 17 * m;
}

bool SchurLowRankSolver::take_springs(const linalg::CscMatrix& w, std::span<const double> c) {
  if (w.rows != size() || static_cast<std::size_t>(w.cols) != c.size()) {
    throw std::invalid_argument("SchurLowRankSolver::refactor: W must be " + std::to_string(size()) +
                                " × p with p stiffnesses");
  }
  w_ = w;
  status_ = {};
  for (Index q = 0; q < w.cols; ++q) {
    if (!(c[static_cast<std::size_t>(q)] > 0.0)) {
      status_.code = FactorStatusCode::not_positive_definite;
      status_.column = q;
      status_.message = "spring " + std::to_string(q) + " has a stiffness that is not positive";
      return false;
    }
  }
  return true;
}

// By the factorization's dense kernel for fronts (gemm-based recursion, panels with lookahead on
// the threads) rather than OpenBLAS's potrf: 7.8–9.0 against 9.6–10.3 ms at p = 1048 on two
// threads (stop 48, alternating runs).
bool SchurLowRankSolver::factor_capacitance() {
  int failed = 0;
  {
    const linalg::ScopedBlasThreads one_blas_thread(1);  // the threads are the arena's tasks
    linalg::thread_arena(blas_threads_for(threads_)).execute([&] { failed = factor_front_columns(capacitance()); });
  }
  if (failed != 0) {
    status_.code = FactorStatusCode::not_positive_definite;
    status_.column = failed - 1;
    status_.message = "the capacitance matrix C⁻¹ + WᵀS⁻¹W is not positive definite at spring " +
                      std::to_string(failed - 1);
    return false;
  }
  status_.code = FactorStatusCode::ok;
  return true;
}

const FactorStatus& SchurLowRankSolver::refactor(const linalg::CscMatrix& w, std::span<const double> c) {
  if (!take_springs(w, c)) return status_;
  inverse_times_w_.resize(static_cast<std::size_t>(size()) * static_cast<std::size_t>(w.cols));
  multiply_inverse({nullptr, size(), 0, std::max<Index>(size(), 1)}, nullptr, inverse_times_w_.data());
  form_capacitance(c);
  factor_capacitance();
  return status_;
}

const FactorStatus& SchurLowRankSolver::refactor_and_solve(const linalg::CscMatrix& w, std::span<const double> c,
                                                          linalg::DenseView b) {
  if (b.rows != size()) {
    throw std::invalid_argument("SchurLowRankSolver::refactor_and_solve: B needs " + std::to_string(size()) + " rows");
  }
  if (!take_springs(w, c)) return status_;
  inverse_times_w_.resize(static_cast<std::size_t>(size()) * static_cast<std::size_t>(w.cols));
  inverse_times_b_.resize(static_cast<std::size_t>(size()) * static_cast<std::size_t>(b.cols));
  multiply_inverse(b, inverse_times_b_.data(), inverse_times_w_.data());
  form_capacitance(c);
  if (!factor_capacitance()) return status_;
  finish_solve({inverse_times_b_.data(), size(), b.cols, std::max<Index>(size(), 1)}, b);
  return status_;
}

// A row tile of U and H at a time (add_tile_products): S⁻¹ streams past once. Tiles are
// independent, so threads take tiles and the result does not depend on their number.
void SchurLowRankSolver::multiply_inverse(linalg::ConstDenseView b, double* u, double* h) const {
  const Index m = size();
  linalg::parallel_chunks(tile_count(m), blas_threads_for(threads_), [&](Index first, Index last) {
    for (Index tile = first; tile < last; ++tile) {
      add_tile_products(inverse_tile(tile), b, w_, {u, h, m, w_.cols, tile_start(tile)});
    }
  }, 1);
}

// C⁻¹ + WᵀH, lower triangle: column q2 sums H's rows at spring q2's rows, from q2 on.
// Columns go in pairs q2 and p−1−q2, a long and a short one, so that every pair costs the same
// and the threads' equal shares of pairs are equal shares of the triangle.
void SchurLowRankSolver::form_capacitance(std::span<const double> c) {
  const Index p = w_.cols;
  capacitance_.resize(static_cast<std::size_t>(p) * static_cast<std::size_t>(p));  // lower triangle written below
  const auto fill_column = [&](Index q2) {
    capacitance_column(inverse_times_w_.data(), w_, q2, &capacitance()(q2, q2));
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
  linalg::DenseMatrix u(size(), b.cols);
  multiply_inverse(b, u.data(), nullptr);
  finish_solve(u.view(), b);
}

// y = (C⁻¹ + WᵀS⁻¹W)⁻¹·WᵀU; X = U − H·y.
void SchurLowRankSolver::finish_solve(linalg::ConstDenseView u, linalg::DenseView b) const {
  const Index p = w_.cols;
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
  {
    const linalg::ScopedBlasThreads one_blas_thread(1);  // 6p² flops: not worth waking BLAS threads
    linalg::blas::potrs(capacitance(), y.view());
  }
  // X = U − H·y by rows on the solver's threads rather than a threaded dgemm: OpenBLAS's woken
  // threads then spin beside the next local step and detection for their timeout.
  linalg::parallel_chunks(size(), blas_threads_for(threads_), [&](Index first, Index last) {
    subtract_row_products(inverse_times_w_.data(), y.view(), u, b, first, last);
  });
}

}  // namespace cholsim::factor
