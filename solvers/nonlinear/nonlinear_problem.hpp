#pragma once
// One nonlinear solve of an implicit time step, as the Newton-type solvers of seed 002 §5.4.2.3
// see it: minimize a smooth objective E(x) (an incremental potential, or the potential energy
// of a quasistatic step) whose Hessian has a pattern fixed for the whole simulation, so every
// factorization shares one analysis. Written by solvers/integrators/ from a MechanicalSystem;
// anything that can evaluate E, ∇E and ∇²E can be solved the same way.
#include <functional>
#include <span>
#include <vector>

#include "linalg/csc_matrix.hpp"
#include "linalg/index_types.hpp"

namespace cholsim::solvers {

using linalg::Index;

class NonlinearProblem {
 public:
  virtual ~NonlinearProblem() = default;

  /// Unknowns n.
  [[nodiscard]] virtual Index size() const = 0;
  /// E(x); +∞ where x is not admissible (an inverted element of a barrier-type material), so
  /// a line search backs off from it.
  virtual double energy(std::span<const double> x) = 0;
  /// ∇E(x) into `gradient` (n values).
  virtual void gradient(std::span<const double> x, std::span<double> gradient) = 0;
  /// The Hessian's pattern (lower triangle, values unused); the same object for the whole
  /// simulation.
  [[nodiscard]] virtual const linalg::SymmetricCscMatrix& hessian_pattern() const = 0;
  /// ∇²E(x) with every element block projected to positive semi-definite, values written into
  /// `hessian`, which has hessian_pattern()'s pattern. Positive definite whenever the
  /// problem has mass or enough boundary conditions.
  virtual void hessian(std::span<const double> x, linalg::SymmetricCscMatrix& hessian) = 0;
  /// Ȧ = d/dt ∇²E(x + t·v) at t = 0: the Hessian's rate along the velocity v, the input of
  /// the factor's time derivative (seed 002 eq. 5.2, 5.5–5.7). The default takes the forward
  /// difference (∇²E(x + ε·v) − ∇²E(x))/ε of hessian() with ε = √u·max(‖x‖∞, 1)/‖v‖∞ (the
  /// thesis' route, §5.4.2.2); a zero v gives a zero Ȧ.
  virtual void hessian_rate(std::span<const double> x, std::span<const double> velocity,
                            linalg::SymmetricCscMatrix& rate);

  /// For NEWTON-R / HYBRID-R (seed 000 §4.3–4.4 applied to Newton): ∇²E(x) into `hessian` as
  /// hessian() does, and into `factored` the matrix the factor should be brought to: every
  /// element block whose value moved by more than `tolerance` (relative, Frobenius norm) since
  /// it was last taken takes its new value, every other block keeps the value it was taken
  /// with. Both are sums of positive semi-definite blocks plus the mass — unlike a column-wise
  /// mix of two matrices, which need not be positive definite. `changed_dofs` receives the
  /// unknowns of the blocks taken anew (every unknown after reset_selective_hessian()).
  /// Returns false when the problem has no block structure (the default); the solver then
  /// compares the assembled matrices column by column.
  virtual bool selective_hessian(std::span<const double> /*x*/, double /*tolerance*/,
                                 linalg::SymmetricCscMatrix& /*hessian*/, linalg::SymmetricCscMatrix& /*factored*/,
                                 std::vector<Index>& /*changed_dofs*/) {
    return false;
  }
  /// Forgets the blocks taken: the next selective_hessian takes every block (the solver's
  /// factor was computed from scratch).
  virtual void reset_selective_hessian() {}
};

/// Evaluates a Hessian at x into a matrix that has its pattern.
using HessianEvaluation = std::function<void(std::span<const double> x, linalg::SymmetricCscMatrix& hessian)>;

/// The forward difference every default Hessian rate takes (seed 002 §5.4.2.2, eq. 5.5–5.7):
/// (H(x + ε·v) − H(x))/ε with ε = √u·max(‖x‖∞, 1)/‖v‖∞, H evaluated by `hessian` into `rate`'s
/// pattern (its values are resized to the pattern); an empty or zero v gives a zero rate.
/// NonlinearProblem::hessian_rate and MechanicalSystem::potential_hessian_rate default to it.
void forward_difference_hessian_rate(const HessianEvaluation& hessian, std::span<const double> x,
                                     std::span<const double> velocity, linalg::SymmetricCscMatrix& rate);

}  // namespace cholsim::solvers
