#include "fem/opsplit/operator_splitting.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

#include "factor/gpu/gpu_solve.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/solve/supernodal_solve_tiled.hpp"
#include "fem/contact/position_projection.hpp"
#include "fem/opsplit/opsplit_element_pass.hpp"
#include "fem/opsplit/volume_constraints.hpp"
#include "linalg/cache_aligned_allocator.hpp"

namespace cholsim::fem {
namespace {

using linalg::Mat3;
using linalg::Quaternion;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

void check_options(const OperatorSplittingOptions& options, Index nodes) {
  const auto fail = [](const std::string& what) {
    throw std::invalid_argument("OperatorSplittingSimulation: " + what);
  };
  if (!(options.time_step > 0.0) || !std::isfinite(options.time_step)) {
    fail("time step must be positive and finite, got " + std::to_string(options.time_step));
  }
  if (options.volume_iterations < 0) fail("volume iterations must be ≥ 0");
  if (options.rotation_max_iterations < 1) fail("rotation iterations must be ≥ 1");
  if (!(options.rotation_tolerance > 0.0)) fail("rotation tolerance must be positive");
  if (!std::isfinite(options.gravity.x) || !std::isfinite(options.gravity.y) || !std::isfinite(options.gravity.z)) {
    fail("gravity must be finite");
  }
  for (std::size_t k = 0; k < options.fixed_nodes.size(); ++k) {
    const Index v = options.fixed_nodes[k];
    if (v < 0 || v >= nodes) {
      fail("fixed node " + std::to_string(v) + " (entry " + std::to_string(k) + ") outside 0.." +
           std::to_string(nodes - 1));
    }
  }
}

}  // namespace

struct OperatorSplittingSimulation::State {
  /// Which nodes move and how the systems number them: set by the fixed nodes, never changed.
  struct NodeNumbering {
    std::vector<unsigned char> movable;
    std::vector<double> inverse_masses;  ///< 0 for fixed nodes
    std::vector<Index> system_nodes;     ///< system row → node
    std::vector<Index> system_row;       ///< node → system row, −1 when fixed
    std::vector<Index> solve_row;        ///< node → row of the factor's permuted system, −1 when fixed
  };

  // Copies of a simulation share the body, the node numbering, the matrix, its factor and the
  // element and constraint data (OperatorSplittingSimulation's copy constructor); the rest is
  // their own.
  std::shared_ptr<const ElasticBody> body;
  std::shared_ptr<const NodeNumbering> numbering;
  OperatorSplittingOptions options;
  double time = 0.0;
  std::vector<double> positions, velocities;
  std::vector<double> predicted;  ///< x̃ of Algorithm 2 line 2
  std::vector<double> previous;   ///< x(t), for the velocity update (line 16)
  std::shared_ptr<const linalg::SymmetricCscMatrix> matrix;
  /// L of M + DᵀKD in the layout for repeated solves; the Factor it was copied from is not kept.
  /// Not const (its work arrays): copies must not step at the same time.
  std::shared_ptr<factor::TiledSolveFactor> solver;
  /// The same on the GPU (OperatorSplittingOptions::solve_device), instead of `solver`.
  std::shared_ptr<factor::GpuSolveFactor> gpu_solver;

  /// F(x̃), APD and DᵀK(r − Dx̃) in one pass (lines 4–8), in the options' element precision.
  std::variant<OpsplitElementPassOf<double>, OpsplitElementPassOf<float>> element_pass;
  /// The right-hand side and then Δx, in solve_row order, four values a row (x, y, z, 0) and
  /// one work row: what TiledSolveFactor::solve_lanes solves in place, written so by the element
  /// pass, so the step permutes and copies nothing on the way in or out of the solve.
  linalg::CacheAlignedVector<double> lanes;
  std::variant<VolumeConstraintsOf<double>, VolumeConstraintsOf<float>> volume;
  OperatorSplittingSetup setup;

  void assemble_and_factor();
  void make_solver(const factor::Factor& factor);
  void predict();
  void apply_solution();
  /// Where the element pass writes the right-hand side and the solve leaves Δx: `lanes`, or the
  /// GPU solver's page-locked buffer, which goes to the device without a copy on the host.
  [[nodiscard]] std::span<double> lane_buffer() { return gpu_solver ? gpu_solver->pinned_lanes() : std::span(lanes); }
  [[nodiscard]] std::span<const Index> solve_permutation() const {
    return gpu_solver ? gpu_solver->permutation() : solver ? solver->permutation() : std::span<const Index>{};
  }
  [[nodiscard]] Index element_count() const { return body->element_count(); }
};

void OperatorSplittingSimulation::State::assemble_and_factor() {
  const auto start = Clock::now();
  const auto& system_nodes = numbering->system_nodes;
  const auto& system_row = numbering->system_row;
  const Index free = static_cast<Index>(system_nodes.size());
  linalg::Triplets triplets;
  triplets.reserve(16 * at(element_count()) + at(free));
  for (Index v : system_nodes) triplets.add(system_row[at(v)], system_row[at(v)], body->node_masses[at(v)]);
  for (Index e = 0; e < element_count(); ++e) {
    // Shape-function gradients g₁..g₃ = rows of Dₘ⁻¹, g₀ = −Σ: the entries of Dₜ (eq. 9).
    std::array<Vec3, 4> g;
    const Mat3& b = body->rest_shape_inverse[at(e)];
    g[1] = b.row(0);
    g[2] = b.row(1);
    g[3] = b.row(2);
    g[0] = -(g[1] + g[2] + g[3]);
    const auto nodes = body->element_nodes(e);
    const double weight = stretch_weight(*body, e, options.time_step);
    for (std::size_t a = 0; a < 4; ++a) {
      const Index row = system_row[at(nodes[a])];
      if (row < 0) continue;
      for (std::size_t c = 0; c < 4; ++c) {
        const Index col = system_row[at(nodes[c])];
        if (col < 0) continue;
        // Per coordinate, DₜᵀKₜDₜ = 2μVΔt²·(gₐ·g_c): one scalar block for x, y and z.
        triplets.add(row, col, weight * dot(g[a], g[c]));
      }
    }
  }
  matrix = std::make_shared<const linalg::SymmetricCscMatrix>(
      linalg::symmetric_from_triplets(free, triplets, linalg::UpperEntries::drop));
  setup.assemble_seconds = seconds_since(start);
  setup.matrix_nnz_lower = matrix->nnz_lower();
  if (free == 0) return;

  const auto analyze_start = Clock::now();
  factor::Factor factor(factor::analyze(*matrix));
  setup.analyze_seconds = seconds_since(analyze_start);
  factor::FactorOptions factor_options;
  factor_options.threads = options.threads;
  const factor::FactorStatus& status = factor.factorize(*matrix, factor_options);
  if (!status.ok()) {
    throw std::runtime_error("OperatorSplittingSimulation: M + DᵀKD could not be factored: " + status.message);
  }
  setup.factorize_seconds = factor.stats().seconds;
  setup.nnz_l = factor.symbolic().stats().nnz_l;
  make_solver(factor);
}

void OperatorSplittingSimulation::State::make_solver(const factor::Factor& factor) {
  std::string why_no_gpu;
  const bool gpu = options.solve_device == factor::FactorDevice::gpu ||
                   (options.solve_device == factor::FactorDevice::automatic && factor::gpu_available(&why_no_gpu));
  if (gpu) {
    try {
      gpu_solver = std::make_shared<factor::GpuSolveFactor>(factor);
      setup.solve_device = "gpu (" + gpu_solver->device_name() + ")";
    } catch (const factor::GpuError& error) {
      throw std::runtime_error(std::string("OperatorSplittingSimulation: the solve on the GPU: ") + error.what());
    }
    return;
  }
  // Factored once, solved every step: the copy streams L linearly in both substitutions
  // (factor/solve/supernodal_solve_tiled.hpp says why that matters).
  solver = std::make_shared<factor::TiledSolveFactor>(factor, options.solve_precision);
  setup.solve_precision = solver->precision() == factor::TiledSolveFactor::Precision::single_values ? "single" : "double";
}

void OperatorSplittingSimulation::State::predict() {
  // Algorithm 2 line 2: x̃ = x + vΔt + gΔt² (the external force is gravity, f/m = g).
  const double dt = options.time_step;
  const std::array<double, 3> g = {options.gravity.x, options.gravity.y, options.gravity.z};
  const auto& movable = numbering->movable;
  // x(t) moves to `previous` without a copy: apply_solution rewrites every position.
  std::swap(previous, positions);
  for (std::size_t v = 0; v < movable.size(); ++v) {
    for (std::size_t c = 0; c < 3; ++c) {
      const std::size_t i = 3 * v + c;
      predicted[i] = movable[v] != 0 ? previous[i] + dt * velocities[i] + dt * dt * g[c] : previous[i];
    }
  }
}

void OperatorSplittingSimulation::State::apply_solution() {
  const auto& solve_row = numbering->solve_row;
  const double* solution = lane_buffer().data();
  for (std::size_t v = 0; v < solve_row.size(); ++v) {
    if (solve_row[v] < 0) {  // fixed: x̃ = x, Δx = 0 (eq. 12 remark)
      for (std::size_t c = 0; c < 3; ++c) positions[3 * v + c] = predicted[3 * v + c];
      continue;
    }
    const double* dx = solution + kRightHandSideStride * at(solve_row[v]);
    for (std::size_t c = 0; c < 3; ++c) positions[3 * v + c] = predicted[3 * v + c] + dx[c];
  }
}

OperatorSplittingSimulation::OperatorSplittingSimulation(ElasticBody body, OperatorSplittingOptions options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  check_options(options, body.node_count());
  s.body = std::make_shared<const ElasticBody>(std::move(body));
  s.options = std::move(options);
  const Index nodes = s.body->node_count();
  const Index elements = s.body->element_count();
  s.positions = s.body->rest.positions;
  s.velocities.assign(s.positions.size(), 0.0);
  s.predicted = s.positions;
  s.previous = s.positions;
  auto numbering = std::make_shared<State::NodeNumbering>();
  State::NodeNumbering& n = *numbering;
  n.movable.assign(at(nodes), 1);
  for (Index v : s.options.fixed_nodes) n.movable[at(v)] = 0;
  n.inverse_masses.resize(at(nodes));
  n.system_row.assign(at(nodes), -1);
  for (Index v = 0; v < nodes; ++v) {
    n.inverse_masses[at(v)] = n.movable[at(v)] != 0 ? 1.0 / s.body->node_masses[at(v)] : 0.0;
    if (n.movable[at(v)] == 0) continue;
    n.system_row[at(v)] = static_cast<Index>(n.system_nodes.size());
    n.system_nodes.push_back(v);
  }
  s.numbering = numbering;

  const double dt = s.options.time_step;
  const auto free = static_cast<Index>(n.system_nodes.size());
  s.setup.free_nodes = free;
  s.setup.fixed_nodes = nodes - free;
  s.setup.elements = elements;
  s.assemble_and_factor();
  // The element pass writes each node's force to its row of the permuted system.
  n.solve_row.assign(at(nodes), -1);
  {
    const auto permutation = s.solve_permutation();
    for (std::size_t k = 0; k < permutation.size(); ++k) {
      n.solve_row[at(n.system_nodes[at(permutation[k])])] = static_cast<Index>(k);
    }
  }
  if (s.options.element_precision == ElementPrecision::single_values) {
    s.element_pass = OpsplitElementPassOf<float>(*s.body, n.solve_row, free, dt);
    s.volume = VolumeConstraintsOf<float>(*s.body, dt, n.inverse_masses);
  } else {
    s.element_pass = OpsplitElementPassOf<double>(*s.body, n.solve_row, free, dt);
    s.volume = VolumeConstraintsOf<double>(*s.body, dt, n.inverse_masses);
  }
  s.lanes.assign(kRightHandSideStride * (at(free) + 1), 0.0);
}

OperatorSplittingSimulation::OperatorSplittingSimulation(const OperatorSplittingSimulation& other)
    : state_(std::make_unique<State>(*other.state_)) {}

OperatorSplittingSimulation::~OperatorSplittingSimulation() = default;
OperatorSplittingSimulation::OperatorSplittingSimulation(OperatorSplittingSimulation&&) noexcept = default;
OperatorSplittingSimulation& OperatorSplittingSimulation::operator=(OperatorSplittingSimulation&&) noexcept = default;

OperatorSplittingStepStatistics OperatorSplittingSimulation::step() {
  State& s = *state_;
  OperatorSplittingStepStatistics stats;
  const auto step_start = Clock::now();
  s.predict();

  // Lines 4–8 in one pass; its time is reported as `rotations` (see OperatorSplittingTimings).
  auto phase = Clock::now();
  OpsplitElementPassOptions pass;
  pass.update_rotations = s.options.update_rotations;
  pass.apd.tolerance = s.options.rotation_tolerance;
  pass.apd.max_iterations = s.options.rotation_max_iterations;
  pass.extrapolate_rotations = s.options.rotation_warm_start == RotationWarmStart::extrapolated;
  pass.threads = s.options.threads;
  const auto free_rows = kRightHandSideStride * s.numbering->system_nodes.size();
  const std::span<double> right_hand_side = s.lane_buffer().first(free_rows);
  const linalg::ApdBatchStats apd =
      std::visit([&](auto& element_pass) { return element_pass.run(s.predicted, right_hand_side, pass); }, s.element_pass);
  stats.rotation_iterations = apd.vector_iterations;
  stats.rotation_fallbacks = apd.scalar_fallbacks;
  stats.timings.rotations = seconds_since(phase);

  phase = Clock::now();
  if (s.gpu_solver) {
    s.gpu_solver->solve_lanes(s.lane_buffer(), 3);  // x, y, z together (eq. 12)
  } else if (s.solver) {
    s.solver->solve_lanes(s.lanes);
  }
  s.apply_solution();
  stats.timings.solve = seconds_since(phase);

  phase = Clock::now();
  if (s.options.volume_iterations > 0) {
    std::visit([&](auto& volume) { volume.project(s.positions, s.options.volume_iterations, s.options.threads); },
               s.volume);
  }
  stats.timings.volume_constraints = seconds_since(phase);

  phase = Clock::now();
  s.time += s.options.time_step;
  stats.collision_nodes = project_out_of_obstacles(s.options.obstacles, s.time, s.numbering->movable, s.positions);
  stats.timings.collisions = seconds_since(phase);

  // Algorithm 2 line 16.
  const double inverse_dt = 1.0 / s.options.time_step;
  for (std::size_t i = 0; i < s.positions.size(); ++i) s.velocities[i] = (s.positions[i] - s.previous[i]) * inverse_dt;
  stats.timings.total = seconds_since(step_start);
  return stats;
}

void OperatorSplittingSimulation::set_state(std::span<const double> positions, std::span<const double> velocities) {
  State& s = *state_;
  if (positions.size() != s.positions.size() || velocities.size() != s.velocities.size()) {
    throw std::invalid_argument("OperatorSplittingSimulation::set_state: expected " +
                                std::to_string(s.positions.size()) + " positions and velocities, got " +
                                std::to_string(positions.size()) + " and " + std::to_string(velocities.size()));
  }
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (!std::isfinite(positions[i]) || !std::isfinite(velocities[i])) {
      throw std::invalid_argument("OperatorSplittingSimulation::set_state: non-finite value at node " +
                                  std::to_string(i / 3) + ", component " + std::to_string(i % 3));
    }
  }
  s.positions.assign(positions.begin(), positions.end());
  s.velocities.assign(velocities.begin(), velocities.end());
  const auto& movable = s.numbering->movable;
  for (std::size_t v = 0; v < movable.size(); ++v) {
    if (movable[v] == 0) std::fill_n(s.velocities.begin() + static_cast<std::ptrdiff_t>(3 * v), 3, 0.0);
  }
}

double OperatorSplittingSimulation::time() const { return state_->time; }
std::span<const double> OperatorSplittingSimulation::positions() const { return state_->positions; }
std::span<const double> OperatorSplittingSimulation::velocities() const { return state_->velocities; }

std::vector<double> OperatorSplittingSimulation::volume_ratios() const {
  std::vector<double> ratios(at(state_->body->element_count()));
  fem::volume_ratios(*state_->body, state_->positions, ratios);
  return ratios;
}

std::vector<Quaternion> OperatorSplittingSimulation::element_rotations() const {
  const State& s = *state_;
  std::vector<Quaternion> result(at(s.body->element_count()));
  std::visit([&](const auto& element_pass) {
    for (std::size_t t = 0; t < result.size(); ++t) result[t] = element_pass.rotation(static_cast<Index>(t));
  }, s.element_pass);
  return result;
}

const linalg::SymmetricCscMatrix& OperatorSplittingSimulation::system_matrix() const { return *state_->matrix; }
std::span<const Index> OperatorSplittingSimulation::system_nodes() const { return state_->numbering->system_nodes; }
const OperatorSplittingSetup& OperatorSplittingSimulation::setup() const { return state_->setup; }
const ElasticBody& OperatorSplittingSimulation::body() const { return *state_->body; }
const OperatorSplittingOptions& OperatorSplittingSimulation::options() const { return state_->options; }

Index OperatorSplittingBatch::add(OperatorSplittingSimulation simulation) {
  bodies_.push_back(std::move(simulation));
  return size() - 1;
}

Index OperatorSplittingBatch::add_copy(Index body) {
  if (body < 0 || body >= size()) {
    throw std::out_of_range("OperatorSplittingBatch::add_copy: body " + std::to_string(body) + " of " +
                            std::to_string(size()));
  }
  bodies_.push_back(bodies_[at(body)]);  // copies share the setup (the copy constructor)
  return size() - 1;
}

OperatorSplittingStepStatistics OperatorSplittingBatch::step() {
  OperatorSplittingStepStatistics total;
  for (OperatorSplittingSimulation& body : bodies_) {
    const OperatorSplittingStepStatistics stats = body.step();
    total.timings.rotations += stats.timings.rotations;
    total.timings.right_hand_side += stats.timings.right_hand_side;
    total.timings.solve += stats.timings.solve;
    total.timings.volume_constraints += stats.timings.volume_constraints;
    total.timings.collisions += stats.timings.collisions;
    total.timings.total += stats.timings.total;
    total.rotation_iterations += stats.rotation_iterations;
    total.rotation_fallbacks += stats.rotation_fallbacks;
    total.collision_nodes += stats.collision_nodes;
  }
  return total;
}

OperatorSplittingSimulation& OperatorSplittingBatch::body(Index index) {
  if (index < 0 || index >= size()) {
    throw std::out_of_range("OperatorSplittingBatch::body: " + std::to_string(index) + " of " + std::to_string(size()));
  }
  return bodies_[at(index)];
}

std::vector<Index> nodes_near_top(const TetMesh& mesh, int axis, double fraction) {
  if (axis < 0 || axis > 2) throw std::invalid_argument("nodes_near_top: axis must be 0, 1 or 2");
  if (!(fraction >= 0.0 && fraction <= 1.0)) {
    throw std::invalid_argument("nodes_near_top: fraction must lie in [0, 1], got " + std::to_string(fraction));
  }
  double low = std::numeric_limits<double>::infinity();
  double top = -low;
  for (Index v = 0; v < mesh.node_count(); ++v) {
    low = std::min(low, mesh.positions[3 * at(v) + at(axis)]);
    top = std::max(top, mesh.positions[3 * at(v) + at(axis)]);
  }
  const double threshold = top - fraction * (top - low);
  std::vector<Index> nodes;
  for (Index v = 0; v < mesh.node_count(); ++v) {
    if (mesh.positions[3 * at(v) + at(axis)] >= threshold) nodes.push_back(v);
  }
  return nodes;
}

}  // namespace cholsim::fem
