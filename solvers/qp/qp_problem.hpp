#pragma once
// Convex quadratic programs, the form every QP back end of solvers/qp/ takes:
//
//   minimize    ½ xᵀHx − bᵀx
//   subject to  E x = e        (p equality rows)
//               C x ≥ c        (q inequality rows)
//
// with H symmetric positive semi-definite (lower triangle stored). This is the per-step
// velocity QP of EOL cloth (seed 002 eq. 2.12, H = M − h²K, b = Mq̇ + hf), and the contact QPs
// of later simulators.
//
// Multipliers and the KKT conditions, in the sign convention used everywhere here:
//   H x − b − Eᵀy − Cᵀz = 0        (stationarity)
//   E x = e                        (primal, equalities)
//   s = C x − c ≥ 0,  z ≥ 0,  zᵢsᵢ = 0   (primal, inequalities; complementarity)
#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "linalg/csc_matrix.hpp"

namespace cholsim::solvers::qp {

using linalg::Index;

struct QpProblem {
  linalg::SymmetricCscMatrix hessian;  ///< H, n×n, lower triangle, positive semi-definite
  std::vector<double> linear;          ///< b, size n (the objective is ½xᵀHx − bᵀx)
  linalg::CscMatrix equality;          ///< E, p×n (0×n or default-constructed when none)
  std::vector<double> equality_rhs;    ///< e, size p
  linalg::CscMatrix inequality;        ///< C, q×n (0×n or default-constructed when none)
  std::vector<double> inequality_rhs;  ///< c, size q

  [[nodiscard]] Index variable_count() const { return hessian.size(); }
  [[nodiscard]] Index equality_count() const { return static_cast<Index>(equality_rhs.size()); }
  [[nodiscard]] Index inequality_count() const { return static_cast<Index>(inequality_rhs.size()); }
};

enum class QpStatus {
  optimal,            ///< KKT conditions hold to the requested tolerances
  infeasible,         ///< no x satisfies the constraints (a certificate was found)
  unbounded,          ///< the objective decreases without bound on the feasible set
  iteration_limit,    ///< stopped at the iteration limit; x is the last iterate
  numerical_failure,  ///< a factorization failed or the iterates stopped improving
};

std::string_view to_string(QpStatus status);

struct QpSolution {
  QpStatus status = QpStatus::numerical_failure;
  std::vector<double> x;                       ///< size n
  std::vector<double> equality_multipliers;    ///< y, size p
  std::vector<double> inequality_multipliers;  ///< z ≥ 0, size q
  int iterations = 0;
  std::string message;  ///< why, when status is not optimal
};

/// The scaled KKT residuals of a candidate solution (∞-norms; each divided by 1 + the
/// largest term it sums, so that they are comparable across problem scales).
struct KktResiduals {
  double stationarity = 0.0;     ///< ‖Hx − b − Eᵀy − Cᵀz‖∞
  double equality = 0.0;         ///< ‖Ex − e‖∞
  double inequality = 0.0;       ///< ‖max(0, c − Cx)‖∞
  double dual_sign = 0.0;        ///< ‖max(0, −z)‖∞
  double complementarity = 0.0;  ///< max |zᵢ (Cx − c)ᵢ|
  [[nodiscard]] double worst() const;
};

KktResiduals kkt_residuals(const QpProblem& problem, const QpSolution& solution);
/// The same for x, y and z given separately (sizes n, p and q; std::invalid_argument
/// otherwise), as an iterative solver holds them.
KktResiduals kkt_residuals(const QpProblem& problem, std::span<const double> x, std::span<const double> y,
                           std::span<const double> z);

/// out = A·x, for a constraint matrix of a problem (E or C, rows × n); a matrix without rows,
/// default-constructed ones included, leaves the empty `out` alone.
void constraint_multiply(const linalg::CscMatrix& a, std::span<const double> x, std::span<double> out);
/// The rows of a constraint matrix (E or C) as the columns of its transpose: an n × rows CSC
/// matrix, n × 0 for a matrix without rows (default-constructed ones included).
linalg::CscMatrix constraint_rows(const linalg::CscMatrix& a, Index n);
/// out = Aᵀ·y (size n) for a constraint matrix; zeros when A has no rows.
void constraint_multiply_transposed(const linalg::CscMatrix& a, std::span<const double> y,
                                    std::span<double> out);

/// Objective ½xᵀHx − bᵀx.
double objective(const QpProblem& problem, std::span<const double> x);

/// Throws std::invalid_argument naming the first defect: mismatched sizes (which array,
/// expected and given), malformed matrices, NaN or Inf anywhere.
void check_problem(const QpProblem& problem);

/// The columns of H touched by a constraint row (sorted, unique): the Schur set of the
/// Schur-reduced back ends.
std::vector<Index> constrained_columns(const QpProblem& problem);

/// The solvers' timings: seconds since `start`.
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start);

/// A residual for a message, `digits` after the point: 2.20e-07, where std::to_string would
/// print 0.000000.
std::string scientific(double value, int digits = 2);

}  // namespace cholsim::solvers::qp
