#include "solvers/qp/primal_dual_active_set.hpp"

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

/// A row held as an equality through its multiplier (not by fixing a column).
struct GeneralRow {
  bool equality = false;
  Index row = 0;  ///< in E or in C
};

/// δ relative to H's largest entry, and the refinement steps that remove it.
constexpr double kRegularization = 1e-10;
constexpr int kRefinementSteps = 10;

class PrimalDualActiveSet {
 public:
  PrimalDualActiveSet(const QpProblem& problem, const PrimalDualActiveSetOptions& options,
                      std::shared_ptr<const factor::Symbolic>& analysis, PrimalDualActiveSetStats& stats)
      : problem_(problem),
        options_(options),
        stats_(stats),
        n_(problem.variable_count()),
        inequality_rows_(constraint_rows(problem.inequality, n_)),
        equality_rows_(constraint_rows(problem.equality, n_)),
        matrix_(problem.hessian),
        factor_(analysis, options.ordering, options.threads),
        fixing_row_(static_cast<std::size_t>(n_), -1) {
    const Index q = problem.inequality_count();
    bound_column_.assign(static_cast<std::size_t>(q), -1);
    for (Index i = 0; i < q; ++i) {
      const auto begin = inequality_rows_.col_ptr[static_cast<std::size_t>(i)];
      if (inequality_rows_.col_ptr[static_cast<std::size_t>(i) + 1] - begin == 1 &&
          inequality_rows_.values[static_cast<std::size_t>(begin)] != 0.0) {
        bound_column_[static_cast<std::size_t>(i)] = inequality_rows_.row_idx[static_cast<std::size_t>(begin)];
      }
    }
    const auto& lower = problem.hessian.lower;
    identity_scale_.assign(static_cast<std::size_t>(n_), 1.0);
    for (Index j = 0; j < n_; ++j) {
      for (auto k = lower.col_ptr[static_cast<std::size_t>(j)]; k < lower.col_ptr[static_cast<std::size_t>(j) + 1]; ++k) {
        if (lower.row_idx[static_cast<std::size_t>(k)] == j && lower.values[static_cast<std::size_t>(k)] > 0.0) {
          identity_scale_[static_cast<std::size_t>(j)] = lower.values[static_cast<std::size_t>(k)];
        }
      }
    }
  }

  /// Solves the QP with the rows flagged in `active` held; false (and `message`) when the
  /// guess' linear algebra fails.
  bool solve_guess(const std::vector<char>& active, QpSolution& solution, std::string& message) {
    const std::vector<Index> changed = hold(active);
    if (!factor(changed, message)) return false;
    const auto start = Clock::now();
    solve_held(solution);
    stats_.solve_seconds += seconds_since(start);
    return true;
  }

  /// The infeasibilities of a solution of guess `active`: a held row with a negative
  /// multiplier, a violated row outside W; one flag per row in `switches`, their number
  /// returned. Rows in W the last solve could not hold (dependent, or a looser bound on a fixed
  /// column) stay in W while violated and leave it when satisfied — bookkeeping that changes
  /// no solution.
  Index find_switches(std::vector<char>& active, const QpSolution& solution, std::vector<char>& switches) const {
    std::vector<double> cx(static_cast<std::size_t>(problem_.inequality_count()));
    constraint_multiply(problem_.inequality, solution.x, cx);
    switches.assign(cx.size(), 0);
    Index infeasible = 0;
    for (std::size_t i = 0; i < cx.size(); ++i) {
      if (held_[i]) {
        switches[i] = solution.inequality_multipliers[i] < 0.0;
      } else {
        const bool violated =
            cx[i] - problem_.inequality_rhs[i] < -options_.feasibility_tolerance * feasibility_scale(i, solution.x);
        if (active[i]) {
          active[i] = violated ? 1 : 0;
          continue;
        }
        switches[i] = violated;
      }
      infeasible += switches[i];
    }
    return infeasible;
  }

 private:
  /// 1 + |cᵢ| + Σⱼ|Cᵢⱼxⱼ|: the size of row i's terms.
  [[nodiscard]] double feasibility_scale(std::size_t i, std::span<const double> x) const {
    double scale = 1.0 + std::abs(problem_.inequality_rhs[i]);
    for (auto k = inequality_rows_.col_ptr[i]; k < inequality_rows_.col_ptr[i + 1]; ++k) {
      scale += std::abs(inequality_rows_.values[static_cast<std::size_t>(k)] *
                        x[static_cast<std::size_t>(inequality_rows_.row_idx[static_cast<std::size_t>(k)])]);
    }
    return scale;
  }

  [[nodiscard]] double bound_value(Index row) const {
    const auto k = static_cast<std::size_t>(inequality_rows_.col_ptr[static_cast<std::size_t>(row)]);
    return problem_.inequality_rhs[static_cast<std::size_t>(row)] / inequality_rows_.values[k];
  }

  [[nodiscard]] double bound_coefficient(Index row) const {
    return inequality_rows_.values[static_cast<std::size_t>(inequality_rows_.col_ptr[static_cast<std::size_t>(row)])];
  }

  /// Whether bound row `candidate` is tighter than `current` on their column (same direction).
  [[nodiscard]] bool tighter(Index candidate, Index current) const {
    const double a = bound_coefficient(candidate), b = bound_coefficient(current);
    if ((a > 0.0) != (b > 0.0)) return false;  // a lower and an upper bound: keep the first
    return a > 0.0 ? bound_value(candidate) > bound_value(current) : bound_value(candidate) < bound_value(current);
  }

  /// Sets the fixed columns and general rows of guess `active`; returns the columns whose status
  /// changed (every column for the first guess).
  std::vector<Index> hold(const std::vector<char>& active) {
    const Index q = problem_.inequality_count();
    std::vector<Index> fixing(static_cast<std::size_t>(n_), -1);
    general_.clear();
    for (Index e = 0; e < problem_.equality_count(); ++e) general_.push_back({true, e});
    for (Index i = 0; i < q; ++i) {
      if (!active[static_cast<std::size_t>(i)]) continue;
      const Index column = bound_column_[static_cast<std::size_t>(i)];
      if (column < 0) {
        general_.push_back({false, i});
        continue;
      }
      Index& current = fixing[static_cast<std::size_t>(column)];
      if (current < 0 || tighter(i, current)) current = i;
    }
    held_.assign(static_cast<std::size_t>(q), 0);
    for (const GeneralRow& row : general_) {
      if (!row.equality) held_[static_cast<std::size_t>(row.row)] = 1;
    }
    std::vector<Index> changed;
    for (Index j = 0; j < n_; ++j) {
      const Index row = fixing[static_cast<std::size_t>(j)];
      if (row >= 0) held_[static_cast<std::size_t>(row)] = 1;
      if ((row >= 0) != (fixing_row_[static_cast<std::size_t>(j)] >= 0)) changed.push_back(j);
    }
    fixing_row_ = std::move(fixing);
    return changed;
  }

  /// H with the fixed columns and rows replaced by the scaled identity.
  void assemble() {
    const auto& h = problem_.hessian.lower;
    auto& values = matrix_.lower.values;
    for (Index j = 0; j < n_; ++j) {
      const bool fixed_j = fixing_row_[static_cast<std::size_t>(j)] >= 0;
      for (auto k = h.col_ptr[static_cast<std::size_t>(j)]; k < h.col_ptr[static_cast<std::size_t>(j) + 1]; ++k) {
        const Index i = h.row_idx[static_cast<std::size_t>(k)];
        const bool fixed = fixed_j || fixing_row_[static_cast<std::size_t>(i)] >= 0;
        double value = h.values[static_cast<std::size_t>(k)];
        if (fixed) value = i == j ? identity_scale_[static_cast<std::size_t>(j)] : 0.0;
        if (i == j && !fixed) value += regularization_;
        values[static_cast<std::size_t>(k)] = value;
      }
    }
  }

  bool factor(const std::vector<Index>& changed, std::string& message) {
    assemble();
    count(factor_.update(matrix_, changed));
    stats_.reused_analysis = factor_.reused_analysis();
    if (!factor_.ok() && regularization_ == 0.0) {
      // H semi-definite with its null space on free columns (an EOL vertex's material velocity
      // without inertia): factor H_FF + δI and let iterative refinement remove δ (solve_held),
      // as the interior point method does; the KKT check at the end decides.
      regularization_ = kRegularization * linalg::max_abs(problem_.hessian.lower.values);
      ++stats_.regularized;
      assemble();
      count(factor_.factorize(matrix_));
    }
    if (!factor_.ok()) {
      message = "the QP with the guessed active rows held is not positive definite (" +
                factor_.factor().status().message + ")";
    }
    return factor_.ok();
  }

  void count(const FactorWork& work) {
    stats_.analyze_seconds += work.analyze_seconds;
    stats_.factor_seconds += work.factor_seconds;
    stats_.changed_columns += work.changed_columns;
  }

  /// Solves K_F·X = B in place with the factor of K_F + δI: with δ > 0, refinement steps
  /// X += (K_F + δI)⁻¹(B − K_F·X) (converging where B is in K_F's range, as the QP's are).
  void solve_refined(linalg::DenseMatrix& columns) const {
    if (regularization_ == 0.0) {
      factor_.factor().solve(columns.view());
      return;
    }
    const linalg::DenseMatrix rhs = columns;
    factor_.factor().solve(columns.view());
    const Index count = columns.cols();
    linalg::DenseMatrix residual(n_, count);
    double previous = std::numeric_limits<double>::infinity();
    for (int step = 0; step < kRefinementSteps; ++step) {
      linalg::symmetric_multiply(matrix_, columns.storage(), residual.storage(), count);
      for (Index c = 0; c < count; ++c) {
        for (Index j = 0; j < n_; ++j) {
          const double delta = fixing_row_[static_cast<std::size_t>(j)] >= 0 ? 0.0 : regularization_;
          residual(j, c) = rhs(j, c) - (residual(j, c) - delta * columns(j, c));
        }
      }
      const double size = linalg::max_abs(residual.storage());
      if (!(size < 0.5 * previous)) break;  // stagnating: ill-conditioned, the KKT check decides
      previous = size;
      factor_.factor().solve(residual.view());
      for (std::size_t k = 0; k < columns.storage().size(); ++k) columns.storage()[k] += residual.storage()[k];
    }
  }

  /// Row `row` of the general rows as a sparse row: its entries' columns and values.
  [[nodiscard]] const CscMatrix& rows_of_kind(const GeneralRow& row) const {
    return row.equality ? equality_rows_ : inequality_rows_;
  }
  [[nodiscard]] double rhs_of(const GeneralRow& row) const {
    return row.equality ? problem_.equality_rhs[static_cast<std::size_t>(row.row)]
                        : problem_.inequality_rhs[static_cast<std::size_t>(row.row)];
  }

  void solve_held(QpSolution& solution) {
    const auto g = static_cast<Index>(general_.size());
    // x_fixed, and r = b − H·x_fixed on the free columns, the fixed values (scaled) on the others.
    std::vector<double> fixed_x(static_cast<std::size_t>(n_), 0.0);
    for (Index j = 0; j < n_; ++j) {
      const Index row = fixing_row_[static_cast<std::size_t>(j)];
      if (row >= 0) fixed_x[static_cast<std::size_t>(j)] = bound_value(row);
    }
    std::vector<double> h_fixed(static_cast<std::size_t>(n_));
    linalg::symmetric_multiply(problem_.hessian, fixed_x, h_fixed);
    linalg::DenseMatrix columns(n_, 1 + g);
    for (Index j = 0; j < n_; ++j) {
      const bool fixed = fixing_row_[static_cast<std::size_t>(j)] >= 0;
      columns(j, 0) = fixed ? identity_scale_[static_cast<std::size_t>(j)] * fixed_x[static_cast<std::size_t>(j)]
                            : problem_.linear[static_cast<std::size_t>(j)] - h_fixed[static_cast<std::size_t>(j)];
    }
    for (Index a = 0; a < g; ++a) {
      const CscMatrix& rows = rows_of_kind(general_[static_cast<std::size_t>(a)]);
      const auto r = static_cast<std::size_t>(general_[static_cast<std::size_t>(a)].row);
      for (auto k = rows.col_ptr[r]; k < rows.col_ptr[r + 1]; ++k) {
        const Index j = rows.row_idx[static_cast<std::size_t>(k)];
        if (fixing_row_[static_cast<std::size_t>(j)] < 0) columns(j, 1 + a) = rows.values[static_cast<std::size_t>(k)];
      }
    }
    solve_refined(columns);

    // The multipliers of the general rows: G·z_G = c_G − C_G·x_fixed − C_G·K_F⁻¹r.
    std::vector<double> general_z(static_cast<std::size_t>(g), 0.0);
    if (g > 0) {
      linalg::DenseMatrix gram(g, g);
      for (Index a = 0; a < g; ++a) {
        const CscMatrix& rows = rows_of_kind(general_[static_cast<std::size_t>(a)]);
        const auto r = static_cast<std::size_t>(general_[static_cast<std::size_t>(a)].row);
        double rhs = rhs_of(general_[static_cast<std::size_t>(a)]);
        for (auto k = rows.col_ptr[r]; k < rows.col_ptr[r + 1]; ++k) {
          const Index j = rows.row_idx[static_cast<std::size_t>(k)];
          const double c = rows.values[static_cast<std::size_t>(k)];
          if (fixing_row_[static_cast<std::size_t>(j)] >= 0) {
            rhs -= c * fixed_x[static_cast<std::size_t>(j)];
            continue;
          }
          rhs -= c * columns(j, 0);
          for (Index b = 0; b < g; ++b) gram(a, b) += c * columns(j, 1 + b);
        }
        general_z[static_cast<std::size_t>(a)] = rhs;
      }
      solve_dropping_dependent_rows(gram, general_z);
    }
    solution.x.assign(static_cast<std::size_t>(n_), 0.0);
    for (Index j = 0; j < n_; ++j) {
      double value = columns(j, 0);
      for (Index a = 0; a < g; ++a) value += columns(j, 1 + a) * general_z[static_cast<std::size_t>(a)];
      solution.x[static_cast<std::size_t>(j)] = value;
    }
    recover_multipliers(general_z, solution);
  }

  /// Solves G·z = rhs (rhs in z) by a Cholesky factorization that drops the rows whose pivot
  /// falls below kDependentPivot of their diagonal — rows dependent on the ones before them
  /// on the free columns (a row whose columns are all fixed, area rows of one vertex guessed
  /// together): they are not held, z = 0, and the update judges them by feasibility.
  void solve_dropping_dependent_rows(linalg::DenseMatrix& gram, std::vector<double>& z) {
    constexpr double kDependentPivot = 1e-10;
    const Index g = gram.rows();
    std::vector<char> kept(static_cast<std::size_t>(g), 1);
    for (Index k = 0; k < g; ++k) {
      const double diagonal = gram(k, k);
      double pivot = diagonal;
      for (Index m = 0; m < k; ++m) pivot -= gram(k, m) * gram(k, m);
      if (!(pivot > kDependentPivot * diagonal) || !(diagonal > 0.0)) {
        kept[static_cast<std::size_t>(k)] = 0;
        for (Index i = k; i < g; ++i) gram(i, k) = 0.0;
        const GeneralRow& row = general_[static_cast<std::size_t>(k)];
        if (!row.equality) held_[static_cast<std::size_t>(row.row)] = 0;
        continue;
      }
      gram(k, k) = std::sqrt(pivot);
      for (Index i = k + 1; i < g; ++i) {
        double value = gram(i, k);
        for (Index m = 0; m < k; ++m) value -= gram(i, m) * gram(k, m);
        gram(i, k) = value / gram(k, k);
      }
    }
    for (Index k = 0; k < g; ++k) {  // L·w = rhs, then Lᵀ·z = w, over the kept rows
      if (!kept[static_cast<std::size_t>(k)]) continue;
      double value = z[static_cast<std::size_t>(k)];
      for (Index m = 0; m < k; ++m) value -= gram(k, m) * z[static_cast<std::size_t>(m)];
      z[static_cast<std::size_t>(k)] = value / gram(k, k);
    }
    for (Index k = g - 1; k >= 0; --k) {
      if (!kept[static_cast<std::size_t>(k)]) {
        z[static_cast<std::size_t>(k)] = 0.0;
        continue;
      }
      double value = z[static_cast<std::size_t>(k)];
      for (Index i = k + 1; i < g; ++i) value -= gram(i, k) * z[static_cast<std::size_t>(i)];
      z[static_cast<std::size_t>(k)] = value / gram(k, k);
    }
  }

  /// y and z: the general rows' from G, each fixing row's from stationarity on its column,
  /// (Hx − b − Eᵀy − C_Gᵀz_G)_j = Cᵢⱼ·zᵢ; zero for the rows not held.
  void recover_multipliers(std::span<const double> general_z, QpSolution& solution) const {
    solution.equality_multipliers.assign(static_cast<std::size_t>(problem_.equality_count()), 0.0);
    solution.inequality_multipliers.assign(static_cast<std::size_t>(problem_.inequality_count()), 0.0);
    std::vector<double> gradient(static_cast<std::size_t>(n_));
    linalg::symmetric_multiply(problem_.hessian, solution.x, gradient);
    for (Index j = 0; j < n_; ++j) gradient[static_cast<std::size_t>(j)] -= problem_.linear[static_cast<std::size_t>(j)];
    for (std::size_t a = 0; a < general_.size(); ++a) {
      const GeneralRow& row = general_[a];
      (row.equality ? solution.equality_multipliers : solution.inequality_multipliers)[static_cast<std::size_t>(row.row)] =
          general_z[a];
      const CscMatrix& rows = rows_of_kind(row);
      const auto r = static_cast<std::size_t>(row.row);
      for (auto k = rows.col_ptr[r]; k < rows.col_ptr[r + 1]; ++k) {
        gradient[static_cast<std::size_t>(rows.row_idx[static_cast<std::size_t>(k)])] -=
            rows.values[static_cast<std::size_t>(k)] * general_z[a];
      }
    }
    for (Index j = 0; j < n_; ++j) {
      const Index row = fixing_row_[static_cast<std::size_t>(j)];
      if (row >= 0) {
        solution.inequality_multipliers[static_cast<std::size_t>(row)] =
            gradient[static_cast<std::size_t>(j)] / bound_coefficient(row);
      }
    }
  }

  const QpProblem& problem_;
  const PrimalDualActiveSetOptions& options_;
  PrimalDualActiveSetStats& stats_;
  Index n_;
  CscMatrix inequality_rows_;  ///< Cᵀ: column i is inequality row i
  CscMatrix equality_rows_;    ///< Eᵀ
  std::vector<Index> bound_column_;     ///< per inequality row: its one column, −1 for a general row
  std::vector<double> identity_scale_;  ///< H_jj (1 where H_jj ≤ 0): a fixed column's diagonal
  linalg::SymmetricCscMatrix matrix_;   ///< H with the fixed columns replaced, H's pattern
  ChangingColumnsFactor factor_;  ///< of matrix_
  std::vector<Index> fixing_row_;  ///< per column: the bound row fixing it, −1 if free
  std::vector<GeneralRow> general_;
  std::vector<char> held_;  ///< per inequality row: held as an equality by the current guess
  double regularization_ = 0.0;  ///< δ on the free columns' diagonal, once a guess needed it
};

// The safeguard of block principal pivoting (Júdice & Pires, Comput. Oper. Res. 21(5), 1994):
// every infeasibility switches until their number stops falling below its least so far (and
// stall_iterations guesses more); then only the ones of the largest row indices switch, half as
// many each time, down to one — Murty's single-index rule, which ends for a positive definite
// H, where the full switch alone cycles on contact QPs. A new least doubles the limit rather
// than lifting it: once a QP has shown it is no M-matrix, the full switch mostly sends the
// count back up (EDGE cloth: 14 → 8 fallbacks over four meshes).
class BlockPivotingSafeguard {
 public:
  BlockPivotingSafeguard(std::size_t rows, int stall_iterations)
      : limit_(rows), rows_(rows), fewest_(rows + 1), stall_iterations_(stall_iterations),
        full_switches_left_(stall_iterations) {}

  /// How many of this guess' `infeasible` rows switch.
  std::size_t limit(std::size_t infeasible) {
    if (infeasible < fewest_) {
      fewest_ = infeasible;
      full_switches_left_ = stall_iterations_;
      limit_ = std::min(rows_, 2 * limit_);
    } else if (full_switches_left_ > 0) {
      --full_switches_left_;
    } else {
      limit_ = std::max<std::size_t>(1, std::min(limit_, infeasible) / 2);
    }
    return limit_;
  }

 private:
  std::size_t limit_, rows_, fewest_;
  int stall_iterations_, full_switches_left_;
};

/// Switches (toggles in `active`) the `limit` flagged rows of the largest indices; returns how
/// many it switched.
std::size_t switch_last_rows(std::vector<char>& active, const std::vector<char>& switches, std::size_t limit) {
  std::size_t switched = 0;
  for (std::size_t i = switches.size(); i-- > 0 && switched < limit;) {
    if (!switches[i]) continue;
    active[i] ^= 1;
    ++switched;
  }
  return switched;
}

}  // namespace

PrimalDualActiveSetSolver::PrimalDualActiveSetSolver(PrimalDualActiveSetOptions options)
    : options_(std::move(options)) {}

QpSolution PrimalDualActiveSetSolver::solve(const QpProblem& problem, std::span<const char> initial_active,
                                            PrimalDualActiveSetStats* stats) {
  const PrimalDualActiveSetOptions& options = options_;
  check_problem(problem);
  const auto q = static_cast<std::size_t>(problem.inequality_count());
  if (!initial_active.empty() && initial_active.size() != q) {
    throw std::invalid_argument("solve_primal_dual_active_set: the initial guess has " +
                                std::to_string(initial_active.size()) + " flags for " + std::to_string(q) +
                                " inequality rows (or none)");
  }
  const auto start = Clock::now();
  PrimalDualActiveSetStats local;
  PrimalDualActiveSetStats& figures = stats != nullptr ? *stats : local;
  figures = {};
  std::vector<char> active(q, 0);
  for (std::size_t i = 0; i < initial_active.size(); ++i) active[i] = initial_active[i] != 0 ? 1 : 0;

  PrimalDualActiveSet method(problem, options, analysis_, figures);
  QpSolution solution;
  solution.status = QpStatus::iteration_limit;
  // The guess with the smallest KKT residual, returned when none settles within tolerance but
  // it is within acceptable_tolerance (a row flipping in and out of a degenerate QP).
  std::optional<QpSolution> best;
  double best_residual = std::numeric_limits<double>::infinity();
  BlockPivotingSafeguard safeguard(q, options.stall_iterations);
  std::vector<char> switches;
  while (figures.iterations < options.max_iterations) {
    ++figures.iterations;
    std::string message;
    if (!method.solve_guess(active, solution, message)) {
      solution.status = QpStatus::numerical_failure;
      solution.message = message;
      break;
    }
    const Index infeasible = method.find_switches(active, solution, switches);
    const double residual = kkt_residuals(problem, solution).worst();
    if (infeasible == 0 && residual <= options.tolerance) {
      solution.status = QpStatus::optimal;
      break;
    }
    if (residual < best_residual && residual <= options.acceptable_tolerance) {
      best = solution;
      best_residual = residual;
    }
    if (infeasible == 0) {
      solution.status = QpStatus::numerical_failure;
      solution.message = "the active set settled but the worst scaled KKT residual is " + scientific(residual);
      break;
    }
    const auto count = static_cast<std::size_t>(infeasible);
    if (switch_last_rows(active, switches, safeguard.limit(count)) < count) ++figures.partial_switches;
  }
  if (solution.status == QpStatus::iteration_limit && solution.message.empty()) {
    solution.message = "the active set did not settle in " + std::to_string(options.max_iterations) + " iterations";
  }
  if (solution.status != QpStatus::optimal && best.has_value()) {
    const std::string why = solution.message;
    solution = std::move(*best);
    solution.status = QpStatus::optimal;
    solution.message = "accepted at a worst scaled KKT residual of " + scientific(best_residual) + " (" + why + ")";
  }
  solution.iterations = figures.iterations;
  figures.active = std::move(active);
  figures.total_seconds = seconds_since(start);
  return solution;
}

QpSolution solve_primal_dual_active_set(const QpProblem& problem, const PrimalDualActiveSetOptions& options,
                                        std::span<const char> initial_active, PrimalDualActiveSetStats* stats) {
  return PrimalDualActiveSetSolver(options).solve(problem, initial_active, stats);
}

}  // namespace cholsim::solvers::qp
