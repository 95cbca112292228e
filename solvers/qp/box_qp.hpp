#pragma once
// Small dense QPs with box constraints only:
//
//   minimize ½xᵀHx − fᵀx   subject to  lower ≤ x ≤ upper,
//
// by the projected Newton method (Bertsekas 1982, "Projected Newton methods for optimization
// problems with simple constraints", SIAM J. Control Optim. 20): Newton steps on the variables
// that are not held at a bound by their gradient, projected back onto the box with an Armijo
// search along the projection arc. Once the bound set is identified the Newton step solves the
// QP exactly, so the answer is exact to round-off. The variables held are Bertsekas' ε-binding
// set. This is the friction QP of staggered projections (seed 002 eq. 3.2), whose H = T M⁻¹ Tᵀ
// is often only semi-definite (more tangent rows than body DOFs): the Newton systems are damped
// by `step_damping` (Levenberg–Marquardt) while the objective stays exact, so x is one of the
// minimizers and the force Tᵀx the simulators use — unique even where x is not — is exact.
#include <span>
#include <vector>

#include "linalg/dense_matrix.hpp"

namespace cholsim::solvers::qp {

using linalg::Index;

struct BoxQpOptions {
  int max_iterations = 100;
  /// Converged when the projected gradient is below tolerance·(1 + ‖f‖∞).
  double tolerance = 1e-13;
  /// The Newton systems get this multiple of H's largest diagonal entry added to their diagonal
  /// (see above); the objective is left exact.
  double step_damping = 1e-6;
};

struct BoxQpResult {
  std::vector<double> x;
  int iterations = 0;
  bool converged = false;
  double projected_gradient = 0.0;  ///< ‖P(x − ∇) − x‖∞ at exit
};

/// Solves the box QP above. H is n×n symmetric positive semi-definite (both triangles read);
/// `start` (optional, size n) is clamped into the box and used as the first iterate. Throws
/// std::invalid_argument for mismatched sizes, lower > upper, or NaN/Inf input.
BoxQpResult solve_box_qp(const linalg::DenseMatrix& hessian, std::span<const double> linear,
                         std::span<const double> lower, std::span<const double> upper,
                         std::span<const double> start = {}, const BoxQpOptions& options = {});

}  // namespace cholsim::solvers::qp
