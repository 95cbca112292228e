// Supernodal forward and backward substitution: Factor::solve and its refinement.
//
// The right-hand sides are worked on interleaved (row-major, n × count): row i's `count`
// values are adjacent, so the scatter below a supernode and the gather before it touch one
// cache line per row instead of `count` lines n·8 bytes apart. A scalar FEM matrix (seed 003's
// M + DᵀKD) has hundreds of supernodes of a few to a few dozen columns, for which BLAS calls
// with 1–4 right-hand sides cost more in call overhead and in packing L than the arithmetic
// (bench/bench_solve: OpenBLAS's gemm with 3 columns copies every block of L before using
// it). The kernels below stream each column of L once for up to four right-hand sides.
// A single right-hand side on a wide supernode still goes to BLAS (trsv/gemv).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "factor/numeric/cholesky_factor.hpp"
#include "factor/solve/solve_split.hpp"
#include "factor/solve/supernodal_solve_vectors.hpp"
#include "linalg/blas.hpp"
#include "linalg/blas_threads.hpp"
#include "linalg/parallel_loops.hpp"

// The three-column solve is bound by arithmetic with SSE2, by reading L with AVX2
// (bench/bench_solve).

namespace cholsim::factor {
namespace {

namespace blas = linalg::blas;
using namespace solve_detail;

/// Right-hand sides a kernel handles in one pass over L; more are split into groups of this
/// many (each group rereads the supernode's block, which is then in cache).
constexpr Index kKernelWidth = 4;
/// How far ahead (in values of one column of L) the kernels prefetch: L streams from memory
/// once per substitution, in runs as short as a column, too short for the hardware prefetcher.
/// With L evicted from cache between solves (as in a time step), prefetching 128 values ahead
/// plus kPrefetchStart cut the 55k-tet bar's 3-column solve by ≈ 20% against none.
constexpr Index kPrefetchAhead = 128;
/// Values at the start of the next supernode's block prefetched before working on the current.
constexpr std::int64_t kPrefetchStart = 2048;
/// Columns of L the forward kernel applies per pass over the rows below them (4 was slower,
/// 16 no faster).
constexpr Index kPanel = 8;

double max_abs(std::span<const double> v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

/// Supernode s's block of L: the k×k lower triangle on top of the r×k update rows, column-major
/// with leading dimension m = k + r; `below` are the elimination rows of the update rows.
struct SupernodeBlock {
  const double* values;
  Index first_column;
  Index k;
  Index m;
  std::span<const Index> below;
};

SupernodeBlock supernode_block(const Symbolic& sym, std::span<const double> values, Index s) {
  const Index k = sym.column_count(s);
  return {values.data() + sym.value_offset(s), sym.first_column(s), k, sym.row_count(s),
          sym.rows(s).subspan(static_cast<std::size_t>(k))};
}

/// Asks for the first kPrefetchStart values of supernode s's block: the supernode the
/// substitution works on next, whose columns start new streams (the kernels prefetch ahead
/// within a stream only).
void prefetch_block_start(const Symbolic& sym, std::span<const double> values, Index s) {
  const double* block = values.data() + sym.value_offset(s);
  const std::int64_t size = std::min<std::int64_t>(kPrefetchStart, std::int64_t{sym.row_count(s)} * sym.column_count(s));
  for (std::int64_t offset = 0; offset < size; offset += 8) __builtin_prefetch(block + offset);
}

// The kernels work on `Width` adjacent right-hand sides starting at column `first` of `y`,
// through `z`, a column-major m×Width copy of the supernode's rows (right-hand side c at
// z + c·m, so that loops over rows vectorize without shuffles): rows 0…k−1 are the
// supernode's own (x), rows k…m−1 its update rows. L11 is the block's k×k triangle, L21 its
// update rows.

/// A single right-hand side on a supernode of at least this many columns goes through BLAS
/// (trsv/gemv). With AVX2 the kernels beat OpenBLAS on narrow supernodes and match it on the
/// wide separators of a scalar matrix, but lose on the wider ones of a 3-dof elasticity matrix;
/// with SSE2 alone BLAS is faster on every supernode (timed as for bench/bench_solve).
template <typename Vector>
constexpr Index kBlasColumns = sizeof(Vector) == sizeof(Quad) ? 64 : 1;

CHOLSIM_INLINE const double* column_of(const SupernodeBlock& b, Index j) {
  return b.values + static_cast<std::size_t>(j) * static_cast<std::size_t>(b.m);
}

/// z(rows [i, i + Vectors·lanes)) −= L(those rows, columns [j0, j1)) · z(rows [j0, j1)), the
/// products held in registers.
template <typename Vector, int Width, int Vectors>
CHOLSIM_INLINE void subtract_rows_product(const SupernodeBlock& b, double* z, Index j0, Index j1, Index i) {
  const std::size_t m = static_cast<std::size_t>(b.m);
  constexpr Index lanes = kLanes<Vector>;
  Vector sum[Width][Vectors] = {};
  for (Index j = j0; j < j1; ++j) {
    const double* l = column_of(b, j) + i;
    __builtin_prefetch(l + kPrefetchAhead);
    Vector column[Vectors];
    for (int q = 0; q < Vectors; ++q) load(column[q], l + q * lanes);
    for (int c = 0; c < Width; ++c) {
      const double zj = z[c * m + j];
      for (int q = 0; q < Vectors; ++q) sum[c][q] += column[q] * zj;
    }
  }
  for (int c = 0; c < Width; ++c) {
    for (int q = 0; q < Vectors; ++q) {
      double* zi = z + c * m + i + q * lanes;
      Vector v;
      load(v, zi);
      store(zi, v - sum[c][q]);
    }
  }
}

/// z(rows [from, to)) −= L(rows [from, to), columns [j0, j1)) · z(rows [j0, j1)): two vectors of
/// rows at a time, so each row of z is read and written once per panel of columns and every
/// column of L is streamed once.
template <typename Vector, int Width>
CHOLSIM_INLINE void subtract_panel_product(const SupernodeBlock& b, double* z, Index j0, Index j1, Index from,
                                           Index to) {
  constexpr Index lanes = kLanes<Vector>;
  Index i = from;
  for (; i + 2 * lanes <= to; i += 2 * lanes) subtract_rows_product<Vector, Width, 2>(b, z, j0, j1, i);
  if (i + lanes <= to) {
    subtract_rows_product<Vector, Width, 1>(b, z, j0, j1, i);
    i += lanes;
  }
  const std::size_t m = static_cast<std::size_t>(b.m);
  for (; i < to; ++i) {
    for (Index j = j0; j < j1; ++j) {
      const double l = column_of(b, j)[i];
      for (int c = 0; c < Width; ++c) z[c * m + i] -= l * z[c * m + j];
    }
  }
}

/// Copies row `row` of y (Width values from `first`) into row i of z.
template <int Width>
CHOLSIM_INLINE void load_row(InterleavedRhs y, Index row, Index first, double* z, std::size_t m, Index i) {
  const double* source = y.row(row) + first;
  for (int c = 0; c < Width; ++c) z[c * m + i] = source[c];
}

/// Copies rows 0…k−1 of z back into the supernode's own rows of y.
template <int Width>
CHOLSIM_INLINE void store_own_rows(const SupernodeBlock& b, InterleavedRhs y, Index first, const double* z) {
  const std::size_t m = static_cast<std::size_t>(b.m);
  for (Index j = 0; j < b.k; ++j) {
    double* target = y.row(b.first_column + j) + first;
    for (int c = 0; c < Width; ++c) target[c] = z[c * m + j];
  }
}

/// z(j0 … j1) ← L(j0 … j1, j0 … j1)⁻¹ z(j0 … j1) by panels of kPanel columns, each panel's
/// product also subtracted from the rows after it up to `rows_end` (the supernode's m for the
/// whole step).
template <typename Vector, int Width>
CHOLSIM_INLINE void solve_forward_panels(const SupernodeBlock& b, double* z, Index j0, Index j1, Index rows_end) {
  const std::size_t m = static_cast<std::size_t>(b.m);
  for (Index p0 = j0; p0 < j1; p0 += kPanel) {
    const Index p1 = std::min(p0 + kPanel, j1);
    for (Index j = p0; j < p1; ++j) {
      const double diagonal = column_of(b, j)[j];
      for (int c = 0; c < Width; ++c) z[c * m + j] /= diagonal;
      subtract_panel_product<Vector, Width>(b, z, j, j + 1, j + 1, p1);
    }
    subtract_panel_product<Vector, Width>(b, z, p0, p1, p1, rows_end);
  }
}

/// Forward step: x ← L11⁻¹x and y(below) −= L21·x. Right-looking in panels of kPanel columns:
/// the panel's triangle, then its product subtracted from all rows of z below it; the update
/// rows of z start at zero and are added into y once at the end.
template <typename Vector, int Width>
CHOLSIM_INLINE void forward_kernel(const SupernodeBlock& b, InterleavedRhs y, Index first, double* z) {
  const std::size_t m = static_cast<std::size_t>(b.m);
  for (Index j = 0; j < b.k; ++j) load_row<Width>(y, b.first_column + j, first, z, m, j);
  for (int c = 0; c < Width; ++c) std::fill(z + c * m + b.k, z + c * m + m, 0.0);
  solve_forward_panels<Vector, Width>(b, z, 0, b.k, b.m);
  store_own_rows<Width>(b, y, first, z);
  for (Index i = b.k; i < b.m; ++i) {
    double* target = y.row(b.below[i - b.k]) + first;
    for (int c = 0; c < Width; ++c) target[c] += z[c * m + i];
  }
}

/// z(j + q) −= Σ_{i ∈ [from, to)} L(i, j + q)·z(i) for the Columns columns j … j + Columns − 1
/// and each right-hand side: the columns' dot products side by side, so that every row of z
/// loaded serves Columns columns of L (one column at a time, the backward step was bound by
/// loading z: four loads for three FMAs with three right-hand sides, 1.4× the forward step's
/// time on a 32³ box).
template <typename Vector, int Width, int Columns>
CHOLSIM_INLINE void subtract_column_dots(const SupernodeBlock& b, double* z, Index j, Index from, Index to) {
  const std::size_t m = static_cast<std::size_t>(b.m);
  constexpr Index lanes = kLanes<Vector>;
  const double* l[Columns];
  for (int q = 0; q < Columns; ++q) l[q] = column_of(b, j + q);
  Vector partial[Columns][Width] = {};
  Index i = from;
  for (; i + 2 * lanes <= to; i += 2 * lanes) {
    for (int q = 0; q < Columns; ++q) __builtin_prefetch(l[q] + i + kPrefetchAhead);
    for (Index half = 0; half < 2 * lanes; half += lanes) {
      Vector zi[Width];
      for (int c = 0; c < Width; ++c) load(zi[c], z + c * m + i + half);
      for (int q = 0; q < Columns; ++q) {
        Vector column;
        load(column, l[q] + i + half);
        for (int c = 0; c < Width; ++c) partial[q][c] += column * zi[c];
      }
    }
  }
  double sum[Columns][Width] = {};
  for (int q = 0; q < Columns; ++q) {
    for (int c = 0; c < Width; ++c) {
      for (Index lane = 0; lane < lanes; ++lane) sum[q][c] += partial[q][c][lane];
    }
  }
  for (; i < to; ++i) {
    for (int q = 0; q < Columns; ++q) {
      for (int c = 0; c < Width; ++c) sum[q][c] += l[q][i] * z[c * m + i];
    }
  }
  for (int q = 0; q < Columns; ++q) {
    for (int c = 0; c < Width; ++c) z[c * m + j + q] -= sum[q][c];
  }
}

/// Columns of L whose dot products the backward kernel takes together.
constexpr Index kDotColumns = 4;

/// z(j) −= L(from … to, j)ᵀ z(from … to) for every column j in [j0, j1), kDotColumns at a time.
template <typename Vector, int Width>
CHOLSIM_INLINE void subtract_dots_of_columns(const SupernodeBlock& b, double* z, Index j0, Index j1, Index from,
                                             Index to) {
  Index j = j0;
  for (; j + kDotColumns <= j1; j += kDotColumns) subtract_column_dots<Vector, Width, kDotColumns>(b, z, j, from, to);
  for (; j < j1; ++j) subtract_column_dots<Vector, Width, 1>(b, z, j, from, to);
}

/// z(j0 … j1) ← L(j0 … j1, j0 … j1)⁻ᵀ z(j0 … j1) (the rows after j1 already subtracted), by
/// blocks of kDotColumns columns from the last: the block's dot products with the rows after it
/// together, then the block's own small triangle column by column.
template <typename Vector, int Width>
CHOLSIM_INLINE void solve_backward_blocks(const SupernodeBlock& b, double* z, Index j0, Index j1) {
  const std::size_t m = static_cast<std::size_t>(b.m);
  for (Index end = j1; end > j0;) {
    const Index begin = std::max(j0, end - kDotColumns);
    subtract_dots_of_columns<Vector, Width>(b, z, begin, end, end, j1);
    for (Index q = end - 1; q >= begin; --q) {
      const double* column = column_of(b, q);
      for (int c = 0; c < Width; ++c) {
        double value = z[c * m + q];
        for (Index i = q + 1; i < end; ++i) value -= column[i] * z[c * m + i];
        z[c * m + q] = value / column[q];
      }
    }
    end = begin;
  }
}

/// Backward step: x ← L11⁻ᵀ(x − L21ᵀ·y(below)). First x −= L21ᵀ·y(below), kDotColumns columns
/// at a time; then the triangle by blocks of kDotColumns columns from the last: the block's
/// dot products with the rows below it (already final) together, then the block's own small
/// triangle column by column.
template <typename Vector, int Width>
CHOLSIM_INLINE void backward_kernel(const SupernodeBlock& b, InterleavedRhs y, Index first, double* z) {
  const std::size_t m = static_cast<std::size_t>(b.m);
  for (Index j = 0; j < b.k; ++j) load_row<Width>(y, b.first_column + j, first, z, m, j);
  for (Index i = b.k; i < b.m; ++i) load_row<Width>(y, b.below[i - b.k], first, z, m, i);
  subtract_dots_of_columns<Vector, Width>(b, z, 0, b.k, b.k, b.m);
  solve_backward_blocks<Vector, Width>(b, z, 0, b.k);
  store_own_rows<Width>(b, y, first, z);
}

/// The forward step for one right-hand side through BLAS: x ← L11⁻¹x (trsv), the update
/// rows' product L21·x (gemv) into `work`, subtracted from y(below).
void forward_blas(const SupernodeBlock& b, double* y, double* work) {
  const Index k = b.k;
  const Index r = b.m - k;
  const linalg::ConstDenseView block{b.values, b.m, k, b.m};
  double* x = y + b.first_column;
  blas::trsv(blas::Transpose::no, blas::Diagonal::non_unit, block.block(0, 0, k, k), x);
  if (r == 0) return;
  blas::gemv(blas::Transpose::no, 1.0, block.block(k, 0, r, k), x, 0.0, work);
  for (Index i = 0; i < r; ++i) y[b.below[i]] -= work[i];
}

/// The backward step for one right-hand side through BLAS: y(below) gathered into `work`,
/// x ← L11⁻ᵀ(x − L21ᵀ·work) (gemv, trsv).
void backward_blas(const SupernodeBlock& b, double* y, double* work) {
  const Index k = b.k;
  const Index r = b.m - k;
  const linalg::ConstDenseView block{b.values, b.m, k, b.m};
  double* x = y + b.first_column;
  if (r > 0) {
    for (Index i = 0; i < r; ++i) work[i] = y[b.below[i]];
    blas::gemv(blas::Transpose::yes, -1.0, block.block(k, 0, r, k), work, 1.0, x);
  }
  blas::trsv(blas::Transpose::yes, blas::Diagonal::non_unit, block.block(0, 0, k, k), x);
}

/// Right-hand sides and supernode columns from which a supernode's step goes through BLAS-3
/// (trsm + gemm on the interleaved rows, read as a column-major count × n matrix) instead of
/// the kernels, which reread the block once per four right-hand sides. CONJAC's Jacobian
/// (fem/conjac/, 3n_d + 1 columns) is the case: at 19 columns on a 43K-DOF model the backward
/// phase took 11.5 ms through the kernels.
constexpr Index kBlasManyRhs = 6;
constexpr Index kBlasManyColumns = 8;

bool use_blas_many(Index count, Index k) { return count >= kBlasManyRhs && k >= kBlasManyColumns; }

/// The forward step for `count` ≥ kBlasManyRhs interleaved right-hand sides through BLAS-3.
/// Transposed, y_s = L11⁻¹b_s is Y_sᵀ = B_sᵀ·L11⁻ᵀ (trsm), and the rows below get
/// −(Y_sᵀ·L21ᵀ)ᵀ (gemm into `work`, count × r, then scattered).
void forward_blas_many(const SupernodeBlock& b, InterleavedRhs y, double* work) {
  const Index k = b.k;
  const Index r = b.m - k;
  const linalg::ConstDenseView block{b.values, b.m, k, b.m};
  const linalg::DenseView own{y.row(b.first_column), y.count, k, y.count};
  blas::trsm(blas::Side::right, blas::Transpose::yes, blas::Diagonal::non_unit, 1.0, block.block(0, 0, k, k), own);
  if (r == 0) return;
  const linalg::DenseView update{work, y.count, r, y.count};
  blas::gemm(blas::Transpose::no, blas::Transpose::yes, 1.0, own, block.block(k, 0, r, k), 0.0, update);
  for (Index i = 0; i < r; ++i) {
    double* target = y.row(b.below[i]);
    const double* source = work + static_cast<std::size_t>(i) * static_cast<std::size_t>(y.count);
    for (Index c = 0; c < y.count; ++c) target[c] -= source[c];
  }
}

/// The backward step likewise: x_s = L11⁻ᵀ(y_s − L21ᵀ·y_below) is X_sᵀ = (Y_sᵀ − G·L21)·L11⁻¹
/// with G the rows below gathered into `work` (count × r): gemm, then trsm.
void backward_blas_many(const SupernodeBlock& b, InterleavedRhs y, double* work) {
  const Index k = b.k;
  const Index r = b.m - k;
  const linalg::ConstDenseView block{b.values, b.m, k, b.m};
  const linalg::DenseView own{y.row(b.first_column), y.count, k, y.count};
  if (r > 0) {
    for (Index i = 0; i < r; ++i) {
      std::copy_n(y.row(b.below[i]), y.count, work + static_cast<std::size_t>(i) * static_cast<std::size_t>(y.count));
    }
    const linalg::ConstDenseView gathered{work, y.count, r, y.count};
    blas::gemm(blas::Transpose::no, blas::Transpose::no, -1.0, gathered, block.block(k, 0, r, k), 1.0, own);
  }
  blas::trsm(blas::Side::right, blas::Transpose::no, blas::Diagonal::non_unit, 1.0, block.block(0, 0, k, k), own);
}

/// Work space of either substitution: the update rows of the largest front, all right-hand sides.
std::vector<double> substitution_work(const Symbolic& sym, Index count) {
  return std::vector<double>(static_cast<std::size_t>(sym.stats().largest_front) * static_cast<std::size_t>(count));
}

/// Runs `substitute(first, last)` on groups of the columns [0, count), one group per thread (at
/// most `threads`, each of at least kBlasManyRhs columns, so that every group still takes the
/// BLAS-3 path), with BLAS on one thread meanwhile; a single group runs on the calling thread.
/// `substitute(first, last, alone)`: `alone` when it is the only group, so that its pass may
/// split the tree over the factor's threads instead (solve_split.hpp).
template <typename Substitute>
void on_column_groups(Index count, int threads, Substitute&& substitute) {
  const Index groups = std::clamp<Index>(count / kBlasManyRhs, 1, std::max(1, threads));
  if (groups == 1) {
    substitute(Index{0}, count, true);
    return;
  }
  const linalg::ScopedBlasThreads one_blas_thread(1);
  linalg::thread_arena(threads).execute([&] {
    tbb::parallel_for(Index{0}, groups, [&](Index g) { substitute(count * g / groups, count * (g + 1) / groups, false); });
  });
}

/// Rows of the column-major side the layout changes below take at a time: each column's part
/// of the tile is one short stream, and the interleaved rows it meets (`count` adjacent values
/// each) stay in L1 while every column visits them. Going column by column over all rows
/// instead cost one cache miss per value: 40 % of a 30-column backward phase on a 45K-DOF
/// model with the permutation (CONJAC's Jacobian, bench_conjac).
constexpr Index kLayoutTileRows = 64;

/// z.row(place[r])[c] = y(r, c) for every row r of y (place empty: the identity), and zero in
/// the row's padding columns [y.cols, z.count) — column-major into interleaved, e.g. user
/// numbering into elimination numbering with the inverse permutation.
void interleave(linalg::ConstDenseView y, std::span<const Index> place, InterleavedRhs z) {
  for (Index r0 = 0; r0 < y.rows; r0 += kLayoutTileRows) {
    const Index r1 = std::min(r0 + kLayoutTileRows, y.rows);
    for (Index c = 0; c < y.cols; ++c) {
      const double* column = y.data + static_cast<std::size_t>(c) * static_cast<std::size_t>(y.ld);
      for (Index r = r0; r < r1; ++r) z.row(place.empty() ? r : place[r])[c] = column[r];
    }
    if (z.count > y.cols) {  // the padding (padded_rhs_count)
      for (Index r = r0; r < r1; ++r) {
        double* row = z.row(place.empty() ? r : place[r]);
        std::fill(row + y.cols, row + z.count, 0.0);
      }
    }
  }
}

/// x(r, c) = z.row(place[r])[c] for every row r of x (place empty: the identity) — interleaved
/// back into column-major.
void deinterleave(InterleavedRhs z, std::span<const Index> place, linalg::DenseView x) {
  for (Index r0 = 0; r0 < x.rows; r0 += kLayoutTileRows) {
    const Index r1 = std::min(r0 + kLayoutTileRows, x.rows);
    for (Index c = 0; c < x.cols; ++c) {
      double* column = x.data + static_cast<std::size_t>(c) * static_cast<std::size_t>(x.ld);
      for (Index r = r0; r < r1; ++r) column[r] = z.row(place.empty() ? r : place[r])[c];
    }
  }
}

/// Interleaved rows the BLAS-3 path works on are padded with zero right-hand sides to a
/// multiple of kRhsPadding — rows of whole cache lines, whole AVX-512 vectors for OpenBLAS's
/// kernels — where that adds at most a quarter more columns. The backward phase on the DRAGON
/// stand-in (bench_conjac's model, one thread, medians of 21), unpadded → padded, with
/// OpenBLAS's SkylakeX / Haswell kernels: 15 columns 23.8 → 17.7 / 24.3 → 22.5 ms; 23: 27.9 →
/// 24.3 / 32.4 → 29.4; 30: 32.5 → 28.8 / 37.0 → 37.2. Padding by more than a quarter lost with
/// the Haswell kernels — 12 → 16 columns 19.1 → 22.4, 17 → 24 columns 25.8 → 28.9 — and with
/// SkylakeX's gained on the first (20.8 → 17.3) and lost on the second (21.4 → 23.8).
constexpr Index kRhsPadding = 8;

Index padded_rhs_count(Index count) {
  if (count < kBlasManyRhs) return count;
  const Index padded = (count + kRhsPadding - 1) / kRhsPadding * kRhsPadding;
  return 4 * (padded - count) <= count ? padded : count;
}

/// A substitution on column-major right-hand sides, `columns` of them, in groups
/// (on_column_groups): `load(first, count, z)` fills interleaved storage for the group's columns
/// [first, first + count) — every value, padding included (rows are z.count ≥ count wide); it
/// is not zero-filled —, `substitute(z, work, alone)` works on it (`alone`: the only group),
/// `unload(first, count, z)` copies the result out.
template <typename Load, typename Substitute, typename Unload>
void on_interleaved_groups(const Symbolic& sym, Index columns, int threads, Load&& load, Substitute&& substitute,
                           Unload&& unload) {
  on_column_groups(columns, threads, [&](Index first, Index last, bool alone) {
    const Index count = last - first;
    const Index width = padded_rhs_count(count);
    std::vector<double> work = substitution_work(sym, width);
    const auto storage =
        std::make_unique_for_overwrite<double[]>(static_cast<std::size_t>(sym.size()) * static_cast<std::size_t>(width));
    const InterleavedRhs z{storage.get(), width};
    load(first, count, z);
    substitute(z, std::span<double>(work), alone);
    unload(first, count, z);
  });
}

/// The forward substitution over the supernodes [begin, end) (see Factor::forward_substitution).
template <typename Vector>
CHOLSIM_INLINE void forward_pass(const Symbolic& sym, std::span<const double> values, Index begin, Index end,
                                 InterleavedRhs y, double* work) {
  for (Index s = begin; s < end; ++s) {
    const SupernodeBlock b = supernode_block(sym, values, s);
    if (s + 1 < end) prefetch_block_start(sym, values, s + 1);
    if (y.count == 1 && b.k >= kBlasColumns<Vector>) {
      forward_blas(b, y.data, work);
      continue;
    }
    if (use_blas_many(y.count, b.k)) {
      forward_blas_many(b, y, work);
      continue;
    }
    for (Index first = 0; first < y.count; first += kKernelWidth) {
      switch (std::min(y.count - first, kKernelWidth)) {
        case 1: forward_kernel<Vector, 1>(b, y, first, work); break;
        case 2: forward_kernel<Vector, 2>(b, y, first, work); break;
        case 3: forward_kernel<Vector, 3>(b, y, first, work); break;
        default: forward_kernel<Vector, 4>(b, y, first, work); break;
      }
    }
  }
}

/// The backward substitution over the supernodes [begin, end), last first (see
/// Factor::backward_substitution).
template <typename Vector>
CHOLSIM_INLINE void backward_pass(const Symbolic& sym, std::span<const double> values, Index begin, Index end,
                                  InterleavedRhs y, double* work) {
  for (Index s = end - 1; s >= begin; --s) {
    const SupernodeBlock b = supernode_block(sym, values, s);
    if (s > begin) prefetch_block_start(sym, values, s - 1);
    if (y.count == 1 && b.k >= kBlasColumns<Vector>) {
      backward_blas(b, y.data, work);
      continue;
    }
    if (use_blas_many(y.count, b.k)) {
      backward_blas_many(b, y, work);
      continue;
    }
    for (Index first = 0; first < y.count; first += kKernelWidth) {
      switch (std::min(y.count - first, kKernelWidth)) {
        case 1: backward_kernel<Vector, 1>(b, y, first, work); break;
        case 2: backward_kernel<Vector, 2>(b, y, first, work); break;
        case 3: backward_kernel<Vector, 3>(b, y, first, work); break;
        default: backward_kernel<Vector, 4>(b, y, first, work); break;
      }
    }
  }
}

void forward_pass_baseline(const Symbolic& sym, std::span<const double> values, Index begin, Index end,
                           InterleavedRhs y, double* work) {
  forward_pass<Pair>(sym, values, begin, end, y, work);
}

void backward_pass_baseline(const Symbolic& sym, std::span<const double> values, Index begin, Index end,
                            InterleavedRhs y, double* work) {
  backward_pass<Pair>(sym, values, begin, end, y, work);
}

#if CHOLSIM_SOLVE_AVX2
__attribute__((target("avx2,fma"))) void forward_pass_avx2(const Symbolic& sym, std::span<const double> values,
                                                            Index begin, Index end, InterleavedRhs y, double* work) {
  forward_pass<Quad>(sym, values, begin, end, y, work);
}

__attribute__((target("avx2,fma"))) void backward_pass_avx2(const Symbolic& sym, std::span<const double> values,
                                                             Index begin, Index end, InterleavedRhs y, double* work) {
  backward_pass<Quad>(sym, values, begin, end, y, work);
}

#endif

void run_forward_pass(const Symbolic& sym, std::span<const double> values, Index begin, Index end, InterleavedRhs y,
                      double* work) {
#if CHOLSIM_SOLVE_AVX2
  if (use_avx2_kernels()) return forward_pass_avx2(sym, values, begin, end, y, work);
#endif
  forward_pass_baseline(sym, values, begin, end, y, work);
}

void run_backward_pass(const Symbolic& sym, std::span<const double> values, Index begin, Index end, InterleavedRhs y,
                       double* work) {
#if CHOLSIM_SOLVE_AVX2
  if (use_avx2_kernels()) return backward_pass_avx2(sym, values, begin, end, y, work);
#endif
  backward_pass_baseline(sym, values, begin, end, y, work);
}

// The top supernodes of a split pass (solve_split.hpp) hold a sixth to a quarter of L's values
// on the large factors of the simulations and were substituted on one thread while the other
// waited. A large one is now cut over the threads itself, by rows in the forward step (each row
// of z below a block of columns takes that block's product) and by columns in the backward step
// (each column's dot product with the rows below it), the triangle recursively: its first half,
// then the second half's rows updated by the first half's columns on the threads, then the
// second half (the backward step in the mirror order). The pieces are the kernels' own loops.

/// Supernodes of fewer values go through the serial kernels: a fork and a join cost microseconds.
constexpr std::int64_t kMinParallelTopValues = std::int64_t{1} << 17;
/// Triangles of up to this many columns are solved on one thread.
constexpr Index kSerialTriangleColumns = 128;
/// Rows a piece of the forward step's row loop holds at least: whole pairs of vectors, so that
/// the cut does not move rows between the vector loop and its scalar tail.
constexpr Index kRowBlock = 8;

enum class TopPiece {
  forward_triangle,   ///< z(j0 … j1) ← L(j0 … j1, j0 … j1)⁻¹ z(j0 … j1)
  subtract_products,  ///< z(from … to) −= L(from … to, j0 … j1) z(j0 … j1), by panels
  column_dots,        ///< z(j) −= L(from … to, j)ᵀ z(from … to) for j in j0 … j1
  backward_triangle,  ///< z(j0 … j1) ← L(j0 … j1, j0 … j1)⁻ᵀ z(j0 … j1)
};

struct TopPieceRange {
  Index j0, j1, from, to;
};

template <typename Vector, int Width>
CHOLSIM_INLINE void run_top_piece(TopPiece piece, const SupernodeBlock& b, double* z, TopPieceRange r) {
  switch (piece) {
    case TopPiece::forward_triangle: return solve_forward_panels<Vector, Width>(b, z, r.j0, r.j1, r.j1);
    case TopPiece::subtract_products:
      for (Index j0 = r.j0; j0 < r.j1; j0 += kPanel) {
        subtract_panel_product<Vector, Width>(b, z, j0, std::min(j0 + kPanel, r.j1), r.from, r.to);
      }
      return;
    case TopPiece::column_dots: return subtract_dots_of_columns<Vector, Width>(b, z, r.j0, r.j1, r.from, r.to);
    case TopPiece::backward_triangle: return solve_backward_blocks<Vector, Width>(b, z, r.j0, r.j1);
  }
}

template <typename Vector>
CHOLSIM_INLINE void run_top_piece(TopPiece piece, const SupernodeBlock& b, double* z, TopPieceRange r, Index width) {
  switch (width) {
    case 1: return run_top_piece<Vector, 1>(piece, b, z, r);
    case 2: return run_top_piece<Vector, 2>(piece, b, z, r);
    case 3: return run_top_piece<Vector, 3>(piece, b, z, r);
    default: return run_top_piece<Vector, 4>(piece, b, z, r);
  }
}

void top_piece_baseline(TopPiece piece, const SupernodeBlock& b, double* z, TopPieceRange r, Index width) {
  run_top_piece<Pair>(piece, b, z, r, width);
}

#if CHOLSIM_SOLVE_AVX2
__attribute__((target("avx2,fma"))) void top_piece_avx2(TopPiece piece, const SupernodeBlock& b, double* z,
                                                         TopPieceRange r, Index width) {
  run_top_piece<Quad>(piece, b, z, r, width);
}
#endif

void top_piece(TopPiece piece, const SupernodeBlock& b, double* z, TopPieceRange r, Index width) {
#if CHOLSIM_SOLVE_AVX2
  if (use_avx2_kernels()) return top_piece_avx2(piece, b, z, r, width);
#endif
  top_piece_baseline(piece, b, z, r, width);
}

/// The piece for rows [from, to) cut over the threads, one run of whole kRowBlock blocks each:
/// a thread's panels then read long runs of each column of L. Cut into eight runs a thread
/// (parallel_chunks' default), each panel read short runs of eight columns at once and the
/// forward step's top supernodes took 16.4 ms on two threads against 17.8 on one (32³ box,
/// three right-hand sides); one run a thread, 12.0 ms.
void top_piece_by_rows(TopPiece piece, const SupernodeBlock& b, double* z, TopPieceRange r, Index width, int threads) {
  const Index blocks = (r.to - r.from + kRowBlock - 1) / kRowBlock;
  if (blocks == 0) return;
  const Index runs = std::min<Index>(threads, blocks);
  linalg::parallel_chunks(runs, threads, [&](Index first, Index last) {
    const Index begin = r.from + blocks * first / runs * kRowBlock;
    const Index end = std::min(r.to, r.from + blocks * last / runs * kRowBlock);
    top_piece(piece, b, z, {r.j0, r.j1, begin, end}, width);
  }, 2);
}

/// The piece for columns [j0, j1) cut over the threads.
void top_piece_by_columns(TopPiece piece, const SupernodeBlock& b, double* z, TopPieceRange r, Index width,
                          int threads) {
  const Index groups = (r.j1 - r.j0 + kDotColumns - 1) / kDotColumns;
  linalg::parallel_chunks(groups, threads, [&](Index first, Index last) {
    top_piece(piece, b, z, {r.j0 + first * kDotColumns, std::min(r.j1, r.j0 + last * kDotColumns), r.from, r.to}, width);
  }, 2);
}

/// The forward triangle on columns [a, c): halves, the second's rows updated on the threads.
void forward_triangle_on_threads(const SupernodeBlock& b, double* z, Index a, Index c, Index width, int threads) {
  if (c - a <= kSerialTriangleColumns) return top_piece(TopPiece::forward_triangle, b, z, {a, c, 0, 0}, width);
  const Index h = a + (c - a) / 2 / kPanel * kPanel;
  forward_triangle_on_threads(b, z, a, h, width, threads);
  top_piece_by_rows(TopPiece::subtract_products, b, z, {a, h, h, c}, width, threads);
  forward_triangle_on_threads(b, z, h, c, width, threads);
}

/// The backward triangle on columns [a, c), the rows below c already subtracted.
void backward_triangle_on_threads(const SupernodeBlock& b, double* z, Index a, Index c, Index width, int threads) {
  if (c - a <= kSerialTriangleColumns) return top_piece(TopPiece::backward_triangle, b, z, {a, c, 0, 0}, width);
  const Index h = a + (c - a) / 2 / kDotColumns * kDotColumns;
  backward_triangle_on_threads(b, z, h, c, width, threads);
  top_piece_by_columns(TopPiece::column_dots, b, z, {a, h, h, c}, width, threads);
  backward_triangle_on_threads(b, z, a, h, width, threads);
}

/// Whether a top supernode's step goes over the threads: kernel widths (one to four right-hand
/// sides; one goes through the width-1 kernels here instead of trsv/gemv on one thread, 32³ box
/// on two threads with one-thread BLAS: forward 36 → 33.5 ms, backward 37 → 29.5; with OpenBLAS
/// on both threads 33 → 34 and 33 → 30) and large blocks. Six and more stay on the BLAS-3 path.
bool substitute_on_threads(const SupernodeBlock& b, Index count, int threads) {
  return threads > 1 && count >= 1 && count <= kKernelWidth &&
         std::int64_t{b.m} * std::int64_t{b.k} >= kMinParallelTopValues;
}

/// The element of z (column-major m × y.count, as the kernels hold it) for row i and right-hand
/// side c, and the row of y a supernode's row i stands for.
double& z_at(const SupernodeBlock& b, double* z, Index i, Index c) {
  return z[static_cast<std::size_t>(c) * static_cast<std::size_t>(b.m) + static_cast<std::size_t>(i)];
}
double* y_row(const SupernodeBlock& b, InterleavedRhs y, Index i) {
  return y.row(i < b.k ? b.first_column + i : b.below[i - b.k]);
}

/// Rows [0, rows) of z from y (the supernode's own rows, then those below).
void gather_rows(const SupernodeBlock& b, InterleavedRhs y, double* z, Index rows) {
  for (Index i = 0; i < rows; ++i) {
    for (Index c = 0; c < y.count; ++c) z_at(b, z, i, c) = y_row(b, y, i)[c];
  }
}

/// The supernode's own rows of z back into y.
void write_own_rows(const SupernodeBlock& b, InterleavedRhs y, double* z) {
  for (Index j = 0; j < b.k; ++j) {
    for (Index c = 0; c < y.count; ++c) y_row(b, y, j)[c] = z_at(b, z, j, c);
  }
}

/// Supernode s's forward step on `threads` threads (substitute_on_threads), through `z`.
void forward_supernode_on_threads(const SupernodeBlock& b, InterleavedRhs y, double* z, int threads) {
  gather_rows(b, y, z, b.k);
  for (Index c = 0; c < y.count; ++c) std::fill(&z_at(b, z, b.k, c), &z_at(b, z, 0, c) + b.m, 0.0);
  forward_triangle_on_threads(b, z, 0, b.k, y.count, threads);
  top_piece_by_rows(TopPiece::subtract_products, b, z, {0, b.k, b.k, b.m}, y.count, threads);
  write_own_rows(b, y, z);
  for (Index i = b.k; i < b.m; ++i) {
    for (Index c = 0; c < y.count; ++c) y_row(b, y, i)[c] += z_at(b, z, i, c);
  }
}

/// Supernode s's backward step on `threads` threads (substitute_on_threads), through `z`.
void backward_supernode_on_threads(const SupernodeBlock& b, InterleavedRhs y, double* z, int threads) {
  gather_rows(b, y, z, b.m);
  top_piece_by_columns(TopPiece::column_dots, b, z, {0, b.k, b.k, b.m}, y.count, threads);
  backward_triangle_on_threads(b, z, 0, b.k, y.count, threads);
  write_own_rows(b, y, z);
}

/// The split's top supernodes, forward: each large one on the threads, the others serially.
void forward_top(const Symbolic& sym, std::span<const double> values, const SolveSplit& split, InterleavedRhs y,
                 double* work) {
  const auto threads = static_cast<int>(split.subtrees.size());
  for (Index s : split.top) {
    const SupernodeBlock b = supernode_block(sym, values, s);
    if (substitute_on_threads(b, y.count, threads)) {
      forward_supernode_on_threads(b, y, work, threads);
    } else {
      run_forward_pass(sym, values, s, s + 1, y, work);
    }
  }
}

/// The split's top supernodes, backward, last first.
void backward_top(const Symbolic& sym, std::span<const double> values, const SolveSplit& split, InterleavedRhs y,
                  double* work) {
  const auto threads = static_cast<int>(split.subtrees.size());
  for (auto s = split.top.rbegin(); s != split.top.rend(); ++s) {
    const SupernodeBlock b = supernode_block(sym, values, *s);
    if (substitute_on_threads(b, y.count, threads)) {
      backward_supernode_on_threads(b, y, work, threads);
    } else {
      run_backward_pass(sym, values, *s, *s + 1, y, work);
    }
  }
}

/// Copies rows [range.begin, range.end) of `from` into `to` (both `count` values a row).
void copy_rows(InterleavedRhs from, InterleavedRhs to, IndexRange range) {
  std::copy(from.row(range.begin), from.row(range.end), to.row(range.begin));
}

/// The rows (columns of L) of the supernodes [supernodes.begin, supernodes.end).
IndexRange rows_of(const Symbolic& sym, IndexRange supernodes) {
  return {sym.first_column(supernodes.begin), sym.first_column(supernodes.end)};
}

/// The subtrees' forward passes, each thread on its own (solve_split.hpp): thread 0 on `y`
/// itself, every other thread on a copy holding its subtrees' rows and zeros in the shared rows.
/// Returns the copies (null for thread 0). Thread 0 works in `work`, the others in work space
/// of their own. BLAS stays on one thread meanwhile: its threads would compete with ours.
std::vector<std::unique_ptr<double[]>> forward_subtrees(const Symbolic& sym, std::span<const double> values,
                                                        const SolveSplit& split, InterleavedRhs y, double* work) {
  const auto threads = static_cast<Index>(split.subtrees.size());
  const std::size_t entries = static_cast<std::size_t>(sym.size()) * static_cast<std::size_t>(y.count);
  std::vector<std::unique_ptr<double[]>> copies(static_cast<std::size_t>(threads));
  const linalg::ScopedBlasThreads one_blas_thread(1);
  linalg::parallel_chunks(threads, static_cast<int>(threads), [&](Index first, Index last) {
    for (Index t = first; t < last; ++t) {
      InterleavedRhs own = y;
      if (t > 0) {
        copies[static_cast<std::size_t>(t)] = std::make_unique_for_overwrite<double[]>(entries);
        own = InterleavedRhs{copies[static_cast<std::size_t>(t)].get(), y.count};
        for (const IndexRange& range : split.subtrees[static_cast<std::size_t>(t)]) copy_rows(y, own, rows_of(sym, range));
        for (const IndexRange& rows : split.shared_rows) std::fill(own.row(rows.begin), own.row(rows.end), 0.0);
      }
      std::vector<double> own_work = t > 0 ? substitution_work(sym, y.count) : std::vector<double>{};
      for (const IndexRange& range : split.subtrees[static_cast<std::size_t>(t)]) {
        run_forward_pass(sym, values, range.begin, range.end, own, t > 0 ? own_work.data() : work);
      }
    }
  }, 1);
  return copies;
}

/// The forward pass with the split's subtrees on their threads (forward_subtrees), the copies'
/// rows taken back into `y` — subtree rows copied, shared rows added —, then the top
/// supernodes on `y`. Subtrees write only their own rows and the shared ones.
void parallel_forward_pass(const Symbolic& sym, std::span<const double> values, const SolveSplit& split,
                           InterleavedRhs y, double* work) {
  const auto copies = forward_subtrees(sym, values, split, y, work);
  for (std::size_t t = 1; t < copies.size(); ++t) {
    const InterleavedRhs own{copies[t].get(), y.count};
    for (const IndexRange& range : split.subtrees[t]) copy_rows(own, y, rows_of(sym, range));
    for (const IndexRange& rows : split.shared_rows) {
      std::transform(own.row(rows.begin), own.row(rows.end), y.row(rows.begin), y.row(rows.begin), std::plus<>());
    }
  }
  forward_top(sym, values, split, y, work);
}

/// The backward pass split the other way round: the top supernodes first, then the subtrees
/// on their threads, which read the rows above them and write only their own.
void parallel_backward_pass(const Symbolic& sym, std::span<const double> values, const SolveSplit& split,
                            InterleavedRhs y, double* work) {
  backward_top(sym, values, split, y, work);
  const auto threads = static_cast<Index>(split.subtrees.size());
  const linalg::ScopedBlasThreads one_blas_thread(1);  // as in forward_subtrees
  linalg::parallel_chunks(threads, static_cast<int>(threads), [&](Index first, Index last) {
    for (Index t = first; t < last; ++t) {
      std::vector<double> own_work = t > 0 ? substitution_work(sym, y.count) : std::vector<double>{};
      for (const IndexRange& range : split.subtrees[static_cast<std::size_t>(t)]) {
        run_backward_pass(sym, values, range.begin, range.end, y, t > 0 ? own_work.data() : work);
      }
    }
  }, 1);
}

}  // namespace

// Solves L·Y = Y in place (elimination numbering), supernode by supernode: a triangular solve
// with the diagonal block, then the block below scatters its product into later rows.
// A partial factorization stops before the Schur supernode: rows of the Schur set are left
// holding b₂ − L21·y₁, the first phase of the three-phase solve (seed 004 §4.4, eq. 16).
void Factor::forward_substitution(double* rhs, Index count, std::span<double> work, bool on_threads) const {
  const InterleavedRhs y{rhs, count};
  if (on_threads && solve_split_.parallel()) return parallel_forward_pass(*symbolic_, values_, solve_split_, y, work.data());
  run_forward_pass(*symbolic_, values_, 0, symbolic_->eliminated_supernode_count(), y, work.data());
}

// Solves Lᵀ·Y = Y in place, supernodes in reverse: gather the rows below, subtract the block's
// transposed product, then the transposed triangular solve. For a partial factorization the
// Schur rows hold x₂ and are only read: x₁ = L11⁻ᵀ(y₁ − L21ᵀx₂) (seed 004 §4.4, eq. 18).
void Factor::backward_substitution(double* rhs, Index count, std::span<double> work, bool on_threads) const {
  const InterleavedRhs y{rhs, count};
  if (on_threads && solve_split_.parallel()) return parallel_backward_pass(*symbolic_, values_, solve_split_, y, work.data());
  run_backward_pass(*symbolic_, values_, 0, symbolic_->eliminated_supernode_count(), y, work.data());
}

void Factor::forward_substitution(linalg::ConstDenseView b, linalg::DenseView y, int threads) const {
  const auto elimination_row = symbolic_->inverse_permutation();
  threads = substitution_threads(threads);
  on_interleaved_groups(
      *symbolic_, y.cols, threads,
      [&](Index first, Index count, InterleavedRhs z) {
        interleave(b.block(0, first, b.rows, count), elimination_row, z);
      },
      [&](InterleavedRhs z, std::span<double> work, bool alone) {
        forward_substitution(z.data, z.count, work, alone && threads > 1);
      },
      [&](Index first, Index count, InterleavedRhs z) { deinterleave(z, {}, y.block(0, first, y.rows, count)); });
}

void Factor::backward_substitution(linalg::DenseView y, linalg::DenseView x, int threads) const {
  const auto elimination_row = symbolic_->inverse_permutation();
  threads = substitution_threads(threads);
  on_interleaved_groups(
      *symbolic_, y.cols, threads,
      [&](Index first, Index count, InterleavedRhs z) { interleave(y.block(0, first, y.rows, count), {}, z); },
      [&](InterleavedRhs z, std::span<double> work, bool alone) {
        backward_substitution(z.data, z.count, work, alone && threads > 1);
      },
      [&](Index first, Index count, InterleavedRhs z) {
        deinterleave(z, elimination_row, x.block(0, first, x.rows, count));
      });
}

void Factor::backward_substitution_from_schur(linalg::ConstDenseView x2, linalg::DenseView x, int threads) const {
  const Index eliminated = symbolic_->size() - symbolic_->schur_size();
  const auto elimination_row = symbolic_->inverse_permutation();
  threads = substitution_threads(threads);
  on_interleaved_groups(
      *symbolic_, x.cols, threads,
      [&](Index first, Index count, InterleavedRhs z) {
        std::fill_n(z.data, static_cast<std::size_t>(eliminated) * static_cast<std::size_t>(z.count), 0.0);
        interleave(x2.block(0, first, x2.rows, count), {}, InterleavedRhs{z.row(eliminated), z.count});
      },
      [&](InterleavedRhs z, std::span<double> work, bool alone) {
        backward_substitution(z.data, z.count, work, alone && threads > 1);
      },
      [&](Index first, Index count, InterleavedRhs z) {
        deinterleave(z, elimination_row, x.block(0, first, x.rows, count));
      });
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
  // Both phases on one interleaved copy, the permutation applied on the way in and out.
  const auto elimination_row = sym.inverse_permutation();
  on_interleaved_groups(
      sym, b.cols, 1,
      [&](Index first, Index count, InterleavedRhs z) {
        interleave(b.block(0, first, b.rows, count), elimination_row, z);
      },
      [&](InterleavedRhs z, std::span<double> work, bool alone) {
        forward_substitution(z.data, z.count, work, alone);
        backward_substitution(z.data, z.count, work, alone);
      },
      [&](Index first, Index count, InterleavedRhs z) {
        deinterleave(z, elimination_row, b.block(0, first, b.rows, count));
      });
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
