#include "fem/pd/projective_dynamics.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "fem/pd/pd_global_solvers.hpp"

namespace cholsim::fem {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

std::string_view to_string(PdSolver solver) {
  switch (solver) {
    case PdSolver::schur: return "schur";
    case PdSolver::full: return "full";
    case PdSolver::pcg: return "pcg";
    case PdSolver::factor_pcg: return "factor-pcg";
  }
  return "?";
}

PdSolver parse_pd_solver(std::string_view name) {
  for (PdSolver solver : {PdSolver::schur, PdSolver::full, PdSolver::pcg, PdSolver::factor_pcg}) {
    if (name == to_string(solver)) return solver;
  }
  throw std::invalid_argument("unknown solver '" + std::string(name) + "' (expected schur, full, pcg or factor-pcg)");
}

PdSimulation::PdSimulation(const PdScene& scene, PdOptions options) : options_(std::move(options)), scene_(&scene) {
  if (options_.outer_iterations < 1 || options_.inner_iterations < 1) {
    throw std::invalid_argument("projective dynamics: outer and inner iterations must be ≥ 1");
  }
  auto start = Clock::now();
  model_ = std::make_unique<PdModel>(scene, options_.model);
  setup_.assemble_seconds = seconds_since(start);
  setup_.nodes = model_->node_count();
  setup_.free_nodes = model_->free_count();
  setup_.elements = model_->element_count();
  setup_.matrix_nnz_lower = model_->matrix().nnz_lower();

  // §4.2: E_c = tets holding a proxy, N_c = their free vertices.
  std::vector<char> prone(static_cast<std::size_t>(model_->element_count()), 0);
  for (const EmbeddedPoint& proxy : scene.proxies) prone[static_cast<std::size_t>(proxy.tet)] = 1;
  std::vector<char> prone_node(static_cast<std::size_t>(model_->node_count()), 0);
  for (Index e = 0; e < model_->element_count(); ++e) {
    if (prone[static_cast<std::size_t>(e)] == 0) {
      safe_elements_.push_back(e);
      continue;
    }
    prone_elements_.push_back(e);
    for (Index node : model_->element_nodes(e)) {
      if (model_->free_index(node) >= 0) prone_node[static_cast<std::size_t>(node)] = 1;
    }
  }
  for (Index node = 0; node < model_->node_count(); ++node) {
    if (prone_node[static_cast<std::size_t>(node)] != 0) prone_nodes_.push_back(node);
  }
  setup_.prone_elements = static_cast<Index>(prone_elements_.size());
  setup_.prone_nodes = static_cast<Index>(prone_nodes_.size());
  safe_incidence_ = model_->incidence(safe_elements_);
  prone_incidence_ = model_->incidence(prone_elements_);

  start = Clock::now();
  PdCollisionOptions collision = options_.collision;
  collision.threads = options_.model.threads;
  detector_ = std::make_unique<PdCollisionDetector>(scene, prone_elements_, model_->mean_edge_length(), collision);
  setup_.collision_setup_seconds = seconds_since(start);

  solver_ = make_pd_global_solver(*model_, prone_nodes_, options_, setup_);
  positions_ = scene.mesh.positions;
  velocities_.assign(positions_.size(), 0.0);
  inertia_target_ = positions_;
  proxy_depths_.assign(scene.proxies.size(), 0.0);
  attachments_ = model_->attachment_springs(0.0);
}

PdSimulation::~PdSimulation() = default;
PdSimulation::PdSimulation(PdSimulation&&) noexcept = default;
PdSimulation& PdSimulation::operator=(PdSimulation&&) noexcept = default;

void PdSimulation::set_state(std::span<const double> positions, std::span<const double> velocities) {
  if (positions.size() != positions_.size() || velocities.size() != velocities_.size()) {
    throw std::invalid_argument("projective dynamics: set_state needs 3 values per node (" +
                                std::to_string(positions_.size()) + ")");
  }
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (!std::isfinite(positions[i]) || !std::isfinite(velocities[i])) {
      throw std::invalid_argument("projective dynamics: set_state entry " + std::to_string(i) + " is not finite");
    }
  }
  std::copy(positions.begin(), positions.end(), positions_.begin());
  std::copy(velocities.begin(), velocities.end(), velocities_.begin());
  for (Index node : scene_->fixed_nodes) {
    for (std::size_t c = 0; c < 3; ++c) {
      const auto at = static_cast<std::size_t>(3 * node) + c;
      positions_[at] = scene_->mesh.positions[at];
      velocities_[at] = 0.0;
    }
  }
}

void PdSimulation::write_free_solution(linalg::ConstDenseView x) {
  for (Index i = 0; i < model_->free_count(); ++i) {
    const Index node = model_->free_nodes()[static_cast<std::size_t>(i)];
    for (Index c = 0; c < 3; ++c) positions_[static_cast<std::size_t>(3 * node + c)] = x(i, c);
  }
}

void PdSimulation::run_outer_iteration(PdFrameStats& stats) {
  PdPhaseTimes& times = stats.times;
  const Index n = model_->free_count();
  auto start = Clock::now();
  if (options_.collisions) detector_->update_safe_positions(positions_);
  times.detection += seconds_since(start);
  start = Clock::now();
  model_->local_step(positions_, safe_elements_);
  times.local_step += seconds_since(start);

  start = Clock::now();
  linalg::DenseMatrix b_outer(n, 3);
  model_->add_element_forces(safe_incidence_, b_outer.view());
  model_->add_constant_forces(inertia_target_, b_outer.view());
  model_->add_spring_forces(attachments_, b_outer.view());
  times.right_hand_side += seconds_since(start);
  solver_->begin_outer(b_outer.view(), times);

  linalg::DenseMatrix x(n, 3);
  for (Index i = 0; i < n; ++i) {
    const Index node = model_->free_nodes()[static_cast<std::size_t>(i)];
    for (Index c = 0; c < 3; ++c) x(i, c) = positions_[static_cast<std::size_t>(3 * node + c)];
  }
  linalg::DenseMatrix b_inner(n, 3);
  const auto inner_start = Clock::now();
  for (int j = 0; j < options_.inner_iterations; ++j) {
    start = Clock::now();
    if (options_.collisions) {
      collision_springs_ = detector_->detect(positions_, &stats.detection, proxy_depths_);
    } else {
      collision_springs_.clear();
      std::fill(proxy_depths_.begin(), proxy_depths_.end(), 0.0);
      stats.detection = {};
    }
    times.detection += seconds_since(start);

    start = Clock::now();
    model_->local_step(positions_, prone_elements_);
    times.local_step += seconds_since(start);

    start = Clock::now();
    // The springs reach N_c only (a proxy's tet is in E_c), so clearing N_c clears all.
    for (Index node : prone_incidence_.nodes) {
      for (Index c = 0; c < 3; ++c) b_inner(model_->free_index(node), c) = 0.0;
    }
    model_->add_element_forces(prone_incidence_, b_inner.view());
    model_->add_spring_forces(collision_springs_, b_inner.view());
    times.right_hand_side += seconds_since(start);

    solver_->solve_inner(b_inner.view(), collision_springs_, x.view(), stats);
    for (Index node : prone_nodes_) {
      const Index i = model_->free_index(node);
      for (Index c = 0; c < 3; ++c) positions_[static_cast<std::size_t>(3 * node + c)] = x(i, c);
    }
    ++stats.inner_iterations;
    stats.active_springs = static_cast<Index>(collision_springs_.size());
  }
  times.inner += seconds_since(inner_start);
  solver_->end_outer(x.view(), times);
  write_free_solution(x.view());
  ++stats.outer_iterations;
}

PdFrameStats PdSimulation::step() {
  const auto start = Clock::now();
  ++frame_;
  PdFrameStats stats;
  stats.frame = frame_;
  attachments_ = model_->attachment_springs(frame_);
  const bool dynamic = options_.model.integrator == PdIntegrator::backward_euler;
  std::vector<double> previous;
  if (dynamic) {
    // y = x_n + h·v_n + h²·g, the inertial target of backward Euler as minimization.
    const double h = options_.model.time_step;
    previous = positions_;
    for (std::size_t i = 0; i < positions_.size(); ++i) {
      inertia_target_[i] = positions_[i] + h * velocities_[i] + h * h * options_.model.gravity[static_cast<int>(i % 3)];
    }
  }
  for (int outer = 0; outer < options_.outer_iterations; ++outer) run_outer_iteration(stats);
  if (dynamic) {
    const double h = options_.model.time_step;
    for (std::size_t i = 0; i < positions_.size(); ++i) velocities_[i] = (positions_[i] - previous[i]) / h;
  }
  stats.energy = energy();
  stats.times.total = seconds_since(start);
  return stats;
}

double PdSimulation::energy() const {
  std::vector<SpringRow> springs = attachments_;
  springs.insert(springs.end(), collision_springs_.begin(), collision_springs_.end());
  return model_->energy(positions_, springs, inertia_target_);
}

}  // namespace cholsim::fem
