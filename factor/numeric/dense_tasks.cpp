#include "factor/numeric/dense_tasks.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "linalg/blas.hpp"
#include "linalg/blas_threads.hpp"

namespace cholsim::factor {
namespace {

namespace blas = linalg::blas;
using linalg::Index;

// Columns and least rows of a piece of lower_trapezoid_update. Each BLAS call packs both of
// its operands again: with 256 × 256 tiles and 256 inner columns the packing took 14 % of a
// one-thread root front's samples (dgemm_itcopy + otcopy); 512 × 1024 tiles pack a third of
// that per flop and still give a 4,707-column root dozens of pieces.
constexpr Index kPieceColumns = 512;
constexpr Index kPieceRows = 1024;

// A triangular solve's piece repacks only the small triangle, so its pieces can be smaller:
// the 64-column leaves of the recursion lie on the critical path of a wide front.
constexpr double kSolvePieceFlops = kTaskFlops / 8;

// Rows per piece so that a piece of `flops_per_row` flops a row holds about `piece_flops`: at
// least 64 rows (a panel of the packed layout), a multiple of 8 (a cache line of doubles).
Index rows_per_piece(double flops_per_row, double piece_flops = kTaskFlops) {
  const double rows = std::ceil(piece_flops / std::max(flops_per_row, 1.0));
  const auto multiple = static_cast<Index>(std::ceil(std::min(rows, 1e9) / 8.0)) * 8;
  return std::max<Index>(multiple, 64);
}

// [begin, end) cut into pieces of at most `step` rows.
void append_pieces(Index begin, Index end, Index step, std::vector<IndexRange>& pieces) {
  for (Index row = begin; row < end; row += step) pieces.push_back({row, std::min(end, row + step)});
}

}  // namespace

bool split_dense_work() { return linalg::blas_threads() == 1; }

void lower_trapezoid_update(double beta, linalg::ConstDenseView rows, linalg::DenseView target) {
  const Index w = target.cols;
  const Index r = target.rows;
  const double c = rows.cols;
  // A piece: the tile of target's rows [first_row, first_row + row_count) and columns
  // [first_column, first_column + columns); on the diagonal (first_row == first_column) a syrk
  // on its square, below it a gemm.
  struct Piece {
    Index first_column;
    Index columns;
    Index first_row;
    Index row_count;
  };
  const auto compute = [&](const Piece& piece) {
    const linalg::ConstDenseView column_rows = rows.block(piece.first_column, 0, piece.columns, rows.cols);
    const linalg::DenseView tile = target.block(piece.first_row, piece.first_column, piece.row_count, piece.columns);
    if (piece.first_row == piece.first_column) {
      blas::syrk(blas::Transpose::no, -1.0, column_rows, beta, tile);
    } else {
      blas::gemm(blas::Transpose::no, blas::Transpose::yes, -1.0,
                 rows.block(piece.first_row, 0, piece.row_count, rows.cols), column_rows, beta, tile);
    }
  };
  const double flops = c * w * w + 2.0 * c * w * (r - w);
  if (!split_dense_work() || flops < 2.0 * kTaskFlops) {  // one syrk, one gemm
    compute({0, w, 0, w});
    if (r > w) compute({0, w, w, r - w});
    return;
  }
  // Tiles of at least kPieceColumns × kPieceRows: each BLAS call packs its two operands again,
  // (rows + columns)·c entries for 2·rows·columns·c flops, so thin pieces would spend their
  // time packing. Columns come in blocks — the block's diagonal square, then the rows below
  // cut further when a block alone holds more than a piece's worth.
  std::vector<Piece> pieces;
  const Index row_step = std::max<Index>(kPieceRows, rows_per_piece(2.0 * c * kPieceColumns));
  for (Index j = 0; j < w; j += kPieceColumns) {
    const Index columns = std::min(kPieceColumns, w - j);
    pieces.push_back({j, columns, j, columns});
    for (Index i = j + columns; i < r; i += row_step) pieces.push_back({j, columns, i, std::min(row_step, r - i)});
  }
  run_pieces(static_cast<Index>(pieces.size()), true, [&](Index p) { compute(pieces[static_cast<std::size_t>(p)]); });
}

void solve_rows_lower_transposed(linalg::ConstDenseView lower, linalg::DenseView b) {
  const double k = lower.cols;
  const auto solve = [&](Index begin, Index end) {
    blas::trsm(blas::Side::right, blas::Transpose::yes, blas::Diagonal::non_unit, 1.0, lower,
               b.block(begin, 0, end - begin, b.cols));
  };
  if (!split_dense_work() || k * k * b.rows < 2.0 * kSolvePieceFlops) {
    solve(0, b.rows);
    return;
  }
  std::vector<IndexRange> pieces;
  append_pieces(0, b.rows, rows_per_piece(k * k, kSolvePieceFlops), pieces);
  run_pieces(static_cast<Index>(pieces.size()), true,
             [&](Index p) { solve(pieces[static_cast<std::size_t>(p)].begin, pieces[static_cast<std::size_t>(p)].end); });
}

}  // namespace cholsim::factor
