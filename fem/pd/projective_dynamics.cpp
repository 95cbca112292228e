#include "fem/pd/projective_dynamics.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <optional>
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
  build();
  positions_ = scene.mesh.positions;
  velocities_.assign(positions_.size(), 0.0);
  inertia_target_ = positions_;
  attachments_ = model_->attachment_springs(0.0);
}

void PdSimulation::build() {
  const PdScene& scene = *scene_;
  setup_ = {};
  auto start = Clock::now();
  model_ = std::make_unique<PdModel>(scene, options_.model);
  setup_.assemble_seconds = seconds_since(start);
  setup_.nodes = model_->node_count();
  setup_.free_nodes = model_->free_count();
  setup_.elements = model_->element_count();
  setup_.matrix_nnz_lower = model_->matrix().nnz_lower();

  // §4.2: E_c = tets holding a proxy (or a suture end), N_c = their free vertices.
  std::vector<char> prone(static_cast<std::size_t>(model_->element_count()), 0);
  for (const EmbeddedPoint& proxy : scene.proxies) prone[static_cast<std::size_t>(proxy.tet)] = 1;
  for (const Suture& suture : sutures_) {
    prone[static_cast<std::size_t>(suture.first.tet)] = 1;
    prone[static_cast<std::size_t>(suture.second.tet)] = 1;
  }
  std::vector<char> prone_node(static_cast<std::size_t>(model_->node_count()), 0);
  safe_elements_.clear();
  prone_elements_.clear();
  prone_nodes_.clear();
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
  proxy_depths_.assign(scene.proxies.size(), 0.0);
  collision_springs_.clear();
  b_outer_ = linalg::DenseMatrix(model_->free_count(), 3);
  b_inner_ = linalg::DenseMatrix(model_->free_count(), 3);
  x_ = linalg::DenseMatrix(model_->free_count(), 3);
}

namespace {

// Where the excision sends a rest tet or node: its new index, or −1 when it is gone.
struct ExcisionMap {
  std::vector<Index> tet;
  std::vector<Index> node;

  [[nodiscard]] std::optional<EmbeddedPoint> point(const EmbeddedPoint& p) const {
    const Index moved = tet[static_cast<std::size_t>(p.tet)];
    if (moved < 0) return std::nullopt;
    return EmbeddedPoint{moved, p.weights};
  }
};

// The scene without the excised tets and the nodes only they used, everything renumbered.
PdScene excised_scene(const PdScene& scene, ExcisionMap& map) {
  const TetMesh& mesh = scene.mesh;
  std::vector<char> removed(static_cast<std::size_t>(mesh.tet_count()), 0);
  for (Index tet : scene.excision.tets) {
    if (tet < 0 || tet >= mesh.tet_count()) {
      throw std::invalid_argument("pd scene: excised tet " + std::to_string(tet) + " is outside the mesh");
    }
    removed[static_cast<std::size_t>(tet)] = 1;
  }
  TetMesh cut;
  cut.positions = mesh.positions;
  map.tet.assign(static_cast<std::size_t>(mesh.tet_count()), -1);
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    if (removed[static_cast<std::size_t>(tet)] != 0) continue;
    map.tet[static_cast<std::size_t>(tet)] = cut.tet_count();
    for (std::size_t i = 0; i < 4; ++i) cut.tets.push_back(mesh.tets[static_cast<std::size_t>(4 * tet) + i]);
  }
  std::vector<Index> kept_nodes;
  PdScene result = scene;
  result.mesh = remove_unused_nodes(cut, &kept_nodes);
  map.node.assign(static_cast<std::size_t>(mesh.node_count()), -1);
  for (std::size_t i = 0; i < kept_nodes.size(); ++i) map.node[static_cast<std::size_t>(kept_nodes[i])] = static_cast<Index>(i);
  result.fixed_nodes.clear();
  for (Index node : scene.fixed_nodes) {
    if (map.node[static_cast<std::size_t>(node)] >= 0) result.fixed_nodes.push_back(map.node[static_cast<std::size_t>(node)]);
  }
  result.proxies.clear();
  for (const EmbeddedPoint& proxy : scene.proxies) {
    if (auto moved = map.point(proxy)) result.proxies.push_back(*moved);
  }
  result.attachments.clear();
  for (const BoneAttachment& attachment : scene.attachments) {
    if (auto moved = map.point(attachment.flesh)) result.attachments.push_back({attachment.bone, *moved, attachment.rest_position});
  }
  result.excision = {};
  return result;
}

}  // namespace

double PdSimulation::excise() {
  const auto start = Clock::now();
  ExcisionMap map;
  auto cut = std::make_unique<PdScene>(excised_scene(*scene_, map));
  std::vector<Suture> sutures;
  for (const Suture& suture : scene_->excision.sutures) {
    const auto first = map.point(suture.first);
    const auto second = map.point(suture.second);
    if (!first || !second) throw std::invalid_argument("pd scene: a suture lies in an excised tet");
    sutures.push_back({*first, *second});
  }
  const double suture_stiffness = scene_->excision.suture_stiffness;
  // The state follows its nodes; Dirichlet nodes keep their rest values.
  const auto carry = [&](const std::vector<double>& values) {
    std::vector<double> moved(3 * static_cast<std::size_t>(cut->mesh.node_count()));
    for (std::size_t old = 0; old < map.node.size(); ++old) {
      const Index node = map.node[old];
      if (node < 0) continue;
      for (std::size_t c = 0; c < 3; ++c) moved[3 * static_cast<std::size_t>(node) + c] = values[3 * old + c];
    }
    return moved;
  };
  positions_ = carry(positions_);
  velocities_ = carry(velocities_);
  inertia_target_ = carry(inertia_target_);
  excised_scene_ = std::move(cut);
  scene_ = excised_scene_.get();
  sutures_ = std::move(sutures);
  suture_stiffness_ = suture_stiffness;
  build();  // the topology changed: K assembled, analysed and partially factored again
  return seconds_since(start);
}

std::vector<SpringRow> PdSimulation::suture_springs() const {
  std::vector<SpringRow> springs;
  for (const Suture& suture : sutures_) {
    springs.push_back(spring_between(scene_->mesh, suture.first, suture.second, suture_stiffness_));
  }
  return springs;
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
  std::fill(b_outer_.data(), b_outer_.data() + 3 * static_cast<std::size_t>(n), 0.0);
  model_->add_element_forces(safe_incidence_, b_outer_.view());
  model_->add_constant_forces(inertia_target_, b_outer_.view());
  model_->add_spring_forces(attachments_, b_outer_.view());
  times.right_hand_side += seconds_since(start);
  solver_->begin_outer(b_outer_.view(), times);

  for (Index i = 0; i < n; ++i) {
    const Index node = model_->free_nodes()[static_cast<std::size_t>(i)];
    for (Index c = 0; c < 3; ++c) x_(i, c) = positions_[static_cast<std::size_t>(3 * node + c)];
  }
  const auto inner_start = Clock::now();
  for (int j = 0; j < options_.inner_iterations; ++j) {
    start = Clock::now();
    if (options_.collisions) {
      // The first inner iteration sees x_s as it is; the later ones keep its deep contacts.
      collision_springs_ = detector_->detect(positions_, &stats.detection, proxy_depths_,
                                             j == 0 ? PdDetectionScope::all : PdDetectionScope::prone_only);
    } else {
      collision_springs_.clear();
      std::fill(proxy_depths_.begin(), proxy_depths_.end(), 0.0);
      stats.detection = {};
    }
    const std::vector<SpringRow> sutures = suture_springs();
    collision_springs_.insert(collision_springs_.end(), sutures.begin(), sutures.end());
    times.detection += seconds_since(start);

    start = Clock::now();
    model_->local_step(positions_, prone_elements_);
    times.local_step += seconds_since(start);

    start = Clock::now();
    // The springs reach N_c only (a proxy's tet is in E_c), so clearing N_c clears all: the
    // other rows of b_inner_ are never written.
    for (Index node : prone_incidence_.nodes) {
      for (Index c = 0; c < 3; ++c) b_inner_(model_->free_index(node), c) = 0.0;
    }
    model_->add_element_forces(prone_incidence_, b_inner_.view());
    model_->add_spring_forces(collision_springs_, b_inner_.view());
    times.right_hand_side += seconds_since(start);

    solver_->solve_inner(b_inner_.view(), collision_springs_, x_.view(), stats);
    for (Index node : prone_nodes_) {
      const Index i = model_->free_index(node);
      for (Index c = 0; c < 3; ++c) positions_[static_cast<std::size_t>(3 * node + c)] = x_(i, c);
    }
    ++stats.inner_iterations;
    stats.active_springs = static_cast<Index>(collision_springs_.size());
  }
  times.inner += seconds_since(inner_start);
  solver_->end_outer(x_.view(), times);
  write_free_solution(x_.view());
  ++stats.outer_iterations;
}

PdFrameStats PdSimulation::step() {
  const auto start = Clock::now();
  ++frame_;
  PdFrameStats stats;
  stats.frame = frame_;
  if (scene_->excision.frame >= 0 && frame_ == scene_->excision.frame) {
    stats.excision_seconds = excise();
    stats.excised = true;
  }
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
  stats.times.total = seconds_since(start);
  return stats;
}

double PdSimulation::energy() const {
  std::vector<SpringRow> springs = attachments_;
  springs.insert(springs.end(), collision_springs_.begin(), collision_springs_.end());
  return model_->energy(positions_, springs, inertia_target_);
}

}  // namespace cholsim::fem
