#include "solvers/cg/conjugate_gradient.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "linalg/vector_norms.hpp"

namespace cholsim::solvers {

using linalg::dot;

namespace {

[[noreturn]] void not_positive_definite(const char* what, std::int64_t iteration, double value) {
  throw std::runtime_error("conjugate_gradient: " + std::string(what) + " = " +
                           std::to_string(value) + " at iteration " + std::to_string(iteration) +
                           "; expected a symmetric positive definite system and preconditioner");
}

}  // namespace

ConjugateGradientResult conjugate_gradient(const LinearOperator& a, const Preconditioner& m,
                                           std::span<const double> b, std::span<double> x,
                                           const ConjugateGradientOptions& options) {
  if (b.size() != x.size()) {
    throw std::invalid_argument("conjugate_gradient: b has " + std::to_string(b.size()) +
                                " entries, x has " + std::to_string(x.size()));
  }
  const std::size_t n = b.size();
  std::vector<double> r(n), z(n), p(n), ap(n);
  a(x, ap);
  for (std::size_t i = 0; i < n; ++i) r[i] = b[i] - ap[i];
  const double b_norm = std::sqrt(dot(b, b));
  ConjugateGradientResult result;
  if (b_norm == 0.0) {  // x = 0 solves it exactly
    for (double& value : x) value = 0.0;
    result.converged = true;
    return result;
  }
  double r_norm = std::sqrt(dot(r, r));
  result.relative_residual = r_norm / b_norm;
  if (result.relative_residual <= options.relative_tolerance) {
    result.converged = true;
    return result;
  }
  m(r, z);
  p = z;
  double rz = dot(r, z);
  for (std::int64_t iteration = 1; iteration <= options.max_iterations; ++iteration) {
    if (!(rz > 0.0)) not_positive_definite("rᵀM⁻¹r", iteration, rz);
    a(p, ap);
    const double curvature = dot(p, ap);
    if (!(curvature > 0.0)) not_positive_definite("pᵀAp", iteration, curvature);
    const double step = rz / curvature;
    for (std::size_t i = 0; i < n; ++i) {
      x[i] += step * p[i];
      r[i] -= step * ap[i];
    }
    result.iterations = iteration;
    r_norm = std::sqrt(dot(r, r));
    result.relative_residual = r_norm / b_norm;
    if (result.relative_residual <= options.relative_tolerance) {
      result.converged = true;
      return result;
    }
    m(r, z);
    const double rz_next = dot(r, z);
    const double beta = rz_next / rz;
    rz = rz_next;
    for (std::size_t i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
  }
  return result;
}

Preconditioner jacobi_preconditioner(const linalg::SymmetricCscMatrix& a) {
  std::vector<double> inverse_diagonal(static_cast<std::size_t>(a.size()));
  for (linalg::Index column = 0; column < a.size(); ++column) {
    const auto first = static_cast<std::size_t>(a.lower.col_ptr[static_cast<std::size_t>(column)]);
    // Lower storage with sorted rows: the diagonal, when present, is a column's first entry.
    const bool has_diagonal = first < static_cast<std::size_t>(a.lower.col_ptr[static_cast<std::size_t>(column) + 1]) &&
                              a.lower.row_idx[first] == column;
    const double diagonal = has_diagonal ? a.lower.values[first] : 0.0;
    if (!(diagonal > 0.0)) {
      throw std::invalid_argument("jacobi_preconditioner: diagonal entry of column " +
                                  std::to_string(column) + " is " + std::to_string(diagonal) +
                                  "; expected positive");
    }
    inverse_diagonal[static_cast<std::size_t>(column)] = 1.0 / diagonal;
  }
  return [inverse_diagonal = std::move(inverse_diagonal)](std::span<const double> r,
                                                          std::span<double> z) {
    for (std::size_t i = 0; i < r.size(); ++i) z[i] = inverse_diagonal[i] * r[i];
  };
}

LinearOperator symmetric_operator(const linalg::SymmetricCscMatrix& a) {
  return [&a](std::span<const double> x, std::span<double> y) {
    linalg::symmetric_multiply(a, x, y);
  };
}

}  // namespace cholsim::solvers
