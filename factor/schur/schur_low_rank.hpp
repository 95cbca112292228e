#pragma once
// Solving (S + W·C·Wᵀ)·X = B without refactoring S + ΔS: the Sherman–Morrison–Woodbury form
//   (S + WCWᵀ)⁻¹ = S⁻¹ − S⁻¹W·(C⁻¹ + WᵀS⁻¹W)⁻¹·WᵀS⁻¹
// with S⁻¹ computed once. Seed 004 §4.4 refactors S + ΔS densely in every inner iteration,
// m³/3 flops for m collision-prone unknowns; the springs of ΔS are p columns of W with at most
// eight entries each (a proxy's tet, twice for a bilateral row), so with S⁻¹ at hand
// H = S⁻¹W (m × p) is a sum of ≤ 8 columns of S⁻¹ per spring, the capacitance matrix
// C⁻¹ + WᵀH (p × p) a gather from H, and an iteration costs p³/3 + O(m·nnz(W)) + one
// product of S⁻¹ with the right-hand sides instead of m³/3.
//
// The O(m·nnz(W)) part and S⁻¹B are bound by memory, not flops: S⁻¹ (140 MB at m = 4192)
// fits in no cache. S⁻¹ is kept in row tiles of 32 rows, each contiguous, and an inner
// iteration streams it once (it streamed it twice: once for H, once for the solve's S⁻¹B):
// while a tile (1 MB) sits in L2, U = S⁻¹B's rows of the tile are summed in registers and
// H's rows of the tile gathered, each spring's from its ≤ 8 columns. The solve is then
// X = U − H·y without touching S⁻¹ again (seed 004's Algorithm 1 knows an inner iteration's
// right-hand side before it refactors: refactor_and_solve). H's storage is kept between
// refactorizations: fresh pages cost more to fault in than to fill.
//
// C⁻¹ + WᵀS⁻¹W is symmetric positive definite for positive stiffnesses (S is), so its
// Cholesky factorization is the capacitance solve; S⁻¹ from potrf + potri is as accurate as
// S's condition number allows, like the dense route.
#include <span>
#include <vector>

#include "factor/numeric/factor_status.hpp"
#include "linalg/cache_aligned_allocator.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::factor {

using linalg::Index;

class SchurLowRankSolver {
 public:
  /// Inverts `schur_complement` (m × m, lower triangle read) with `threads` BLAS threads (0
  /// keeps the current setting). Throws std::runtime_error when S is not positive definite.
  explicit SchurLowRankSolver(linalg::ConstDenseView schur_complement, int threads = 0);

  [[nodiscard]] Index size() const { return size_; }

  /// Factors C⁻¹ + WᵀS⁻¹W for the sparse m × p W (rows in S's numbering, one column per spring)
  /// and the positive stiffnesses c (size p). A capacitance pivot that is not positive comes
  /// back as not_positive_definite with the spring's column in `column`.
  const FactorStatus& refactor(const linalg::CscMatrix& w, std::span<const double> c);
  /// X = (S + WCWᵀ)⁻¹·B in place (m rows, any number of columns), after refactor().
  void solve(linalg::DenseView b) const;
  /// refactor(w, c), then X = (S + WCWᵀ)⁻¹·B in place, with S⁻¹B formed in the pass that forms
  /// S⁻¹W: S⁻¹ streams through memory once instead of twice. B is left as it was when the
  /// status is not ok.
  const FactorStatus& refactor_and_solve(const linalg::CscMatrix& w, std::span<const double> c, linalg::DenseView b);

  /// True when the Woodbury route is expected to be faster than the dense refactorization and
  /// solve of S + ΔS for m unknowns and p springs: below p = 0.85m (measured crossover 0.8–1).
  [[nodiscard]] static bool prefer_low_rank(Index m, Index p);

 private:
  /// The p × p capacitance matrix (its lower triangle) in capacitance_'s storage.
  [[nodiscard]] linalg::DenseView capacitance() {
    const Index p = w_.cols;
    return {capacitance_.data(), p, p, p > 0 ? p : 1};
  }
  [[nodiscard]] linalg::ConstDenseView capacitance() const {
    const Index p = w_.cols;
    return {capacitance_.data(), p, p, p > 0 ? p : 1};
  }
  /// Keeps W, checks the stiffnesses; false (status set) when one is not positive.
  bool take_springs(const linalg::CscMatrix& w, std::span<const double> c);
  /// U = S⁻¹B (m × b.cols, column-major, into `u`) and, when `h` is not null, H = S⁻¹W
  /// (m × p, row-major, into `h`), in one pass over S⁻¹.
  void multiply_inverse(linalg::ConstDenseView b, double* u, double* h) const;
  /// S⁻¹'s row tile: its rows × all m columns, column-major.
  [[nodiscard]] linalg::ConstDenseView inverse_tile(Index tile) const;
  [[nodiscard]] linalg::DenseView inverse_tile(Index tile);
  /// Where the tile starts in inverse_tiles_: the tiles before it hold 32 rows × m each.
  [[nodiscard]] std::size_t tile_offset(Index tile) const;
  void form_capacitance(std::span<const double> c);
  /// Factors the capacitance matrix; false (status set) when it is not positive definite.
  bool factor_capacitance();
  /// X = U − H·(C⁻¹ + WᵀS⁻¹W)⁻¹·WᵀU into b, for U = S⁻¹B (m × b.cols).
  void finish_solve(linalg::ConstDenseView u, linalg::DenseView b) const;

  Index size_ = 0;                       ///< m
  /// S⁻¹ by row tiles, each contiguous (inverse_tile), from a cache line: a full tile's columns
  /// (32 rows, 256 bytes) are then four whole lines, read a vector of eight at a time.
  /// From malloc's 16-byte alignment every such read straddled two lines, and the pass over S⁻¹
  /// took 11.3 ms instead of 9.5 (median of 41 inner iterations of the 650K elbow, m = 4192).
  linalg::CacheAlignedVector<double> inverse_tiles_;
  int threads_ = 0;
  linalg::CscMatrix w_;                  ///< W of the last refactor(), m × p
  std::vector<double> inverse_times_w_;  ///< H = S⁻¹W, m × p row-major (capacity kept)
  std::vector<double> capacitance_;      ///< factor of C⁻¹ + WᵀS⁻¹W, p × p (capacity kept)
  std::vector<double> inverse_times_b_;  ///< U = S⁻¹B of refactor_and_solve (capacity kept)
  FactorStatus status_;
};

}  // namespace cholsim::factor
