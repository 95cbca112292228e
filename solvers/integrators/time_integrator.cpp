#include "solvers/integrators/time_integrator.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "solvers/nonlinear/named_choices.hpp"

namespace cholsim::solvers {
namespace {

using Clock = std::chrono::steady_clock;
using linalg::Offset;

constexpr NameTable<IntegratorKind, 5> integrator_names{{
    {IntegratorKind::quasistatic, "quasistatic"},
    {IntegratorKind::baraff, "baraff"},
    {IntegratorKind::bdf1, "bdf1"},
    {IntegratorKind::bdf2, "bdf2"},
    {IntegratorKind::sdirk2, "sdirk2"},
}};

/// SDIRK2's α = (2 − √2)/2 (seed 002 eq. C.7–C.8): L-stable and second order.
const double sdirk2_alpha = 1.0 - 1.0 / std::sqrt(2.0);

using Term = std::pair<double, std::span<const double>>;

/// out = Σ coefficient·vector over `terms`, entry by entry (out may be one of the vectors).
void linear_combination(std::span<double> out, std::initializer_list<Term> terms) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    double sum = 0.0;
    for (const auto& [coefficient, vector] : terms) sum += coefficient * vector[i];
    out[i] = sum;
  }
}

/// y += scale·D·(x − base) for D symmetric in lower storage.
void add_damping_gradient(const linalg::SymmetricCscMatrix& damping, std::span<const double> x,
                          std::span<const double> base, double scale, std::span<double> y) {
  const linalg::CscMatrix& d = damping.lower;
  for (Index j = 0; j < d.cols; ++j) {
    for (Offset p = d.col_ptr[j]; p < d.col_ptr[j + 1]; ++p) {
      const Index i = d.row_idx[p];
      y[i] += scale * d.values[p] * (x[j] - base[j]);
      if (i != j) y[j] += scale * d.values[p] * (x[i] - base[i]);
    }
  }
}

/// (x − base)ᵀ·D·(x − base) for D symmetric in lower storage.
double damping_quadratic_form(const linalg::SymmetricCscMatrix& damping, std::span<const double> x,
                              std::span<const double> base) {
  const linalg::CscMatrix& d = damping.lower;
  double sum = 0.0;
  for (Index j = 0; j < d.cols; ++j) {
    for (Offset p = d.col_ptr[j]; p < d.col_ptr[j + 1]; ++p) {
      const Index i = d.row_idx[p];
      sum += (i == j ? 1.0 : 2.0) * d.values[p] * (x[i] - base[i]) * (x[j] - base[j]);
    }
  }
  return sum;
}

void require_size(std::size_t size, Index n, const char* what) {
  if (size != static_cast<std::size_t>(n)) {
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(size) + " entries, the system " +
                                std::to_string(n) + " degrees of freedom");
  }
}

}  // namespace

std::string_view integrator_name(IntegratorKind kind) { return choice_name(integrator_names, kind, "integrator_name"); }

IntegratorKind parse_integrator(std::string_view name) { return parse_choice(integrator_names, name, "integrator"); }

int solves_per_step(IntegratorKind kind) { return kind == IntegratorKind::sdirk2 ? 2 : 1; }

// ---------------------------------------------------------------------------------------------
// IncrementalPotential

IncrementalPotential::IncrementalPotential(MechanicalSystem& system, Terms terms)
    : system_(system),
      terms_(terms),
      inertia_weight_(terms.inertia_scale / (terms.a * terms.a)),
      damping_weight_(1.0 / terms.a) {
  const Index n = system.size();
  if (terms.inertia_scale != 0.0) require_size(terms.predicted.size(), n, "IncrementalPotential: predicted");
  if (terms.damping != nullptr) {
    require_size(terms.base.size(), n, "IncrementalPotential: base");
    if (terms.damping->nnz_lower() != system.pattern().nnz_lower()) {
      throw std::invalid_argument("IncrementalPotential: the damping matrix does not have the system's pattern");
    }
  }
}

Index IncrementalPotential::size() const { return system_.size(); }

double IncrementalPotential::energy(std::span<const double> x) {
  double e = system_.potential(x);
  if (inertia_weight_ != 0.0) {
    const auto masses = system_.masses();
    double inertia = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      inertia += masses[i] * (x[i] - terms_.predicted[i]) * (x[i] - terms_.predicted[i]);
    }
    e += 0.5 * inertia_weight_ * inertia;
  }
  if (terms_.damping != nullptr) e += 0.5 * damping_weight_ * damping_quadratic_form(*terms_.damping, x, terms_.base);
  return e;
}

void IncrementalPotential::gradient(std::span<const double> x, std::span<double> gradient) {
  system_.potential_gradient(x, gradient);
  if (inertia_weight_ != 0.0) {
    const auto masses = system_.masses();
    for (std::size_t i = 0; i < x.size(); ++i) {
      gradient[i] += inertia_weight_ * masses[i] * (x[i] - terms_.predicted[i]);
    }
  }
  if (terms_.damping != nullptr) add_damping_gradient(*terms_.damping, x, terms_.base, damping_weight_, gradient);
}

const linalg::SymmetricCscMatrix& IncrementalPotential::hessian_pattern() const { return system_.pattern(); }

void IncrementalPotential::hessian(std::span<const double> x, linalg::SymmetricCscMatrix& hessian) {
  system_.potential_hessian(x, hessian);
  if (terms_.damping != nullptr) {
    for (std::size_t k = 0; k < hessian.lower.values.size(); ++k) {
      hessian.lower.values[k] += damping_weight_ * terms_.damping->lower.values[k];
    }
  }
  add_inertia(hessian);
}

void IncrementalPotential::add_inertia(linalg::SymmetricCscMatrix& hessian) const {
  if (inertia_weight_ == 0.0) return;
  const auto masses = system_.masses();
  const linalg::CscMatrix& h = hessian.lower;
  for (Index j = 0; j < h.cols; ++j) {
    const Offset first = h.col_ptr[j];
    if (first == h.col_ptr[j + 1] || h.row_idx[first] != j) {
      throw std::logic_error("IncrementalPotential: the system's pattern has no diagonal entry in column " +
                             std::to_string(j) + " for the mass");
    }
    hessian.lower.values[first] += inertia_weight_ * masses[j];
  }
}

bool IncrementalPotential::selective_hessian(std::span<const double> x, double tolerance,
                                             linalg::SymmetricCscMatrix& hessian, linalg::SymmetricCscMatrix& factored,
                                             std::vector<Index>& changed_dofs) {
  const double damping_scale = terms_.damping != nullptr ? damping_weight_ : 0.0;
  if (!system_.selective_potential_hessian(x, 1.0, damping_scale, tolerance, hessian, factored,
                                           changed_dofs)) {
    return false;
  }
  // The mass is the same in every solve of a simulation: never a change.
  add_inertia(hessian);
  add_inertia(factored);
  return true;
}

void IncrementalPotential::reset_selective_hessian() { system_.reset_selective_hessian(); }

void IncrementalPotential::hessian_rate(std::span<const double> x, std::span<const double> velocity,
                                        linalg::SymmetricCscMatrix& rate) {
  // M and the frozen D do not move with x: only a²·∇²V does (seed 002 eq. 5.2, Ḋ = 0).
  system_.potential_hessian_rate(x, velocity, rate);
}

// ---------------------------------------------------------------------------------------------
// TimeIntegrator

namespace {

/// One nonlinear solve of a step: the incremental potential with coefficient `a`, solved for
/// the state at `time`, from the stage's start state (x, v at `start`, `length` earlier).
struct Stage {
  double time = 0.0;
  double a = 1.0;
  bool inertia = true;  ///< false: quasistatic, E = V
  std::span<const double> start{};
  std::span<const double> velocity{};
  double length = 0.0;
  int iteration_limit = 0;
  /// Start the Newton iteration at `start` instead of continuing its velocity (Baraff).
  bool guess_at_start = false;
};

}  // namespace

struct TimeIntegrator::State {
  State(MechanicalSystem& mechanical_system, NewtonSolver& newton_solver, IntegratorKind integrator, double step)
      : system(mechanical_system), solver(newton_solver), kind(integrator), time_step(step) {
    const auto n = static_cast<std::size_t>(system.size());
    for (auto* vector : {&x, &v, &previous_x, &previous_v, &next_x, &next_v, &stage_x, &stage_v, &predicted, &base}) {
      vector->assign(n, 0.0);
    }
    damping = system.pattern();
    damping.lower.values.assign(static_cast<std::size_t>(damping.nnz_lower()), 0.0);
  }

  MechanicalSystem& system;
  NewtonSolver& solver;
  IntegratorKind kind;
  double time_step;
  double time = 0.0;
  std::vector<double> x, v;                    ///< x⁽ᵏ⁾, v⁽ᵏ⁾
  std::vector<double> previous_x, previous_v;  ///< x⁽ᵏ⁻¹⁾, v⁽ᵏ⁻¹⁾ (BDF2)
  bool has_previous = false;
  std::vector<double> next_x, next_v, stage_x, stage_v;
  std::vector<double> predicted, base;  ///< x̂ and x_b of the solve at hand
  linalg::SymmetricCscMatrix damping;   ///< D at the step's start
  bool damped = false;

  NewtonStatistics solve(const Stage& stage, std::span<double> solution);
  void quasistatic_step(IntegratorStepStatistics& stats);
  void bdf1_step(IntegratorStepStatistics& stats);
  void bdf2_step(IntegratorStepStatistics& stats);
  void sdirk2_step(IntegratorStepStatistics& stats);
};

NewtonStatistics TimeIntegrator::State::solve(const Stage& stage, std::span<double> solution) {
  system.set_time(stage.time);
  // "The step length ahead": the time from the stage's start to its solution (for BDF1 and
  // SDIRK2's first stage this is a; for quasistatic steps h, where a = 1 is no time at all).
  system.begin_solve(stage.start, stage.velocity, stage.length);
  IncrementalPotential problem(system, {.inertia_scale = stage.inertia ? 1.0 : 0.0,
                                        .a = stage.a,
                                        .predicted = predicted,
                                        .base = base,
                                        .damping = stage.inertia && damped ? &damping : nullptr});
  // Algorithm 5.5 line 5: the guess continues the stage's start velocity (quasistatic and
  // Baraff: it stays at x⁽ᵏ⁾); where that point is not admissible (E = +∞), the start itself is.
  const double guess_length = stage.inertia && !stage.guess_at_start ? stage.length : 0.0;
  linear_combination(solution, {{1.0, stage.start}, {guess_length, stage.velocity}});
  if (stage.inertia && !std::isfinite(problem.energy(solution))) {
    std::copy(stage.start.begin(), stage.start.end(), solution.begin());
  }
  // The factor's reference is the stage's start and its Δt the time to the solution, so L̃ of
  // eq. 5.4 predicts the factor where the solution lies (SDIRK2: αh, then (1 − α)h).
  return solver.solve(problem, solution,
                      {.start = stage.start, .velocity = stage.velocity, .time_step = stage.length,
                       .iteration_limit = stage.iteration_limit});
}

void TimeIntegrator::State::quasistatic_step(IntegratorStepStatistics& stats) {
  // App. C.2.3: minimize V at the boundary conditions of t⁽ᵏ⁺¹⁾.
  stats.solves.push_back(
      solve({.time = time + time_step, .inertia = false, .start = x, .velocity = v, .length = time_step}, next_x));
  // Not a dynamic velocity: the rate the solution moves at, which L̇ extrapolates along.
  linear_combination(next_v, {{1.0 / time_step, next_x}, {-1.0 / time_step, x}});
}

void TimeIntegrator::State::bdf1_step(IntegratorStepStatistics& stats) {
  // App. C.2.1 (eq. C.2); Baraff (C.2.2) stops after one Newton iteration, from x⁽ᵏ⁾: that
  // iteration's system is then Baraff–Witkin's, (M − hD − h²K⁽ᵏ⁾)Δv = h(f⁽ᵏ⁾ + hK⁽ᵏ⁾v⁽ᵏ⁾),
  // linearized at the known state. From the predictor x⁽ᵏ⁾ + h·v⁽ᵏ⁾ instead it is linearized at
  // a guess, which on the thesis' ARMADILLO (E = 1e7, ν = 0.49, h = 1e-2, full resolution)
  // inverted 26 tets in the first step and flew apart at 500 m/s by the fifteenth
  // (docs/benchmarks.md, issue 19, stop 53).
  const double h = time_step;
  damped = system.damping_matrix(x, v, damping);
  base = x;
  linear_combination(predicted, {{1.0, x}, {h, v}});
  const bool baraff = kind == IntegratorKind::baraff;
  stats.solves.push_back(solve({.time = time + h,
                                .a = h,
                                .start = x,
                                .velocity = v,
                                .length = h,
                                .iteration_limit = baraff ? 1 : 0,
                                .guess_at_start = baraff},
                               next_x));
  linear_combination(next_v, {{1.0 / h, next_x}, {-1.0 / h, base}});
}

void TimeIntegrator::State::bdf2_step(IntegratorStepStatistics& stats) {
  // App. C.2.4 (eq. C.5–C.6).
  const double h = time_step;
  const double a = 2.0 * h / 3.0;
  damped = system.damping_matrix(x, v, damping);
  linear_combination(base, {{4.0 / 3.0, x}, {-1.0 / 3.0, previous_x}});
  linear_combination(predicted, {{1.0, base}, {8.0 * h / 9.0, v}, {-2.0 * h / 9.0, previous_v}});
  stats.solves.push_back(solve({.time = time + h, .a = a, .start = x, .velocity = v, .length = h}, next_x));
  linear_combination(next_v, {{1.0 / a, next_x}, {-1.0 / a, base}});
}

void TimeIntegrator::State::sdirk2_step(IntegratorStepStatistics& stats) {
  // App. C.2.5 (eq. C.7–C.10): two solves with the same a = αh.
  const double h = time_step;
  const double a = sdirk2_alpha * h;
  damped = system.damping_matrix(x, v, damping);
  base = x;
  linear_combination(predicted, {{1.0, x}, {a, v}});
  stats.solves.push_back(solve({.time = time + a, .a = a, .start = x, .velocity = v, .length = a}, stage_x));
  linear_combination(stage_v, {{1.0 / a, stage_x}, {-1.0 / a, x}});

  linear_combination(base, {{1.0, x}, {(1.0 - sdirk2_alpha) * h, stage_v}});
  linear_combination(predicted, {{1.0, x}, {(2.0 * sdirk2_alpha - 1.0) * h, v}, {2.0 * (1.0 - sdirk2_alpha) * h, stage_v}});
  stats.solves.push_back(
      solve({.time = time + h, .a = a, .start = stage_x, .velocity = stage_v, .length = h - a}, next_x));
  linear_combination(next_v, {{1.0 / a, next_x}, {-1.0 / a, base}});
}

TimeIntegrator::TimeIntegrator(MechanicalSystem& system, NewtonSolver& solver, IntegratorKind kind, double time_step) {
  if (!(time_step > 0.0) || !std::isfinite(time_step)) {
    throw std::invalid_argument("TimeIntegrator: the time step must be positive and finite, not " +
                                std::to_string(time_step));
  }
  state_ = std::make_unique<State>(system, solver, kind, time_step);
}

TimeIntegrator::~TimeIntegrator() = default;
TimeIntegrator::TimeIntegrator(TimeIntegrator&&) noexcept = default;
TimeIntegrator& TimeIntegrator::operator=(TimeIntegrator&&) noexcept = default;

void TimeIntegrator::set_state(std::span<const double> positions, std::span<const double> velocities, double time) {
  State& s = *state_;
  require_size(positions.size(), s.system.size(), "TimeIntegrator::set_state: positions");
  require_size(velocities.size(), s.system.size(), "TimeIntegrator::set_state: velocities");
  const auto finite = [](double value) { return std::isfinite(value); };
  if (!std::ranges::all_of(positions, finite) || !std::ranges::all_of(velocities, finite) || !std::isfinite(time)) {
    throw std::invalid_argument("TimeIntegrator::set_state: non-finite position, velocity or time");
  }
  s.x.assign(positions.begin(), positions.end());
  s.v.assign(velocities.begin(), velocities.end());
  s.time = time;
  s.has_previous = false;  // BDF2 starts over with an SDIRK2 step
  s.system.set_time(time);
}

IntegratorStepStatistics TimeIntegrator::step() {
  State& s = *state_;
  const auto start = Clock::now();
  IntegratorStepStatistics stats;
  switch (s.kind) {
    case IntegratorKind::quasistatic:
      s.quasistatic_step(stats);
      break;
    case IntegratorKind::baraff:
    case IntegratorKind::bdf1:
      s.bdf1_step(stats);
      break;
    case IntegratorKind::bdf2:
      // App. C.2.4: BDF2 needs two previous states; SDIRK2 takes the first step.
      if (s.has_previous) {
        s.bdf2_step(stats);
      } else {
        s.sdirk2_step(stats);
      }
      break;
    case IntegratorKind::sdirk2:
      s.sdirk2_step(stats);
      break;
  }
  s.previous_x.swap(s.x);
  s.previous_v.swap(s.v);
  s.x.swap(s.next_x);
  s.v.swap(s.next_v);
  s.has_previous = true;
  s.time += s.time_step;
  stats.time = s.time;
  stats.converged = std::ranges::all_of(stats.solves, [](const NewtonStatistics& solve) { return solve.converged; });
  stats.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return stats;
}

IntegratorKind TimeIntegrator::kind() const { return state_->kind; }
double TimeIntegrator::time_step() const { return state_->time_step; }
double TimeIntegrator::time() const { return state_->time; }
std::span<const double> TimeIntegrator::positions() const { return state_->x; }
std::span<const double> TimeIntegrator::velocities() const { return state_->v; }

}  // namespace cholsim::solvers
