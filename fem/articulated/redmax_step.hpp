#pragma once
// The linearly implicit Euler step of REDMAX (seed 002 eq. 3.6):
//
//   (Jᵀ(M + hD_m − h²K_m)J + hD_r − h²K_r) q̇₁ = JᵀMJ q̇₀ + h(f_r + Jᵀ(f_m − M J̇ q̇₀)),
//   q₁ = q₀ + h q̇₁,
//
// with J = J_mr, f_m the bodies' gravity and quadratic velocity wrenches, f_r the joint springs
// (K_r = −k I) and D the body and joint damping. The maximal matrix is diagonal here (one
// principal-axes cuboid per body, no maximal springs), so maximal solves are divisions.
#include <span>
#include <vector>

#include "fem/articulated/articulated_system.hpp"

namespace cholsim::fem::articulated {

struct RedmaxStepTerms {
  double time_step = 0.0;
  linalg::DenseMatrix jacobian;       ///< J (maximal × reduced)
  std::vector<double> maximal_matrix;  ///< M̃_m = M + hD_m (diagonal)
  std::vector<double> maximal_rhs;     ///< f̃_m = M J q̇₀ + h f_m: M̃_m times the unconstrained velocity
  linalg::DenseMatrix reduced_matrix;  ///< M̃_r (lower triangle)
  linalg::DenseMatrix reduced_factor;  ///< its Cholesky factor (lower triangle)
  std::vector<double> reduced_rhs;     ///< f̃_r of eq. 3.6's right-hand side
};

/// Fills the terms of one step at the system's current state. Throws std::runtime_error when
/// M̃_r is not positive definite (naming the reduced DOF) — a massless chain, for instance.
void assemble_redmax_step(const ArticulatedSystem& system, double time_step, const Vec3& gravity,
                          RedmaxStepTerms& terms);
/// x ← M̃_r⁻¹ x.
void solve_reduced(const RedmaxStepTerms& terms, std::span<double> x);
/// y = J x (maximal) and x = Jᵀ y (reduced).
void jacobian_times(const RedmaxStepTerms& terms, std::span<const double> reduced, std::span<double> maximal);
void jacobian_transpose_times(const RedmaxStepTerms& terms, std::span<const double> maximal, std::span<double> reduced);
/// q̇ ← new_velocities, q ← q + h q̇, kinematics updated.
void advance_positions(ArticulatedSystem& system, double time_step, std::span<const double> new_velocities);
/// One frictionless, unconstrained step (reparameterize, assemble, solve, advance).
void redmax_step(ArticulatedSystem& system, double time_step, const Vec3& gravity, RedmaxStepTerms& terms);

}  // namespace cholsim::fem::articulated
