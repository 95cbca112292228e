#include "solvers/cg/cg_spectrum.hpp"

#include <algorithm>
#include <cmath>

#include "linalg/blas.hpp"

namespace cholsim::solvers {

double SpectrumBounds::stationary_factor() const {
  return std::max(std::abs(1.0 - smallest), std::abs(1.0 - largest));
}

SpectrumBounds CgSpectrumEstimate::bounds() const {
  // A step whose direction update never came (the solve stopped after it) still counts.
  const std::size_t k = std::min(steps_.size(), updates_.size() + 1);
  if (k == 0) return {};
  std::vector<double> diagonal(k), off_diagonal(k - 1);
  for (std::size_t j = 0; j < k; ++j) {
    diagonal[j] = 1.0 / steps_[j] + (j > 0 ? updates_[j - 1] / steps_[j - 1] : 0.0);
    if (j + 1 < k) off_diagonal[j] = std::sqrt(updates_[j]) / steps_[j];
  }
  const std::vector<double> ritz = linalg::blas::tridiagonal_eigenvalues(std::move(diagonal), std::move(off_diagonal));
  return {ritz.front(), ritz.back()};
}

}  // namespace cholsim::solvers
