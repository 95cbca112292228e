#pragma once
// A factor's L copied once into a layout made for many solves with the same factor, as in seed
// 003's operator splitting (the matrix M + DᵀKD is factored once and solved with the x, y and z
// right-hand sides every time step).
//
// Why a copy: Factor stores each supernode as one column-major m×k block. Its substitution
// kernels (supernodal_solve.cpp) work on panels of 8 columns, reading 8 column streams m·8 bytes
// apart side by side; on a 55K-tet bar that access order alone costs about twice what reading
// the same values in storage order costs (bench/bench_solve), and it is most of the solve.
// Here every panel of up to kPanelColumns columns is stored as its small w×w triangle followed
// by tiles of kTileRows rows × w columns (column-major inside a tile, rows padded with zeros),
// in exactly the order both substitutions read them, so that L streams linearly forwards in the
// forward and backwards (panel by panel) in the backward substitution. The diagonal is stored
// inverted: the substitutions multiply by it. The copy holds about as many values as L's
// lower trapezoid (less than Factor's square diagonal blocks) plus the row padding.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/dense_matrix.hpp"
#include "linalg/huge_page_allocator.hpp"

namespace cholsim::factor {

class TiledSolveFactor {
 public:
  /// Columns of a panel (the last panel of a supernode may be narrower).
  static constexpr Index kPanelColumns = 8;
  /// Rows of a tile below a panel's triangle.
  static constexpr Index kTileRows = 8;

  /// How the copy stores L's values; the arithmetic is in double either way. Single precision
  /// halves the bytes both substitutions stream, and the solve is bound by them, at the price of
  /// L's entries rounded to 24 bits: the solution's error grows to about κ(A)·10⁻⁷ relative to
  /// the right-hand side's solution. Meant for a right-hand side that is a residual, a correction
  /// to a good estimate, so that the error is relative to the correction
  /// (fem::OperatorSplittingSimulation solves for each step's motion from the predicted positions).
  ///
  /// `automatic` picks double where the double copy fits in one core's L2 cache
  /// (sysconf(_SC_LEVEL2_CACHE_SIZE), 512 KB where the system does not say) and single above:
  /// where L stays in L2 the bytes cost little and converting every entry costs more (seed
  /// 003's 3.7K-tet armadillo: solve 33.5 µs in double against 39.8 µs in single), and beyond
  /// it the halved bytes win (16.6K-tet bunny, 1.2 MB: 421 µs single against 464 µs double).
  enum class Precision { double_values, single_values, automatic };

  TiledSolveFactor() = default;
  /// Copies the values of `factor`, which must hold a successful full factorization
  /// (std::logic_error otherwise: not factored, failed, or a partial/Schur factorization).
  /// Later changes to `factor` (refactorize) are not seen: build a new TiledSolveFactor.
  explicit TiledSolveFactor(const Factor& factor, Precision precision = Precision::double_values);

  /// Solves A·X = B in place for every column of B (user numbering, n rows, any number of
  /// columns, up to four per pass over L), like Factor::solve(DenseView). Uses AVX2 kernels
  /// where the CPU has them unless CHOLSIM_SOLVE_BASELINE is set (as Factor::solve).
  /// Not const: the right-hand sides are permuted into a work array kept between calls (no
  /// allocation per solve once the largest column count has been seen), so one object must
  /// not solve on two threads at once. Throws std::invalid_argument when B has the wrong
  /// number of rows, std::logic_error on a default-constructed object.
  void solve(linalg::DenseView b);
  /// The same for right-hand sides stored row by row (user numbering): row i's `count` values
  /// at rhs[i·count, i·count + count), e.g. a node's x, y and z side by side. Throws
  /// std::invalid_argument unless rhs.size() == n·count and count ≥ 1.
  void solve_interleaved(std::span<double> rhs, Index count);

  /// Values per row of solve_lanes' right-hand sides.
  static constexpr std::size_t kLaneWidth = 4;
  /// Solves in place for up to four right-hand sides the caller keeps already permuted and in
  /// the layout both substitutions work in, so that a solve repeated every time step copies
  /// nothing: row k of the permuted system (user row permutation()[k]) at
  /// lanes[4k, 4k + 4), the right-hand sides side by side (unused lanes must hold finite
  /// values, zeros say), and one work row after the last (lanes.size() == 4·(n + 1)), whose
  /// contents are overwritten. Throws std::invalid_argument for another size and
  /// std::logic_error on a default-constructed object.
  void solve_lanes(std::span<double> lanes);
  /// permutation()[k] = the user row of row k of the permuted system (empty before a factor).
  [[nodiscard]] std::span<const Index> permutation() const;

  [[nodiscard]] Index size() const { return n_; }
  /// Values stored: L's lower trapezoid, diagonal triangles and padding rows of the tiles.
  [[nodiscard]] std::int64_t stored_values() const {
    return static_cast<std::int64_t>(precision_ == Precision::double_values ? values_.size() : single_values_.size());
  }
  /// How the values are stored: double_values or single_values (`automatic` resolved).
  [[nodiscard]] Precision precision() const { return precision_; }

  /// One panel: columns [first, first + width) of its supernode (supernode-local numbering).
  struct Panel {
    std::int64_t offset;  ///< its triangle (width × width) in values_, followed by its tiles
    Index first;
    Index width;
  };
  /// One supernode: its columns, rows and panels.
  struct Supernode {
    Index first_column;  ///< elimination numbering
    Index columns;       ///< k
    Index rows;          ///< m (k own rows, then the update rows)
    std::int64_t below;  ///< first of its m − k update rows (elimination numbering) in below_rows
    Index first_panel;   ///< its panels are [first_panel, next supernode's first_panel)
    std::int64_t row_list;  ///< its m rows, then kTileRows dummy rows n, in row_lists
  };

 private:
  /// Permutes the right-hand sides (element (i, c) is entry(i, c), user numbering) into the
  /// work array, runs both substitutions and permutes back.
  template <typename Entry>
  void solve_entries(Index count, Entry&& entry);
  /// Both substitutions on permuted right-hand sides, `stride` values a row from `rows`
  /// (in_lanes: four a row and the dummy row n, with the AVX2 lane kernels).
  void substitute(double* rows, Index stride, bool in_lanes);

  Index n_ = 0;
  std::shared_ptr<const Symbolic> symbolic_;  ///< for the permutation
  std::vector<Supernode> supernodes_;         ///< plus one sentinel holding the panel count
  std::vector<Panel> panels_;
  std::vector<Index> below_rows_;
  std::vector<Index> row_lists_;  ///< per supernode: rows(s), then kTileRows times the dummy row n
  /// Huge pages where the system allows them: both substitutions stream all of it, and with
  /// 4 KiB pages a 15 MB copy outgrows the TLB (the 55K bar's solve time varied 1.4–2.7 ms).
  std::vector<double, linalg::HugePageAllocator<double>> values_;        ///< Precision::double_values
  std::vector<float, linalg::HugePageAllocator<float>> single_values_;  ///< Precision::single_values
  Precision precision_ = Precision::double_values;
  Index work_rows_ = 0;              ///< rows of the per-supernode work array (largest padded m)
  std::vector<double> interleaved_;  ///< the permuted right-hand sides, row-interleaved
  std::vector<double> work_;
};

}  // namespace cholsim::factor
