#include "solvers/nonlinear/newton_solver.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "factor/analysis/symbolic.hpp"
#include "factor/derivative/extrapolated_factor.hpp"
#include "factor/derivative/factor_derivative.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/update/changed_supernodes.hpp"
#include "linalg/vector_norms.hpp"
#include "solvers/cg/conjugate_gradient.hpp"
#include "solvers/nonlinear/named_choices.hpp"
#include "solvers/nonlinear/refresh_costs.hpp"

namespace cholsim::solvers {
namespace {

using Clock = std::chrono::steady_clock;
using linalg::Offset;

constexpr NameTable<NewtonMethod, 8> method_names{{
    {NewtonMethod::newton_direct, "newton-d"},
    {NewtonMethod::newton_iterative, "newton-i"},
    {NewtonMethod::newton_frozen, "newton-l0"},
    {NewtonMethod::newton_extrapolated, "newton-l1"},
    {NewtonMethod::hybrid_frozen, "hybrid-l0"},
    {NewtonMethod::hybrid_extrapolated, "hybrid-l1"},
    {NewtonMethod::newton_refactored, "newton-r"},
    {NewtonMethod::hybrid_refactored, "hybrid-r"},
}};

/// Energy changes within this share of |E| are taken as the rounding noise of E's sum, where
/// the Armijo test can no longer see a decrease (accept_trial).
constexpr double energy_rounding_band = 1e-10;

/// Adds the wall time of its scope to one of NewtonStatistics' time splits.
class StopWatch {
 public:
  explicit StopWatch(double& total) : total_(total), start_(Clock::now()) {}
  ~StopWatch() { total_ += std::chrono::duration<double>(Clock::now() - start_).count(); }
  StopWatch(const StopWatch&) = delete;
  StopWatch& operator=(const StopWatch&) = delete;

 private:
  double& total_;
  Clock::time_point start_;
};

enum class Phase { quasi_newton, newton };

bool is_hybrid(NewtonMethod method) {
  return method == NewtonMethod::hybrid_frozen || method == NewtonMethod::hybrid_extrapolated ||
         method == NewtonMethod::hybrid_refactored;
}
bool is_extrapolated(NewtonMethod method) {
  return method == NewtonMethod::newton_extrapolated || method == NewtonMethod::hybrid_extrapolated;
}
/// The …-L0 and …-L1 methods: one factor of the step start's Hessian serves the whole solve.
bool uses_step_start_factor(NewtonMethod method) {
  return is_extrapolated(method) || method == NewtonMethod::newton_frozen || method == NewtonMethod::hybrid_frozen;
}
bool is_refactored(NewtonMethod method) {
  return method == NewtonMethod::newton_refactored || method == NewtonMethod::hybrid_refactored;
}

double dot(std::span<const double> a, std::span<const double> b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

void check_options(const NewtonOptions& options) {
  const auto require = [](bool holds, const char* what) {
    if (!holds) throw std::invalid_argument(std::string("NewtonSolver: ") + what);
  };
  require(options.max_iterations >= 0, "max_iterations must not be negative");
  require(options.quasi_newton_iterations >= 0, "quasi_newton_iterations must not be negative");
  require(options.line_search_halvings >= 0, "line_search_halvings must not be negative");
  require(options.refactor_every >= 1, "refactor_every must be at least 1");
  require(options.refactor_tolerance >= 0.0, "refactor_tolerance must not be negative");
  require(options.pcg_tolerance > 0.0, "pcg_tolerance must be positive");
  require(options.refresh_ratio >= 0.0 && options.refresh_ratio <= 1.0, "refresh_ratio must lie in [0, 1]");
  require(options.dofs_per_node >= 1, "dofs_per_node must be at least 1");
  require(options.direct_probe_every >= 0, "direct_probe_every must not be negative");
}

void check_sizes(const NonlinearProblem& problem, std::span<const double> x, const NewtonSolver::StepContext& step) {
  const auto n = static_cast<std::size_t>(problem.size());
  const auto require = [n](std::size_t size, bool may_be_empty, const char* what) {
    if (size == n || (may_be_empty && size == 0)) return;
    throw std::invalid_argument(std::string("NewtonSolver::solve: ") + what + " has " + std::to_string(size) +
                                " entries, the problem " + std::to_string(n) + " unknowns");
  };
  require(x.size(), false, "x");
  require(step.start.size(), true, "step.start");
  require(step.velocity.size(), true, "step.velocity");
  require(static_cast<std::size_t>(problem.hessian_pattern().size()), false, "the Hessian pattern");
}

}  // namespace

std::string_view method_name(NewtonMethod method) { return choice_name(method_names, method, "method_name"); }

NewtonMethod parse_method(std::string_view name) { return parse_choice(method_names, name, "Newton method"); }

struct NewtonSolver::State {
  State(NewtonMethod solver_method, NewtonOptions solver_options)
      : method(solver_method), options(std::move(solver_options)) {}

  NewtonMethod method;
  NewtonOptions options;

  // The analysis of the problem's Hessian pattern, kept while the pattern stays the same
  // object (seed 002 §5.4.2.1: one pattern for the whole simulation).
  const linalg::SymmetricCscMatrix* analysed_pattern = nullptr;
  Index analysed_size = -1;
  Offset analysed_nnz = -1;
  std::shared_ptr<const factor::Symbolic> symbolic;
  double full_factorization_flops = 0.0;
  std::vector<Offset> diagonal_position;  ///< of column j's diagonal in the values, −1 if absent

  std::optional<factor::Factor> factor;                    ///< NEWTON-D, …-L0, …-R
  std::optional<factor::FactorDerivative> derivative;      ///< …-L1: L and L̇ of the reference
  std::optional<factor::ExtrapolatedFactor> extrapolated;  ///< …-L1: L̃ = L + Δt·L̇
  /// The factor quasi-Newton solves with and PCG is preconditioned by.
  const factor::Factor* active_factor = nullptr;

  // …-L0 / …-L1: the reference factor of a step start, kept for refactor_every calls.
  std::int64_t calls = 0;
  bool reference_valid = false;
  double time_since_reference = 0.0;  ///< Δt of eq. 5.4: the time steps of the calls since

  // …-R: the values the factor currently is the factorization of (seed 000 §4.3).
  bool refactorable = false;
  std::vector<double> factored_values;        ///< column route: the values factored
  linalg::SymmetricCscMatrix factored_matrix;  ///< block route: the problem's factored matrix
  std::vector<Index> changed_columns;  ///< of the last refresh: empty when nothing had moved

  // …-R's fallback (NewtonOptions::direct_probe_every): averaged seconds per solve of each way
  // (0: not measured yet), the way of this solve, and the solves since the other way was last
  // tried.
  double refactored_solve_seconds = 0.0;
  double direct_solve_seconds = 0.0;
  int refactored_solves_timed = 0;
  bool analysed_in_this_solve = false;  ///< its time includes the analysis: not timed
  bool solve_directly = false;
  bool probing = false;  ///< this solve runs the way not preferred, to time it
  int solves_since_probe = 0;
  int probe_interval = 0;  ///< solves between probes: doubles while probes lose clearly
  /// The direct way timed faster than the refactored one (false until both are timed).
  [[nodiscard]] bool prefers_direct() const {
    return direct_solve_seconds > 0.0 && refactored_solve_seconds > 0.0 &&
           direct_solve_seconds < refactored_solve_seconds;
  }
  void choose_solve_way();
  void record_solve_time(double seconds);

  // HYBRID-R's refresh rule: what a refresh and a quasi-Newton iteration cost, and the ‖∇E‖
  // reductions a just-refreshed and the current factor give, as measured in this run.
  RefreshCosts refresh_costs;

  linalg::SymmetricCscMatrix hessian, hessian_rate;
  std::vector<double> gradient, negative_gradient, direction, trial, trial_gradient, zero_velocity;
  double energy = 0.0;

  /// Analyses the problem's pattern unless it is the one analysed; returns whether it did.
  bool ensure_analysis(const NonlinearProblem& problem);
  void reset_factors();

  [[nodiscard]] factor::FactorOptions factor_options(bool retain_update_blocks) const;
  [[nodiscard]] double diagonal(Index column) const;
  bool fail(NewtonStatistics& stats, const std::string& why) const;

  double evaluate_energy(NonlinearProblem& problem, std::span<const double> x, NewtonStatistics& stats);
  void evaluate_gradient(NonlinearProblem& problem, std::span<const double> x, std::span<double> out,
                         NewtonStatistics& stats);
  void assemble_hessian(NonlinearProblem& problem, std::span<const double> x, NewtonStatistics& stats);
  bool evaluate_initial_guess(NonlinearProblem& problem, std::span<const double> x, NewtonStatistics& stats);

  bool prepare_step_factor(NonlinearProblem& problem, std::span<const double> x, const StepContext& step,
                           NewtonStatistics& stats);
  bool prepare_reference_factor(NonlinearProblem& problem, std::span<const double> x, const StepContext& step,
                                NewtonStatistics& stats);
  bool factor_reference(NonlinearProblem& problem, std::span<const double> start, std::span<const double> velocity,
                        NewtonStatistics& stats);
  void extrapolate_reference(NewtonStatistics& stats);
  bool factorize_hessian(bool retain_update_blocks, const char* what, NewtonStatistics& stats);
  bool refresh_refactored_factor(NonlinearProblem& problem, std::span<const double> x, NewtonStatistics& stats);
  std::optional<bool> refresh_by_blocks(NonlinearProblem& problem, std::span<const double> x,
                                        NewtonStatistics& stats);
  bool refresh_by_columns(NewtonStatistics& stats);
  bool refactorize(const factor::ChangedEntries& changed, const linalg::SymmetricCscMatrix& matrix,
                   NewtonStatistics& stats);
  bool restart_refactored_factor(NewtonStatistics& stats);
  void mark_changed_columns();
  void record_factored_values(std::span<const char> recomputed);

  void iterate(NonlinearProblem& problem, std::span<double> x, int iteration_limit, NewtonStatistics& stats);
  bool refresh_when_slow(Phase phase, double previous_norm, double tolerance, NonlinearProblem& problem,
                         std::span<const double> x, NewtonStatistics& stats);
  [[nodiscard]] bool quasi_newton_limit_reached(const NewtonStatistics& stats) const;
  bool compute_direction(Phase phase, NonlinearProblem& problem, std::span<const double> x, NewtonStatistics& stats);
  bool factor_direction(NewtonStatistics& stats);
  bool factor_pcg_direction(NewtonStatistics& stats);
  bool jacobi_pcg_direction(NewtonStatistics& stats);
  bool pcg_direction(const Preconditioner& preconditioner, NewtonStatistics& stats);
  bool line_search(NonlinearProblem& problem, std::span<double> x, NewtonStatistics& stats);
  bool accept_trial(NonlinearProblem& problem, double step, double slope, NewtonStatistics& stats);
};

bool NewtonSolver::State::ensure_analysis(const NonlinearProblem& problem) {
  const linalg::SymmetricCscMatrix& pattern = problem.hessian_pattern();
  if (symbolic && &pattern == analysed_pattern && pattern.size() == analysed_size &&
      pattern.nnz_lower() == analysed_nnz) {
    return false;
  }
  factor::AnalyzeOptions analyze_options;
  analyze_options.dofs_per_node = options.dofs_per_node;
  symbolic = factor::analyze(pattern, analyze_options);
  analysed_pattern = &pattern;
  analysed_size = pattern.size();
  analysed_nnz = pattern.nnz_lower();
  full_factorization_flops = 0.0;
  for (Index s = 0; s < symbolic->supernode_count(); ++s) full_factorization_flops += symbolic->supernode_flops(s);

  hessian = pattern;
  hessian.lower.values.assign(static_cast<std::size_t>(pattern.nnz_lower()), 0.0);
  hessian_rate = hessian;
  factored_matrix = hessian;
  diagonal_position.assign(static_cast<std::size_t>(pattern.size()), -1);
  for (Index j = 0; j < pattern.size(); ++j) {
    const Offset first = pattern.lower.col_ptr[j];
    if (first < pattern.lower.col_ptr[j + 1] && pattern.lower.row_idx[first] == j) diagonal_position[j] = first;
  }
  const auto n = static_cast<std::size_t>(pattern.size());
  for (auto* work : {&gradient, &negative_gradient, &direction, &trial, &trial_gradient, &zero_velocity}) {
    work->assign(n, 0.0);
  }
  reset_factors();
  return true;
}

void NewtonSolver::State::choose_solve_way() {
  solve_directly = false;
  if (!is_refactored(method) || options.direct_probe_every == 0) return;
  // The first probe as soon as two refactored solves are timed (short runs), then periodic.
  if (probe_interval == 0) probe_interval = options.direct_probe_every;
  const bool first_probe = direct_solve_seconds == 0.0 && refactored_solves_timed >= 2;
  probing = first_probe || solves_since_probe >= probe_interval;
  solves_since_probe = probing ? 0 : solves_since_probe + 1;
  solve_directly = probing != prefers_direct();
  // A direct solve factors without retained update blocks: the next refactored solve starts
  // over from a full factorization of its own.
  if (solve_directly) refactorable = false;
}

void NewtonSolver::State::record_solve_time(double seconds) {
  if (!is_refactored(method) || options.direct_probe_every == 0 || analysed_in_this_solve) return;
  if (!solve_directly) ++refactored_solves_timed;
  // Halving averages: the cost of a solve drifts with the motion, and the last few tell it.
  // A probe that lost by more than a tenth makes the next one wait twice as long (up to 8×),
  // so that a clear choice is rarely paid for; a close or winning one keeps probing often.
  // Judged against the way preferred before this solve's time is averaged in.
  const bool preferred_direct = prefers_direct();
  double& average = solve_directly ? direct_solve_seconds : refactored_solve_seconds;
  average = halving_average(average, seconds);
  if (!probing || direct_solve_seconds == 0.0 || refactored_solve_seconds == 0.0) return;
  const double preferred = preferred_direct ? direct_solve_seconds : refactored_solve_seconds;
  const double other = preferred_direct ? refactored_solve_seconds : direct_solve_seconds;
  probe_interval = other > 1.1 * preferred ? std::min(2 * probe_interval, 8 * options.direct_probe_every)
                                           : options.direct_probe_every;
}

void NewtonSolver::State::reset_factors() {
  factor.reset();
  derivative.reset();
  extrapolated.reset();
  if (is_extrapolated(method)) {
    derivative.emplace(symbolic);
  } else if (method != NewtonMethod::newton_iterative) {
    factor.emplace(symbolic);
  }
  active_factor = nullptr;
  reference_valid = false;
  refactorable = false;
}

factor::FactorOptions NewtonSolver::State::factor_options(bool retain_update_blocks) const {
  factor::FactorOptions factor_options;
  factor_options.threads = options.threads;
  factor_options.retain_update_blocks = retain_update_blocks;
  return factor_options;
}

double NewtonSolver::State::diagonal(Index column) const {
  const Offset position = diagonal_position[column];
  return position < 0 ? 0.0 : hessian.lower.values[position];
}

bool NewtonSolver::State::fail(NewtonStatistics& stats, const std::string& why) const {
  stats.failure = std::string(method_name(method)) + ": " + why;
  return false;
}

double NewtonSolver::State::evaluate_energy(NonlinearProblem& problem, std::span<const double> x,
                                            NewtonStatistics& stats) {
  const StopWatch watch(stats.evaluation_seconds);
  return problem.energy(x);
}

void NewtonSolver::State::evaluate_gradient(NonlinearProblem& problem, std::span<const double> x,
                                            std::span<double> out, NewtonStatistics& stats) {
  const StopWatch watch(stats.evaluation_seconds);
  problem.gradient(x, out);
}

void NewtonSolver::State::assemble_hessian(NonlinearProblem& problem, std::span<const double> x,
                                           NewtonStatistics& stats) {
  const StopWatch watch(stats.assembly_seconds);
  problem.hessian(x, hessian);
}

bool NewtonSolver::State::evaluate_initial_guess(NonlinearProblem& problem, std::span<const double> x,
                                                 NewtonStatistics& stats) {
  energy = evaluate_energy(problem, x, stats);
  evaluate_gradient(problem, x, gradient, stats);
  stats.initial_gradient_norm = stats.final_gradient_norm = linalg::norm2(gradient);
  if (std::isfinite(energy) && std::isfinite(stats.initial_gradient_norm)) return true;
  return fail(stats, "the initial guess is not admissible (E = " + std::to_string(energy) +
                         ", ‖∇E‖ = " + std::to_string(stats.initial_gradient_norm) + ")");
}

bool NewtonSolver::State::prepare_step_factor(NonlinearProblem& problem, std::span<const double> x,
                                              const StepContext& step, NewtonStatistics& stats) {
  if (uses_step_start_factor(method)) return prepare_reference_factor(problem, x, step, stats);
  if (method == NewtonMethod::hybrid_refactored && !solve_directly) {
    // HYBRID-R brings its factor up to date once, at the point the solve starts from.
    return refresh_refactored_factor(problem, x, stats);
  }
  return true;  // NEWTON-D, -I and -R form their systems every iteration
}

bool NewtonSolver::State::prepare_reference_factor(NonlinearProblem& problem, std::span<const double> x,
                                                   const StepContext& step, NewtonStatistics& stats) {
  // Thesis §5.5.2.3: the factor may serve refactor_every calls before it is recomputed.
  if (!reference_valid || calls % options.refactor_every == 0) {
    const std::span<const double> start = step.start.empty() ? std::span<const double>(x) : step.start;
    const std::span<const double> velocity = step.velocity.empty() ? std::span<const double>(zero_velocity)
                                                                    : step.velocity;
    reference_valid = factor_reference(problem, start, velocity, stats);
    if (!reference_valid) return false;
    time_since_reference = 0.0;
  }
  // Eq. 5.4: Δt is the time elapsed since the reference, up to this call's solution.
  time_since_reference += step.time_step;
  if (is_extrapolated(method)) extrapolate_reference(stats);
  return true;
}

bool NewtonSolver::State::factor_reference(NonlinearProblem& problem, std::span<const double> start,
                                           std::span<const double> velocity, NewtonStatistics& stats) {
  assemble_hessian(problem, start, stats);
  if (!is_extrapolated(method)) return factorize_hessian(false, "A(x_k)", stats);
  {
    const StopWatch watch(stats.assembly_seconds);
    problem.hessian_rate(start, velocity, hessian_rate);
  }
  const StopWatch watch(stats.factor_seconds);
  ++stats.factorizations;
  ++stats.derivative_factorizations;
  // Algorithm 5.5 line 3: (L, L̇) = dchol(A, Ȧ).
  if (!derivative->factorize_with_derivative(hessian, hessian_rate, factor_options(false)).ok()) {
    return fail(stats, "factorization of A(x_k) with its derivative failed: " + derivative->status().message);
  }
  extrapolated.emplace(*derivative);
  return true;
}

void NewtonSolver::State::extrapolate_reference(NewtonStatistics& stats) {
  const StopWatch watch(stats.factor_seconds);
  if (extrapolated->extrapolate(time_since_reference).ok()) {
    active_factor = &extrapolated->factor();
    return;
  }
  // Fig. 5.2b: the extrapolation overshot until L̃ is no factor at all; the frozen L of the
  // reference still is one, so the solve goes on as …-L0 would.
  active_factor = &derivative->factor();
  ++stats.extrapolation_fallbacks;
}

bool NewtonSolver::State::factorize_hessian(bool retain_update_blocks, const char* what, NewtonStatistics& stats) {
  {
    const StopWatch watch(stats.factor_seconds);
    factor->factorize(hessian, factor_options(retain_update_blocks));
  }
  ++stats.factorizations;
  if (!factor->ok()) return fail(stats, std::string("factorization of ") + what + " failed: " + factor->status().message);
  active_factor = &*factor;
  return true;
}

bool NewtonSolver::State::refresh_refactored_factor(NonlinearProblem& problem, std::span<const double> x,
                                                    NewtonStatistics& stats) {
  const auto start = Clock::now();
  bool refreshed = false;
  if (const std::optional<bool> by_blocks = refresh_by_blocks(problem, x, stats)) {
    refreshed = *by_blocks;
  } else {
    assemble_hessian(problem, x, stats);
    refreshed = refresh_by_columns(stats);
  }
  refresh_costs.record_refresh(std::chrono::duration<double>(Clock::now() - start).count());
  return refreshed;
}

// The block route (seed 000 §4.3–4.4): the problem says which element blocks moved beyond the
// tolerance and hands over the matrix with only those taken anew — a sum of positive
// semi-definite blocks, so the refactorization cannot meet a non-positive pivot the way a
// column-wise mix of old and new values can. nullopt when the problem has no blocks, else
// whether the factor is ready.
std::optional<bool> NewtonSolver::State::refresh_by_blocks(NonlinearProblem& problem, std::span<const double> x,
                                                           NewtonStatistics& stats) {
  if (!refactorable) problem.reset_selective_hessian();
  bool selective = false;
  {
    const StopWatch watch(stats.assembly_seconds);
    selective = problem.selective_hessian(x, options.refactor_tolerance, hessian, factored_matrix, changed_columns);
  }
  if (!selective) return std::nullopt;
  if (!refactorable) {
    // Every block was taken anew: the factored matrix is the Hessian itself.
    refactorable = factorize_hessian(true, "∇²E", stats);
    return refactorable;
  }
  if (changed_columns.empty() ||
      refactorize(factor::ChangedEntries::columns(changed_columns), factored_matrix, stats)) {
    active_factor = &*factor;
    return true;
  }
  // Rounding can still leave a pivot that is not positive: start over from the exact Hessian.
  problem.reset_selective_hessian();
  {
    const StopWatch watch(stats.assembly_seconds);
    problem.selective_hessian(x, options.refactor_tolerance, hessian, factored_matrix, changed_columns);
  }
  refactorable = factorize_hessian(true, "∇²E", stats);
  return refactorable;
}

// The column route, for problems without element blocks: columns whose entries moved beyond
// the tolerance are refactorized with their new values. A mix of old and new columns need not
// be positive definite; when the refactorization meets such a pivot, the factor starts over
// from the whole current Hessian.
bool NewtonSolver::State::refresh_by_columns(NewtonStatistics& stats) {
  if (!refactorable) return restart_refactored_factor(stats);
  mark_changed_columns();
  const auto changed = factor::ChangedEntries::columns(changed_columns);
  const std::vector<char> recomputed = factor->supernodes_to_recompute(changed);
  if (!refactorize(changed, hessian, stats)) return restart_refactored_factor(stats);
  record_factored_values(recomputed);
  return true;
}

bool NewtonSolver::State::restart_refactored_factor(NewtonStatistics& stats) {
  refactorable = factorize_hessian(true, "∇²E", stats);
  if (refactorable) factored_values = hessian.lower.values;
  return refactorable;
}

bool NewtonSolver::State::refactorize(const factor::ChangedEntries& changed, const linalg::SymmetricCscMatrix& matrix,
                                      NewtonStatistics& stats) {
  {
    const StopWatch watch(stats.factor_seconds);
    factor->refactorize(changed, matrix, factor_options(true));
  }
  ++stats.refactorizations;
  if (full_factorization_flops > 0.0) {
    stats.refactorized_flop_fraction += factor->stats().recomputed_flops / full_factorization_flops;
  }
  if (!factor->ok()) {
    refactorable = false;
    active_factor = nullptr;
    return false;
  }
  active_factor = &*factor;
  return true;
}

void NewtonSolver::State::mark_changed_columns() {
  // An entry counts as changed when it moved by more than refactor_tolerance relative to the
  // geometric mean of the two pivots it couples, √(A_ii·A_jj) of the new Hessian: the
  // scale-free size a Cholesky step sees (seed 000 §4.4 refactorizes only where the matrix
  // moved). Tolerance 0 marks every change, so the factor is exact (NEWTON-D).
  changed_columns.clear();
  const linalg::CscMatrix& a = hessian.lower;
  for (Index j = 0; j < a.cols; ++j) {
    const double diagonal_j = diagonal(j);
    for (Offset p = a.col_ptr[j]; p < a.col_ptr[j + 1]; ++p) {
      const double scale = std::sqrt(std::abs(diagonal(a.row_idx[p]) * diagonal_j));
      if (std::abs(a.values[p] - factored_values[p]) > options.refactor_tolerance * scale) {
        changed_columns.push_back(j);
        break;
      }
    }
  }
}

void NewtonSolver::State::record_factored_values(std::span<const char> recomputed) {
  // A recomputed supernode assembled the current values of exactly its own entries of A;
  // every other supernode still holds the factorization of the values it saw before.
  for (Index s = 0; s < symbolic->supernode_count(); ++s) {
    if (!recomputed[s]) continue;
    for (const std::int64_t source : symbolic->a_sources(s)) {
      factored_values[static_cast<std::size_t>(source)] = hessian.lower.values[static_cast<std::size_t>(source)];
    }
  }
}

void NewtonSolver::State::iterate(NonlinearProblem& problem, std::span<double> x, int iteration_limit,
                                  NewtonStatistics& stats) {
  // Thesis §5.5: ‖∇E‖ ≤ max(absolute, relative·‖∇E(x₀)‖).
  const double tolerance = std::max(options.absolute_tolerance, options.relative_tolerance * stats.initial_gradient_norm);
  Phase phase = is_hybrid(method) && !solve_directly ? Phase::quasi_newton : Phase::newton;
  const auto switch_to_newton = [&] {
    stats.switched_to_newton = true;
    phase = Phase::newton;
  };
  // HYBRID-R: whether the factor was brought up to date at the current iterate.
  bool factor_is_current = method == NewtonMethod::hybrid_refactored && !solve_directly;
  // An iteration is one direction and its line search, whether or not the search succeeds.
  while (stats.final_gradient_norm > tolerance && stats.iterations < iteration_limit) {
    if (phase == Phase::quasi_newton && quasi_newton_limit_reached(stats)) {
      // HYBRID-R refreshes instead: its rule below decides when quasi-Newton is too slow.
      if (method != NewtonMethod::hybrid_refactored) {
        switch_to_newton();
      } else if (!refresh_refactored_factor(problem, x, stats)) {
        break;
      } else {
        factor_is_current = true;
      }
    }
    const auto iteration_start = Clock::now();
    if (!compute_direction(phase, problem, x, stats)) break;
    ++stats.iterations;
    ++(phase == Phase::quasi_newton ? stats.quasi_newton_iterations : stats.newton_iterations);
    const double previous_norm = stats.final_gradient_norm;
    if (line_search(problem, x, stats)) {
      if (phase == Phase::quasi_newton) {
        refresh_costs.record_iteration(std::chrono::duration<double>(Clock::now() - iteration_start).count(),
                                       stats.final_gradient_norm / previous_norm);
      }
      factor_is_current = refresh_when_slow(phase, previous_norm, tolerance, problem, x, stats);
      // Slow although no block had moved beyond the tolerance: the factor is as current as it
      // gets, so quasi-Newton cannot do better; Newton-PCG corrects what the tolerance leaves.
      if (factor_is_current && changed_columns.empty()) switch_to_newton();
      continue;
    }
    ++stats.failed_line_searches;
    if (phase == Phase::newton) {
      fail(stats, "the line search failed at iteration " + std::to_string(stats.iterations) +
                      " (no descent direction, or no step of " + std::to_string(options.line_search_halvings) +
                      " halvings lowered E)");
      break;
    }
    // HYBRID-R retries quasi-Newton once with its factor brought to the current iterate.
    if (method == NewtonMethod::hybrid_refactored && !factor_is_current) {
      if (!refresh_refactored_factor(problem, x, stats)) break;
      factor_is_current = true;
      continue;
    }
    switch_to_newton();  // thesis §5.5.1.1: a failed quasi-Newton line search hands over to Newton
  }
  stats.converged = stats.final_gradient_norm <= tolerance;
}

// HYBRID-R's quasi-Newton phase: when an iteration reduced ‖∇E‖ by less than refresh_ratio,
// the factor may have gone stale for this solve, and bringing it to the current iterate costs
// only the blocks that moved (seed 000 §4.4's "update where the error is") — instead of
// carrying on with slow linear convergence or handing over to Newton-PCG. It refreshes only
// where that is predicted to pay (RefreshCosts::refresh_pays): on the BAR's twist even a fresh
// factor of the definiteness-fixed Hessian converges at ≈ 0.7 an iteration, and refreshing
// after every such iteration made HYBRID-R a Newton method at 0.8 of a factorization an
// iteration (docs/benchmarks.md, issue 19, stop 53). Returns whether it refreshed.
bool NewtonSolver::State::refresh_when_slow(Phase phase, double previous_norm, double tolerance,
                                            NonlinearProblem& problem, std::span<const double> x,
                                            NewtonStatistics& stats) {
  if (method != NewtonMethod::hybrid_refactored || phase != Phase::quasi_newton) return false;
  if (stats.final_gradient_norm <= options.refresh_ratio * previous_norm) return false;
  if (!refresh_costs.refresh_pays(stats.final_gradient_norm / tolerance)) return false;
  return refresh_refactored_factor(problem, x, stats);
}

bool NewtonSolver::State::quasi_newton_limit_reached(const NewtonStatistics& stats) const {
  if (method == NewtonMethod::hybrid_refactored) {
    return refresh_costs.iterations_since_refresh() >= options.quasi_newton_iterations;
  }
  return stats.quasi_newton_iterations >= options.quasi_newton_iterations;
}

bool NewtonSolver::State::compute_direction(Phase phase, NonlinearProblem& problem, std::span<const double> x,
                                            NewtonStatistics& stats) {
  if (phase == Phase::quasi_newton) return factor_direction(stats);  // Algorithm 5.3
  if (is_refactored(method) && !solve_directly) {
    return refresh_refactored_factor(problem, x, stats) && factor_pcg_direction(stats);
  }
  assemble_hessian(problem, x, stats);
  switch (method) {
    case NewtonMethod::newton_direct:
    case NewtonMethod::newton_refactored:  // solving directly (NewtonOptions::direct_probe_every)
    case NewtonMethod::hybrid_refactored:
      return factorize_hessian(false, "∇²E", stats) && factor_direction(stats);
    case NewtonMethod::newton_iterative:
      return jacobi_pcg_direction(stats);
    default:  // …-L0, …-L1: Algorithm 5.4 with the step's factor as it is
      return factor_pcg_direction(stats);
  }
}

bool NewtonSolver::State::factor_direction(NewtonStatistics& stats) {
  const StopWatch watch(stats.solve_seconds);
  std::transform(gradient.begin(), gradient.end(), direction.begin(), [](double g) { return -g; });
  active_factor->solve(direction);
  return true;
}

bool NewtonSolver::State::factor_pcg_direction(NewtonStatistics& stats) {
  const factor::Factor& preconditioner = *active_factor;
  return pcg_direction(
      [&preconditioner](std::span<const double> r, std::span<double> z) {
        std::copy(r.begin(), r.end(), z.begin());
        preconditioner.solve(z);
      },
      stats);
}

bool NewtonSolver::State::jacobi_pcg_direction(NewtonStatistics& stats) {
  Preconditioner jacobi;
  try {
    jacobi = jacobi_preconditioner(hessian);
  } catch (const std::invalid_argument& error) {  // a diagonal entry ≤ 0: ∇²E is not SPD
    return fail(stats, std::string("Jacobi preconditioner of ∇²E: ") + error.what());
  }
  return pcg_direction(jacobi, stats);
}

bool NewtonSolver::State::pcg_direction(const Preconditioner& preconditioner, NewtonStatistics& stats) {
  const StopWatch watch(stats.solve_seconds);
  std::transform(gradient.begin(), gradient.end(), negative_gradient.begin(), [](double g) { return -g; });
  std::fill(direction.begin(), direction.end(), 0.0);
  try {
    // Thesis §5.5: a loose relative tolerance (1e-2) is enough for the Newton iteration.
    const ConjugateGradientResult result =
        conjugate_gradient(symmetric_operator(hessian), preconditioner, negative_gradient, direction,
                           {.relative_tolerance = options.pcg_tolerance, .max_iterations = options.pcg_max_iterations});
    stats.pcg_iterations += result.iterations;
  } catch (const std::runtime_error& error) {  // pᵀAp ≤ 0: ∇²E is not SPD
    return fail(stats, std::string("PCG on ∇²E: ") + error.what());
  }
  return true;  // an unconverged PCG still gives a direction; the line search judges it
}

bool NewtonSolver::State::line_search(NonlinearProblem& problem, std::span<double> x, NewtonStatistics& stats) {
  const double slope = dot(gradient, direction);
  if (!(slope < 0.0)) return false;
  double step = 1.0;
  for (int halving = 0; halving <= options.line_search_halvings; ++halving, step *= 0.5) {
    for (std::size_t i = 0; i < x.size(); ++i) trial[i] = x[i] + step * direction[i];
    if (accept_trial(problem, step, slope, stats)) {
      std::copy(trial.begin(), trial.end(), x.begin());
      gradient.swap(trial_gradient);
      stats.final_gradient_norm = linalg::norm2(gradient);
      return true;
    }
  }
  return false;
}

bool NewtonSolver::State::accept_trial(NonlinearProblem& problem, double step, double slope,
                                       NewtonStatistics& stats) {
  const double trial_energy = evaluate_energy(problem, trial, stats);
  const bool decreased = trial_energy <= energy + options.armijo_constant * step * slope;
  // Near convergence the decrease gᵀd/2 falls below the rounding error of E itself and the
  // Armijo test turns into a coin toss. There the approximate Armijo condition of Hager &
  // Zhang (SIAM J. Optim. 16(1), 2005, eq. 4.1) judges the step by the directional derivative
  // instead: ∇E(x + αd)ᵀd ≤ (2c − 1)·gᵀd, which for a quadratic E is the Armijo condition.
  const bool within_rounding = std::abs(trial_energy - energy) <= energy_rounding_band * std::abs(energy);
  if (!decreased && !within_rounding) return false;
  evaluate_gradient(problem, trial, trial_gradient, stats);
  if (!decreased && dot(trial_gradient, direction) > (2.0 * options.armijo_constant - 1.0) * slope) return false;
  energy = trial_energy;
  return true;
}

NewtonSolver::NewtonSolver(NewtonMethod method, NewtonOptions options) {
  check_options(options);
  state_ = std::make_unique<State>(method, std::move(options));
}

NewtonSolver::~NewtonSolver() = default;
NewtonSolver::NewtonSolver(NewtonSolver&&) noexcept = default;
NewtonSolver& NewtonSolver::operator=(NewtonSolver&&) noexcept = default;

NewtonStatistics NewtonSolver::solve(NonlinearProblem& problem, std::span<double> x, const StepContext& step) {
  check_sizes(problem, x, step);
  const auto start = Clock::now();
  State& s = *state_;
  NewtonStatistics stats;
  s.analysed_in_this_solve = s.ensure_analysis(problem);
  s.choose_solve_way();
  stats.solved_directly = s.solve_directly;
  if (s.evaluate_initial_guess(problem, x, stats) && s.prepare_step_factor(problem, x, step, stats)) {
    s.iterate(problem, x, step.iteration_limit > 0 ? step.iteration_limit : s.options.max_iterations, stats);
  }
  ++s.calls;
  if (stats.refactorizations > 0) stats.refactorized_flop_fraction /= stats.refactorizations;
  stats.total_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  s.record_solve_time(stats.total_seconds);
  return stats;
}

NewtonMethod NewtonSolver::method() const { return state_->method; }
const NewtonOptions& NewtonSolver::options() const { return state_->options; }

}  // namespace cholsim::solvers
