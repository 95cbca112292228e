#include "solvers/qp/box_qp.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "linalg/blas.hpp"

namespace cholsim::solvers::qp {
namespace {

void check_input(const linalg::DenseMatrix& h, std::span<const double> f, std::span<const double> lower,
                 std::span<const double> upper, std::span<const double> start) {
  const auto n = static_cast<std::size_t>(h.rows());
  if (h.cols() != h.rows()) throw std::invalid_argument("box QP: the Hessian is not square");
  if (f.size() != n || lower.size() != n || upper.size() != n || (!start.empty() && start.size() != n)) {
    throw std::invalid_argument("box QP: the vectors' sizes differ from the Hessian's " + std::to_string(n));
  }
  for (double v : h.storage()) {
    if (!std::isfinite(v)) throw std::invalid_argument("box QP: the Hessian holds NaN or Inf");
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(f[i]) || std::isnan(lower[i]) || std::isnan(upper[i])) {
      throw std::invalid_argument("box QP: NaN or Inf in row " + std::to_string(i));
    }
    if (lower[i] > upper[i]) throw std::invalid_argument("box QP: lower > upper in row " + std::to_string(i));
  }
}

double objective(const linalg::DenseMatrix& h, std::span<const double> f, const std::vector<double>& x) {
  const auto n = static_cast<Index>(x.size());
  double value = 0.0;
  for (Index j = 0; j < n; ++j) {
    double column = 0.0;
    for (Index i = 0; i < n; ++i) column += h(i, j) * x[static_cast<std::size_t>(i)];
    value += x[static_cast<std::size_t>(j)] * (0.5 * column - f[static_cast<std::size_t>(j)]);
  }
  return value;
}

}  // namespace

BoxQpResult solve_box_qp(const linalg::DenseMatrix& hessian, std::span<const double> linear,
                         std::span<const double> lower, std::span<const double> upper,
                         std::span<const double> start, const BoxQpOptions& options) {
  check_input(hessian, linear, lower, upper, start);
  const auto n = static_cast<Index>(linear.size());
  const auto un = static_cast<std::size_t>(n);
  const linalg::DenseMatrix& h = hessian;
  double largest_diagonal = 0.0;
  for (Index i = 0; i < n; ++i) largest_diagonal = std::max(largest_diagonal, h(i, i));
  // The Newton systems are damped (Levenberg–Marquardt) by this much; the objective is not.
  const double damping = options.step_damping * largest_diagonal;

  BoxQpResult result;
  result.x.assign(un, 0.0);
  for (std::size_t i = 0; i < un; ++i) {
    result.x[i] = std::clamp(start.empty() ? 0.0 : start[i], lower[i], upper[i]);
  }
  double scale = 1.0;
  for (double v : linear) scale = std::max(scale, 1.0 + std::abs(v));

  std::vector<double> gradient(un), trial(un);
  std::vector<Index> free_set;
  for (result.iterations = 0; result.iterations < options.max_iterations; ++result.iterations) {
    for (Index i = 0; i < n; ++i) {
      double g = -linear[static_cast<std::size_t>(i)];
      for (Index j = 0; j < n; ++j) g += h(i, j) * result.x[static_cast<std::size_t>(j)];
      gradient[static_cast<std::size_t>(i)] = g;
    }
    // The variables a bound holds: within ε of it with the gradient pushing outwards, where
    // ε = min(‖x − P(x − ∇)‖∞, 1e-3·the box's width) — Bertsekas' ε-binding set, which lets a
    // variable about to reach its bound stop there instead of forcing tiny steps on the rest.
    result.projected_gradient = 0.0;
    for (std::size_t i = 0; i < un; ++i) {
      const double projected = std::clamp(result.x[i] - gradient[i], lower[i], upper[i]) - result.x[i];
      result.projected_gradient = std::max(result.projected_gradient, std::abs(projected));
    }
    if (result.projected_gradient <= options.tolerance * scale) {
      result.converged = true;
      break;
    }
    free_set.clear();
    for (std::size_t i = 0; i < un; ++i) {
      const double epsilon = std::min(result.projected_gradient, 1e-3 * (upper[i] - lower[i]));
      const bool held = (result.x[i] <= lower[i] + epsilon && gradient[i] > 0.0) ||
                        (result.x[i] >= upper[i] - epsilon && gradient[i] < 0.0);
      if (!held) free_set.push_back(static_cast<Index>(i));
    }
    // Newton step on the free variables.
    const auto m = static_cast<Index>(free_set.size());
    linalg::DenseMatrix reduced(m, m);
    std::vector<double> step(free_set.size());
    for (Index a = 0; a < m; ++a) {
      step[static_cast<std::size_t>(a)] = -gradient[static_cast<std::size_t>(free_set[static_cast<std::size_t>(a)])];
      for (Index b = 0; b < m; ++b) {
        reduced(a, b) = h(free_set[static_cast<std::size_t>(a)], free_set[static_cast<std::size_t>(b)]);
      }
      reduced(a, a) += damping;
    }
    if (m > 0) {
      if (linalg::blas::potrf(reduced.view()) != 0) break;  // not positive definite: leave unconverged
      linalg::blas::potrs(reduced.view(), linalg::DenseView{step.data(), m, 1, m});
    }
    // Armijo search along the projection arc.
    const double current = objective(h, linear, result.x);
    double alpha = 1.0;
    for (int halving = 0; halving < 60; ++halving, alpha *= 0.5) {
      // Held variables follow the gradient onto their bound, free ones the Newton step.
      for (std::size_t i = 0; i < un; ++i) trial[i] = std::clamp(result.x[i] - alpha * gradient[i], lower[i], upper[i]);
      for (Index a = 0; a < m; ++a) {
        const auto i = static_cast<std::size_t>(free_set[static_cast<std::size_t>(a)]);
        trial[i] = std::clamp(result.x[i] + alpha * step[static_cast<std::size_t>(a)], lower[i], upper[i]);
      }
      double decrease = 0.0;
      for (std::size_t i = 0; i < un; ++i) decrease += gradient[i] * (trial[i] - result.x[i]);
      if (objective(h, linear, trial) <= current + 1e-4 * decrease) break;
    }
    if (trial == result.x) {  // no progress possible: the iterate is optimal to round-off
      result.converged = true;
      break;
    }
    result.x.swap(trial);
  }
  return result;
}

}  // namespace cholsim::solvers::qp
