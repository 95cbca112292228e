#pragma once
// Preconditioned conjugate gradients for a symmetric positive definite system A·x = b
// (Hestenes–Stiefel; Saad, Iterative Methods for Sparse Linear Systems, 2nd ed., Alg. 9.1).
// The baseline every direct method in cholsim is measured against: seed 000 §5.2 compares
// warp-canceling corotation with Jacobi-preconditioned CG, seed 002 §5.4 uses a factor as
// the preconditioner. Written against an operator and a preconditioner, so a matrix-free
// operator (multigrid, octrees) plugs in the same way.
#include <cstdint>
#include <functional>
#include <span>

#include "linalg/csc_matrix.hpp"

namespace cholsim::solvers {

/// y = A·x for the system's operator.
using LinearOperator = std::function<void(std::span<const double> x, std::span<double> y)>;
/// z = M⁻¹·r for a preconditioner M ≈ A (symmetric positive definite).
using Preconditioner = std::function<void(std::span<const double> r, std::span<double> z)>;

struct ConjugateGradientOptions {
  /// Stop when ‖b − A·x‖₂ ≤ relative_tolerance·‖b‖₂ (seed 000 §5.2 uses a residual
  /// tolerance; 1e-4 there).
  double relative_tolerance = 1e-8;
  std::int64_t max_iterations = 10'000;
};

struct ConjugateGradientResult {
  std::int64_t iterations = 0;
  double relative_residual = 0.0;  ///< ‖b − A·x‖/‖b‖ at exit (recurrence value)
  bool converged = false;
};

/// Solves A·x = b starting from the given x (a warm start; zero it for a cold one).
/// Throws std::invalid_argument on size mismatch and std::runtime_error when the operator or
/// preconditioner is found not positive definite (pᵀAp ≤ 0 or rᵀz ≤ 0), naming the
/// iteration.
ConjugateGradientResult conjugate_gradient(const LinearOperator& a, const Preconditioner& m,
                                           std::span<const double> b, std::span<double> x,
                                           const ConjugateGradientOptions& options = {});

/// The inverse diagonal of `a` as a preconditioner (Jacobi). Throws std::invalid_argument for
/// a non-positive diagonal entry, naming the column.
Preconditioner jacobi_preconditioner(const linalg::SymmetricCscMatrix& a);

/// The operator y = A·x of a symmetric matrix stored as its lower triangle (referenced, so
/// `a` must outlive the operator).
LinearOperator symmetric_operator(const linalg::SymmetricCscMatrix& a);

}  // namespace cholsim::solvers
