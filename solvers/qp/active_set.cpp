#include "solvers/qp/active_set.hpp"

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "linalg/blas.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::solvers::qp {

namespace {

using linalg::DenseMatrix;
using linalg::Offset;
namespace blas = linalg::blas;

constexpr double infinity = std::numeric_limits<double>::infinity();

/// An Index or Offset as a position in a std::vector or std::span.
template <std::integral Integer>
constexpr std::size_t at(Integer i) { return static_cast<std::size_t>(i); }

double dot(std::span<const double> a, std::span<const double> b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

// The rows of E and then those of C as sparse vectors, numbered 0..p+q−1: the constraint
// normals nᵢ of the paper, each with its right-hand side.
class ConstraintRows {
 public:
  explicit ConstraintRows(const QpProblem& problem)
      : equality_count_(problem.equality_count()),
        equality_rows_(linalg::transpose(problem.equality)),
        inequality_rows_(linalg::transpose(problem.inequality)),
        equality_rhs_(problem.equality_rhs),
        inequality_rhs_(problem.inequality_rhs) {}

  [[nodiscard]] Index count() const { return equality_count_ + static_cast<Index>(inequality_rhs_.size()); }
  [[nodiscard]] Index equality_count() const { return equality_count_; }
  [[nodiscard]] bool is_equality(Index row) const { return row < equality_count_; }
  [[nodiscard]] Index inequality_row(Index inequality) const { return equality_count_ + inequality; }

  [[nodiscard]] double rhs(Index row) const {
    return is_equality(row) ? equality_rhs_[at(row)] : inequality_rhs_[at(row - equality_count_)];
  }

  /// Calls visit(column, value) for each stored entry of row `row`.
  template <typename Visitor>
  void for_each_entry(Index row, Visitor&& visit) const {
    const auto& rows = is_equality(row) ? equality_rows_ : inequality_rows_;
    const Index column_in_transpose = is_equality(row) ? row : row - equality_count_;
    for (Offset k = rows.col_ptr[at(column_in_transpose)]; k < rows.col_ptr[at(column_in_transpose) + 1]; ++k) {
      visit(rows.row_idx[at(k)], rows.values[at(k)]);
    }
  }

  /// nᵢᵀx − rhsᵢ.
  [[nodiscard]] double slack(Index row, std::span<const double> x) const {
    double activity = 0.0;
    for_each_entry(row, [&](Index j, double value) { activity += value * x[at(j)]; });
    return activity - rhs(row);
  }

  /// The scale of the slack's terms, 1 + |rhsᵢ| + Σⱼ|nᵢⱼxⱼ|: what feasibility is measured against.
  [[nodiscard]] double slack_scale(Index row, std::span<const double> x) const {
    double magnitude = 1.0 + std::abs(rhs(row));
    for_each_entry(row, [&](Index j, double value) {
      magnitude += std::abs(value * x[at(j)]);
    });
    return magnitude;
  }

  [[nodiscard]] double norm(Index row) const {
    double sum = 0.0;
    for_each_entry(row, [&](Index, double value) { sum += value * value; });
    return std::sqrt(sum);
  }

 private:
  Index equality_count_;
  linalg::CscMatrix equality_rows_;    // Eᵀ: column i is row i of E
  linalg::CscMatrix inequality_rows_;  // Cᵀ
  std::span<const double> equality_rhs_;
  std::span<const double> inequality_rhs_;
};

/// A plane rotation G = [c s; −s c] chosen so that G·(a, b) = (‖(a, b)‖, 0).
struct Rotation {
  double c = 1.0;
  double s = 0.0;
};

Rotation zeroing_rotation(double& a, double& b) {
  const double h = std::hypot(a, b);
  if (h == 0.0) return {};
  const Rotation rotation{a / h, b / h};
  a = h;
  b = 0.0;
  return rotation;
}

void rotate_pair(double& first, double& second, Rotation rotation) {
  const double rotated_first = rotation.c * first + rotation.s * second;
  second = -rotation.s * first + rotation.c * second;
  first = rotated_first;
}

// The factorization of the active set in Goldfarb & Idnani's stable form: with H = LLᵀ and N the active
// normals (n × k), L⁻¹N = Q[R; 0], kept as J = L⁻ᵀQ = [J₁ J₂] (J₁: k columns) and the k × k upper
// triangular R. JJᵀ = H⁻¹ whatever Q is; J₂ spans the directions that keep the active rows
// unchanged. Adding or dropping a row costs Givens rotations on J's columns (O(n²)).
class ActiveFactorization {
 public:
  explicit ActiveFactorization(DenseMatrix inverse_transposed_factor)
      : j_(std::move(inverse_transposed_factor)), r_(j_.rows(), j_.rows()) {}

  [[nodiscard]] Index size() const { return j_.rows(); }

  /// d = Jᵀnᵢ for row `row` (the paper's d, split as d₁ = d[0, k), d₂ = d[k, n)).
  [[nodiscard]] std::vector<double> transform(const ConstraintRows& rows, Index row) const {
    std::vector<std::pair<Index, double>> entries;
    rows.for_each_entry(row, [&](Index i, double value) { entries.emplace_back(i, value); });
    std::vector<double> d(at(size()), 0.0);
    for (Index j = 0; j < size(); ++j) {
      for (const auto& [i, value] : entries) d[at(j)] += j_(i, j) * value;
    }
    return d;
  }

  /// ‖d₂‖²: nᵢᵀz, the rate at which the primal step changes row i's slack.
  [[nodiscard]] double orthogonal_norm_squared(std::span<const double> d) const {
    return dot(d.subspan(at(active_count_)), d.subspan(at(active_count_)));
  }

  /// The primal step direction z = J₂d₂ (the paper's z = H⁻¹(I − NN*)nᵢ with N* the
  /// pseudo-inverse (NᵀH⁻¹N)⁻¹NᵀH⁻¹ of N).
  void primal_direction(std::span<const double> d, std::span<double> z) const {
    std::fill(z.begin(), z.end(), 0.0);
    for (Index j = active_count_; j < size(); ++j) {
      const double weight = d[at(j)];
      for (Index i = 0; i < size(); ++i) z[at(i)] += weight * j_(i, j);
    }
  }

  /// The dual step direction r = R⁻¹d₁ (the active multipliers change by −t·r).
  [[nodiscard]] std::vector<double> dual_direction(std::span<const double> d) const {
    std::vector<double> r(d.begin(), d.begin() + active_count_);
    for (Index i = active_count_ - 1; i >= 0; --i) {
      double sum = r[at(i)];
      for (Index j = i + 1; j < active_count_; ++j) sum -= r_(i, j) * r[at(j)];
      r[at(i)] = sum / r_(i, i);
    }
    return r;
  }

  /// w = R⁻ᵀv for the active rows (forward substitution with the lower triangular Rᵀ).
  [[nodiscard]] std::vector<double> solve_transposed(std::vector<double> v) const {
    for (Index i = 0; i < active_count_; ++i) {
      double sum = v[at(i)];
      for (Index j = 0; j < i; ++j) sum -= r_(j, i) * v[at(j)];
      v[at(i)] = sum / r_(i, i);
    }
    return v;
  }

  /// y = α·op(J)·x + β·y over all of J, or over J₁ only (`active_columns_only`).
  void multiply(blas::Transpose transpose, bool active_columns_only, std::span<const double> x,
                double beta, std::span<double> y) const {
    const Index columns = active_columns_only ? active_count_ : size();
    if (columns == 0) {
      for (double& value : y) value *= beta;
      return;
    }
    blas::gemv(transpose, 1.0, j_.view().block(0, 0, size(), columns), x.data(), beta, y.data());
  }

  /// Appends the row whose transform is `d` (adding a constraint): rotations zero
  /// d[k+1..n) into d[k] and turn J₂'s first column into the direction of z; d[0..k] becomes R's
  /// new column.
  void add(std::vector<double> d) {
    for (Index j = size() - 1; j > active_count_; --j) {
      const Rotation rotation = zeroing_rotation(d[at(j) - 1], d[at(j)]);
      rotate_columns_of_j(j - 1, j, rotation);
    }
    for (Index i = 0; i <= active_count_; ++i) r_(i, active_count_) = d[at(i)];
    ++active_count_;
  }

  /// Removes the active row at `position` (dropping a constraint): R's later columns
  /// shift left, leaving one subdiagonal entry each that a rotation of rows (and of J's columns)
  /// removes.
  void drop(Index position) {
    for (Index column = position; column + 1 < active_count_; ++column) {
      for (Index i = 0; i <= column + 1; ++i) r_(i, column) = r_(i, column + 1);
      const Rotation rotation = zeroing_rotation(r_(column, column), r_(column + 1, column));
      for (Index later = column + 1; later + 1 < active_count_; ++later) {
        rotate_pair(r_(column, later + 1), r_(column + 1, later + 1), rotation);
      }
      rotate_columns_of_j(column, column + 1, rotation);
    }
    --active_count_;
  }

 private:
  void rotate_columns_of_j(Index first, Index second, Rotation rotation) {
    for (Index i = 0; i < size(); ++i) rotate_pair(j_(i, first), j_(i, second), rotation);
  }

  DenseMatrix j_;
  DenseMatrix r_;  // upper triangle of the leading active_count_ columns is R
  Index active_count_ = 0;
};

/// L⁻ᵀ for H = LLᵀ, the J of the empty active set; nullopt-like failure reported through
/// `failing_pivot` (LAPACK's 1-based info) when H is not positive definite.
std::optional<DenseMatrix> inverse_transposed_cholesky(const linalg::SymmetricCscMatrix& hessian,
                                                       int& failing_pivot) {
  const Index n = hessian.size();
  DenseMatrix lower(n, n);
  const auto& h = hessian.lower;
  for (Index column = 0; column < n; ++column) {
    for (Offset k = h.col_ptr[at(column)]; k < h.col_ptr[at(column) + 1]; ++k) {
      lower(h.row_idx[at(k)], column) = h.values[at(k)];
    }
  }
  failing_pivot = n > 0 ? blas::potrf(lower.view()) : 0;
  if (failing_pivot != 0) return std::nullopt;
  DenseMatrix j(n, n);
  for (Index i = 0; i < n; ++i) j(i, i) = 1.0;
  if (n > 0) {
    blas::trsm(blas::Side::left, blas::Transpose::yes, blas::Diagonal::non_unit, 1.0, lower.view(),
               j.view());
  }
  return j;
}

void check_warm_start(const ActiveSetWarmStart& warm_start, Index inequality_count) {
  for (const Index inequality : warm_start.active_inequalities) {
    if (inequality < 0 || inequality >= inequality_count) {
      throw std::invalid_argument("solve_active_set: warm-start inequality index " +
                                  std::to_string(inequality) + " is outside 0.." +
                                  std::to_string(inequality_count - 1) + " (the problem has " +
                                  std::to_string(inequality_count) + " inequality rows)");
    }
  }
}

// One solve: the state of the paper's algorithm (x, the active set A with its multipliers u and
// its factorization) and the steps that change it.
class DualActiveSetSolver {
 public:
  DualActiveSetSolver(const QpProblem& problem, const ActiveSetOptions& options, DenseMatrix j,
                      ActiveSetStats& stats)
      : problem_(problem), options_(options), rows_(problem), factorization_(std::move(j)),
        is_active_(at(rows_.count()), false), stats_(stats) {
    solution_.x.assign(at(problem.variable_count()), 0.0);
  }

  QpSolution solve(const ActiveSetWarmStart* warm_start) {
    if (start(warm_start)) {
      while (const std::optional<Index> violated = most_violated_inequality()) {
        if (!satisfy(*violated)) break;
      }
    }
    return finish();
  }

 private:
  // Starting active set: the equalities, then the warm-start rows, each skipped when dependent
  // on those before it; x and u solve the equality-constrained QP on that set, and inequalities
  // with negative multipliers are dropped until u ≥ 0. The result is an S-pair of the paper
  // (x optimal for the QP restricted to its active rows), from which its Step 1 proceeds.
  // Returns false (status set) when dependent equality rows are inconsistent.
  bool start(const ActiveSetWarmStart* warm_start) {
    std::vector<Index> skipped_equalities;
    for (Index row = 0; row < rows_.equality_count(); ++row) {
      if (!try_add_at_start(row)) skipped_equalities.push_back(row);
    }
    if (warm_start != nullptr) {
      for (const Index inequality : warm_start->active_inequalities) {
        const Index row = rows_.inequality_row(inequality);
        if (!is_active_[at(row)] && try_add_at_start(row)) ++stats_.warm_start_kept;
      }
    }
    solve_on_active_set();
    while (const std::optional<Index> position = most_negative_inequality_multiplier()) {
      --stats_.warm_start_kept;  // only warm-start rows are active inequalities here
      drop(*position);
      solve_on_active_set();
    }
    return equalities_consistent(skipped_equalities);
  }

  bool try_add_at_start(Index row) {
    std::vector<double> d = factorization_.transform(rows_, row);
    if (is_dependent(d)) {
      ++stats_.dependent_rows_skipped;
      return false;
    }
    add(row, std::move(d), 0.0);
    return true;
  }

  [[nodiscard]] bool is_dependent(std::span<const double> d) const {
    return std::sqrt(factorization_.orthogonal_norm_squared(d)) <=
           options_.dependence_tolerance * std::sqrt(dot(d, d));
  }

  // The minimizer of the QP with the active rows as equalities: from x₀ = H⁻¹b = JJᵀb,
  // w = R⁻ᵀ(b_A − N_Aᵀx₀), x = x₀ + J₁w and u = R⁻¹w (since H⁻¹N_A = J₁R and N_AᵀH⁻¹N_A = RᵀR).
  void solve_on_active_set() {
    const std::size_t n = solution_.x.size();
    std::vector<double> transformed_linear(n);
    factorization_.multiply(blas::Transpose::yes, false, problem_.linear, 0.0, transformed_linear);
    factorization_.multiply(blas::Transpose::no, false, transformed_linear, 0.0, solution_.x);
    std::vector<double> residual(active_.size());
    for (std::size_t i = 0; i < active_.size(); ++i) residual[i] = -rows_.slack(active_[i], solution_.x);
    const std::vector<double> w = factorization_.solve_transposed(std::move(residual));
    factorization_.multiply(blas::Transpose::no, true, w, 1.0, solution_.x);
    multipliers_ = factorization_.dual_direction(w);
  }

  [[nodiscard]] std::optional<Index> most_negative_inequality_multiplier() const {
    std::optional<Index> position;
    double most_negative = 0.0;
    for (std::size_t i = 0; i < active_.size(); ++i) {
      if (!rows_.is_equality(active_[i]) && multipliers_[i] < most_negative) {
        most_negative = multipliers_[i];
        position = static_cast<Index>(i);
      }
    }
    return position;
  }

  bool equalities_consistent(const std::vector<Index>& skipped_equalities) {
    for (const Index row : skipped_equalities) {
      const double residual = rows_.slack(row, solution_.x);
      if (std::abs(residual) > options_.feasibility_tolerance * rows_.slack_scale(row, solution_.x)) {
        solution_.status = QpStatus::infeasible;
        solution_.message = "equality row " + std::to_string(row) +
                            " is a linear combination of earlier equality rows but inconsistent "
                            "with them (residual " + std::to_string(residual) + " at their solution)";
        return false;
      }
    }
    return true;
  }

  // Step 1 of the paper: the inactive inequality violated the most, measured as a distance
  // (slack / ‖row‖) so that scaling a row does not change the choice.
  [[nodiscard]] std::optional<Index> most_violated_inequality() const {
    std::optional<Index> chosen;
    double largest_distance = 0.0;
    for (Index row = rows_.equality_count(); row < rows_.count(); ++row) {
      if (is_active_[at(row)]) continue;
      const double slack = rows_.slack(row, solution_.x);
      if (slack >= -options_.feasibility_tolerance * rows_.slack_scale(row, solution_.x)) continue;
      const double distance = -slack / std::max(rows_.norm(row), std::numeric_limits<double>::min());
      if (distance > largest_distance) {
        largest_distance = distance;
        chosen = row;
      }
    }
    return chosen;
  }

  // Step 2 of the paper for the violated row p: primal and dual steps, partial steps dropping a
  // blocking row, until the full step makes p active. Returns false (status set) when p cannot
  // be satisfied or the iteration limit is reached.
  bool satisfy(Index p) {
    double multiplier_of_p = 0.0;
    std::vector<double> z(solution_.x.size());
    for (;;) {
      if (stats_.iterations >= options_.max_iterations) return stop_at_iteration_limit();
      ++stats_.iterations;
      std::vector<double> d = factorization_.transform(rows_, p);
      const std::vector<double> r = factorization_.dual_direction(d);
      const auto [partial_step, blocking] = partial_step_length(r);
      const bool independent = !is_dependent(d);
      // Step 2(c)(i), no step in primal or dual space: n_p is a combination of active normals and
      // no active inequality limits the dual step, so the dual is unbounded, the primal infeasible.
      if (!independent && !blocking) return stop_infeasible(p);
      // Step 2(b)(ii): the full step t₂ = −s_p / n_pᵀz makes row p active (n_pᵀz = ‖d₂‖²).
      const double full_step =
          independent ? std::max(0.0, -rows_.slack(p, solution_.x) / factorization_.orthogonal_norm_squared(d))
                      : infinity;
      const double step = std::min(partial_step, full_step);
      if (independent) {
        factorization_.primal_direction(d, z);
        for (std::size_t i = 0; i < z.size(); ++i) solution_.x[i] += step * z[i];
      }
      for (std::size_t i = 0; i < r.size(); ++i) multipliers_[i] -= step * r[i];
      multiplier_of_p += step;
      if (full_step <= partial_step) {  // Step 2(c)(iii): full step, p joins the active set
        add(p, std::move(d), multiplier_of_p);
        return true;
      }
      drop(*blocking);  // Step 2(c)(ii)/(iii): partial step, the blocking row leaves
    }
  }

  // Step 2(b)(i): t₁ = min over active inequalities with rⱼ > 0 of uⱼ/rⱼ (the largest dual step keeping u ≥ 0),
  // with the position that attains it; infinite with no position when none limits it.
  [[nodiscard]] std::pair<double, std::optional<Index>> partial_step_length(std::span<const double> r) const {
    double largest_component = 0.0;
    for (const double value : r) largest_component = std::max(largest_component, std::abs(value));
    // rⱼ at rounding level of r counts as zero, else a truly dependent step would be "blocked"
    // by a constraint whose ratio is rounding noise.
    const double negligible = 64.0 * std::numeric_limits<double>::epsilon() * largest_component;
    double step = infinity;
    std::optional<Index> blocking;
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (rows_.is_equality(active_[i]) || r[i] <= negligible) continue;
      const double ratio = std::max(0.0, multipliers_[i]) / r[i];
      if (ratio < step) {
        step = ratio;
        blocking = static_cast<Index>(i);
      }
    }
    return {step, blocking};
  }

  void add(Index row, std::vector<double> d, double multiplier) {
    factorization_.add(std::move(d));
    active_.push_back(row);
    multipliers_.push_back(multiplier);
    is_active_[at(row)] = true;
    ++stats_.constraints_added;
  }

  void drop(Index position) {
    factorization_.drop(position);
    is_active_[at(active_[at(position)])] = false;
    active_.erase(active_.begin() + position);
    multipliers_.erase(multipliers_.begin() + position);
    ++stats_.constraints_dropped;
  }

  bool stop_at_iteration_limit() {
    solution_.status = QpStatus::iteration_limit;
    solution_.message = "stopped after " + std::to_string(options_.max_iterations) +
                        " iterations (ActiveSetOptions::max_iterations) with " +
                        std::to_string(active_.size()) + " active rows";
    return false;
  }

  bool stop_infeasible(Index p) {
    const Index inequality = p - rows_.equality_count();
    solution_.status = QpStatus::infeasible;
    solution_.message = "inequality row " + std::to_string(inequality) + " is violated (slack " +
                        std::to_string(rows_.slack(p, solution_.x)) +
                        ") and cannot be satisfied: its normal lies in the span of the active "
                        "rows and no active inequality can be dropped (Goldfarb–Idnani Step 2(c)(i): "
                        "the dual step is unbounded)";
    return false;
  }

  QpSolution finish() {
    if (solution_.message.empty()) {
      solution_.status = QpStatus::optimal;
      // x and u once more straight from the final factorization, shedding the rounding that
      // the incremental steps accumulated.
      solve_on_active_set();
    }
    solution_.iterations = stats_.iterations;
    solution_.equality_multipliers.assign(at(rows_.equality_count()), 0.0);
    solution_.inequality_multipliers.assign(at(rows_.count() - rows_.equality_count()), 0.0);
    stats_.final_active_set.active_inequalities.clear();
    for (std::size_t i = 0; i < active_.size(); ++i) {
      const Index row = active_[i];
      if (rows_.is_equality(row)) {
        solution_.equality_multipliers[at(row)] = multipliers_[i];
      } else {
        const Index inequality = row - rows_.equality_count();
        solution_.inequality_multipliers[at(inequality)] = multipliers_[i];
        stats_.final_active_set.active_inequalities.push_back(inequality);
      }
    }
    return std::move(solution_);
  }

  const QpProblem& problem_;
  const ActiveSetOptions& options_;
  ConstraintRows rows_;
  ActiveFactorization factorization_;
  std::vector<Index> active_;         // the active rows, in the order of R's columns
  std::vector<double> multipliers_;   // u, aligned with active_
  std::vector<bool> is_active_;       // by row number
  ActiveSetStats& stats_;
  QpSolution solution_;
};

}  // namespace

QpSolution solve_active_set(const QpProblem& problem, const ActiveSetOptions& options,
                            const ActiveSetWarmStart* warm_start, ActiveSetStats* stats) {
  const auto started = std::chrono::steady_clock::now();
  check_problem(problem);
  if (warm_start != nullptr) check_warm_start(*warm_start, problem.inequality_count());
  ActiveSetStats local_stats;
  ActiveSetStats& counters = stats != nullptr ? *stats : local_stats;
  counters = {};
  int failing_pivot = 0;
  std::optional<DenseMatrix> j = inverse_transposed_cholesky(problem.hessian, failing_pivot);
  QpSolution solution;
  if (!j) {
    solution.x.assign(at(problem.variable_count()), 0.0);
    solution.equality_multipliers.assign(at(problem.equality_count()), 0.0);
    solution.inequality_multipliers.assign(at(problem.inequality_count()), 0.0);
    solution.status = QpStatus::numerical_failure;
    solution.message = "H is not positive definite (Cholesky pivot " + std::to_string(failing_pivot - 1) +
                       " is not positive): the dual active-set method needs a strictly convex QP; "
                       "use the interior-point back end for a semi-definite H";
  } else {
    solution = DualActiveSetSolver(problem, options, std::move(*j), counters).solve(warm_start);
  }
  counters.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return solution;
}

}  // namespace cholsim::solvers::qp
