#include "solvers/integrators/mechanical_system.hpp"

#include "solvers/nonlinear/nonlinear_problem.hpp"

namespace cholsim::solvers {

void MechanicalSystem::potential_hessian_rate(std::span<const double> x, std::span<const double> velocity,
                                              linalg::SymmetricCscMatrix& rate) {
  forward_difference_hessian_rate(
      [this](std::span<const double> point, linalg::SymmetricCscMatrix& hessian) { potential_hessian(point, hessian); },
      x, velocity, rate);
}

}  // namespace cholsim::solvers
