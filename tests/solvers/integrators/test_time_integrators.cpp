#include "solvers/integrators/time_integrator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "linalg/vector_norms.hpp"

namespace cholsim::solvers {
namespace {

using linalg::Offset;

/// n equal masses on a line between two walls, neighbours (and the walls) joined by springs of
/// energy ½k·e² + ¼k₃·e⁴ in the extension e (displacement coordinates, rest length 0), a
/// constant load f on every mass, the left wall at u(t) = wall_amplitude·sin(t) and the right
/// one at 0. Optional Rayleigh damping D = α·M + β·∇²V(x). Unknown i's neighbours are i ± 1,
/// so ∇²V is tridiagonal.
class SpringChain final : public MechanicalSystem {
 public:
  SpringChain(Index n, double stiffness, double cubic_stiffness)
      : load(static_cast<std::size_t>(n), 0.0), k_(stiffness), k3_(cubic_stiffness), masses_(static_cast<std::size_t>(n), 1.0) {
    linalg::Triplets triplets;
    for (Index i = 0; i < n; ++i) {
      triplets.add(i, i, 0.0);
      if (i + 1 < n) triplets.add(i + 1, i, 0.0);
    }
    pattern_ = linalg::symmetric_from_triplets(n, triplets);
  }

  double wall_amplitude = 0.0;
  double mass_damping = 0.0;       ///< α
  double stiffness_damping = 0.0;  ///< β
  std::vector<double> load;

  [[nodiscard]] Index size() const override { return static_cast<Index>(masses_.size()); }
  [[nodiscard]] std::span<const double> masses() const override { return masses_; }
  void set_time(double time) override { wall_ = wall_amplitude * std::sin(time); }
  [[nodiscard]] double wall() const { return wall_; }

  double potential(std::span<const double> x) override {
    double v = 0.0;
    for (Index s = 0; s <= size(); ++s) {
      const double e = extension(x, s);
      v += 0.5 * k_ * e * e + 0.25 * k3_ * e * e * e * e;
    }
    for (Index i = 0; i < size(); ++i) v -= load[i] * x[i];
    return v;
  }

  void potential_gradient(std::span<const double> x, std::span<double> g) override {
    for (Index i = 0; i < size(); ++i) g[i] = -load[i];
    for (Index s = 0; s <= size(); ++s) {  // spring s joins unknowns s − 1 and s
      const double e = extension(x, s);
      const double tension = k_ * e + k3_ * e * e * e;
      if (s < size()) g[s] += tension;
      if (s > 0) g[s - 1] -= tension;
    }
  }

  [[nodiscard]] const linalg::SymmetricCscMatrix& pattern() const override { return pattern_; }

  void potential_hessian(std::span<const double> x, linalg::SymmetricCscMatrix& h) override {
    h.lower.values.assign(static_cast<std::size_t>(pattern_.nnz_lower()), 0.0);
    for (Index s = 0; s <= size(); ++s) {
      const double e = extension(x, s);
      const double w = k_ + 3.0 * k3_ * e * e;
      if (s < size()) h.lower.values[h.lower.col_ptr[s]] += w;
      if (s > 0) h.lower.values[h.lower.col_ptr[s - 1]] += w;
      if (s > 0 && s < size()) h.lower.values[h.lower.col_ptr[s - 1] + 1] -= w;
    }
  }

  bool damping_matrix(std::span<const double> x, std::span<const double>, linalg::SymmetricCscMatrix& d) override {
    if (mass_damping == 0.0 && stiffness_damping == 0.0) return false;
    potential_hessian(x, d);
    for (double& value : d.lower.values) value *= stiffness_damping;
    for (Index i = 0; i < size(); ++i) d.lower.values[d.lower.col_ptr[i]] += mass_damping * masses_[i];
    return true;
  }

  /// ½vᵀMv + V(x).
  double mechanical_energy(std::span<const double> x, std::span<const double> v) {
    double kinetic = 0.0;
    for (Index i = 0; i < size(); ++i) kinetic += 0.5 * masses_[i] * v[i] * v[i];
    return kinetic + potential(x);
  }

 private:
  /// Spring s: from unknown s − 1 (or the left wall) to unknown s (or the right wall).
  [[nodiscard]] double extension(std::span<const double> x, Index s) const {
    const double left = s == 0 ? wall_ : x[s - 1];
    const double right = s == size() ? 0.0 : x[s];
    return right - left;
  }

  double k_, k3_;
  double wall_ = 0.0;
  std::vector<double> masses_;
  linalg::SymmetricCscMatrix pattern_;
};

NewtonOptions tight_step_options() {
  NewtonOptions options;
  options.relative_tolerance = 1e-12;
  // ∇E is in units of force (the incremental potential is divided by a²): M·(x − x̂)/a² rounds
  // at about 1e-16/h² ≈ 1e-12 here, and an error of 1e-9 in force moves x by only a²·1e-9.
  options.absolute_tolerance = 1e-9;
  options.threads = 1;
  return options;
}

/// x(T) of the linear oscillator m = k = 1 between two springs (ω = √2) from x = 1, v = 0.
double oscillator_position(IntegratorKind kind, double time_step, double end_time) {
  SpringChain oscillator(1, 1.0, 0.0);
  NewtonSolver solver(NewtonMethod::newton_direct, tight_step_options());
  TimeIntegrator integrator(oscillator, solver, kind, time_step);
  const std::vector<double> x0{1.0}, v0{0.0};
  integrator.set_state(x0, v0);
  const int steps = static_cast<int>(std::lround(end_time / time_step));
  for (int k = 0; k < steps; ++k) EXPECT_TRUE(integrator.step().converged);
  return integrator.positions()[0];
}

/// Error at T = 1 with time step h over the error with h/2: 2 for a first-order method, 4 for a
/// second-order one, once h is small enough for the leading error term to dominate.
double convergence_ratio(IntegratorKind kind, double h) {
  const double exact = std::cos(std::sqrt(2.0));
  const double coarse = std::abs(oscillator_position(kind, h, 1.0) - exact);
  const double fine = std::abs(oscillator_position(kind, h / 2, 1.0) - exact);
  return coarse / fine;
}

TEST(TimeIntegrators, Bdf1IsFirstOrder) {
  // Measured 1.87 at h = 0.02 (the h² term still shows), 1.97 at h = 0.005.
  EXPECT_NEAR(convergence_ratio(IntegratorKind::bdf1, 0.005), 2.0, 0.1);
}

TEST(TimeIntegrators, Bdf2AndSdirk2AreSecondOrder) {
  // Measured 3.94 and 4.00 at h = 0.02.
  EXPECT_NEAR(convergence_ratio(IntegratorKind::bdf2, 0.02), 4.0, 0.3);
  EXPECT_NEAR(convergence_ratio(IntegratorKind::sdirk2, 0.02), 4.0, 0.3);
}

/// Mechanical energy after `steps` steps of the oscillator (or a damped one) over the initial.
double energy_ratio(IntegratorKind kind, double mass_damping, int steps) {
  SpringChain oscillator(1, 1.0, 0.0);
  oscillator.mass_damping = mass_damping;
  NewtonSolver solver(NewtonMethod::newton_direct, tight_step_options());
  TimeIntegrator integrator(oscillator, solver, kind, 0.05);
  const std::vector<double> x0{1.0}, v0{0.0};
  integrator.set_state(x0, v0);
  const double initial = oscillator.mechanical_energy(x0, v0);
  for (int k = 0; k < steps; ++k) (void)integrator.step();
  return oscillator.mechanical_energy(integrator.positions(), integrator.velocities()) / initial;
}

TEST(TimeIntegrators, Bdf1DampsAnUndampedOscillatorAndSecondOrderMethodsHardly) {
  // BDF1 loses a factor 1 + ω²h² of energy per step: (1.005)^-200 ≈ 0.369 over 200 steps
  // (measured 0.3688); BDF2 kept 0.9976, SDIRK2 0.99996.
  EXPECT_NEAR(energy_ratio(IntegratorKind::bdf1, 0.0, 200), std::pow(1.005, -200), 0.005);
  EXPECT_GT(energy_ratio(IntegratorKind::bdf2, 0.0, 200), 0.99);
  EXPECT_GT(energy_ratio(IntegratorKind::sdirk2, 0.0, 200), 0.99);
}

TEST(TimeIntegrators, MassProportionalDampingDecaysTheEnergyLikeTheExactSolution) {
  // D = α·M: x(t) = e^(−βt)·(cos ω_d t + β/ω_d·sin ω_d t), β = α/2, ω_d = √(2 − β²), from
  // x = 1, v = 0, so v(t) = −e^(−βt)·(ω_d + β²/ω_d)·sin ω_d t; energy ½v² + x² over 1.
  constexpr double alpha = 0.2, end_time = 5.0;
  const double beta = alpha / 2, omega = std::sqrt(2.0 - beta * beta), decay = std::exp(-beta * end_time);
  const double x = decay * (std::cos(omega * end_time) + beta / omega * std::sin(omega * end_time));
  const double v = -decay * (omega + beta * beta / omega) * std::sin(omega * end_time);
  const double exact = 0.5 * v * v + x * x;
  EXPECT_NEAR(energy_ratio(IntegratorKind::sdirk2, alpha, 100), exact, 0.005);
  EXPECT_NEAR(energy_ratio(IntegratorKind::bdf2, alpha, 100), exact, 0.005);
}

TEST(TimeIntegrators, RayleighDampingReducesTheEnergyOfANonlinearChain) {
  const auto final_energy = [](double mass_damping, double stiffness_damping) {
    SpringChain chain(8, 1.0, 2.0);
    chain.mass_damping = mass_damping;
    chain.stiffness_damping = stiffness_damping;
    NewtonSolver solver(NewtonMethod::newton_direct, tight_step_options());
    TimeIntegrator integrator(chain, solver, IntegratorKind::bdf2, 0.05);
    std::vector<double> x0(8), v0(8, 0.0);
    for (std::size_t i = 0; i < x0.size(); ++i) x0[i] = std::sin(0.8 * static_cast<double>(i + 1));
    integrator.set_state(x0, v0);
    const double initial = chain.mechanical_energy(x0, v0);
    for (int k = 0; k < 100; ++k) EXPECT_TRUE(integrator.step().converged);
    return chain.mechanical_energy(integrator.positions(), integrator.velocities()) / initial;
  };
  const double undamped = final_energy(0.0, 0.0);
  EXPECT_GT(undamped, 0.9);
  EXPECT_LT(final_energy(0.1, 0.05), 0.5 * undamped);
}

TEST(TimeIntegrators, QuasistaticStepsSatisfyEquilibriumUnderAMovingWall) {
  SpringChain chain(10, 1.0, 2.0);
  chain.wall_amplitude = 0.5;
  for (std::size_t i = 0; i < chain.load.size(); ++i) chain.load[i] = 0.1 * std::cos(static_cast<double>(i));
  NewtonOptions options = tight_step_options();
  options.absolute_tolerance = 1e-13;  // E = V: the gradient is the spring forces themselves
  NewtonSolver solver(NewtonMethod::hybrid_extrapolated, options);
  TimeIntegrator integrator(chain, solver, IntegratorKind::quasistatic, 0.1);
  integrator.set_state(std::vector<double>(10, 0.0), std::vector<double>(10, 0.0));
  std::vector<double> gradient(10);
  for (int k = 1; k <= 15; ++k) {
    const std::vector<double> before(integrator.positions().begin(), integrator.positions().end());
    const IntegratorStepStatistics stats = integrator.step();
    ASSERT_EQ(stats.solves.size(), 1u);
    EXPECT_TRUE(stats.converged) << stats.solves[0].failure;
    EXPECT_NEAR(chain.wall(), 0.5 * std::sin(0.1 * k), 1e-15);  // V is that of t⁽ᵏ⁺¹⁾
    chain.potential_gradient(integrator.positions(), gradient);
    EXPECT_LT(linalg::norm2(gradient), 1e-10) << "step " << k;
    // The velocity is the rate the equilibrium moves at.
    EXPECT_NEAR(integrator.velocities()[0], (integrator.positions()[0] - before[0]) / 0.1, 1e-12);
  }
  EXPECT_GT(std::abs(integrator.positions()[0]), 0.1);  // the wall dragged the chain along
}

TEST(TimeIntegrators, IncrementalPotentialDerivativesMatchCentralDifferences) {
  SpringChain chain(6, 1.0, 2.0);
  chain.wall_amplitude = 0.3;
  chain.set_time(0.7);
  chain.mass_damping = 0.3;
  chain.stiffness_damping = 0.1;
  std::vector<double> x(6), predicted(6), base(6), velocity(6);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double t = static_cast<double>(i);
    x[i] = 0.4 * std::sin(1.3 * t);
    predicted[i] = 0.2 * std::cos(0.7 * t);
    base[i] = -0.1 * t;
    velocity[i] = std::cos(2.1 * t);
  }
  linalg::SymmetricCscMatrix damping = chain.pattern();
  ASSERT_TRUE(chain.damping_matrix(predicted, velocity, damping));
  IncrementalPotential problem(chain, {.inertia_scale = 1.0, .a = 0.3, .predicted = predicted, .base = base,
                                       .damping = &damping});
  std::vector<double> gradient(6), plus(6), minus(6), gradient_plus(6), gradient_minus(6);
  problem.gradient(x, gradient);
  linalg::SymmetricCscMatrix hessian = chain.pattern();
  problem.hessian(x, hessian);
  const linalg::CscMatrix full = linalg::to_full(hessian);
  constexpr double h = 1e-5;
  for (Index j = 0; j < 6; ++j) {
    plus = x;
    minus = x;
    plus[j] += h;
    minus[j] -= h;
    EXPECT_NEAR(gradient[j], (problem.energy(plus) - problem.energy(minus)) / (2 * h), 1e-8) << j;
    problem.gradient(plus, gradient_plus);
    problem.gradient(minus, gradient_minus);
    std::vector<double> column(6, 0.0);
    for (Offset p = full.col_ptr[j]; p < full.col_ptr[j + 1]; ++p) column[full.row_idx[p]] = full.values[p];
    for (Index i = 0; i < 6; ++i) {
      EXPECT_NEAR(column[i], (gradient_plus[i] - gradient_minus[i]) / (2 * h), 1e-7) << i << ", " << j;
    }
  }
  // The rate a²·d/dt ∇²V(x + t·v) against a central difference of the Hessian.
  linalg::SymmetricCscMatrix rate = chain.pattern(), hessian_plus = chain.pattern(), hessian_minus = chain.pattern();
  problem.hessian_rate(x, velocity, rate);
  for (std::size_t i = 0; i < x.size(); ++i) {
    plus[i] = x[i] + h * velocity[i];
    minus[i] = x[i] - h * velocity[i];
  }
  problem.hessian(plus, hessian_plus);
  problem.hessian(minus, hessian_minus);
  for (std::size_t k = 0; k < rate.lower.values.size(); ++k) {
    EXPECT_NEAR(rate.lower.values[k], (hessian_plus.lower.values[k] - hessian_minus.lower.values[k]) / (2 * h), 1e-6);
  }
}

TEST(TimeIntegrators, SolveCountsPerStep) {
  SpringChain chain(4, 1.0, 2.0);
  NewtonSolver solver(NewtonMethod::newton_direct, tight_step_options());
  std::vector<double> x0{0.3, -0.2, 0.5, 0.1}, v0(4, 0.0);
  const auto solve_counts = [&](IntegratorKind kind) {
    TimeIntegrator integrator(chain, solver, kind, 0.1);
    integrator.set_state(x0, v0);
    std::vector<std::size_t> counts;
    for (int k = 0; k < 3; ++k) counts.push_back(integrator.step().solves.size());
    EXPECT_NEAR(integrator.time(), 0.3, 1e-15);
    return counts;
  };
  EXPECT_EQ(solve_counts(IntegratorKind::bdf2), (std::vector<std::size_t>{2, 1, 1}));  // SDIRK2 starts it
  EXPECT_EQ(solve_counts(IntegratorKind::sdirk2), (std::vector<std::size_t>{2, 2, 2}));
  EXPECT_EQ(solve_counts(IntegratorKind::bdf1), (std::vector<std::size_t>{1, 1, 1}));
  EXPECT_EQ(solves_per_step(IntegratorKind::sdirk2), 2);
  EXPECT_EQ(solves_per_step(IntegratorKind::bdf2), 1);

  TimeIntegrator baraff(chain, solver, IntegratorKind::baraff, 0.1);
  baraff.set_state(x0, v0);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(baraff.step().solves.at(0).iterations, 1);
}

/// x of A·x = b for a small dense A (Gaussian elimination with partial pivoting), row-major.
std::vector<double> dense_solve(std::vector<double> a, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t pivot = k;
    for (std::size_t i = k + 1; i < n; ++i) {
      if (std::abs(a[i * n + k]) > std::abs(a[pivot * n + k])) pivot = i;
    }
    for (std::size_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[pivot * n + j]);
    std::swap(b[k], b[pivot]);
    for (std::size_t i = k + 1; i < n; ++i) {
      const double factor = a[i * n + k] / a[k * n + k];
      for (std::size_t j = k; j < n; ++j) a[i * n + j] -= factor * a[k * n + j];
      b[i] -= factor * b[k];
    }
  }
  std::vector<double> x(n);
  for (std::size_t k = n; k-- > 0;) {
    double sum = b[k];
    for (std::size_t j = k + 1; j < n; ++j) sum -= a[k * n + j] * x[j];
    x[k] = sum / a[k * n + k];
  }
  return x;
}

TEST(TimeIntegrators, BaraffIsBaraffWitkinLinearizedAtTheKnownState) {
  // Baraff–Witkin: (M + h²H)Δv = h(f − hHv) with H = ∇²V and f = −∇V at x⁽ᵏ⁾, then
  // x⁽ᵏ⁺¹⁾ = x⁽ᵏ⁾ + h(v + Δv). The cubic springs make H depend on x, so a step linearized at
  // the predictor x⁽ᵏ⁾ + h·v⁽ᵏ⁾ instead lands elsewhere (velocities off by 4e-3 here).
  SpringChain chain(4, 1.0, 2.0);
  NewtonSolver solver(NewtonMethod::newton_direct, tight_step_options());
  const double h = 0.1;
  const std::vector<double> x0{0.3, -0.2, 0.5, 0.1}, v0{1.0, -0.5, 0.3, 0.8};
  TimeIntegrator baraff(chain, solver, IntegratorKind::baraff, h);
  baraff.set_state(x0, v0);
  ASSERT_EQ(baraff.step().solves.at(0).iterations, 1);

  const std::size_t n = x0.size();
  linalg::SymmetricCscMatrix hessian = chain.pattern();
  chain.potential_hessian(x0, hessian);
  std::vector<double> dense(n * n, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    for (Offset k = hessian.lower.col_ptr[j]; k < hessian.lower.col_ptr[j + 1]; ++k) {
      const auto i = static_cast<std::size_t>(hessian.lower.row_idx[k]);
      dense[i * n + j] = dense[j * n + i] = hessian.lower.values[k];
    }
  }
  std::vector<double> gradient(n);
  chain.potential_gradient(x0, gradient);
  std::vector<double> system(n * n), rhs(n);
  for (std::size_t i = 0; i < n; ++i) {
    double hessian_v = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      system[i * n + j] = h * h * dense[i * n + j] + (i == j ? chain.masses()[i] : 0.0);
      hessian_v += dense[i * n + j] * v0[j];
    }
    rhs[i] = h * (-gradient[i] - h * hessian_v);
  }
  const std::vector<double> dv = dense_solve(system, rhs);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_NEAR(baraff.velocities()[i], v0[i] + dv[i], 1e-12) << i;
    EXPECT_NEAR(baraff.positions()[i], x0[i] + h * (v0[i] + dv[i]), 1e-13) << i;
  }
}

TEST(TimeIntegrators, EveryNewtonMethodFollowsTheSameBdf2Trajectory) {
  const auto trajectory_end = [](NewtonMethod method) {
    SpringChain chain(20, 1.0, 3.0);
    chain.wall_amplitude = 0.4;
    NewtonSolver solver(method, tight_step_options());
    TimeIntegrator integrator(chain, solver, IntegratorKind::bdf2, 0.05);
    integrator.set_state(std::vector<double>(20, 0.0), std::vector<double>(20, 0.0));
    for (int k = 0; k < 20; ++k) EXPECT_TRUE(integrator.step().converged) << method_name(method);
    return std::vector<double>(integrator.positions().begin(), integrator.positions().end());
  };
  const std::vector<double> reference = trajectory_end(NewtonMethod::newton_direct);
  for (const char* name : {"newton-i", "newton-l0", "newton-l1", "hybrid-l0", "hybrid-l1", "newton-r", "hybrid-r"}) {
    const std::vector<double> x = trajectory_end(parse_method(name));
    std::vector<double> difference(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) difference[i] = x[i] - reference[i];
    EXPECT_LT(linalg::relative_norm2(difference, reference), 1e-8) << name;
  }
}

TEST(TimeIntegrators, BadTimeStepsAndStatesAreRejected) {
  SpringChain chain(2, 1.0, 0.0);
  NewtonSolver solver(NewtonMethod::newton_direct);
  for (double h : {0.0, -0.1, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_THROW(TimeIntegrator(chain, solver, IntegratorKind::bdf1, h), std::invalid_argument) << h;
  }
  TimeIntegrator integrator(chain, solver, IntegratorKind::bdf1, 0.1);
  EXPECT_THROW(integrator.set_state(std::vector<double>(3, 0.0), std::vector<double>(2, 0.0)), std::invalid_argument);
  EXPECT_THROW(integrator.set_state(std::vector<double>{0.0, std::nan("")}, std::vector<double>(2, 0.0)),
               std::invalid_argument);
}

TEST(TimeIntegrators, IntegratorNamesRoundTripAndUnknownNamesAreRejected) {
  for (IntegratorKind kind : {IntegratorKind::quasistatic, IntegratorKind::baraff, IntegratorKind::bdf1,
                              IntegratorKind::bdf2, IntegratorKind::sdirk2}) {
    EXPECT_EQ(parse_integrator(integrator_name(kind)), kind);
  }
  EXPECT_EQ(parse_integrator("SDIRK2"), IntegratorKind::sdirk2);
  try {
    (void)parse_integrator("rk4");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("quasistatic"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace cholsim::solvers
