#include "solvers/qp/augmented_lagrangian.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/blas.hpp"
#include "linalg/dense_matrix.hpp"
#include "linalg/vector_norms.hpp"
#include "solvers/qp/changing_columns_factor.hpp"

namespace cholsim::solvers::qp {
namespace {

using linalg::CscMatrix;
using linalg::Offset;

/// The rows of E and then of C as the columns of one n × (p + q) matrix.
CscMatrix stacked_rows(const QpProblem& problem) {
  const Index n = problem.variable_count();
  CscMatrix rows;
  rows.rows = n;
  rows.cols = problem.equality_count() + problem.inequality_count();
  for (const CscMatrix& part : {constraint_rows(problem.equality, n), constraint_rows(problem.inequality, n)}) {
    const Offset base = rows.col_ptr.back();
    for (Index r = 0; r < part.cols; ++r) rows.col_ptr.push_back(base + part.col_ptr[static_cast<std::size_t>(r) + 1]);
    rows.row_idx.insert(rows.row_idx.end(), part.row_idx.begin(), part.row_idx.end());
    rows.values.insert(rows.values.end(), part.values.begin(), part.values.end());
  }
  return rows;
}

/// H's lower triangle with every diagonal entry stored (zeros inserted where H has none), and
/// the position of each column's diagonal entry.
linalg::SymmetricCscMatrix with_stored_diagonal(const linalg::SymmetricCscMatrix& h, std::vector<Offset>& diagonal) {
  const CscMatrix& lower = h.lower;
  const Index n = lower.cols;
  linalg::SymmetricCscMatrix result;
  CscMatrix& out = result.lower;
  out.rows = out.cols = n;
  out.col_ptr.assign(1, 0);
  out.row_idx.reserve(lower.row_idx.size() + static_cast<std::size_t>(n));
  out.values.reserve(out.row_idx.capacity());
  diagonal.assign(static_cast<std::size_t>(n), 0);
  for (Index j = 0; j < n; ++j) {
    const auto begin = static_cast<std::size_t>(lower.col_ptr[static_cast<std::size_t>(j)]);
    const auto end = static_cast<std::size_t>(lower.col_ptr[static_cast<std::size_t>(j) + 1]);
    diagonal[static_cast<std::size_t>(j)] = static_cast<Offset>(out.row_idx.size());
    if (begin == end || lower.row_idx[begin] != j) {  // rows are sorted: the diagonal comes first
      out.row_idx.push_back(j);
      out.values.push_back(0.0);
    }
    out.row_idx.insert(out.row_idx.end(), lower.row_idx.begin() + static_cast<std::ptrdiff_t>(begin),
                       lower.row_idx.begin() + static_cast<std::ptrdiff_t>(end));
    out.values.insert(out.values.end(), lower.values.begin() + static_cast<std::ptrdiff_t>(begin),
                      lower.values.begin() + static_cast<std::ptrdiff_t>(end));
    out.col_ptr.push_back(static_cast<Offset>(out.row_idx.size()));
  }
  return result;
}

/// ρ grows by this factor when a Newton matrix is numerically not positive definite.
constexpr double kProximalGrowth = 100.0;
constexpr int kProximalRetries = 3;
/// A row whose violation did not fall below this fraction of the last one gets a larger penalty.
constexpr double kViolationDecrease = 0.25;
constexpr double kPenaltyGrowth = 10.0;

class ProximalAugmentedLagrangian {
 public:
  ProximalAugmentedLagrangian(const QpProblem& problem, const AugmentedLagrangianOptions& options,
                              std::shared_ptr<const factor::Symbolic>& analysis, PrimalDualActiveSetSolver& polisher,
                              AugmentedLagrangianStats& stats)
      : problem_(problem),
        options_(options),
        analysis_(analysis),
        polisher_(polisher),
        stats_(stats),
        n_(problem.variable_count()),
        equalities_(problem.equality_count()),
        rows_(stacked_rows(problem)),
        matrix_(with_stored_diagonal(problem.hessian, diagonal_position_)),
        factor_(analysis, options.ordering, options.threads) {
    hessian_diagonal_.resize(static_cast<std::size_t>(n_));
    double sum = 0.0;
    Index positive = 0;
    for (Index j = 0; j < n_; ++j) {
      const double value = matrix_.lower.values[static_cast<std::size_t>(diagonal_position_[static_cast<std::size_t>(j)])];
      hessian_diagonal_[static_cast<std::size_t>(j)] = value;
      if (value > 0.0) {
        sum += value;
        ++positive;
      }
    }
    const double mean = positive > 0 ? sum / positive : 1.0;
    proximal_.resize(static_cast<std::size_t>(n_));
    for (Index j = 0; j < n_; ++j) {
      proximal_[static_cast<std::size_t>(j)] = options.proximal_weight * std::max(hessian_diagonal_[static_cast<std::size_t>(j)], mean);
    }
    set_up_rows(mean);
  }

  QpSolution run(std::span<const double> start) {
    std::vector<double> x(static_cast<std::size_t>(n_), 0.0);
    if (!start.empty()) std::copy(start.begin(), start.end(), x.begin());
    centre_ = x;
    const double inner_tolerance = 0.1 * options_.tolerance * (1.0 + linalg::max_abs(problem_.linear));
    std::vector<double> last_violation(multipliers_.size(), std::numeric_limits<double>::infinity());
    double polish_below = options_.polish_iterations > 0 ? options_.polish_threshold : 0.0;
    std::optional<QpSolution> best;
    double best_residual = std::numeric_limits<double>::infinity();
    QpSolution solution;
    std::string message;
    while (true) {
      if (!minimize_inner(x, inner_tolerance, message)) break;
      ++stats_.outer_iterations;
      multipliers_ = updated_multipliers_;
      solution = candidate(x);
      const double residual = kkt_residuals(problem_, solution).worst();
      if (residual <= options_.tolerance) {
        solution.status = QpStatus::optimal;
        return solution;
      }
      if (residual <= polish_below) {
        polish_below = 1e-2 * residual;
        if (std::optional<QpSolution> polished = polish(solution); polished.has_value()) return std::move(*polished);
      }
      if (residual < best_residual && residual <= options_.acceptable_tolerance) {
        best = solution;
        best_residual = residual;
      }
      if (out_of_iterations()) {
        message = "the worst scaled KKT residual is still " + scientific(residual) + " after " +
                  std::to_string(stats_.newton_steps) + " Newton steps and " +
                  std::to_string(stats_.outer_iterations) + " multiplier updates";
        break;
      }
      raise_penalties(x, last_violation);
      centre_ = x;
    }
    if (best.has_value()) {
      solution = std::move(*best);
      solution.status = QpStatus::optimal;
      solution.message = "accepted at a worst scaled KKT residual of " + scientific(best_residual) + " (" + message + ")";
      return solution;
    }
    solution = candidate(x);
    solution.status = out_of_iterations() ? QpStatus::iteration_limit : QpStatus::numerical_failure;
    solution.message = message;
    return solution;
  }

 private:
  [[nodiscard]] bool out_of_iterations() const {
    return stats_.newton_steps >= options_.max_newton_steps || stats_.outer_iterations >= options_.max_outer_iterations;
  }
  [[nodiscard]] bool is_equality(Index r) const { return r < equalities_; }
  [[nodiscard]] Index row_count() const { return rows_.cols; }
  [[nodiscard]] std::size_t begin_of(Index r) const { return static_cast<std::size_t>(rows_.col_ptr[static_cast<std::size_t>(r)]); }
  [[nodiscard]] std::size_t end_of(Index r) const { return static_cast<std::size_t>(rows_.col_ptr[static_cast<std::size_t>(r) + 1]); }
  [[nodiscard]] double rhs(Index r) const {
    return is_equality(r) ? problem_.equality_rhs[static_cast<std::size_t>(r)]
                          : problem_.inequality_rhs[static_cast<std::size_t>(r - equalities_)];
  }

  /// Penalties: σᵣ‖Aᵣ‖² = initial_penalty × the mean of H's diagonal over the row's columns.
  void set_up_rows(double mean_diagonal) {
    const Index rows = row_count();
    penalty_.assign(static_cast<std::size_t>(rows), 0.0);
    max_penalty_.assign(static_cast<std::size_t>(rows), 0.0);
    single_column_.assign(static_cast<std::size_t>(rows), -1);
    multipliers_.assign(static_cast<std::size_t>(rows), 0.0);
    for (Index r = 0; r < rows; ++r) {
      double squares = 0.0, diagonal = 0.0;
      for (std::size_t k = begin_of(r); k < end_of(r); ++k) {
        squares += rows_.values[k] * rows_.values[k];
        diagonal += std::max(hessian_diagonal_[static_cast<std::size_t>(rows_.row_idx[k])], mean_diagonal * 1e-6);
      }
      if (squares == 0.0) continue;  // 0 ≥ a or 0 = a: left to the KKT check
      const auto entries = static_cast<double>(end_of(r) - begin_of(r));
      penalty_[static_cast<std::size_t>(r)] = options_.initial_penalty * (diagonal / entries) / squares;
      max_penalty_[static_cast<std::size_t>(r)] = options_.max_penalty_growth * penalty_[static_cast<std::size_t>(r)];
      if (end_of(r) - begin_of(r) == 1) single_column_[static_cast<std::size_t>(r)] = rows_.row_idx[begin_of(r)];
    }
  }

  /// g = Ax − a, the multipliers λ − σg (inequalities: their positive part), the rows held
  /// (J) and ∇φ at x.
  void evaluate(std::span<const double> x) {
    const Index rows = row_count();
    residual_.resize(static_cast<std::size_t>(rows));
    updated_multipliers_.resize(static_cast<std::size_t>(rows));
    held_.assign(static_cast<std::size_t>(rows), 0);
    gradient_.resize(static_cast<std::size_t>(n_));
    linalg::symmetric_multiply(problem_.hessian, x, gradient_);
    for (Index j = 0; j < n_; ++j) {
      const auto u = static_cast<std::size_t>(j);
      gradient_[u] += proximal_[u] * (x[u] - centre_[u]) - problem_.linear[u];
    }
    for (Index r = 0; r < rows; ++r) {
      const auto u = static_cast<std::size_t>(r);
      double g = -rhs(r);
      for (std::size_t k = begin_of(r); k < end_of(r); ++k) g += rows_.values[k] * x[static_cast<std::size_t>(rows_.row_idx[k])];
      residual_[u] = g;
      const double shifted = multipliers_[u] - penalty_[u] * g;
      held_[u] = penalty_[u] > 0.0 && (is_equality(r) || shifted > 0.0);
      updated_multipliers_[u] = is_equality(r) ? shifted : std::max(0.0, shifted);
      if (updated_multipliers_[u] == 0.0) continue;
      for (std::size_t k = begin_of(r); k < end_of(r); ++k) {
        gradient_[static_cast<std::size_t>(rows_.row_idx[k])] -= rows_.values[k] * updated_multipliers_[u];
      }
    }
  }

  /// Newton steps with exact line searches until ‖∇φ‖∞ ≤ tolerance or a full step leaves the
  /// held rows as they were (φ's quadratic piece minimized, up to rounding).
  bool minimize_inner(std::vector<double>& x, double tolerance, std::string& message) {
    std::vector<char> last_held;
    bool full_step = false;
    while (true) {
      evaluate(x);
      if (linalg::max_abs(gradient_) <= tolerance || (full_step && held_ == last_held)) return true;
      if (stats_.newton_steps >= options_.max_newton_steps) return true;  // run() reports it
      ++stats_.newton_steps;
      if (!factor_held_rows(message)) return false;
      const auto start = Clock::now();
      std::vector<double> direction;
      if (!newton_direction(direction, message)) return false;
      const double step = exact_line_search(direction);
      stats_.solve_seconds += seconds_since(start);
      if (!(step > 0.0)) return true;  // no descent left: converged to rounding
      for (Index j = 0; j < n_; ++j) x[static_cast<std::size_t>(j)] += step * direction[static_cast<std::size_t>(j)];
      full_step = step == 1.0;
      last_held = held_;
    }
  }

  /// Sets the Newton matrix's diagonal for the held rows and refactorizes the columns whose
  /// diagonal changed (all of them the first time, or after a failure).
  bool factor_held_rows(std::string& message) {
    for (int attempt = 0; attempt <= kProximalRetries; ++attempt) {
      const FactorWork work = factor_.update(matrix_, set_diagonal());
      stats_.analyze_seconds += work.analyze_seconds;
      stats_.factor_seconds += work.factor_seconds;
      stats_.changed_columns += work.changed_columns;
      if (factor_.ok()) return true;
      // Not positive definite in floating point (H semi-definite, ρ too small against its
      // largest entries): a larger proximal term, every column changed.
      for (double& rho : proximal_) rho *= kProximalGrowth;
    }
    message = "the Newton matrix is not positive definite (" + factor_.factor().status().message + ")";
    return false;
  }

  /// The diagonal H + ρ + Σ σᵣAᵣⱼ² over the held rows of one column; returns the columns whose
  /// value changed.
  std::vector<Index> set_diagonal() {
    std::vector<double> diagonal(hessian_diagonal_);
    for (Index j = 0; j < n_; ++j) diagonal[static_cast<std::size_t>(j)] += proximal_[static_cast<std::size_t>(j)];
    for (Index r = 0; r < row_count(); ++r) {
      const Index column = single_column_[static_cast<std::size_t>(r)];
      if (column < 0 || !held_[static_cast<std::size_t>(r)]) continue;
      const double a = rows_.values[begin_of(r)];
      diagonal[static_cast<std::size_t>(column)] += penalty_[static_cast<std::size_t>(r)] * a * a;
    }
    std::vector<Index> changed;
    for (Index j = 0; j < n_; ++j) {
      double& value = matrix_.lower.values[static_cast<std::size_t>(diagonal_position_[static_cast<std::size_t>(j)])];
      if (value == diagonal[static_cast<std::size_t>(j)]) continue;
      value = diagonal[static_cast<std::size_t>(j)];
      changed.push_back(j);
    }
    return changed;
  }

  /// d = −(M + UΣUᵀ)⁻¹∇φ: M the sparse matrix (H, ρ, the held one-column rows), U the held rows
  /// of several columns, through the Woodbury identity.
  bool newton_direction(std::vector<double>& direction, std::string& message) {
    std::vector<Index> general;
    for (Index r = 0; r < row_count(); ++r) {
      if (held_[static_cast<std::size_t>(r)] && single_column_[static_cast<std::size_t>(r)] < 0) general.push_back(r);
    }
    const auto g = static_cast<Index>(general.size());
    linalg::DenseMatrix columns(n_, 1 + g);
    for (Index j = 0; j < n_; ++j) columns(j, 0) = -gradient_[static_cast<std::size_t>(j)];
    for (Index a = 0; a < g; ++a) {
      const Index r = general[static_cast<std::size_t>(a)];
      for (std::size_t k = begin_of(r); k < end_of(r); ++k) columns(rows_.row_idx[k], 1 + a) = rows_.values[k];
    }
    factor_.factor().solve(columns.view());
    direction.assign(static_cast<std::size_t>(n_), 0.0);
    for (Index j = 0; j < n_; ++j) direction[static_cast<std::size_t>(j)] = columns(j, 0);
    if (g == 0) return true;
    // (Σ⁻¹ + UᵀM⁻¹U)·w = UᵀM⁻¹v, then d = M⁻¹v − M⁻¹U·w.
    linalg::DenseMatrix capacitance(g, g);
    linalg::DenseMatrix weights(g, 1);
    for (Index a = 0; a < g; ++a) {
      const Index r = general[static_cast<std::size_t>(a)];
      for (std::size_t k = begin_of(r); k < end_of(r); ++k) {
        const Index j = rows_.row_idx[k];
        weights(a, 0) += rows_.values[k] * columns(j, 0);
        for (Index b = 0; b <= a; ++b) capacitance(a, b) += rows_.values[k] * columns(j, 1 + b);
      }
      capacitance(a, a) += 1.0 / penalty_[static_cast<std::size_t>(r)];
    }
    if (linalg::blas::potrf(capacitance.view()) != 0) {
      message = "the Woodbury capacitance matrix of " + std::to_string(g) + " rows is not positive definite";
      return false;
    }
    linalg::blas::potrs(capacitance.view(), weights.view());
    for (Index j = 0; j < n_; ++j) {
      double value = 0.0;
      for (Index a = 0; a < g; ++a) value += columns(j, 1 + a) * weights(a, 0);
      direction[static_cast<std::size_t>(j)] -= value;
    }
    return true;
  }

  /// The t ≥ 0 minimizing φ(x + t·d): φ's derivative along d is piecewise linear and
  /// nondecreasing, its slope changing where an inequality row enters or leaves J.
  double exact_line_search(std::span<const double> direction) {
    std::vector<double> hd(static_cast<std::size_t>(n_));
    linalg::symmetric_multiply(problem_.hessian, direction, hd);
    double slope = 0.0, derivative = 0.0;
    for (Index j = 0; j < n_; ++j) {
      const auto u = static_cast<std::size_t>(j);
      slope += direction[u] * (hd[u] + proximal_[u] * direction[u]);
      derivative += direction[u] * gradient_[u];
    }
    if (!(derivative < 0.0)) return 0.0;
    std::vector<std::pair<double, double>> events;  // (t, change of slope)
    for (Index r = 0; r < row_count(); ++r) {
      const auto u = static_cast<std::size_t>(r);
      if (penalty_[u] == 0.0) continue;
      double alpha = 0.0;
      for (std::size_t k = begin_of(r); k < end_of(r); ++k) alpha += rows_.values[k] * direction[static_cast<std::size_t>(rows_.row_idx[k])];
      const double curvature = penalty_[u] * alpha * alpha;
      if (is_equality(r)) {
        slope += curvature;
        continue;
      }
      if (alpha == 0.0) continue;
      // Held while λ − σ(g + tα) > 0: until t = (λ − σg)/(σα) for α > 0, from then on for α < 0.
      const double crossing = (multipliers_[u] - penalty_[u] * residual_[u]) / (penalty_[u] * alpha);
      if (held_[u]) {
        slope += curvature;
        if (alpha > 0.0) events.emplace_back(crossing, -curvature);
      } else if (alpha < 0.0) {
        events.emplace_back(std::max(crossing, 0.0), curvature);
      }
    }
    std::sort(events.begin(), events.end());
    double t = 0.0;
    for (const auto& [at, change] : events) {
      const double value = derivative + slope * (at - t);
      if (value >= 0.0) break;
      derivative = value;
      t = at;
      slope += change;
    }
    return slope > 0.0 ? t - derivative / slope : t;
  }

  /// The active set method from the inequality rows with a positive multiplier: its answer if
  /// it settles within polish_iterations guesses.
  std::optional<QpSolution> polish(const QpSolution& candidate) {
    std::vector<char> active(candidate.inequality_multipliers.size());
    for (std::size_t i = 0; i < active.size(); ++i) active[i] = candidate.inequality_multipliers[i] > 0.0;
    polisher_.set_max_iterations(options_.polish_iterations);
    polisher_.use_analysis(analysis_);  // H's pattern, as the Newton matrix's: analyzed once
    PrimalDualActiveSetStats figures;
    QpSolution polished = polisher_.solve(problem_, active, &figures);
    ++stats_.polish_attempts;
    stats_.polish_iterations += figures.iterations;
    stats_.factor_seconds += figures.factor_seconds;
    stats_.solve_seconds += figures.solve_seconds;
    stats_.analyze_seconds += figures.analyze_seconds;
    if (polished.status != QpStatus::optimal || !polished.message.empty()) return std::nullopt;
    stats_.polished = true;
    polished.iterations = stats_.newton_steps + stats_.polish_iterations;
    return polished;
  }

  /// Penalties of the rows whose violation did not fall to a quarter of the last one's grow,
  /// unless it is already within the tolerance (a larger penalty there only makes the next
  /// line searches stop at every row that re-enters J).
  void raise_penalties(std::span<const double> x, std::vector<double>& last_violation) {
    for (Index r = 0; r < row_count(); ++r) {
      const auto u = static_cast<std::size_t>(r);
      if (penalty_[u] == 0.0) continue;
      const double violation = is_equality(r) ? std::abs(residual_[u])
                                              : std::abs(std::min(residual_[u], multipliers_[u] / penalty_[u]));
      double size = 1.0 + std::abs(rhs(r));
      for (std::size_t k = begin_of(r); k < end_of(r); ++k) size += std::abs(rows_.values[k] * x[static_cast<std::size_t>(rows_.row_idx[k])]);
      if (violation > kViolationDecrease * last_violation[u] && violation > options_.tolerance * size) {
        penalty_[u] = std::min(kPenaltyGrowth * penalty_[u], max_penalty_[u]);
      }
      last_violation[u] = violation;
    }
  }

  [[nodiscard]] QpSolution candidate(std::span<const double> x) const {
    QpSolution solution;
    solution.x.assign(x.begin(), x.end());
    solution.equality_multipliers.assign(multipliers_.begin(), multipliers_.begin() + equalities_);
    solution.inequality_multipliers.assign(multipliers_.begin() + equalities_, multipliers_.end());
    solution.iterations = stats_.newton_steps;
    return solution;
  }

  const QpProblem& problem_;
  const AugmentedLagrangianOptions& options_;
  std::shared_ptr<const factor::Symbolic>& analysis_;  ///< the caller's, reused or replaced
  PrimalDualActiveSetSolver& polisher_;
  AugmentedLagrangianStats& stats_;
  Index n_;
  Index equalities_;
  CscMatrix rows_;                        ///< column r: equality row r, then inequality row r − p
  std::vector<Offset> diagonal_position_;  ///< per column: its diagonal entry in matrix_
  linalg::SymmetricCscMatrix matrix_;     ///< the Newton matrix without the rows of several columns
  std::vector<double> hessian_diagonal_;
  std::vector<double> proximal_;  ///< ρ
  std::vector<double> centre_;    ///< x̂
  std::vector<double> penalty_;   ///< σ per row; 0 for an empty row
  std::vector<double> max_penalty_;
  std::vector<Index> single_column_;  ///< per row: its one column, −1 for a row of several
  std::vector<double> multipliers_;   ///< λ: y, then z
  // At the last evaluate():
  std::vector<double> residual_;             ///< g = Ax − a
  std::vector<double> updated_multipliers_;  ///< λ − σg (inequalities: the positive part)
  std::vector<char> held_;                   ///< J
  std::vector<double> gradient_;             ///< ∇φ
  ChangingColumnsFactor factor_;  ///< of matrix_
};

}  // namespace

AugmentedLagrangianSolver::AugmentedLagrangianSolver(AugmentedLagrangianOptions options)
    : options_(options),
      polisher_({.max_iterations = options.polish_iterations, .threads = options.threads, .ordering = options.ordering}) {}

QpSolution AugmentedLagrangianSolver::solve(const QpProblem& problem, std::span<const double> start,
                                            AugmentedLagrangianStats* stats) {
  check_problem(problem);
  if (!start.empty() && static_cast<Index>(start.size()) != problem.variable_count()) {
    throw std::invalid_argument("solve_augmented_lagrangian: the start has " + std::to_string(start.size()) +
                                " entries for " + std::to_string(problem.variable_count()) + " unknowns (or none)");
  }
  const auto begin = Clock::now();
  AugmentedLagrangianStats local;
  AugmentedLagrangianStats& figures = stats != nullptr ? *stats : local;
  figures = {};
  ProximalAugmentedLagrangian method(problem, options_, analysis_, polisher_, figures);
  QpSolution solution = method.run(start);
  figures.active.assign(solution.inequality_multipliers.size(), 0);
  for (std::size_t i = 0; i < figures.active.size(); ++i) figures.active[i] = solution.inequality_multipliers[i] > 0.0;
  figures.total_seconds = seconds_since(begin);
  return solution;
}

QpSolution solve_augmented_lagrangian(const QpProblem& problem, const AugmentedLagrangianOptions& options,
                                      std::span<const double> start, AugmentedLagrangianStats* stats) {
  return AugmentedLagrangianSolver(options).solve(problem, start, stats);
}

}  // namespace cholsim::solvers::qp
