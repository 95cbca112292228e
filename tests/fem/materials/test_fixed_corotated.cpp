// The fixed-corotated material and its Newton integrator (fem/fixed_corotated_newton): energy,
// stress and stress derivative against central differences, the definiteness fix, the
// incremental potential's gradient, and quadratic convergence of Newton's method.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include "fem/materials/fixed_corotated_newton.hpp"
#include "fem/opsplit/operator_splitting.hpp"
#include "linalg/generators.hpp"
#include "linalg/polar_decomposition.hpp"

namespace cholsim::fem {
namespace {

const linalg::LameParameters kMaterial{3.0e5, 1.5e5};

std::vector<Mat3> sample_gradients() {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> entry(-0.3, 0.3);
  std::vector<Mat3> result = {Mat3::identity(), Mat3::diagonal({1.2, 0.9, 0.8})};
  for (int k = 0; k < 6; ++k) {
    linalg::NearRotationSampling sampling;
    sampling.max_rotation_degrees = 90.0;
    sampling.max_displacement_fraction = 0.25;
    Mat3 f = linalg::random_near_rotation(rng, sampling);
    for (double& e : f.entries) e += 0.5 * entry(rng);
    result.push_back(f);
  }
  return result;
}

TEST(FixedCorotated, StressIsTheEnergyGradient) {
  for (const Mat3& f : sample_gradients()) {
    const Mat3 p = fixed_corotated_stress(f, kMaterial);
    for (std::size_t k = 0; k < 9; ++k) {
      const double h = 1e-6;
      Mat3 plus = f, minus = f;
      plus.entries[k] += h;
      minus.entries[k] -= h;
      const double numeric = (fixed_corotated_energy_density(plus, kMaterial) -
                              fixed_corotated_energy_density(minus, kMaterial)) / (2.0 * h);
      EXPECT_NEAR(p.entries[k], numeric, 1e-5 * (1.0 + std::abs(numeric))) << "entry " << k;
    }
  }
}

TEST(FixedCorotated, StressDerivativeMatchesFiniteDifferences) {
  for (const Mat3& f : sample_gradients()) {
    const StressDerivative h = fixed_corotated_stress_derivative(f, kMaterial, false);
    double scale = 0.0;
    for (double v : h) scale = std::max(scale, std::abs(v));
    for (std::size_t k = 0; k < 9; ++k) {
      const double step = 1e-6;
      Mat3 plus = f, minus = f;
      plus.entries[k] += step;
      minus.entries[k] -= step;
      const Mat3 dp = (1.0 / (2.0 * step)) * (fixed_corotated_stress(plus, kMaterial) - fixed_corotated_stress(minus, kMaterial));
      for (std::size_t m = 0; m < 9; ++m) EXPECT_NEAR(h[9 * m + k], dp.entries[m], 1e-6 * scale) << m << "," << k;
    }
  }
}

TEST(FixedCorotated, DefinitenessFixGivesPositiveSemidefiniteAndKeepsDefiniteMatrices) {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal;
  // Near rest ∂P/∂F is positive definite: the projection must not change it.
  const StressDerivative rest = fixed_corotated_stress_derivative(Mat3::diagonal({1.05, 0.97, 1.01}), kMaterial, false);
  const StressDerivative rest_fixed = fixed_corotated_stress_derivative(Mat3::diagonal({1.05, 0.97, 1.01}), kMaterial, true);
  for (std::size_t i = 0; i < 81; ++i) EXPECT_NEAR(rest_fixed[i], rest[i], 1e-9 * kMaterial.lambda);
  // Strongly compressed: indefinite before, semidefinite after.
  const Mat3 squashed = Mat3::diagonal({0.3, 0.4, 0.5});
  const StressDerivative raw = fixed_corotated_stress_derivative(squashed, kMaterial, false);
  const StressDerivative fixed = fixed_corotated_stress_derivative(squashed, kMaterial, true);
  double most_negative_raw = 0.0, most_negative_fixed = 0.0;
  for (int trial = 0; trial < 200; ++trial) {
    std::array<double, 9> v;
    for (double& e : v) e = normal(rng);
    double q_raw = 0.0, q_fixed = 0.0;
    for (std::size_t m = 0; m < 9; ++m) {
      for (std::size_t k = 0; k < 9; ++k) {
        q_raw += v[m] * raw[9 * m + k] * v[k];
        q_fixed += v[m] * fixed[9 * m + k] * v[k];
      }
    }
    most_negative_raw = std::min(most_negative_raw, q_raw);
    most_negative_fixed = std::min(most_negative_fixed, q_fixed);
  }
  EXPECT_LT(most_negative_raw, 0.0);
  EXPECT_GT(most_negative_fixed, -1e-9 * kMaterial.lambda);
}

ElasticBody bar() {
  Material material;
  material.youngs_modulus = 1e5;
  material.poisson_ratio = 0.3;
  return make_elastic_body(linalg::structured_tet_box(4, 1, 1, 0.1), material, "test bar");
}

TEST(FixedCorotatedNewton, IncrementalPotentialGradientMatchesFiniteDifferences) {
  ElasticBody body = bar();
  FixedCorotatedNewtonOptions options;
  options.fixed_nodes = nodes_near_top(body.rest, 0, 0.0);
  const FixedCorotatedNewtonSimulation sim(std::move(body), options);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> jitter(-0.02, 0.02);
  std::vector<double> x(sim.positions().begin(), sim.positions().end());
  for (double& e : x) e += jitter(rng);
  const std::vector<double> g = sim.incremental_potential_gradient(x);
  std::vector<char> fixed(x.size() / 3, 0);
  for (Index v : options.fixed_nodes) fixed[static_cast<std::size_t>(v)] = 1;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (fixed[i / 3]) {
      EXPECT_EQ(g[i], 0.0);
      continue;
    }
    const double h = 1e-7;
    std::vector<double> plus = x, minus = x;
    plus[i] += h;
    minus[i] -= h;
    const double numeric = (sim.incremental_potential(plus) - sim.incremental_potential(minus)) / (2.0 * h);
    EXPECT_NEAR(g[i], numeric, 1e-5 * (1.0 + std::abs(numeric))) << "dof " << i;
  }
}

TEST(FixedCorotatedNewton, ConvergesQuadraticallyWithTheExactHessian) {
  ElasticBody body = bar();
  FixedCorotatedNewtonOptions options;
  options.time_step = 0.05;  // a large step: the cantilever sags far in one step
  options.relative_tolerance = 1e-10;
  options.definiteness_fix = false;
  options.fixed_nodes = nodes_near_top(body.rest, 0, 0.0);
  FixedCorotatedNewtonSimulation sim(std::move(body), options);
  const FixedCorotatedNewtonStatistics stats = sim.step();
  const std::vector<double>& norms = stats.gradient_norms;
  for (double n : norms) std::printf("%.3e ", n / norms.front());
  std::printf("\n");
  ASSERT_TRUE(stats.converged);
  EXPECT_LE(stats.iterations, 12);
  // In the last iterations the relative gradient norm r satisfies r_{k+1} ≤ C·r_k² with a
  // modest C: digits double (linear convergence would give r_{k+1} ≈ c·r_k).
  int quadratic_pairs = 0;
  for (std::size_t k = 0; k + 1 < norms.size(); ++k) {
    const double r = norms[k] / norms.front(), next = norms[k + 1] / norms.front();
    if (r < 1e-2 && next > 1e-15) {
      EXPECT_LT(next, 100.0 * r * r) << "iteration " << k;
      ++quadratic_pairs;
    }
  }
  EXPECT_GE(quadratic_pairs, 1);
  // The cantilever moved down, the fixed end did not.
  const auto y = [](std::span<const double> x, Index v) { return x[3 * static_cast<std::size_t>(v) + 1]; };
  double largest_drop = 0.0;
  for (Index v = 0; v < sim.body().node_count(); ++v) {
    largest_drop = std::max(largest_drop, y(sim.body().rest.positions, v) - y(sim.positions(), v));
  }
  EXPECT_GT(largest_drop, 1e-3);
  for (Index v : options.fixed_nodes) EXPECT_EQ(y(sim.positions(), v), y(sim.body().rest.positions, v));
}

TEST(FixedCorotatedNewton, DefinitenessFixStillConvergesToTheSameStep) {
  FixedCorotatedNewtonOptions options;
  options.time_step = 0.05;
  options.relative_tolerance = 1e-7;
  options.definiteness_fix = false;
  options.fixed_nodes = nodes_near_top(bar().rest, 0, 0.0);
  FixedCorotatedNewtonSimulation exact(bar(), options);
  options.definiteness_fix = true;
  FixedCorotatedNewtonSimulation fixed(bar(), options);
  EXPECT_TRUE(exact.step().converged);
  EXPECT_TRUE(fixed.step().converged);
  for (std::size_t i = 0; i < exact.positions().size(); ++i) EXPECT_NEAR(exact.positions()[i], fixed.positions()[i], 1e-6);
}

}  // namespace
}  // namespace cholsim::fem
