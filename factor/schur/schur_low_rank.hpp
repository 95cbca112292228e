#pragma once
// Solving (S + W·C·Wᵀ)·X = B without refactoring S + ΔS: the Sherman–Morrison–Woodbury form
//   (S + WCWᵀ)⁻¹ = S⁻¹ − S⁻¹W·(C⁻¹ + WᵀS⁻¹W)⁻¹·WᵀS⁻¹
// with S⁻¹ computed once. Seed 004 §4.4 refactors S + ΔS densely in every inner iteration,
// m³/3 flops for m collision-prone unknowns; the springs of ΔS are p columns of W with at most
// eight entries each (a proxy's tet, twice for a bilateral row), so with S⁻¹ at hand the
// capacitance matrix C⁻¹ + WᵀS⁻¹W (p × p) needs only the entries of S⁻¹ on the r rows W
// touches, and an iteration costs p³/3 + O(r·nnz(W)) + two products of S⁻¹ with the
// right-hand sides instead of m³/3. It pays while the active springs are fewer than the
// collision-prone unknowns (prefer_low_rank says when).
//
// C⁻¹ + WᵀS⁻¹W is symmetric positive definite for positive stiffnesses (S is), so its
// Cholesky factorization is the capacitance solve; S⁻¹ from potrf + potri is as accurate as
// S's condition number allows, like the dense route.
#include <cstdint>
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
  /// solve of S + ΔS for m unknowns and p springs: below p = m/2, the measured crossover.
  [[nodiscard]] static bool prefer_low_rank(Index m, Index p);

 private:
  linalg::DenseMatrix inverse_;          ///< S⁻¹, both triangles
  int threads_ = 0;
  linalg::CscMatrix w_;                  ///< W with rows renumbered into touched_
  std::vector<Index> touched_;           ///< rows of S that W touches, increasing
  linalg::DenseMatrix capacitance_;      ///< factor of C⁻¹ + WᵀS⁻¹W
  FactorStatus status_;
};

}  // namespace cholsim::factor
