#pragma once
// The spectrum of M⁻¹A that preconditioned CG sees, read off its own coefficients: CG is the
// Lanczos process in disguise (Saad, Iterative Methods for Sparse Linear Systems, 2nd ed.,
// §6.7.3), and after k iterations with step lengths αⱼ and direction updates βⱼ the tridiagonal
//   Tₖ: diagonal 1/α₁, 1/αⱼ + βⱼ₋₁/αⱼ₋₁;  off-diagonal √βⱼ/αⱼ
// has the Ritz values of M⁻¹A on the Krylov space. Its extreme eigenvalues converge first and
// from inside: smallest ≥ λmin(M⁻¹A), largest ≤ λmax(M⁻¹A). For a multigrid preconditioner
// they say what a power iteration on I − M⁻¹A needs many cycles to say (and underestimates
// when stopped early): which end of the spectrum limits the cycle, and κ, which sets CG's
// iteration count. PETSc reports the same (KSPComputeExtremeSingularValues).
#include <vector>

namespace cholsim::solvers {

struct SpectrumBounds {
  double smallest = 0.0;
  double largest = 0.0;
  /// largest / smallest; 0 when nothing was estimated.
  [[nodiscard]] double condition_number() const { return smallest > 0.0 ? largest / smallest : 0.0; }
  /// max |1 − λ| over the estimated range: the A-norm convergence factor of the stationary
  /// iteration x ← x + M⁻¹(b − A·x) with this preconditioner (a V-cycle as MG).
  [[nodiscard]] double stationary_factor() const;
};

class CgSpectrumEstimate {
 public:
  /// One CG iteration's step length α = rᵀz / pᵀAp (positive).
  void add_step(double step) { steps_.push_back(step); }
  /// The following direction update β = rₙₑₓₜᵀzₙₑₓₜ / rᵀz (non-negative).
  void add_direction_update(double beta) { updates_.push_back(beta); }
  [[nodiscard]] int iterations() const { return static_cast<int>(steps_.size()); }
  /// The extreme Ritz values of the iterations so far; zeros before the first.
  [[nodiscard]] SpectrumBounds bounds() const;

 private:
  std::vector<double> steps_;
  std::vector<double> updates_;
};

}  // namespace cholsim::solvers
