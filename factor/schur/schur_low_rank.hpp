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
// The O(m·nnz(W)) part is bound by memory, not flops: S⁻¹ (140 MB at m = 4192) fits in no
// cache. H is formed in row tiles — each touched column of S⁻¹ streamed once, its tile added
// into the tile of every spring that uses it while the H tile stays in cache — and kept for
// the solve, X = S⁻¹B − H·y, which then streams S⁻¹ once (it was twice). H's storage is kept
// between refactorizations: fresh pages cost more to fault in than to fill.
//
// C⁻¹ + WᵀS⁻¹W is symmetric positive definite for positive stiffnesses (S is), so its
// Cholesky factorization is the capacitance solve; S⁻¹ from potrf + potri is as accurate as
// S's condition number allows, like the dense route.
#include <span>
#include <vector>

#include "factor/numeric/factor_status.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::factor {

using linalg::Index;

class SchurLowRankSolver {
 public:
  /// Inverts `schur_complement` (m × m, lower triangle read) with `threads` BLAS threads (0
  /// keeps the current setting). Throws std::runtime_error when S is not positive definite.
  explicit SchurLowRankSolver(linalg::ConstDenseView schur_complement, int threads = 0);

  [[nodiscard]] Index size() const { return inverse_.rows(); }

  /// Factors C⁻¹ + WᵀS⁻¹W for the sparse m × p W (rows in S's numbering, one column per spring)
  /// and the positive stiffnesses c (size p). A capacitance pivot that is not positive comes
  /// back as not_positive_definite with the spring's column in `column`.
  const FactorStatus& refactor(const linalg::CscMatrix& w, std::span<const double> c);
  /// X = (S + WCWᵀ)⁻¹·B in place (m rows, any number of columns), after refactor().
  void solve(linalg::DenseView b) const;

  /// True when the Woodbury route is expected to be faster than the dense refactorization and
  /// solve of S + ΔS for m unknowns and p springs: below p = 2m/3 (measured crossover 0.7–0.8).
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
  void form_inverse_times_w();
  void form_capacitance(std::span<const double> c);

  linalg::DenseMatrix inverse_;          ///< S⁻¹, both triangles
  int threads_ = 0;
  linalg::CscMatrix w_;                  ///< W of the last refactor(), m × p
  linalg::CscMatrix w_by_row_;           ///< Wᵀ: column i holds the springs that weigh row i
  std::vector<double> inverse_times_w_;  ///< H = S⁻¹W, m × p column-major (capacity kept)
  std::vector<double> capacitance_;      ///< factor of C⁻¹ + WᵀS⁻¹W, p × p (capacity kept)
  FactorStatus status_;
};

}  // namespace cholsim::factor
