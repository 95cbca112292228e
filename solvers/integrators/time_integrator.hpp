#pragma once
// Implicit time integrators of seed 002 app. C, each step one or two nonlinear solves by a
// NewtonSolver (any of its methods):
//  * quasistatic (C.2.3): f(x⁽ᵏ⁺¹⁾) = 0 at the boundary conditions of t⁽ᵏ⁺¹⁾, i.e. minimize V;
//  * baraff (C.2.2): BDF1 with a single Newton iteration from x⁽ᵏ⁾ (linearly implicit: exactly
//    Baraff–Witkin's velocity update, the forces linearized at the known state);
//  * bdf1 (C.2.1), bdf2 (C.2.4, started by one SDIRK2 step), sdirk2 (C.2.5, two solves).
// Every solve is the minimization of an incremental potential
//   E(x) = ½‖x − x̂‖²_M/a² + V(x) + ½·(x − x_b)ᵀ·D·(x − x_b)/a,   v⁽ᵏ⁺¹⁾ = (x − x_b)/a,
// whose gradient and Hessian are the b_i and A_i of eq. C.2, C.6, C.9, C.10 divided by a²: the
// same Newton directions, with ∇E in units of force, so that an absolute tolerance means the
// same (newtons of residual force) for a 2 kg bunny at h = 3 ms as for a quasistatic bar:
//   BDF1:   a = h,      x_b = x⁽ᵏ⁾,                     x̂ = x⁽ᵏ⁾ + h·v⁽ᵏ⁾;
//   BDF2:   a = 2h/3,   x_b = (4x⁽ᵏ⁾ − x⁽ᵏ⁻¹⁾)/3,       x̂ = x_b + (8h·v⁽ᵏ⁾ − 2h·v⁽ᵏ⁻¹⁾)/9;
//   SDIRK2 (α = 1 − 1/√2), stage 1: a = αh, x_b = x⁽ᵏ⁾, x̂ = x⁽ᵏ⁾ + αh·v⁽ᵏ⁾;
//          stage 2: a = αh, x_b = x⁽ᵏ⁾ + (1−α)h·v⁽ᵏ⁺ᵅ⁾,
//                   x̂ = x⁽ᵏ⁾ + (2α−1)h·v⁽ᵏ⁾ + 2(1−α)h·v⁽ᵏ⁺ᵅ⁾.
// D is the system's damping matrix at the step's start state (frozen over the step, so E stays
// a potential the line search can use). Quasistatic steps minimize V alone.
// Each solve starts from x_s + Δt·v_s (quasistatic and Baraff: x_s), x_s and v_s the state its stage starts
// from (x⁽ᵏ⁾, v⁽ᵏ⁾; SDIRK2's second stage: x⁽ᵏ⁺ᵅ⁾, v⁽ᵏ⁺ᵅ⁾) and Δt the time from there to the
// solve's solution (h; SDIRK2: αh, then (1−α)h). The solver's StepContext is {x_s, v_s, Δt}, so an
// extrapolated factor L̃ = L + Δt·L̇ predicts the factor at the solution, also when it is kept
// over both stages; begin_solve(x_s, v_s, Δt) gets the same. Quasistatic velocities
// (x⁽ᵏ⁺¹⁾ − x⁽ᵏ⁾)/h serve only as L̇'s direction.
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "solvers/integrators/mechanical_system.hpp"
#include "solvers/nonlinear/newton_solver.hpp"

namespace cholsim::solvers {

enum class IntegratorKind { quasistatic, baraff, bdf1, bdf2, sdirk2 };

/// "quasistatic", "baraff", "bdf1", "bdf2", "sdirk2".
std::string_view integrator_name(IntegratorKind kind);
/// The inverse of integrator_name (case-insensitive); std::invalid_argument listing the names.
IntegratorKind parse_integrator(std::string_view name);
/// Nonlinear solves per step: 2 for sdirk2 (and bdf2's first step), else 1.
int solves_per_step(IntegratorKind kind);

/// One step's record.
struct IntegratorStepStatistics {
  double time = 0.0;                        ///< t⁽ᵏ⁺¹⁾
  std::vector<NewtonStatistics> solves;     ///< one per nonlinear solve, in order
  bool converged = true;                    ///< every solve converged
  double seconds = 0.0;
};

class TimeIntegrator {
 public:
  /// `system` and `solver` must outlive the integrator. Throws std::invalid_argument for a
  /// time step that is not positive and finite.
  TimeIntegrator(MechanicalSystem& system, NewtonSolver& solver, IntegratorKind kind, double time_step);
  ~TimeIntegrator();
  TimeIntegrator(TimeIntegrator&&) noexcept;
  TimeIntegrator& operator=(TimeIntegrator&&) noexcept;

  /// Starting state (free DOFs); the default is x = 0, v = 0 at t = 0 — callers set the rest
  /// positions. std::invalid_argument on a size mismatch or a non-finite value.
  void set_state(std::span<const double> positions, std::span<const double> velocities, double time = 0.0);

  /// Advances one step; an unconverged solve does not throw (its statistics say so) and the
  /// step is still taken from the last iterate.
  IntegratorStepStatistics step();

  [[nodiscard]] IntegratorKind kind() const;
  [[nodiscard]] double time_step() const;
  [[nodiscard]] double time() const;
  [[nodiscard]] std::span<const double> positions() const;
  [[nodiscard]] std::span<const double> velocities() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// The incremental potential above as a NonlinearProblem (exposed for tests and for callers
/// that drive a solver themselves). References `system`; `damping` may be null (undamped).
class IncrementalPotential final : public NonlinearProblem {
 public:
  struct Terms {
    double inertia_scale = 1.0;        ///< 0 for quasistatic (no ½‖x − x̂‖²_M term)
    double a = 1.0;                    ///< the step's coefficient above
    std::span<const double> predicted; ///< x̂ (ignored when inertia_scale is 0)
    std::span<const double> base;      ///< x_b (ignored without damping)
    const linalg::SymmetricCscMatrix* damping = nullptr;  ///< D, or null
  };
  IncrementalPotential(MechanicalSystem& system, Terms terms);

  [[nodiscard]] Index size() const override;
  double energy(std::span<const double> x) override;
  void gradient(std::span<const double> x, std::span<double> gradient) override;
  [[nodiscard]] const linalg::SymmetricCscMatrix& hessian_pattern() const override;
  void hessian(std::span<const double> x, linalg::SymmetricCscMatrix& hessian) override;
  /// a²·(d/dt ∇²V) through the system's potential_hessian_rate (D is frozen: Ḋ = 0).
  void hessian_rate(std::span<const double> x, std::span<const double> velocity,
                    linalg::SymmetricCscMatrix& rate) override;
  /// The system's selective blocks scaled as in hessian(), the mass added to both matrices.
  bool selective_hessian(std::span<const double> x, double tolerance, linalg::SymmetricCscMatrix& hessian,
                         linalg::SymmetricCscMatrix& factored, std::vector<Index>& changed_dofs) override;
  void reset_selective_hessian() override;

 private:
  // Adds inertia_scale·M to the diagonal of `hessian` (system's pattern).
  void add_inertia(linalg::SymmetricCscMatrix& hessian) const;

  MechanicalSystem& system_;
  Terms terms_;
  double inertia_weight_;  ///< inertia_scale/a²
  double damping_weight_;  ///< 1/a
};

}  // namespace cholsim::solvers
