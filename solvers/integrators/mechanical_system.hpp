#pragma once
// A discretized mechanical system M·ẍ = f(x, v) as the time integrators of seed 002 app. C see
// it: a constant lumped (diagonal) mass, a conservative force f = −∇V(x) with a Hessian on a
// fixed pattern, and linear damping f_d = −D·v with D positive semi-definite and frozen over a
// step. The unknowns are the free degrees of freedom only; boundary conditions that move in
// time (the BAR's rigidly moved end, the ARMADILLO's shaken platform) and moving obstacles
// enter through set_time(). fem/dynamics/ implements it for hyperelastic tet meshes.
#include <span>
#include <vector>

#include "linalg/csc_matrix.hpp"
#include "linalg/index_types.hpp"

namespace cholsim::solvers {

using linalg::Index;

class MechanicalSystem {
 public:
  virtual ~MechanicalSystem() = default;

  /// Free degrees of freedom n.
  [[nodiscard]] virtual Index size() const = 0;
  /// The diagonal of M, n values > 0.
  [[nodiscard]] virtual std::span<const double> masses() const = 0;
  /// Moves prescribed degrees of freedom and obstacles to time t; V, ∇V and ∇²V are evaluated
  /// at the last time set (0 before any call).
  virtual void set_time(double time) = 0;
  /// Called by the integrator before each nonlinear solve with the state the solve starts from
  /// and the step length ahead: contact detection and lagged friction freeze their targets
  /// here, so V stays one smooth function over the solve. The default does nothing.
  virtual void begin_solve(std::span<const double> /*x*/, std::span<const double> /*velocity*/,
                           double /*time_step*/) {}
  /// V(x): elastic + external (gravity) + contact potential; +∞ where x is not admissible.
  virtual double potential(std::span<const double> x) = 0;
  /// ∇V(x) = −f(x) into `gradient`.
  virtual void potential_gradient(std::span<const double> x, std::span<double> gradient) = 0;
  /// The pattern of ∇²V and D (lower triangle); the same object for the whole simulation.
  [[nodiscard]] virtual const linalg::SymmetricCscMatrix& pattern() const = 0;
  /// ∇²V(x) = −K(x), element blocks projected to positive semi-definite, into `hessian`
  /// (pattern()'s pattern).
  virtual void potential_hessian(std::span<const double> x, linalg::SymmetricCscMatrix& hessian) = 0;
  /// D at the state (x, v) into `damping` (pattern()'s pattern), the damping force being −D·v
  /// over the coming step; returns false (and leaves `damping` alone) for an undamped system.
  virtual bool damping_matrix(std::span<const double> x, std::span<const double> velocity,
                              linalg::SymmetricCscMatrix& damping) = 0;
  /// d/dt ∇²V(x + t·v) at t = 0 into `rate`. The default takes the forward difference of
  /// potential_hessian() (seed 002 §5.4.2.2, eq. 5.5–5.7) with ε = √u·max(‖x‖∞, 1)/‖v‖∞.
  virtual void potential_hessian_rate(std::span<const double> x, std::span<const double> velocity,
                                      linalg::SymmetricCscMatrix& rate);

  /// NonlinearProblem::selective_hessian's blocks for an incremental potential: the element
  /// blocks stiffness_scale·∇²V_e(x) + damping_scale·D_e (D_e: the blocks of the last
  /// damping_matrix(); contact blocks count as blocks too), plus damping_scale times any
  /// diagonal part of D, into `hessian` (all new) and `factored` (blocks moved by at most
  /// `tolerance` keep the value last taken); `changed_dofs` gets the unknowns of the blocks
  /// taken anew. Returns false when the system has no block structure (the default).
  virtual bool selective_potential_hessian(std::span<const double> /*x*/, double /*stiffness_scale*/,
                                           double /*damping_scale*/, double /*tolerance*/,
                                           linalg::SymmetricCscMatrix& /*hessian*/,
                                           linalg::SymmetricCscMatrix& /*factored*/,
                                           std::vector<Index>& /*changed_dofs*/) {
    return false;
  }
  /// Forgets the blocks taken (see selective_potential_hessian).
  virtual void reset_selective_hessian() {}
};

}  // namespace cholsim::solvers
