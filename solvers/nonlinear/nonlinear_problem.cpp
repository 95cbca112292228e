#include "solvers/nonlinear/nonlinear_problem.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace cholsim::solvers {
namespace {

double infinity_norm(std::span<const double> v) {
  double largest = 0.0;
  for (double value : v) largest = std::max(largest, std::abs(value));
  return largest;
}

}  // namespace

void forward_difference_hessian_rate(const HessianEvaluation& hessian, std::span<const double> x,
                                     std::span<const double> velocity, linalg::SymmetricCscMatrix& rate) {
  if (!velocity.empty() && velocity.size() != x.size()) {
    throw std::invalid_argument("hessian rate: velocity has " + std::to_string(velocity.size()) +
                                " entries, x has " + std::to_string(x.size()));
  }
  rate.lower.values.assign(static_cast<std::size_t>(rate.nnz_lower()), 0.0);
  const double speed = infinity_norm(velocity);
  if (speed == 0.0) return;
  // seed 002 eq. 5.7 with the step that balances truncation against rounding for a forward
  // difference: √u relative to the size of x, spread over the fastest-moving unknown.
  const double epsilon = std::sqrt(std::numeric_limits<double>::epsilon()) * std::max(infinity_norm(x), 1.0) / speed;
  std::vector<double> perturbed(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) perturbed[i] = x[i] + epsilon * velocity[i];
  linalg::SymmetricCscMatrix at_x = rate;
  hessian(x, at_x);
  hessian(perturbed, rate);
  for (std::size_t k = 0; k < rate.lower.values.size(); ++k) {
    rate.lower.values[k] = (rate.lower.values[k] - at_x.lower.values[k]) / epsilon;
  }
}

void NonlinearProblem::hessian_rate(std::span<const double> x, std::span<const double> velocity,
                                    linalg::SymmetricCscMatrix& rate) {
  forward_difference_hessian_rate([this](std::span<const double> point, linalg::SymmetricCscMatrix& h) { hessian(point, h); },
                                  x, velocity, rate);
}

}  // namespace cholsim::solvers
