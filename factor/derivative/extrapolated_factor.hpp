#pragma once
// The linearly extrapolated factor L̃ = L + Δt·L̇ (seed 002 eq. 5.4): in a Newton-type solve at
// time t + Δt it stands in for the stale factor L of time t — as the direct quasi-Newton solve
// or as the PCG preconditioner (§5.4.2.3, Algorithms 5.3 and 5.4).
//
//   factor::FactorDerivative ldot(symbolic);
//   ldot.factorize_with_derivative(H, H_dot);
//   factor::ExtrapolatedFactor predicted(ldot);
//   if (predicted.extrapolate(dt).ok()) predicted.solve(g);   // solves with L̃·L̃ᵀ
//
// L̃·L̃ᵀ is SPD exactly when L̃'s diagonal is positive; a step that makes a diagonal entry ≤ 0
// (extrapolation overshooting, Fig. 5.2b) is refused with the column named, never solved with.
#include <span>
#include <vector>

#include "factor/derivative/factor_derivative.hpp"
#include "factor/numeric/cholesky_factor.hpp"

namespace cholsim::factor {

class ExtrapolatedFactor {
 public:
  /// Copies L and L̇ from a successful derivative factorization (throws std::logic_error
  /// otherwise); the source may change or go away afterwards. Not usable before extrapolate().
  explicit ExtrapolatedFactor(const FactorDerivative& source);

  /// Forms L̃ = L + Δt·L̇ (one pass over the values, cheap to repeat for a new Δt). Returns ok,
  /// or not_positive_definite naming the first column (elimination order, reported in user
  /// numbering) whose diagonal L̃(j, j) is not positive, with that value; then the factor
  /// refuses to solve until a good Δt is given.
  const FactorStatus& extrapolate(double time_step);

  [[nodiscard]] const FactorStatus& status() const { return factor_.status(); }
  [[nodiscard]] bool ok() const { return factor_.ok(); }
  [[nodiscard]] double time_step() const { return time_step_; }
  /// L̃ as a Factor: solve, solve_refined (e.g. against the new matrix), values, factor_matrix.
  [[nodiscard]] const Factor& factor() const { return factor_; }

  /// Solves L̃·L̃ᵀ·x = b in place (user numbering): the quasi-Newton step, or one application
  /// of the preconditioner. Throws std::logic_error unless the last extrapolate() succeeded.
  void solve(std::span<double> b) const { factor_.solve(b); }
  void solve(linalg::DenseView b) const { factor_.solve(b); }

 private:
  std::vector<double> factor_values_;
  std::vector<double> derivative_;
  Factor factor_;
  double time_step_ = 0.0;
};

}  // namespace cholsim::factor
