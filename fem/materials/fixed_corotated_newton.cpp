#include "fem/materials/fixed_corotated_newton.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/assembly_pattern.hpp"
#include "linalg/parallel_loops.hpp"
#include "linalg/polar_decomposition.hpp"

namespace cholsim::fem {
namespace {

using Clock = std::chrono::steady_clock;
using linalg::LameParameters;
using ElementMatrix = std::array<double, 144>;  // 12×12 column-major, dof 3·vertex + component
using ElementVector = std::array<double, 12>;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }
std::size_t at(Index i) { return static_cast<std::size_t>(i); }

/// cof F = ∂det F/∂F: columns c₁×c₂, c₂×c₀, c₀×c₁ of F's columns c₀, c₁, c₂.
Mat3 cofactor(const Mat3& f) {
  const Vec3 c0 = f.col(0), c1 = f.col(1), c2 = f.col(2);
  return Mat3::from_columns(cross(c1, c2), cross(c2, c0), cross(c0, c1));
}

/// Sets the negative eigenvalues of the symmetric n×n row-major matrix `a` to zero, by cyclic
/// Jacobi rotations (a = Q·Λ·Qᵀ, then Q·max(Λ, 0)·Qᵀ).
template <std::size_t n>
void project_to_positive_semidefinite(std::array<double, n * n>& a) {
  std::array<double, n * n> q{};
  for (std::size_t i = 0; i < n; ++i) q[i * n + i] = 1.0;
  const auto off_diagonal = [&] {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) sum += i == j ? 0.0 : a[i * n + j] * a[i * n + j];
    }
    return sum;
  };
  double scale = 0.0;
  for (double v : a) scale += v * v;
  for (int sweep = 0; sweep < 50 && off_diagonal() > 1e-30 * scale; ++sweep) {
    for (std::size_t p = 0; p + 1 < n; ++p) {
      for (std::size_t r = p + 1; r < n; ++r) {
        const double apr = a[p * n + r];
        if (apr == 0.0) continue;
        const double theta = (a[r * n + r] - a[p * n + p]) / (2.0 * apr);
        const double t = std::copysign(1.0, theta) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
        for (std::size_t k = 0; k < n; ++k) {  // columns p, r of a and q
          const double akp = a[k * n + p], akr = a[k * n + r];
          a[k * n + p] = c * akp - s * akr;
          a[k * n + r] = s * akp + c * akr;
          const double qkp = q[k * n + p], qkr = q[k * n + r];
          q[k * n + p] = c * qkp - s * qkr;
          q[k * n + r] = s * qkp + c * qkr;
        }
        for (std::size_t k = 0; k < n; ++k) {  // rows p, r of a
          const double apk = a[p * n + k], ark = a[r * n + k];
          a[p * n + k] = c * apk - s * ark;
          a[r * n + k] = s * apk + c * ark;
        }
      }
    }
  }
  std::array<double, n> lambda;
  for (std::size_t i = 0; i < n; ++i) lambda[i] = std::max(a[i * n + i], 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (std::size_t k = 0; k < n; ++k) sum += q[i * n + k] * lambda[k] * q[j * n + k];
      a[i * n + j] = sum;
    }
  }
}

/// Shape-function gradients g₀..g₃ of an element (rows of Dₘ⁻¹, g₀ = −Σ).
std::array<Vec3, 4> shape_gradients(const Mat3& rest_inverse) {
  const Vec3 g1 = rest_inverse.row(0), g2 = rest_inverse.row(1), g3 = rest_inverse.row(2);
  return {-(g1 + g2 + g3), g1, g2, g3};
}

}  // namespace

double fixed_corotated_energy_density(const Mat3& f, LameParameters material) {
  const double j = determinant(f);
  return material.mu * squared_frobenius_norm(f - linalg::polar_rotation(f)) + 0.5 * material.lambda * (j - 1.0) * (j - 1.0);
}

Mat3 fixed_corotated_stress(const Mat3& f, LameParameters material) {
  return 2.0 * material.mu * (f - linalg::polar_rotation(f)) + (material.lambda * (determinant(f) - 1.0)) * cofactor(f);
}

StressDerivative fixed_corotated_stress_derivative(const Mat3& f, LameParameters material, bool project_to_psd) {
  const Mat3 r = linalg::polar_rotation(f);
  const Mat3 s = symmetric_part(transpose_times(r, f));
  Mat3 system = trace(s) * Mat3::identity() - s;
  // tr S·I − S is singular only where two signed singular values cancel (a degenerate,
  // inverted element); regularize so dR stays finite there.
  const double floor = 1e-8 * std::max(frobenius_norm(f), 1e-300);
  if (std::abs(determinant(system)) < floor * floor * floor) system += floor * Mat3::identity();
  const Mat3 system_inverse = linalg::inverse(system);
  const Mat3 cof = cofactor(f);
  const double j = determinant(f);
  StressDerivative h{};
  for (std::size_t k = 0; k < 9; ++k) {
    Mat3 df;
    df.entries[k] = 1.0;
    const Vec3 omega = system_inverse * (2.0 * axial_vector(transpose_times(r, df)));
    const Mat3 dr = r * linalg::skew(omega);
    const Vec3 c0 = f.col(0), c1 = f.col(1), c2 = f.col(2);
    const Vec3 d0 = df.col(0), d1 = df.col(1), d2 = df.col(2);
    const Mat3 dcof = Mat3::from_columns(cross(d1, c2) + cross(c1, d2), cross(d2, c0) + cross(c2, d0),
                                         cross(d0, c1) + cross(c0, d1));
    double cof_dot_df = 0.0;
    for (std::size_t m = 0; m < 9; ++m) cof_dot_df += cof.entries[m] * df.entries[m];
    const Mat3 dp = 2.0 * material.mu * (df - dr) + (material.lambda * cof_dot_df) * cof +
                    (material.lambda * (j - 1.0)) * dcof;
    for (std::size_t m = 0; m < 9; ++m) h[9 * m + k] = dp.entries[m];
  }
  for (std::size_t m = 0; m < 9; ++m) {
    for (std::size_t k = m + 1; k < 9; ++k) h[9 * m + k] = h[9 * k + m] = 0.5 * (h[9 * m + k] + h[9 * k + m]);
  }
  if (project_to_psd) project_to_positive_semidefinite<9>(h);
  return h;
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
  [[nodiscard]] Mat3 deformation(std::span<const double> x, Index e) const;
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

Mat3 FixedCorotatedNewtonSimulation::State::deformation(std::span<const double> x, Index e) const {
  const auto nodes = body.element_nodes(e);
  const auto point = [&](std::size_t k) {
    const std::size_t v = at(nodes[k]);
    return Vec3{x[3 * v], x[3 * v + 1], x[3 * v + 2]};
  };
  const Vec3 x0 = point(0);
  return Mat3::from_columns(point(1) - x0, point(2) - x0, point(3) - x0) * body.rest_shape_inverse[at(e)];
}

double FixedCorotatedNewtonSimulation::State::potential(std::span<const double> x, std::span<const double> x_tilde) const {
  const double inverse_dt2 = 1.0 / (options.time_step * options.time_step);
  double inertia = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) inertia += body.node_masses[i / 3] * (x[i] - x_tilde[i]) * (x[i] - x_tilde[i]);
  double elastic = 0.0;
  for (Index e = 0; e < body.element_count(); ++e) {
    elastic += body.rest_volumes[at(e)] * fixed_corotated_energy_density(deformation(x, e), body.lame[at(e)]);
  }
  return 0.5 * inverse_dt2 * inertia + elastic;
}

std::vector<double> FixedCorotatedNewtonSimulation::State::gradient(std::span<const double> x,
                                                                    std::span<const double> x_tilde) const {
  const double inverse_dt2 = 1.0 / (options.time_step * options.time_step);
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) g[i] = inverse_dt2 * body.node_masses[i / 3] * (x[i] - x_tilde[i]);
  for (Index e = 0; e < body.element_count(); ++e) {
    // ∂(VΨ)/∂x_k = V·P·g_k.
    const Mat3 p = body.rest_volumes[at(e)] * fixed_corotated_stress(deformation(x, e), body.lame[at(e)]);
    const std::array<Vec3, 4> grads = shape_gradients(body.rest_shape_inverse[at(e)]);
    const auto nodes = body.element_nodes(e);
    for (std::size_t k = 0; k < 4; ++k) {
      const Vec3 force = p * grads[k];
      const std::size_t v = at(nodes[k]);
      g[3 * v] += force.x;
      g[3 * v + 1] += force.y;
      g[3 * v + 2] += force.z;
    }
  }
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (fixed[i / 3] != 0) g[i] = 0.0;
  }
  return g;
}

void FixedCorotatedNewtonSimulation::State::assemble_hessian(std::span<const double> x) {
  linalg::parallel_chunks(body.element_count(), options.threads, [&](Index begin, Index end) {
    for (Index e = begin; e < end; ++e) {
      const StressDerivative h = fixed_corotated_stress_derivative(deformation(x, e), body.lame[at(e)], options.definiteness_fix);
      const std::array<Vec3, 4> grads = shape_gradients(body.rest_shape_inverse[at(e)]);
      const double volume = body.rest_volumes[at(e)];
      ElementMatrix& k = element_hessians[at(e)];
      // K[(3a+s), (3b+t)] = V·Σ_{c,d} ∂P_{sc}/∂F_{td}·g_a[c]·g_b[d]  (∂F_{sc}/∂x_{a,s} = g_a[c]).
      for (std::size_t a = 0; a < 4; ++a) {
        const std::array<double, 3> ga = {grads[a].x, grads[a].y, grads[a].z};
        for (std::size_t b = 0; b < 4; ++b) {
          const std::array<double, 3> gb = {grads[b].x, grads[b].y, grads[b].z};
          for (std::size_t s = 0; s < 3; ++s) {
            for (std::size_t t = 0; t < 3; ++t) {
              double sum = 0.0;
              for (std::size_t c = 0; c < 3; ++c) {
                for (std::size_t d = 0; d < 3; ++d) sum += h[9 * (3 * s + c) + 3 * t + d] * ga[c] * gb[d];
              }
              k[(3 * a + s) + 12 * (3 * b + t)] = volume * sum;
            }
          }
        }
      }
    }
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
