#pragma once
// The coarsest multigrid level solved exactly by cholsim's supernodal Cholesky (factor/),
// instead of seed 001 §7's damped-Jacobi sweeps: the coarsest grid is small, so its factor is
// cheap, and an exact coarse solve removes the coarse level's slow modes that 16 Jacobi sweeps
// (§10.4) leave behind. The pattern is analysed once; each new linearization (a Newton step's
// re-discretized coarse operator) is refactored on the same analysis.
#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>

#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/csc_matrix.hpp"

namespace cholsim::solvers {

/// The coarse matrix could not be factored: `status()` holds the code and, for a matrix that
/// is not positive definite, the failing column in the matrix's own numbering.
class CoarseFactorizationError : public std::runtime_error {
 public:
  explicit CoarseFactorizationError(factor::FactorStatus status);
  [[nodiscard]] const factor::FactorStatus& status() const { return status_; }

 private:
  factor::FactorStatus status_;
};

class DirectCoarseSolver {
 public:
  /// Analyses `a`'s pattern (fill-reducing ordering chosen as factor::analyze's `automatic`:
  /// AMD, or METIS nested dissection where that is cheaper; `dofs_per_node` unknowns per node
  /// ordered together, 3 for elasticity) and factors it with `threads` threads (0: all).
  /// Throws CoarseFactorizationError naming the column if `a` is not SPD.
  explicit DirectCoarseSolver(const linalg::SymmetricCscMatrix& a, int threads = 0,
                              linalg::Index dofs_per_node = 1);

  /// Factors new values of the analysed pattern. A full factorization on the kept analysis:
  /// a new linearization changes every coarse entry, so there is nothing for incremental
  /// refactorization (factor::Factor::refactorize) to skip. Throws CoarseFactorizationError
  /// for a matrix that is not SPD or does not have the analysed pattern; the solver then
  /// cannot solve until a refactor succeeds.
  void refactor(const linalg::SymmetricCscMatrix& a);

  /// x = A⁻¹·b. b and x may be the same span.
  void solve(std::span<const double> b, std::span<double> x) const;

  [[nodiscard]] linalg::Index size() const { return factor_.symbolic().size(); }
  /// Bytes of L's values (factor::FactorStats::factor_bytes).
  [[nodiscard]] std::size_t factor_bytes() const;
  [[nodiscard]] const factor::Factor& factor() const { return factor_; }

 private:
  void factorize(const linalg::SymmetricCscMatrix& a);

  factor::Factor factor_;
  int threads_ = 0;
};

}  // namespace cholsim::solvers
