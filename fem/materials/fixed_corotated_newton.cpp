#include "fem/materials/fixed_corotated_newton.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/assembly_pattern.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::fem {
namespace {

using Clock = std::chrono::steady_clock;
using linalg::LameParameters;
using ElementMatrix = std::array<double, 144>;  // 12×12 column-major, dof 3·vertex + component

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }
std::size_t at(Index i) { return static_cast<std::size_t>(i); }

/// The fixed-corotated material of element parameters `lame`.
HyperelasticMaterial fixed_corotated(LameParameters lame) {
  HyperelasticMaterial material;
  material.model = HyperelasticModel::fixed_corotated;
  material.lame = lame;
  return material;
}

}  // namespace

double fixed_corotated_energy_density(const Mat3& f, LameParameters material) {
  return energy_density(fixed_corotated(material), f);
}

Mat3 fixed_corotated_stress(const Mat3& f, LameParameters material) {
  return first_piola_stress(fixed_corotated(material), f);
}

StressDerivative fixed_corotated_stress_derivative(const Mat3& f, LameParameters material, bool project_to_psd) {
  return stress_derivative(fixed_corotated(material), f, project_to_psd).dp_df;
}

struct FixedCorotatedNewtonSimulation::State {
  ElasticBody body;
  FixedCorotatedNewtonOptions options;
  double time = 0.0;
  std::vector<double> positions, velocities;
  std::vector<unsigned char> fixed;
  linalg::AssemblyPattern pattern;
  linalg::SymmetricCscMatrix hessian;
  std::unique_ptr<factor::Factor> factor;
  std::vector<ElementMatrix> element_hessians;

  [[nodiscard]] std::vector<double> predicted() const;
  /// Element e's energy terms at positions x (its ∂P/∂F projected if options.definiteness_fix).
  [[nodiscard]] ElementEnergy element(std::span<const double> x, Index e, ElementTerms terms) const;
  [[nodiscard]] double potential(std::span<const double> x, std::span<const double> x_tilde) const;
  [[nodiscard]] std::vector<double> gradient(std::span<const double> x, std::span<const double> x_tilde) const;
  void assemble_hessian(std::span<const double> x);
};

std::vector<double> FixedCorotatedNewtonSimulation::State::predicted() const {
  const double dt = options.time_step;
  const std::array<double, 3> g = {options.gravity.x, options.gravity.y, options.gravity.z};
  std::vector<double> x = positions;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (fixed[i / 3] == 0) x[i] += dt * velocities[i] + dt * dt * g[i % 3];
  }
  return x;
}

ElementEnergy FixedCorotatedNewtonSimulation::State::element(std::span<const double> x, Index e, ElementTerms terms) const {
  const auto nodes = body.element_nodes(e);
  const std::array<Vec3, 4> points = {node_position(x, nodes[0]), node_position(x, nodes[1]), node_position(x, nodes[2]),
                                      node_position(x, nodes[3])};
  const TetRestShape rest{body.rest_shape_inverse[at(e)], body.rest_volumes[at(e)]};
  return element_energy(fixed_corotated(body.lame[at(e)]), rest, points, terms, options.definiteness_fix);
}

double FixedCorotatedNewtonSimulation::State::potential(std::span<const double> x, std::span<const double> x_tilde) const {
  const double inverse_dt2 = 1.0 / (options.time_step * options.time_step);
  double inertia = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) inertia += body.node_masses[i / 3] * (x[i] - x_tilde[i]) * (x[i] - x_tilde[i]);
  double elastic = 0.0;
  for (Index e = 0; e < body.element_count(); ++e) elastic += element(x, e, ElementTerms::energy).energy;
  return 0.5 * inverse_dt2 * inertia + elastic;
}

std::vector<double> FixedCorotatedNewtonSimulation::State::gradient(std::span<const double> x,
                                                                    std::span<const double> x_tilde) const {
  const double inverse_dt2 = 1.0 / (options.time_step * options.time_step);
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) g[i] = inverse_dt2 * body.node_masses[i / 3] * (x[i] - x_tilde[i]);
  for (Index e = 0; e < body.element_count(); ++e) {
    const ElementEnergy local = element(x, e, ElementTerms::gradient);
    const auto nodes = body.element_nodes(e);
    for (std::size_t k = 0; k < 12; ++k) g[3 * at(nodes[k / 3]) + k % 3] += local.gradient[k];
  }
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (fixed[i / 3] != 0) g[i] = 0.0;
  }
  return g;
}

void FixedCorotatedNewtonSimulation::State::assemble_hessian(std::span<const double> x) {
  linalg::parallel_chunks(body.element_count(), options.threads, [&](Index begin, Index end) {
    for (Index e = begin; e < end; ++e) element_hessians[at(e)] = element(x, e, ElementTerms::hessian).hessian;
  });
  std::fill(hessian.lower.values.begin(), hessian.lower.values.end(), 0.0);
  for (Index e = 0; e < body.element_count(); ++e) pattern.scatter_add(e, element_hessians[at(e)].data(), hessian.lower.values);
  const double inverse_dt2 = 1.0 / (options.time_step * options.time_step);
  const linalg::CscMatrix& lower = hessian.lower;
  for (Index col = 0; col < lower.cols; ++col) {
    for (auto p = lower.col_ptr[at(col)]; p < lower.col_ptr[at(col) + 1]; ++p) {
      const Index row = lower.row_idx[static_cast<std::size_t>(p)];
      double& value = hessian.lower.values[static_cast<std::size_t>(p)];
      if (row == col) value += inverse_dt2 * body.node_masses[at(col / 3)];
      // Fixed dofs: identity rows and columns, so their Newton step is zero.
      if (fixed[at(row / 3)] != 0 || fixed[at(col / 3)] != 0) value = row == col ? 1.0 : 0.0;
    }
  }
}

FixedCorotatedNewtonSimulation::FixedCorotatedNewtonSimulation(ElasticBody body, FixedCorotatedNewtonOptions options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  if (!(options.time_step > 0.0) || !std::isfinite(options.time_step)) {
    throw std::invalid_argument("FixedCorotatedNewtonSimulation: time step must be positive and finite");
  }
  s.fixed.assign(at(body.node_count()), 0);
  for (Index v : options.fixed_nodes) {
    if (v < 0 || v >= body.node_count()) {
      throw std::invalid_argument("FixedCorotatedNewtonSimulation: fixed node " + std::to_string(v) + " out of range");
    }
    s.fixed[at(v)] = 1;
  }
  s.body = std::move(body);
  s.options = std::move(options);
  s.positions = s.body.rest.positions;
  s.velocities.assign(s.positions.size(), 0.0);
  s.pattern = linalg::AssemblyPattern(s.body.node_count(), 3, 4, s.body.rest.tets);
  s.hessian = s.pattern.zero_matrix();
  s.element_hessians.resize(at(s.body.element_count()));
  factor::AnalyzeOptions analyze_options;
  analyze_options.dofs_per_node = 3;
  s.factor = std::make_unique<factor::Factor>(factor::analyze(s.hessian, analyze_options));
}

FixedCorotatedNewtonSimulation::~FixedCorotatedNewtonSimulation() = default;
FixedCorotatedNewtonSimulation::FixedCorotatedNewtonSimulation(FixedCorotatedNewtonSimulation&&) noexcept = default;
FixedCorotatedNewtonSimulation& FixedCorotatedNewtonSimulation::operator=(FixedCorotatedNewtonSimulation&&) noexcept =
    default;

FixedCorotatedNewtonStatistics FixedCorotatedNewtonSimulation::step() {
  State& s = *state_;
  FixedCorotatedNewtonStatistics stats;
  const auto start = Clock::now();
  const std::vector<double> x_tilde = s.predicted();
  std::vector<double> x = x_tilde;
  std::vector<double> g = s.gradient(x, x_tilde);
  const auto norm = [](const std::vector<double>& v) {
    double sum = 0.0;
    for (double e : v) sum += e * e;
    return std::sqrt(sum);
  };
  const double initial_norm = norm(g);
  stats.gradient_norms.push_back(initial_norm);
  factor::FactorOptions factor_options;
  factor_options.threads = s.options.threads;
  double energy = s.potential(x, x_tilde);
  while (stats.iterations < s.options.max_iterations && stats.gradient_norms.back() > s.options.relative_tolerance * initial_norm) {
    ++stats.iterations;
    auto phase = Clock::now();
    s.assemble_hessian(x);
    stats.assemble_seconds += seconds_since(phase);
    phase = Clock::now();
    if (!s.factor->factorize(s.hessian, factor_options).ok()) {
      throw std::runtime_error("FixedCorotatedNewtonSimulation: Hessian not factorable: " + s.factor->status().message);
    }
    std::vector<double> direction(g.size());
    std::transform(g.begin(), g.end(), direction.begin(), [](double v) { return -v; });
    s.factor->solve(direction);
    stats.factorize_seconds += seconds_since(phase);
    // Armijo backtracking: the projected Hessian makes `direction` a descent direction.
    double slope = 0.0;
    for (std::size_t i = 0; i < g.size(); ++i) slope += g[i] * direction[i];
    double alpha = 1.0;
    std::vector<double> trial(x.size());
    double trial_energy = energy;
    bool decreased = false;
    for (int halving = 0; halving < 40 && !decreased; ++halving) {
      for (std::size_t i = 0; i < x.size(); ++i) trial[i] = x[i] + alpha * direction[i];
      trial_energy = s.potential(trial, x_tilde);
      decreased = trial_energy <= energy + 1e-4 * alpha * slope;
      if (!decreased) {
        alpha *= 0.5;
        ++stats.line_search_halvings;
      }
    }
    if (!decreased) break;  // the energy's rounding floor: no step lowers it measurably
    x.swap(trial);
    energy = trial_energy;
    g = s.gradient(x, x_tilde);
    stats.gradient_norms.push_back(norm(g));
  }
  stats.converged = stats.gradient_norms.back() <= s.options.relative_tolerance * initial_norm;
  const double inverse_dt = 1.0 / s.options.time_step;
  for (std::size_t i = 0; i < x.size(); ++i) s.velocities[i] = (x[i] - s.positions[i]) * inverse_dt;
  s.positions = std::move(x);
  s.time += s.options.time_step;
  stats.total_seconds = seconds_since(start);
  return stats;
}

void FixedCorotatedNewtonSimulation::set_state(std::span<const double> positions, std::span<const double> velocities) {
  State& s = *state_;
  if (positions.size() != s.positions.size() || velocities.size() != s.velocities.size()) {
    throw std::invalid_argument("FixedCorotatedNewtonSimulation::set_state: expected " +
                                std::to_string(s.positions.size()) + " positions and velocities");
  }
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (!std::isfinite(positions[i]) || !std::isfinite(velocities[i])) {
      throw std::invalid_argument("FixedCorotatedNewtonSimulation::set_state: non-finite value at node " +
                                  std::to_string(i / 3));
    }
  }
  s.positions.assign(positions.begin(), positions.end());
  s.velocities.assign(velocities.begin(), velocities.end());
}

double FixedCorotatedNewtonSimulation::incremental_potential(std::span<const double> x) const {
  return state_->potential(x, state_->predicted());
}

std::vector<double> FixedCorotatedNewtonSimulation::incremental_potential_gradient(std::span<const double> x) const {
  return state_->gradient(x, state_->predicted());
}

double FixedCorotatedNewtonSimulation::time() const { return state_->time; }
std::span<const double> FixedCorotatedNewtonSimulation::positions() const { return state_->positions; }
std::span<const double> FixedCorotatedNewtonSimulation::velocities() const { return state_->velocities; }
const ElasticBody& FixedCorotatedNewtonSimulation::body() const { return state_->body; }

}  // namespace cholsim::fem
