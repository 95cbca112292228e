// Operator-splitting corotated FEM (seed 003 §3.1–3.2): the prefactored matrix against an
// independent dense assembly of M + DᵀKD from eq. 9, one step against a dense solve of
// eq. 11, fixed nodes, recovery from the reflected rest state (Fig. 5), ground contact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "factor/gpu/gpu_factorization.hpp"
#include "fem/opsplit/operator_splitting.hpp"
#include "fem/opsplit/volume_constraints.hpp"
#include "linalg/blas.hpp"
#include "linalg/dense_matrix.hpp"
#include "linalg/generators.hpp"
#include "linalg/vector_norms.hpp"

namespace cholsim::fem {
namespace {

using linalg::max_abs_difference;

using linalg::DenseMatrix;
using linalg::Mat3;
using linalg::Quaternion;

constexpr double kTimeStep = 0.01;

Material rubber() {
  Material m;
  m.youngs_modulus = 2e5;
  m.poisson_ratio = 0.3;
  m.density = 1000.0;
  return m;
}

ElasticBody small_box(Index nx = 2, Index ny = 3, Index nz = 2) {
  return make_elastic_body(linalg::structured_tet_box(nx, ny, nz, 0.1), rubber(), "test box");
}

/// Independent dense assembly of seed 003 Algorithm 1: D (9·tets × 3·nodes) from eq. 9 with
/// B = Dₘ⁻¹ computed here from the rest positions, K = diag(2μVΔt²), M = ρV/4 per vertex.
struct DenseSystem {
  DenseMatrix d;
  std::vector<double> k;     ///< diagonal of K, per row of D
  std::vector<double> mass;  ///< per dof
  DenseMatrix a;             ///< M + DᵀKD
};

DenseSystem dense_system(const TetMesh& mesh, const Material& material, double dt) {
  const Index nodes = mesh.node_count(), tets = mesh.tet_count();
  const double mu = linalg::lame_from_youngs_poisson(material.youngs_modulus, material.poisson_ratio).mu;
  DenseSystem s{DenseMatrix(9 * tets, 3 * nodes), std::vector<double>(9 * static_cast<std::size_t>(tets)),
                std::vector<double>(3 * static_cast<std::size_t>(nodes), 0.0), DenseMatrix(3 * nodes, 3 * nodes)};
  for (Index t = 0; t < tets; ++t) {
    std::array<linalg::Vec3, 4> x;
    for (Index k = 0; k < 4; ++k) {
      const auto v = static_cast<std::size_t>(mesh.tets[static_cast<std::size_t>(4 * t + k)]);
      x[static_cast<std::size_t>(k)] = {mesh.positions[3 * v], mesh.positions[3 * v + 1], mesh.positions[3 * v + 2]};
    }
    const Mat3 dm = Mat3::from_columns(x[1] - x[0], x[2] - x[0], x[3] - x[0]);
    const Mat3 b = linalg::inverse(dm);
    const double volume = linalg::determinant(dm) / 6.0;
    for (Index r = 0; r < 9; ++r) s.k[static_cast<std::size_t>(9 * t + r)] = 2.0 * mu * volume * dt * dt;
    for (Index k = 0; k < 4; ++k) {
      const Index v = mesh.tets[static_cast<std::size_t>(4 * t + k)];
      for (Index c = 0; c < 3; ++c) s.mass[static_cast<std::size_t>(3 * v + c)] += material.density * volume / 4.0;
    }
    // Eq. 9: row 3j + r of Dₜ (entry (r, j) of F), column 3i + r of vertex i.
    for (int j = 0; j < 3; ++j) {
      const double b0 = -(b(0, j) + b(1, j) + b(2, j));
      for (Index r = 0; r < 3; ++r) {
        const Index row = 9 * t + 3 * j + r;
        s.d(row, 3 * mesh.tets[static_cast<std::size_t>(4 * t)] + r) += b0;
        for (int i = 1; i < 4; ++i) {
          s.d(row, 3 * mesh.tets[static_cast<std::size_t>(4 * t + i)] + r) += b(i - 1, j);
        }
      }
    }
  }
  for (Index i = 0; i < 3 * nodes; ++i) {
    for (Index j = 0; j < 3 * nodes; ++j) {
      double sum = 0.0;
      for (Index r = 0; r < 9 * tets; ++r) sum += s.d(r, i) * s.k[static_cast<std::size_t>(r)] * s.d(r, j);
      s.a(i, j) = sum + (i == j ? s.mass[static_cast<std::size_t>(i)] : 0.0);
    }
  }
  return s;
}

double lower_entry(const linalg::SymmetricCscMatrix& m, Index i, Index j) {
  if (i < j) std::swap(i, j);
  const auto& l = m.lower;
  for (auto p = l.col_ptr[static_cast<std::size_t>(j)]; p < l.col_ptr[static_cast<std::size_t>(j) + 1]; ++p) {
    if (l.row_idx[static_cast<std::size_t>(p)] == i) return l.values[static_cast<std::size_t>(p)];
  }
  return 0.0;
}

/// Dense solve of eq. 11 with fixed dofs held at x̃: (M + DᵀKD)·x = M·x̃ + DᵀK·r.
std::vector<double> solve_equation_11(const DenseSystem& s, const std::vector<double>& predicted,
                                      const std::vector<Quaternion>& rotations, const std::vector<char>& fixed) {
  const Index n = s.a.rows();
  std::vector<double> r(9 * rotations.size());
  for (std::size_t t = 0; t < rotations.size(); ++t) {
    const Mat3 rot = linalg::to_rotation_matrix(rotations[t]);
    for (int j = 0; j < 3; ++j) {
      for (int i = 0; i < 3; ++i) r[9 * t + static_cast<std::size_t>(3 * j + i)] = rot(i, j);  // vec stacks columns
    }
  }
  std::vector<double> rhs(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) {
    double sum = s.mass[static_cast<std::size_t>(i)] * predicted[static_cast<std::size_t>(i)];
    for (Index row = 0; row < s.d.rows(); ++row) {
      sum += s.d(row, i) * s.k[static_cast<std::size_t>(row)] * r[static_cast<std::size_t>(row)];
    }
    rhs[static_cast<std::size_t>(i)] = sum;
  }
  std::vector<Index> free;
  for (Index i = 0; i < n; ++i) {
    if (!fixed[static_cast<std::size_t>(i / 3)]) free.push_back(i);
  }
  const auto nf = static_cast<Index>(free.size());
  DenseMatrix a(nf, nf), b(nf, 1);
  for (Index p = 0; p < nf; ++p) {
    double value = rhs[static_cast<std::size_t>(free[static_cast<std::size_t>(p)])];
    for (Index j = 0; j < n; ++j) {
      if (fixed[static_cast<std::size_t>(j / 3)]) value -= s.a(free[static_cast<std::size_t>(p)], j) * predicted[static_cast<std::size_t>(j)];
    }
    b(p, 0) = value;
    for (Index q = 0; q < nf; ++q) a(p, q) = s.a(free[static_cast<std::size_t>(p)], free[static_cast<std::size_t>(q)]);
  }
  EXPECT_EQ(linalg::blas::potrf(a.view()), 0);
  linalg::blas::potrs(a.view(), b.view());
  std::vector<double> x = predicted;
  for (Index p = 0; p < nf; ++p) x[static_cast<std::size_t>(free[static_cast<std::size_t>(p)])] = b(p, 0);
  return x;
}

/// A moving, deformed state: rest positions sheared and spun, with a random velocity.
void set_twisted_state(OperatorSplittingSimulation& sim, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> jitter(-0.01, 0.01);
  std::vector<double> x(sim.positions().begin(), sim.positions().end());
  std::vector<double> v(x.size());
  for (std::size_t i = 0; i < x.size(); i += 3) {
    const double angle = 0.8 * x[i + 1];  // twist about y grows with height
    const double px = x[i], pz = x[i + 2];
    x[i] = std::cos(angle) * px - std::sin(angle) * pz + jitter(rng);
    x[i + 2] = std::sin(angle) * px + std::cos(angle) * pz + jitter(rng);
    for (std::size_t c = 0; c < 3; ++c) v[i + c] = 20.0 * jitter(rng);
  }
  sim.set_state(x, v);
}

std::vector<double> predicted_positions(const OperatorSplittingSimulation& sim, const std::vector<char>& fixed) {
  const auto& o = sim.options();
  std::vector<double> p(sim.positions().begin(), sim.positions().end());
  const std::array<double, 3> g = {o.gravity.x, o.gravity.y, o.gravity.z};
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (!fixed[i / 3]) p[i] += o.time_step * sim.velocities()[i] + o.time_step * o.time_step * g[i % 3];
  }
  return p;
}

std::vector<char> fixed_flags(const OperatorSplittingSimulation& sim) {
  std::vector<char> fixed(static_cast<std::size_t>(sim.body().node_count()), 0);
  for (Index v : sim.options().fixed_nodes) fixed[static_cast<std::size_t>(v)] = 1;
  return fixed;
}

TEST(OperatorSplitting, SystemMatrixEqualsDenseMassPlusDtKD) {
  ElasticBody body = small_box();
  const TetMesh mesh = body.rest;
  OperatorSplittingOptions options;
  options.time_step = kTimeStep;
  options.fixed_nodes = nodes_near_top(mesh, 1, 0.0);
  ASSERT_FALSE(options.fixed_nodes.empty());
  const OperatorSplittingSimulation sim(std::move(body), options);
  const DenseSystem dense = dense_system(mesh, rubber(), kTimeStep);
  const auto rows = sim.system_nodes();
  ASSERT_EQ(sim.system_matrix().size(), static_cast<Index>(rows.size()));
  ASSERT_EQ(static_cast<std::size_t>(sim.setup().free_nodes + sim.setup().fixed_nodes),
            static_cast<std::size_t>(mesh.node_count()));
  double scale = 0.0;
  for (Index i = 0; i < dense.a.rows(); ++i) scale = std::max(scale, std::abs(dense.a(i, i)));
  for (std::size_t p = 0; p < rows.size(); ++p) {
    for (std::size_t q = 0; q < rows.size(); ++q) {
      const double prefactored = lower_entry(sim.system_matrix(), static_cast<Index>(p), static_cast<Index>(q));
      for (Index c = 0; c < 3; ++c) {
        for (Index d = 0; d < 3; ++d) {
          // The 3n×3n matrix is the same n×n matrix on each coordinate, zero across them.
          const double expected = dense.a(3 * rows[p] + c, 3 * rows[q] + d);
          EXPECT_NEAR(c == d ? prefactored : 0.0, expected, 1e-12 * scale) << p << "," << q << " " << c << d;
        }
      }
    }
  }
}

TEST(OperatorSplitting, SystemMatrixEqualsLinalgScalarElasticityMatrixWithoutFixedNodes) {
  linalg::ElasticityBoxOptions box;
  box.nx = 3;
  box.ny = 2;
  box.nz = 2;
  box.cell_size = 0.1;
  box.youngs_modulus = rubber().youngs_modulus;
  box.poisson_ratio = rubber().poisson_ratio;
  box.density = rubber().density;
  box.time_step = kTimeStep;
  const linalg::SymmetricCscMatrix reference = linalg::scalar_elasticity_matrix(box);
  OperatorSplittingOptions options;
  options.time_step = kTimeStep;
  const OperatorSplittingSimulation sim(small_box(3, 2, 2), options);
  const linalg::SymmetricCscMatrix& a = sim.system_matrix();
  ASSERT_EQ(a.lower.col_ptr, reference.lower.col_ptr);
  ASSERT_EQ(a.lower.row_idx, reference.lower.row_idx);
  for (std::size_t p = 0; p < a.lower.values.size(); ++p) {
    EXPECT_NEAR(a.lower.values[p], reference.lower.values[p], 1e-12 * std::abs(reference.lower.values[p]) + 1e-15);
  }
}

TEST(OperatorSplitting, StepWithFrozenRotationsIsTheMinimizerOfEquation11) {
  ElasticBody body = small_box();
  const TetMesh mesh = body.rest;
  OperatorSplittingOptions options;
  options.time_step = kTimeStep;
  options.volume_iterations = 0;
  options.update_rotations = false;
  options.fixed_nodes = nodes_near_top(mesh, 1, 0.0);
  options.solve_precision = factor::TiledSolveFactor::Precision::double_values;  // the method, to 1e-10
  OperatorSplittingSimulation sim(std::move(body), options);
  set_twisted_state(sim, 1);
  const std::vector<char> fixed = fixed_flags(sim);
  const std::vector<double> predicted = predicted_positions(sim, fixed);
  const std::vector<Quaternion> frozen = sim.element_rotations();
  sim.step();
  EXPECT_EQ(sim.element_rotations(), frozen);
  const std::vector<double> expected = solve_equation_11(dense_system(mesh, rubber(), kTimeStep), predicted, frozen, fixed);
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(sim.positions()[i], expected[i], 1e-10) << i;
}

TEST(OperatorSplitting, StepWithApdRotationsIsTheMinimizerOfEquation11ForThoseRotations) {
  ElasticBody body = small_box();
  const TetMesh mesh = body.rest;
  OperatorSplittingOptions options;
  options.time_step = kTimeStep;
  options.volume_iterations = 0;
  options.rotation_tolerance = 1e-12;
  options.fixed_nodes = nodes_near_top(mesh, 1, 0.0);
  options.solve_precision = factor::TiledSolveFactor::Precision::double_values;
  OperatorSplittingSimulation sim(std::move(body), options);
  set_twisted_state(sim, 2);
  const std::vector<char> fixed = fixed_flags(sim);
  const std::vector<double> predicted = predicted_positions(sim, fixed);
  sim.step();
  const std::vector<Quaternion> used = sim.element_rotations();
  // The rotations are the polar rotations of F(x̃) (twisted by up to 0.24 rad: not identity).
  double largest_angle = 0.0;
  for (const Quaternion& q : used) largest_angle = std::max(largest_angle, linalg::rotation_angle(linalg::to_rotation_matrix(q)));
  EXPECT_GT(largest_angle, 0.05);
  const std::vector<double> expected = solve_equation_11(dense_system(mesh, rubber(), kTimeStep), predicted, used, fixed);
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(sim.positions()[i], expected[i], 1e-10) << i;
}

/// Ten twisted, swinging steps of the small box hanging from its top, with the options as
/// `configure` leaves them; the final positions, and the largest motion of a coordinate in one step.
std::vector<double> ten_twisted_steps(const std::function<void(OperatorSplittingOptions&)>& configure,
                                      double& largest_motion) {
  ElasticBody body = small_box();
  OperatorSplittingOptions options;
  options.time_step = kTimeStep;
  options.fixed_nodes = nodes_near_top(body.rest, 1, 0.0);
  configure(options);
  OperatorSplittingSimulation sim(std::move(body), options);
  set_twisted_state(sim, 3);
  largest_motion = 0.0;
  for (int step = 0; step < 10; ++step) {
    const std::vector<double> before(sim.positions().begin(), sim.positions().end());
    sim.step();
    for (std::size_t i = 0; i < before.size(); ++i) {
      largest_motion = std::max(largest_motion, std::abs(sim.positions()[i] - before[i]));
    }
  }
  return {sim.positions().begin(), sim.positions().end()};
}

// The default single-precision copy of L (OperatorSplittingOptions::solve_precision) perturbs
// each step's correction Δx = x − x̃ by a tiny fraction of it: over ten twisted, swinging steps
// the positions stay within 10⁻⁵ of the largest per-step motion of the double-precision run,
// and do differ from it (the option is honoured).
TEST(OperatorSplitting, SinglePrecisionSolveStaysWithinATinyFractionOfTheStep) {
  double motion = 0.0, unused = 0.0;
  const auto exact = ten_twisted_steps(
      [](OperatorSplittingOptions& o) { o.solve_precision = factor::TiledSolveFactor::Precision::double_values; }, motion);
  const auto single = ten_twisted_steps(
      [](OperatorSplittingOptions& o) { o.solve_precision = factor::TiledSolveFactor::Precision::single_values; }, unused);
  const double difference = max_abs_difference(single, exact);
  EXPECT_GT(motion, 1e-3);
  EXPECT_LT(difference, 1e-5 * motion);
  EXPECT_GT(difference, 0.0);
}

// Single-precision element passes (OperatorSplittingOptions::element_precision: F, the APD, the
// forces and the volume constraints in float, 16 elements a vector) against the double default:
// float rounding of the element quantities moves each step by ~10⁻⁶ of its motion, and the
// APD stops at the same tolerance.
TEST(OperatorSplitting, SinglePrecisionElementPassesStayWithinASmallFractionOfTheStep) {
  double motion = 0.0, unused = 0.0;
  const auto exact = ten_twisted_steps([](OperatorSplittingOptions&) {}, motion);
  const auto single = ten_twisted_steps(
      [](OperatorSplittingOptions& o) { o.element_precision = ElementPrecision::single_values; }, unused);
  const double difference = max_abs_difference(single, exact);
  std::printf("ten steps: largest motion %.3e m, single − double %.3e m\n", motion, difference);
  EXPECT_GT(motion, 1e-3);
  EXPECT_LT(difference, 1e-5 * motion);
  EXPECT_GT(difference, 0.0);
}

/// Positions after `steps` steps of a free box (no fixed node, no gravity) spun about y at
/// 5 rad/s — 0.05 rad a step, stretching as it spins — and the APD iterations.
std::vector<double> spinning_box_steps(RotationWarmStart warm_start, int steps, std::int64_t& rotation_iterations,
                                       double& largest_motion) {
  OperatorSplittingOptions options;
  options.time_step = kTimeStep;
  options.gravity = {0.0, 0.0, 0.0};
  options.rotation_warm_start = warm_start;
  OperatorSplittingSimulation sim(small_box(3, 4, 3), options);
  const std::vector<double> x(sim.positions().begin(), sim.positions().end());
  std::vector<double> v(x.size(), 0.0);
  for (std::size_t i = 0; i < x.size(); i += 3) {  // ω × x with ω = (0, 5, 0)
    v[i] = 5.0 * x[i + 2];
    v[i + 2] = -5.0 * x[i];
  }
  sim.set_state(x, v);
  rotation_iterations = 0;
  largest_motion = 0.0;
  for (int step = 0; step < steps; ++step) {
    const std::vector<double> before(sim.positions().begin(), sim.positions().end());
    rotation_iterations += sim.step().rotation_iterations;
    for (std::size_t i = 0; i < before.size(); ++i) {
      largest_motion = std::max(largest_motion, std::abs(sim.positions()[i] - before[i]));
    }
  }
  return {sim.positions().begin(), sim.positions().end()};
}

// Extrapolated APD warm starts (OperatorSplittingOptions::rotation_warm_start) on a spinning
// body: the same stopping rule from a better start, so the positions differ from the default's
// only within the APD's tolerance (rotations off by about τ² = 1e-6 rad), in about half the
// Newton steps. It takes a steady turn: on this soft box untwisting from a twisted start, whose
// elements turn differently from step to step, it saves nothing (1080 block iterations against
// 1089 over these 20 steps).
TEST(OperatorSplitting, ExtrapolatedWarmStartsTakeFewerApdStepsToTheSameTolerance) {
  constexpr int kSteps = 20;
  std::int64_t iterations_previous = 0, iterations_extrapolated = 0;
  double motion = 0.0, unused = 0.0;
  const auto previous = spinning_box_steps(RotationWarmStart::previous, kSteps, iterations_previous, motion);
  const auto extrapolated =
      spinning_box_steps(RotationWarmStart::extrapolated, kSteps, iterations_extrapolated, unused);
  const double difference = max_abs_difference(extrapolated, previous);
  std::printf("%d steps: largest motion %.3e m, extrapolated − previous %.3e m; APD block iterations %lld and %lld\n",
              kSteps, motion, difference, static_cast<long long>(iterations_extrapolated),
              static_cast<long long>(iterations_previous));
  EXPECT_GT(motion, 1e-3);
  EXPECT_LT(difference, 1e-5 * motion);
  EXPECT_GT(difference, 0.0);
  EXPECT_LT(static_cast<double>(iterations_extrapolated), 0.75 * static_cast<double>(iterations_previous));
}

// The step's solve on the GPU (solve_device): ten steps equal the CPU's double-precision copy
// to rounding; without a GPU, `gpu` is refused naming the reason and `automatic` runs on the CPU.
TEST(OperatorSplitting, GpuSolveEqualsTheCpuSolveOrIsRefusedWithoutAGpu) {
  const auto run = [](factor::FactorDevice device) {
    ElasticBody body = small_box();
    OperatorSplittingOptions options;
    options.time_step = kTimeStep;
    options.fixed_nodes = nodes_near_top(body.rest, 1, 0.0);
    options.solve_precision = factor::TiledSolveFactor::Precision::double_values;
    options.solve_device = device;
    OperatorSplittingSimulation sim(std::move(body), options);
    set_twisted_state(sim, 3);
    for (int step = 0; step < 10; ++step) sim.step();
    return std::vector<double>(sim.positions().begin(), sim.positions().end());
  };
  const auto cpu = run(factor::FactorDevice::cpu);
  std::string why_not;
  if (!factor::gpu_available(&why_not)) {
    try {
      run(factor::FactorDevice::gpu);
      ADD_FAILURE() << "a GPU solve without a GPU";
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find(why_not), std::string::npos) << error.what();
    }
    EXPECT_EQ(run(factor::FactorDevice::automatic), cpu);
    return;
  }
  const auto gpu = run(factor::FactorDevice::gpu);
  double difference = 0.0;
  double size = 0.0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    difference = std::max(difference, std::abs(gpu[i] - cpu[i]));
    size = std::max(size, std::abs(cpu[i]));
  }
  EXPECT_LT(difference, 1e-12 * size);
}

TEST(OperatorSplitting, FixedNodesStayExactlyFixedWhileTheRestSwings) {
  ElasticBody body = small_box(2, 4, 2);
  const TetMesh mesh = body.rest;
  OperatorSplittingOptions options;
  options.time_step = kTimeStep;
  options.volume_iterations = 3;
  options.gravity = {3.0, -9.81, 0.0};
  options.fixed_nodes = nodes_near_top(mesh, 1, 0.0);
  OperatorSplittingSimulation sim(std::move(body), options);
  for (int k = 0; k < 20; ++k) sim.step();
  double lowest_drop = 0.0;
  std::vector<char> fixed = fixed_flags(sim);
  for (Index v = 0; v < mesh.node_count(); ++v) {
    for (Index c = 0; c < 3; ++c) {
      const auto i = static_cast<std::size_t>(3 * v + c);
      if (fixed[static_cast<std::size_t>(v)]) {
        EXPECT_EQ(sim.positions()[i], mesh.positions[i]) << "node " << v;
        EXPECT_EQ(sim.velocities()[i], 0.0);
      }
    }
    lowest_drop = std::max(lowest_drop, mesh.positions[3 * static_cast<std::size_t>(v) + 1] - sim.positions()[3 * static_cast<std::size_t>(v) + 1]);
  }
  EXPECT_GT(lowest_drop, 1e-3);  // the free part moved
}

TEST(OperatorSplitting, ReflectedRestStateRecovers) {
  // Seed 003 Fig. 5: start in the mirror image of the rest pose, every element inverted.
  ElasticBody body = small_box(3, 3, 3);
  OperatorSplittingOptions options;
  options.time_step = kTimeStep;
  options.gravity = {0.0, 0.0, 0.0};
  options.volume_iterations = 2;
  OperatorSplittingSimulation sim(std::move(body), options);
  std::vector<double> mirrored(sim.positions().begin(), sim.positions().end());
  for (std::size_t i = 0; i < mirrored.size(); i += 3) mirrored[i] = 0.3 - mirrored[i];
  sim.set_state(mirrored, std::vector<double>(mirrored.size(), 0.0));
  for (double ratio : sim.volume_ratios()) ASSERT_NEAR(ratio, -1.0, 1e-12);
  int steps = 0;
  const auto all_positive = [&] {
    const std::vector<double> r = sim.volume_ratios();
    return std::all_of(r.begin(), r.end(), [](double d) { return d > 0.0; });
  };
  while (!all_positive() && steps < 100) {
    const OperatorSplittingStepStatistics stats = sim.step();
    if (steps == 0) {
      EXPECT_GT(stats.rotation_fallbacks, 0);  // inverted: the scalar APD's flip
    }
    ++steps;
  }
  EXPECT_TRUE(all_positive()) << "after " << steps << " steps";
  for (int k = 0; k < 30; ++k) sim.step();
  EXPECT_LT(max_volume_error(sim.body(), sim.positions()), 0.2);
}

TEST(OperatorSplitting, GroundProjectionKeepsNodesAboveThePlane) {
  ElasticBody body = small_box();
  OperatorSplittingOptions options;
  options.time_step = kTimeStep;
  options.obstacles.push_back(HalfSpace{{0.0, 1.0, 0.0}, -0.05});
  OperatorSplittingSimulation sim(std::move(body), options);
  Index contacts = 0;
  for (int k = 0; k < 40; ++k) contacts += sim.step().collision_nodes;
  EXPECT_GT(contacts, 0);
  for (std::size_t i = 1; i < sim.positions().size(); i += 3) EXPECT_GE(sim.positions()[i], -0.05 - 1e-12);
}

TEST(OperatorSplitting, RejectsBadOptionsAndState) {
  OperatorSplittingOptions options;
  options.time_step = 0.0;
  EXPECT_THROW(OperatorSplittingSimulation(small_box(), options), std::invalid_argument);
  options.time_step = kTimeStep;
  options.fixed_nodes = {1000000};
  EXPECT_THROW(OperatorSplittingSimulation(small_box(), options), std::invalid_argument);
  options.fixed_nodes.clear();
  options.volume_iterations = -1;
  EXPECT_THROW(OperatorSplittingSimulation(small_box(), options), std::invalid_argument);
  options.volume_iterations = 1;
  OperatorSplittingSimulation sim(small_box(), options);
  std::vector<double> x(sim.positions().begin(), sim.positions().end());
  std::vector<double> v(x.size(), 0.0);
  x[4] = std::nan("");
  EXPECT_THROW(sim.set_state(x, v), std::invalid_argument);
  EXPECT_THROW(sim.set_state(std::vector<double>(3), v), std::invalid_argument);
  EXPECT_THROW(nodes_near_top(sim.body().rest, 3, 0.1), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::fem
