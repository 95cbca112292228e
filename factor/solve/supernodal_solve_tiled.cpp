#include "factor/solve/supernodal_solve_tiled.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unistd.h>

#include "factor/solve/supernodal_solve_vectors.hpp"

namespace cholsim::factor {
namespace {

using namespace solve_detail;
using Panel = TiledSolveFactor::Panel;
using Supernode = TiledSolveFactor::Supernode;
constexpr Index kTileRows = TiledSolveFactor::kTileRows;
constexpr Index kPanelColumns = TiledSolveFactor::kPanelColumns;
/// Right-hand sides one pass over L handles; more are split into groups of this many.
constexpr Index kKernelWidth = 4;
/// How far ahead of its reads (in bytes; backwards in the backward substitution) each
/// substitution asks for L: the layout makes both passes one stream, so a single distance
/// covers panel and supernode boundaries alike.
constexpr std::ptrdiff_t kPrefetchBytes = 16384;

std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

Index tile_count(Index rows) { return (rows + kTileRows - 1) / kTileRows; }

/// Values of one panel: its triangle and the tiles of the `rows_below` rows under it.
std::int64_t panel_values(Index width, Index rows_below) {
  return std::int64_t{width} * width + std::int64_t{tile_count(rows_below)} * kTileRows * width;
}

/// What the substitutions read, as plain pointers; L's values in double or single precision
/// (`Stored`), the arithmetic always in double.
template <typename Stored>
struct Layout {
  const Supernode* supernodes;
  Index supernode_count;
  const Panel* panels;
  const Index* below_rows;
  /// Per supernode its m rows in elimination numbering and kTileRows more naming the dummy
  /// row n (the padding rows of its last tiles), for the kernels with right-hand sides in lanes.
  const Index* row_lists;
  const Stored* values;
  const Stored* values_end;
  /// kPrefetchBytes in values.
  static constexpr std::ptrdiff_t prefetch_distance = kPrefetchBytes / static_cast<std::ptrdiff_t>(sizeof(Stored));
};

/// Asks for the value `distance` values from p (a negative distance: before p) if it lies in L.
template <typename Stored>
CHOLSIM_INLINE void prefetch_at(const Layout<Stored>& l, const Stored* p, std::ptrdiff_t distance) {
  const std::ptrdiff_t target = (p - l.values) + distance;
  if (target >= 0 && target < l.values_end - l.values) __builtin_prefetch(l.values + target);
}

// The kernels work on `Width` adjacent right-hand sides starting at column `first` of y,
// through z: a column-major copy of the supernode's m rows (right-hand side c at z + c·ld),
// followed by kTileRows zero rows that the padding rows of the last tile meet.

/// z(rows [r, r + kTileRows)) −= tile · x, x = z(the panel's own rows): the tile's columns
/// streamed in order, the products held in registers.
template <typename Vector, int Width, typename Stored>
CHOLSIM_INLINE void subtract_tile_product(const Layout<Stored>& l, const Stored* tile, Index width, const double* x,
                                          double* rows, std::size_t ld) {
  constexpr Index lanes = kLanes<Vector>;
  constexpr int vectors = static_cast<int>(kTileRows / lanes);
  Vector sum[Width][vectors] = {};
  for (Index j = 0; j < width; ++j) {
    prefetch_at(l, tile + j * kTileRows, l.prefetch_distance);
    Vector column[vectors];
    for (int q = 0; q < vectors; ++q) load(column[q], tile + j * kTileRows + q * lanes);
    for (int c = 0; c < Width; ++c) {
      const double xj = x[at(c) * ld + at(j)];
      for (int q = 0; q < vectors; ++q) sum[c][q] += column[q] * xj;
    }
  }
  for (int c = 0; c < Width; ++c) {
    for (int q = 0; q < vectors; ++q) {
      double* target = rows + at(c) * ld + at(q * lanes);
      Vector v;
      load(v, target);
      store(target, v - sum[c][q]);
    }
  }
}

/// x(columns [g, g + Columns) of the panel) −= tilesᵀ · z(rows under the panel): each tile's
/// rows of z loaded once for the Columns columns, the Columns·Width sums reduced across lanes
/// once at the end.
template <typename Vector, int Width, int Columns, typename Stored>
CHOLSIM_INLINE void subtract_transposed_tiles(const Layout<Stored>& l, const Stored* tiles, Index tiles_below,
                                              Index width, Index g, const double* rows, double* x, std::size_t ld) {
  constexpr Index lanes = kLanes<Vector>;
  Vector partial[Columns][Width] = {};
  for (Index t = tiles_below - 1; t >= 0; --t) {  // the last tile first: L streams backwards
    const Stored* tile = tiles + std::int64_t{t} * kTileRows * width + std::int64_t{g} * kTileRows;
    const double* z = rows + at(t) * at(kTileRows);
    for (Index h = 0; h < kTileRows; h += lanes) {
      Vector zh[Width];
      for (int c = 0; c < Width; ++c) load(zh[c], z + at(c) * ld + at(h));
      for (int col = 0; col < Columns; ++col) {
        if (h == 0) prefetch_at(l, tile + col * kTileRows, -l.prefetch_distance);
        Vector column;
        load(column, tile + col * kTileRows + h);
        for (int c = 0; c < Width; ++c) partial[col][c] += column * zh[c];
      }
    }
  }
  for (int col = 0; col < Columns; ++col) {
    for (int c = 0; c < Width; ++c) {
      double sum = 0.0;
      for (Index lane = 0; lane < lanes; ++lane) sum += partial[col][c][lane];
      x[at(c) * ld + at(g + col)] -= sum;
    }
  }
}

/// Columns one call of subtract_transposed_tiles handles: its Columns·Width accumulators, Width
/// rows of z and one column of L fit the 16 vector registers of SSE2 and AVX2.
template <int Width>
constexpr int kDotColumns = Width <= 3 ? 4 : 2;

/// Fills z: the supernode's own rows from y, then its update rows from y (with_update_rows,
/// the backward step) or zeros (the forward step, which accumulates into them), then zeros for
/// the kTileRows padding rows.
template <int Width, typename Stored>
CHOLSIM_INLINE void load_rows(const Supernode& s, const Layout<Stored>& l, InterleavedRhs y, Index first, double* z,
                              std::size_t ld, bool with_update_rows) {
  for (Index j = 0; j < s.columns; ++j) {
    const double* source = y.row(s.first_column + j) + first;
    for (int c = 0; c < Width; ++c) z[at(c) * ld + at(j)] = source[c];
  }
  for (Index i = s.columns; i < s.rows + kTileRows; ++i) {
    const bool update_row = with_update_rows && i < s.rows;
    const double* source = update_row ? y.row(l.below_rows[s.below + i - s.columns]) + first : nullptr;
    for (int c = 0; c < Width; ++c) z[at(c) * ld + at(i)] = update_row ? source[c] : 0.0;
  }
}

template <int Width>
CHOLSIM_INLINE void store_own_rows(const Supernode& s, InterleavedRhs y, Index first, const double* z,
                                   std::size_t ld) {
  for (Index j = 0; j < s.columns; ++j) {
    double* target = y.row(s.first_column + j) + first;
    for (int c = 0; c < Width; ++c) target[c] = z[at(c) * ld + at(j)];
  }
}

/// Forward step of one supernode: per panel, x ← L11⁻¹x on its triangle (the stored diagonal
/// is inverted), then every tile under it subtracts its product from the rows below; the
/// update rows of z start at zero and are added into y at the end.
template <typename Vector, int Width, typename Stored>
CHOLSIM_INLINE void forward_supernode(const Layout<Stored>& l, const Supernode& s, Index panel_end, InterleavedRhs y,
                                      Index first, double* z, std::size_t ld) {
  load_rows<Width>(s, l, y, first, z, ld, false);
  for (Index p = s.first_panel; p < panel_end; ++p) {
    const Panel& panel = l.panels[p];
    const Index w = panel.width;
    const Stored* triangle = l.values + panel.offset;
    double* x = z + panel.first;
    for (Index j = 0; j < w; ++j) {
      const double inverse_diagonal = triangle[j * w + j];
      for (int c = 0; c < Width; ++c) x[at(c) * ld + at(j)] *= inverse_diagonal;
      for (Index i = j + 1; i < w; ++i) {
        const double lij = triangle[j * w + i];
        for (int c = 0; c < Width; ++c) x[at(c) * ld + at(i)] -= lij * x[at(c) * ld + at(j)];
      }
    }
    const Stored* tile = triangle + std::int64_t{w} * w;
    for (Index r = panel.first + w; r < s.rows; r += kTileRows, tile += std::int64_t{kTileRows} * w) {
      subtract_tile_product<Vector, Width>(l, tile, w, x, z + r, ld);
    }
  }
  store_own_rows<Width>(s, y, first, z, ld);
  for (Index i = s.columns; i < s.rows; ++i) {
    double* target = y.row(l.below_rows[s.below + i - s.columns]) + first;
    for (int c = 0; c < Width; ++c) target[c] += z[at(c) * ld + at(i)];
  }
}

/// Backward step of one supernode, panels from the last: x(panel) −= (tiles under it)ᵀ·z(rows
/// below: final x and the update rows), then x ← L11⁻ᵀx on its triangle, right-looking from
/// its last row so that the dependency chain is one multiply-add per column.
template <typename Vector, int Width, typename Stored>
CHOLSIM_INLINE void backward_supernode(const Layout<Stored>& l, const Supernode& s, Index panel_end, InterleavedRhs y,
                                       Index first, double* z, std::size_t ld) {
  load_rows<Width>(s, l, y, first, z, ld, true);
  for (Index p = panel_end - 1; p >= s.first_panel; --p) {
    const Panel& panel = l.panels[p];
    const Index w = panel.width;
    const Stored* triangle = l.values + panel.offset;
    double* x = z + panel.first;
    const Index below = panel.first + w;
    const Index tiles_below = tile_count(s.rows - below);
    const Stored* tiles = triangle + std::int64_t{w} * w;
    constexpr int group = kDotColumns<Width>;
    Index g = 0;
    for (; g + group <= w; g += group) {
      subtract_transposed_tiles<Vector, Width, group>(l, tiles, tiles_below, w, g, z + below, x, ld);
    }
    for (; g < w; ++g) subtract_transposed_tiles<Vector, Width, 1>(l, tiles, tiles_below, w, g, z + below, x, ld);
    for (Index j = w - 1; j >= 0; --j) {
      const double inverse_diagonal = triangle[j * w + j];
      for (int c = 0; c < Width; ++c) x[at(c) * ld + at(j)] *= inverse_diagonal;
      for (Index i = 0; i < j; ++i) {
        const double lji = triangle[i * w + j];
        for (int c = 0; c < Width; ++c) x[at(c) * ld + at(i)] -= lji * x[at(c) * ld + at(j)];
      }
    }
  }
  store_own_rows<Width>(s, y, first, z, ld);
}

/// One supernode's forward (Forward) or backward step for the `Width` right-hand sides from
/// column `first`.
template <typename Vector, bool Forward, int Width, typename Stored>
CHOLSIM_INLINE void step_group(const Layout<Stored>& l, Index s, InterleavedRhs y, Index first, double* z, std::size_t ld) {
  const Supernode& node = l.supernodes[s];
  const Index panel_end = l.supernodes[s + 1].first_panel;
  if constexpr (Forward) {
    forward_supernode<Vector, Width>(l, node, panel_end, y, first, z, ld);
  } else {
    backward_supernode<Vector, Width>(l, node, panel_end, y, first, z, ld);
  }
}

/// One supernode's step for all right-hand sides, in groups of at most kKernelWidth.
template <typename Vector, bool Forward, typename Stored>
CHOLSIM_INLINE void step_supernode(const Layout<Stored>& l, Index s, InterleavedRhs y, double* z, std::size_t ld) {
  for (Index first = 0; first < y.count; first += kKernelWidth) {
    switch (std::min(y.count - first, kKernelWidth)) {
      case 1: step_group<Vector, Forward, 1>(l, s, y, first, z, ld); break;
      case 2: step_group<Vector, Forward, 2>(l, s, y, first, z, ld); break;
      case 3: step_group<Vector, Forward, 3>(l, s, y, first, z, ld); break;
      default: step_group<Vector, Forward, 4>(l, s, y, first, z, ld); break;
    }
  }
}

/// L·Y = Y over the supernodes in order, then Lᵀ·Y = Y in reverse (elimination numbering).
template <typename Vector, typename Stored>
CHOLSIM_INLINE void substitute(const Layout<Stored>& l, InterleavedRhs y, double* z, std::size_t ld) {
  for (Index s = 0; s < l.supernode_count; ++s) step_supernode<Vector, true>(l, s, y, z, ld);
  for (Index s = l.supernode_count - 1; s >= 0; --s) step_supernode<Vector, false>(l, s, y, z, ld);
}

template <typename Stored>
void substitute_baseline(const Layout<Stored>& l, InterleavedRhs y, double* z, std::size_t ld) {
  substitute<Pair>(l, y, z, ld);
}

#if CHOLSIM_SOLVE_AVX2
template <typename Stored>
__attribute__((target("avx2,fma"))) void substitute_avx2(const Layout<Stored>& l, InterleavedRhs y, double* z,
                                                         std::size_t ld) {
  substitute<Quad>(l, y, z, ld);
}

#endif

#if CHOLSIM_SOLVE_AVX2
// Kernels with the right-hand sides in the lanes of one vector: for up to four right-hand sides
// (x, y and z of a node, seed 003's case) y is stored four doubles a row and every entry of L
// is one broadcast multiply-add on a row of y. Small factors, whose supernodes are mostly one
// panel of a few columns, spend the column-vectorized kernels above in scalar triangle solves,
// in copying rows into the work array and back, and in lane reductions; here a triangle solve
// is w²/2 vector multiply-adds, a tile's rows are read and written in place through the
// supernode's row list, and nothing is reduced. Three columns, one thread (bench_solve): the
// 6K-tet bar's solve went from 0.91× to 0.60× Factor::solve's time, the 55K bar's from 0.83× to
// 0.64× (double copy); seed 003's 3.7K-tet armadillo step spends 36 µs in it instead of 56 µs.

/// Forward step of one panel of width W: x ← L11⁻¹x on its own rows (in place in y), then
/// each tile's rows of y −= tile · x.
template <int W, typename Stored>
CHOLSIM_INLINE void forward_panel_lanes(const Layout<Stored>& l, const Panel& panel, const Index* rows, Index m,
                                        Index first_column, double* y) {
  const Stored* triangle = l.values + panel.offset;
  double* own = y + 4 * at(first_column + panel.first);
  Quad x[W];
  for (int j = 0; j < W; ++j) load(x[j], own + 4 * j);
  for (int j = 0; j < W; ++j) {
    x[j] *= static_cast<double>(triangle[j * W + j]);
    for (int i = j + 1; i < W; ++i) x[i] -= static_cast<double>(triangle[j * W + i]) * x[j];
  }
  for (int j = 0; j < W; ++j) store(own + 4 * j, x[j]);
  const Stored* tile = triangle + W * W;
  for (Index r = panel.first + W; r < m; r += kTileRows, tile += kTileRows * W) {
    prefetch_at(l, tile, l.prefetch_distance);
    Quad sum[kTileRows] = {};
    for (int j = 0; j < W; ++j) {
      for (Index t = 0; t < kTileRows; ++t) sum[t] += static_cast<double>(tile[j * kTileRows + t]) * x[j];
    }
    for (Index t = 0; t < kTileRows; ++t) {
      double* target = y + 4 * at(rows[r + t]);
      Quad v;
      load(v, target);
      store(target, v - sum[t]);
    }
  }
}

/// Backward step of one panel of width W: x −= (tiles under it)ᵀ · y(their rows), the last
/// tile first (L streams backwards), then x ← L11⁻ᵀx.
template <int W, typename Stored>
CHOLSIM_INLINE void backward_panel_lanes(const Layout<Stored>& l, const Panel& panel, const Index* rows, Index m,
                                         Index first_column, double* y) {
  const Stored* triangle = l.values + panel.offset;
  const Stored* tiles = triangle + W * W;
  Quad sum[W] = {};
  const Index below = panel.first + W;
  for (Index t = tile_count(m - below) - 1; t >= 0; --t) {
    const Stored* tile = tiles + std::int64_t{t} * kTileRows * W;
    prefetch_at(l, tile, -l.prefetch_distance);
    const Index* tile_rows = rows + below + t * kTileRows;
    for (Index h = 0; h < kTileRows; ++h) {
      Quad yh;
      load(yh, y + 4 * at(tile_rows[h]));
      for (int j = 0; j < W; ++j) sum[j] += static_cast<double>(tile[j * kTileRows + h]) * yh;
    }
  }
  double* own = y + 4 * at(first_column + panel.first);
  Quad x[W];
  for (int j = 0; j < W; ++j) {
    load(x[j], own + 4 * j);
    x[j] -= sum[j];
  }
  for (int j = W - 1; j >= 0; --j) {
    x[j] *= static_cast<double>(triangle[j * W + j]);
    for (int i = 0; i < j; ++i) x[i] -= static_cast<double>(triangle[i * W + j]) * x[j];
  }
  for (int j = 0; j < W; ++j) store(own + 4 * j, x[j]);
}

/// One panel's forward or backward step, its width made a constant so that x and the sums
/// stay in registers.
template <bool Forward, int W, typename Stored>
CHOLSIM_INLINE void panel_lanes(const Layout<Stored>& l, const Panel& panel, const Index* rows, Index m,
                                Index first_column, double* y) {
  if constexpr (Forward) {
    forward_panel_lanes<W>(l, panel, rows, m, first_column, y);
  } else {
    backward_panel_lanes<W>(l, panel, rows, m, first_column, y);
  }
}

template <bool Forward, typename Stored>
CHOLSIM_INLINE void step_panel_lanes(const Layout<Stored>& l, const Supernode& s, const Panel& panel, double* y) {
  const Index* rows = l.row_lists + s.row_list;
  static_assert(kPanelColumns == 8);
  switch (panel.width) {
    case 1: panel_lanes<Forward, 1>(l, panel, rows, s.rows, s.first_column, y); break;
    case 2: panel_lanes<Forward, 2>(l, panel, rows, s.rows, s.first_column, y); break;
    case 3: panel_lanes<Forward, 3>(l, panel, rows, s.rows, s.first_column, y); break;
    case 4: panel_lanes<Forward, 4>(l, panel, rows, s.rows, s.first_column, y); break;
    case 5: panel_lanes<Forward, 5>(l, panel, rows, s.rows, s.first_column, y); break;
    case 6: panel_lanes<Forward, 6>(l, panel, rows, s.rows, s.first_column, y); break;
    case 7: panel_lanes<Forward, 7>(l, panel, rows, s.rows, s.first_column, y); break;
    default: panel_lanes<Forward, 8>(l, panel, rows, s.rows, s.first_column, y); break;
  }
}

/// L·Y = Y then Lᵀ·Y = Y with y four doubles a row (rows 0..n−1 in elimination numbering and
/// the dummy row n, which the padding rows of tiles name: zero before each substitution, so
/// that their zero entries of L add nothing even to a non-finite solution).
template <typename Stored>
__attribute__((target("avx2,fma"))) void substitute_lanes(const Layout<Stored>& l, double* y, Index n) {
  const auto clear_dummy_row = [&] { std::fill_n(y + 4 * at(n), 4, 0.0); };
  clear_dummy_row();
  for (Index s = 0; s < l.supernode_count; ++s) {
    const Supernode& node = l.supernodes[s];
    for (Index p = node.first_panel; p < l.supernodes[s + 1].first_panel; ++p) {
      step_panel_lanes<true>(l, node, l.panels[p], y);
    }
  }
  clear_dummy_row();
  for (Index s = l.supernode_count - 1; s >= 0; --s) {
    const Supernode& node = l.supernodes[s];
    for (Index p = l.supernodes[s + 1].first_panel - 1; p >= node.first_panel; --p) {
      step_panel_lanes<false>(l, node, l.panels[p], y);
    }
  }
}
#endif

template <typename Stored>
void run_substitutions(const Layout<Stored>& l, InterleavedRhs y, double* z, std::size_t ld) {
#if CHOLSIM_SOLVE_AVX2
  if (use_avx2_kernels()) return substitute_avx2(l, y, z, ld);
#endif
  substitute_baseline(l, y, z, ld);
}

/// One core's L2 cache in bytes, 512 KB where the system does not say (Precision::automatic).
std::int64_t core_cache_bytes() {
  static const std::int64_t bytes = [] {
    const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return reported > 0 ? static_cast<std::int64_t>(reported) : std::int64_t{512} << 10;
  }();
  return bytes;
}

/// True when the four-lane AVX2 kernels (substitute_lanes) can run.
bool lane_kernels_available() {
#if CHOLSIM_SOLVE_AVX2
  return use_avx2_kernels();
#else
  return false;
#endif
}

}  // namespace

TiledSolveFactor::TiledSolveFactor(const Factor& factor, Precision precision) : precision_(precision) {
  if (!factor.ok()) {
    throw std::logic_error("TiledSolveFactor: no successful factorization (" +
                           (factor.status().message.empty() ? std::string("not factored") : factor.status().message) +
                           ")");
  }
  const Symbolic& sym = factor.symbolic();
  if (sym.schur_size() > 0) {
    throw std::logic_error("TiledSolveFactor: a partial factorization (Schur set of " +
                           std::to_string(sym.schur_size()) + " unknowns) has no full solve");
  }
  symbolic_ = factor.symbolic_ptr();
  n_ = sym.size();
  const Index count = sym.supernode_count();
  supernodes_.reserve(at(count) + 1);
  std::int64_t stored = 0;
  for (Index s = 0; s < count; ++s) {
    const Index k = sym.column_count(s);
    const Index m = sym.row_count(s);
    supernodes_.push_back({sym.first_column(s), k, m, static_cast<std::int64_t>(below_rows_.size()),
                           static_cast<Index>(panels_.size()), static_cast<std::int64_t>(row_lists_.size())});
    const auto rows = sym.rows(s);
    below_rows_.insert(below_rows_.end(), rows.begin() + k, rows.end());
    row_lists_.insert(row_lists_.end(), rows.begin(), rows.end());
    row_lists_.insert(row_lists_.end(), kTileRows, n_);  // the dummy row
    for (Index j0 = 0; j0 < k; j0 += kPanelColumns) {
      const Index w = std::min(kPanelColumns, k - j0);
      panels_.push_back({stored, j0, w});
      stored += panel_values(w, m - j0 - w);
    }
    work_rows_ = std::max(work_rows_, m + kTileRows);
  }
  supernodes_.push_back({n_, 0, 0, static_cast<std::int64_t>(below_rows_.size()), static_cast<Index>(panels_.size()),
                         static_cast<std::int64_t>(row_lists_.size())});

  if (precision_ == Precision::automatic) {
    precision_ = static_cast<std::int64_t>(sizeof(double)) * stored <= core_cache_bytes() ? Precision::double_values
                                                                                         : Precision::single_values;
  }
  values_.assign(at(stored), 0.0);  // padding rows and the triangles' upper parts stay zero
  const std::span<const double> l = factor.values();
  for (Index s = 0; s < count; ++s) {
    const Supernode& node = supernodes_[at(s)];
    const double* block = l.data() + sym.value_offset(s);
    const auto entry = [&](Index row, Index column) { return block[at(column) * at(node.rows) + at(row)]; };
    for (Index p = node.first_panel; p < supernodes_[at(s) + 1].first_panel; ++p) {
      const Panel& panel = panels_[at(p)];
      const Index w = panel.width;
      double* triangle = values_.data() + panel.offset;
      for (Index j = 0; j < w; ++j) {
        triangle[j * w + j] = 1.0 / entry(panel.first + j, panel.first + j);
        for (Index i = j + 1; i < w; ++i) triangle[j * w + i] = entry(panel.first + i, panel.first + j);
      }
      double* tiles = triangle + std::int64_t{w} * w;
      const Index below = panel.first + w;
      for (Index r = below; r < node.rows; ++r) {
        const Index t = (r - below) / kTileRows;
        double* tile = tiles + std::int64_t{t} * kTileRows * w;
        for (Index j = 0; j < w; ++j) tile[j * kTileRows + (r - below) % kTileRows] = entry(r, panel.first + j);
      }
    }
  }
  if (precision_ == Precision::single_values) {
    single_values_.assign(values_.begin(), values_.end());
    values_ = {};
  }
}

template <typename Entry>
void TiledSolveFactor::solve_entries(Index count, Entry&& entry) {
  if (n_ == 0) return;
  const auto perm = symbolic_->permutation();
  const bool in_lanes = count <= static_cast<Index>(kLaneWidth) && lane_kernels_available();
  // In lanes: four doubles a row (zeros past `count`) and the dummy row n, which
  // substitute_lanes clears.
  const Index stride = in_lanes ? 4 : count;
  interleaved_.resize(at(n_ + (in_lanes ? 1 : 0)) * at(stride));
  const InterleavedRhs y{interleaved_.data(), stride};
  for (Index i = 0; i < n_; ++i) {
    double* row = y.row(i);
    for (Index c = 0; c < count; ++c) row[c] = entry(perm[at(i)], c);
    for (Index c = count; c < stride; ++c) row[c] = 0.0;
  }
  substitute(y.data, y.count, in_lanes);
  for (Index i = 0; i < n_; ++i) {
    const double* row = y.row(i);
    for (Index c = 0; c < count; ++c) entry(perm[at(i)], c) = row[c];
  }
}

void TiledSolveFactor::substitute(double* rows, Index stride, [[maybe_unused]] bool in_lanes) {
  const InterleavedRhs y{rows, stride};
  const auto substitute_with = [&](const auto& values) {
    using Stored = typename std::decay_t<decltype(values)>::value_type;
    const Layout<Stored> layout{supernodes_.data(), static_cast<Index>(supernodes_.size()) - 1, panels_.data(),
                                below_rows_.data(), row_lists_.data(), values.data(), values.data() + values.size()};
#if CHOLSIM_SOLVE_AVX2
    if (in_lanes) return substitute_lanes(layout, y.data, n_);
#endif
    work_.resize(at(work_rows_) * at(std::min(y.count, kKernelWidth)));
    run_substitutions(layout, y, work_.data(), at(work_rows_));
  };
  if (precision_ == Precision::double_values) {
    substitute_with(values_);
  } else {
    substitute_with(single_values_);
  }
}

void TiledSolveFactor::solve(linalg::DenseView b) {
  if (!symbolic_) throw std::logic_error("TiledSolveFactor::solve: no factor (default-constructed)");
  if (b.rows != n_) {
    throw std::invalid_argument("TiledSolveFactor::solve: right-hand side has " + std::to_string(b.rows) +
                                " rows, the matrix has " + std::to_string(n_));
  }
  if (b.cols == 0) return;
  solve_entries(b.cols, [&b](Index i, Index c) -> double& { return b(i, c); });
}

void TiledSolveFactor::solve_interleaved(std::span<double> rhs, Index count) {
  if (!symbolic_) throw std::logic_error("TiledSolveFactor::solve_interleaved: no factor (default-constructed)");
  if (count < 1 || rhs.size() != at(n_) * at(count)) {
    throw std::invalid_argument("TiledSolveFactor::solve_interleaved: " + std::to_string(rhs.size()) +
                                " values for " + std::to_string(count) + " right-hand sides, the matrix has " +
                                std::to_string(n_) + " rows");
  }
  solve_entries(count, [&rhs, count](Index i, Index c) -> double& { return rhs[at(i) * at(count) + at(c)]; });
}


void TiledSolveFactor::solve_lanes(std::span<double> lanes) {
  if (!symbolic_) throw std::logic_error("TiledSolveFactor::solve_lanes: no factor (default-constructed)");
  if (lanes.size() != kLaneWidth * (at(n_) + 1)) {
    throw std::invalid_argument("TiledSolveFactor::solve_lanes: " + std::to_string(lanes.size()) + " values, expected " +
                                std::to_string(kLaneWidth * (at(n_) + 1)) + " (four a row for " + std::to_string(n_) +
                                " rows and one work row)");
  }
  if (n_ == 0) return;
  substitute(lanes.data(), static_cast<Index>(kLaneWidth), lane_kernels_available());
}

std::span<const Index> TiledSolveFactor::permutation() const {
  if (!symbolic_) return {};
  return symbolic_->permutation();
}

}  // namespace cholsim::factor
