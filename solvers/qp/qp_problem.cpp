#include "solvers/qp/qp_problem.hpp"

#include <cstdio>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace cholsim::solvers::qp {
namespace {

using linalg::CscMatrix;

/// max(a, b) that keeps a NaN from either side (std::max drops a NaN second argument), so
/// that a NaN anywhere makes the residual NaN instead of passing a tolerance test.
double larger(double a, double b) { return std::isnan(b) || b > a ? b : a; }

double max_abs(std::span<const double> v) {
  double largest = 0.0;
  for (const double value : v) largest = larger(largest, std::abs(value));
  return largest;
}

/// A matrix given for "no rows": 0 rows and either n columns or none at all.
bool has_no_rows(const CscMatrix& a) { return a.rows == 0; }

void require_size(std::size_t given, Index expected, const std::string& what) {
  if (static_cast<Index>(given) != expected) {
    throw std::invalid_argument(what + " has " + std::to_string(given) + " entries, expected " +
                                std::to_string(expected));
  }
}

void require_finite(std::span<const double> values, const std::string& what) {
  const auto bad = std::find_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); });
  if (bad != values.end()) {
    throw std::invalid_argument("QpProblem: " + what + " holds " + std::to_string(*bad) + " at position " +
                                std::to_string(bad - values.begin()) + "; expected finite values");
  }
}

void check_constraint_matrix(const CscMatrix& a, Index rows, Index n, const std::string& what) {
  const bool default_constructed = a.rows == 0 && a.cols == 0;
  if (!(rows == 0 && default_constructed) && (a.rows != rows || a.cols != n)) {
    throw std::invalid_argument("QpProblem: " + what + " is " + std::to_string(a.rows) + "×" +
                                std::to_string(a.cols) + ", expected " + std::to_string(rows) + "×" +
                                std::to_string(n) + " (rows = right-hand side entries, columns = H's size)");
  }
  try {
    linalg::check_valid(a);
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument("QpProblem: " + what + " is malformed: " + error.what());
  }
  if (!a.has_values()) throw std::invalid_argument("QpProblem: " + what + " has a pattern but no values");
  require_finite(a.values, what);
}

void check_hessian(const linalg::SymmetricCscMatrix& hessian) {
  try {
    linalg::check_valid(hessian);
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(std::string("QpProblem: the hessian H is malformed: ") + error.what());
  }
  if (hessian.lower.rows != hessian.lower.cols) {
    throw std::invalid_argument("QpProblem: the hessian H is " + std::to_string(hessian.lower.rows) + "×" +
                                std::to_string(hessian.lower.cols) + ", expected a square matrix");
  }
  if (!hessian.lower.has_values()) throw std::invalid_argument("QpProblem: the hessian H has a pattern but no values");
  require_finite(hessian.lower.values, "the hessian H");
}

/// Each ∞-norm divided by 1 + the largest of the terms it sums.
double scaled(double residual, double largest_term) { return residual / (1.0 + largest_term); }

}  // namespace

std::string_view to_string(QpStatus status) {
  switch (status) {
    case QpStatus::optimal: return "optimal";
    case QpStatus::infeasible: return "infeasible";
    case QpStatus::unbounded: return "unbounded";
    case QpStatus::iteration_limit: return "iteration_limit";
    case QpStatus::numerical_failure: return "numerical_failure";
  }
  return "unknown";
}

double KktResiduals::worst() const {
  double largest = 0.0;
  for (const double residual : {stationarity, equality, inequality, dual_sign, complementarity}) {
    largest = larger(largest, residual);
  }
  return largest;
}

void constraint_multiply(const CscMatrix& a, std::span<const double> x, std::span<double> out) {
  if (has_no_rows(a)) return;
  linalg::multiply(a, x, out);
}

linalg::CscMatrix constraint_rows(const CscMatrix& a, Index n) {
  if (has_no_rows(a)) {
    CscMatrix empty;
    empty.rows = n;
    return empty;
  }
  return linalg::transpose(a);
}

void constraint_multiply_transposed(const CscMatrix& a, std::span<const double> y, std::span<double> out) {
  std::fill(out.begin(), out.end(), 0.0);
  if (has_no_rows(a)) return;
  if (static_cast<Index>(y.size()) != a.rows || static_cast<Index>(out.size()) != a.cols) {
    throw std::invalid_argument("constraint_multiply_transposed: A is " + std::to_string(a.rows) + "×" +
                                std::to_string(a.cols) + ", y has " + std::to_string(y.size()) +
                                " entries and the result " + std::to_string(out.size()));
  }
  for (Index j = 0; j < a.cols; ++j) {
    double sum = 0.0;
    for (auto k = a.col_ptr[static_cast<std::size_t>(j)]; k < a.col_ptr[static_cast<std::size_t>(j) + 1]; ++k) {
      sum += a.values[static_cast<std::size_t>(k)] * y[static_cast<std::size_t>(a.row_idx[static_cast<std::size_t>(k)])];
    }
    out[static_cast<std::size_t>(j)] = sum;
  }
}

KktResiduals kkt_residuals(const QpProblem& problem, std::span<const double> x, std::span<const double> y,
                           std::span<const double> z) {
  const Index n = problem.variable_count();
  require_size(x.size(), n, "kkt_residuals: x");
  require_size(y.size(), problem.equality_count(), "kkt_residuals: the equality multipliers y");
  require_size(z.size(), problem.inequality_count(), "kkt_residuals: the inequality multipliers z");
  std::vector<double> hx(x.size()), ety(x.size()), ctz(x.size()), ex(y.size()), cx(z.size());
  linalg::symmetric_multiply(problem.hessian, x, hx);
  constraint_multiply_transposed(problem.equality, y, ety);
  constraint_multiply_transposed(problem.inequality, z, ctz);
  constraint_multiply(problem.equality, x, ex);
  constraint_multiply(problem.inequality, x, cx);

  KktResiduals residuals;
  double stationarity = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    stationarity = larger(stationarity, std::abs(hx[i] - problem.linear[i] - ety[i] - ctz[i]));
  }
  residuals.stationarity =
      scaled(stationarity, larger(larger(max_abs(hx), max_abs(problem.linear)), larger(max_abs(ety), max_abs(ctz))));
  double equality = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) equality = larger(equality, std::abs(ex[i] - problem.equality_rhs[i]));
  residuals.equality = scaled(equality, larger(max_abs(ex), max_abs(problem.equality_rhs)));
  double violation = 0.0, wrong_sign = 0.0, complementarity = 0.0, complementarity_scale = 0.0;
  for (std::size_t i = 0; i < z.size(); ++i) {
    const double slack = cx[i] - problem.inequality_rhs[i];
    violation = larger(violation, -slack);
    wrong_sign = larger(wrong_sign, -z[i]);
    complementarity = larger(complementarity, std::abs(z[i] * slack));
    complementarity_scale = larger(complementarity_scale, std::abs(z[i]) * (std::abs(cx[i]) + std::abs(problem.inequality_rhs[i])));
  }
  residuals.inequality = scaled(violation, larger(max_abs(cx), max_abs(problem.inequality_rhs)));
  residuals.dual_sign = scaled(wrong_sign, max_abs(z));
  residuals.complementarity = scaled(complementarity, complementarity_scale);
  return residuals;
}

KktResiduals kkt_residuals(const QpProblem& problem, const QpSolution& solution) {
  return kkt_residuals(problem, solution.x, solution.equality_multipliers, solution.inequality_multipliers);
}

double objective(const QpProblem& problem, std::span<const double> x) {
  require_size(x.size(), problem.variable_count(), "objective: x");
  std::vector<double> hx(x.size());
  linalg::symmetric_multiply(problem.hessian, x, hx);
  double value = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) value += x[i] * (0.5 * hx[i] - problem.linear[i]);
  return value;
}

void check_problem(const QpProblem& problem) {
  check_hessian(problem.hessian);
  const Index n = problem.variable_count();
  require_size(problem.linear.size(), n, "QpProblem: the linear term b");
  require_finite(problem.linear, "the linear term b");
  check_constraint_matrix(problem.equality, problem.equality_count(), n, "the equality matrix E");
  require_finite(problem.equality_rhs, "the equality right-hand side e");
  check_constraint_matrix(problem.inequality, problem.inequality_count(), n, "the inequality matrix C");
  require_finite(problem.inequality_rhs, "the inequality right-hand side c");
}

std::vector<Index> constrained_columns(const QpProblem& problem) {
  std::vector<Index> columns;
  for (Index j = 0; j < problem.variable_count(); ++j) {
    const auto touched = [j](const CscMatrix& a) {
      return j < a.cols && a.col_ptr[static_cast<std::size_t>(j) + 1] > a.col_ptr[static_cast<std::size_t>(j)];
    };
    if (touched(problem.equality) || touched(problem.inequality)) columns.push_back(j);
  }
  return columns;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string scientific(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*e", digits, value);
  return text;
}

}  // namespace cholsim::solvers::qp
