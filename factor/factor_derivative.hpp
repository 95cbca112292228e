#pragma once
// The factor's time derivative (seed 002 ch. 5, "Ldot"): for A(t) = L(t)·L(t)ᵀ and a given Ȧ,
// L̇ is the lower-triangular solution of L̇·Lᵀ + L·L̇ᵀ = Ȧ, with L's sparsity pattern (every
// entry of L̇ outside it is zero). Computed with L in one pass over the assembly tree:
//
//   auto symbolic = factor::analyze(A);
//   factor::FactorDerivative ldot(symbolic);
//   if (!ldot.factorize_with_derivative(A, A_dot).ok()) { ... ldot.status().column ... }
//   ldot.factor().solve(b);                       // L as a Factor
//   ldot.derivative_values();                     // L̇, laid out like factor().values()
//
// The analytic route carries the derivative front through the same extend-add as L
// (derivative_multifrontal.hpp), supernode by supernode on the same tree schedule. The
// finite-difference routes of thesis eq. 5.8 factor A + εȦ (and A or A − εȦ) on the same
// symbolic analysis and serve as the baseline the thesis used instead (§5.4.2.2).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "factor/cholesky_factor.hpp"
#include "factor/factor_status.hpp"
#include "factor/symbolic.hpp"
#include "linalg/csc_matrix.hpp"

namespace cholsim::factor {

struct DerivativeFactorStats {
  double seconds = 0.0;                  ///< wall time of the whole call, L and L̇ together
  /// Time inside L's supernode kernels and inside L̇'s, each summed over all supernodes
  /// (and threads): how the wall time splits between the two.
  double factor_kernel_seconds = 0.0;
  double derivative_kernel_seconds = 0.0;
  double factor_flops = 0.0;             ///< L's dense kernels (Symbolic::supernode_flops summed)
  double derivative_flops = 0.0;         ///< L̇'s dense kernels
  int threads = 1;
  std::int64_t factor_bytes = 0;             ///< L's values
  std::int64_t derivative_bytes = 0;         ///< L̇'s values (same layout, same size)
  std::int64_t peak_update_bytes = 0;        ///< most bytes in L's update blocks at once
  std::int64_t peak_derivative_update_bytes = 0;  ///< most bytes in the U̇ blocks at once
};

class FactorDerivative {
 public:
  explicit FactorDerivative(std::shared_ptr<const Symbolic> symbolic);

  /// L and L̇ of `a` with derivative `a_derivative`; both must have the analysed pattern (Ȧ's
  /// explicit zeros included). Repeatable with new values. Returns the status (kept in
  /// status()): a failing pivot of A names its column (user numbering); a size, pattern or
  /// NaN/Inf problem in Ȧ is reported like one in A, its message starting "derivative: ".
  /// Never throws for bad values.
  const FactorStatus& factorize_with_derivative(const linalg::SymmetricCscMatrix& a,
                                                const linalg::SymmetricCscMatrix& a_derivative,
                                                const FactorOptions& options = {});

  [[nodiscard]] const FactorStatus& status() const { return factor_.status(); }
  [[nodiscard]] bool ok() const { return factor_.ok(); }
  [[nodiscard]] const Symbolic& symbolic() const { return factor_.symbolic(); }
  /// L: solves, values, factor_matrix() as for any Factor.
  [[nodiscard]] const Factor& factor() const { return factor_; }
  /// L̇'s supernodal values, laid out like factor().values(). Throws std::logic_error if the
  /// last call did not succeed.
  [[nodiscard]] std::span<const double> derivative_values() const;
  /// L̇ as a CSC matrix in elimination numbering, the pattern of factor().factor_matrix().
  [[nodiscard]] linalg::CscMatrix derivative_matrix() const;
  [[nodiscard]] const DerivativeFactorStats& stats() const { return stats_; }

 private:
  Factor factor_;
  std::vector<double> derivative_;
  DerivativeFactorStats stats_;
};

enum class FiniteDifferenceScheme {
  forward,  ///< (chol(A + εȦ) − chol(A))/ε, thesis eq. 5.8: error O(ε), two factorizations
  central,  ///< (chol(A + εȦ) − chol(A − εȦ))/(2ε): error O(ε²), two factorizations
};

struct FiniteDifferenceOptions {
  FiniteDifferenceScheme scheme = FiniteDifferenceScheme::central;
  /// Step ε; 0 chooses default_finite_difference_step().
  double epsilon = 0.0;
  FactorOptions factor_options;
};

struct FiniteDifferenceDerivative {
  FactorStatus status;          ///< the first failing factorization's status, or ok
  std::vector<double> values;   ///< L̇ approximation, laid out like Factor::values()
  double epsilon = 0.0;         ///< the step used
  double seconds = 0.0;         ///< wall time: both factorizations and the difference
};

/// The step that balances truncation against rounding: a difference quotient of factors
/// accurate to the unit roundoff u (relative to ‖L‖) loses u·‖A‖/(ε·‖Ȧ‖) to cancellation and
/// gains ε·‖Ȧ‖/‖A‖ (forward) or (ε·‖Ȧ‖/‖A‖)² (central) of truncation error; both terms are
/// equal at ε = √u·‖A‖/‖Ȧ‖ (forward, ≈ 1.5e-8 relative) and ε = ∛u·‖A‖/‖Ȧ‖ (central,
/// ≈ 6e-6 relative), leaving about √u ≈ 1e-8 and u^(2/3) ≈ 4e-11 relative error. Norms are
/// the largest stored magnitudes; a zero Ȧ gives ε = 1.
double default_finite_difference_step(const linalg::SymmetricCscMatrix& a,
                                      const linalg::SymmetricCscMatrix& a_derivative,
                                      FiniteDifferenceScheme scheme);

/// L̇ by a finite difference of two factorizations on `symbolic` (thesis eq. 5.8 and its
/// central variant). Both matrices must have the analysed pattern; a failing factorization
/// (A ± εȦ not positive definite) comes back in `status`.
FiniteDifferenceDerivative finite_difference_derivative(std::shared_ptr<const Symbolic> symbolic,
                                                        const linalg::SymmetricCscMatrix& a,
                                                        const linalg::SymmetricCscMatrix& a_derivative,
                                                        const FiniteDifferenceOptions& options = {});

/// ‖L̇·Lᵀ + L·L̇ᵀ − P·Ȧ·Pᵀ‖_F / ‖Ȧ‖_F over the entries of Ȧ's pattern (both triangles), for
/// L and L̇ in supernodal layout on `symbolic`: how exactly `derivative` satisfies the defining
/// identity. Costs about as much as one factorization.
double derivative_identity_residual(const Symbolic& symbolic, std::span<const double> factor_values,
                                    std::span<const double> derivative,
                                    const linalg::SymmetricCscMatrix& a_derivative);

/// ‖x − reference‖₂ / ‖reference‖₂ (‖x‖₂ when the reference is zero): the distance between two
/// derivatives in the same layout.
double relative_difference(std::span<const double> x, std::span<const double> reference);

}  // namespace cholsim::factor
