#include "fem/octree/octree_flesh.hpp"

#include <cmath>
#include <stdexcept>

#include "linalg/parallel_loops.hpp"
#include "linalg/polar_decomposition.hpp"
#include "linalg/vector_norms.hpp"
#include "solvers/cg/conjugate_gradient.hpp"

namespace cholsim::fem::octree {

using linalg::Index;
using linalg::Mat3;
using linalg::Vec3;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

OctreeLinearSolver parse_octree_solver(const std::string& name) {
  if (name == "mgpcg") return OctreeLinearSolver::mgpcg;
  if (name == "mg") return OctreeLinearSolver::mg;
  if (name == "cg") return OctreeLinearSolver::cg;
  if (name == "direct") return OctreeLinearSolver::direct;
  throw std::invalid_argument("unknown octree solver '" + name + "'; expected mgpcg, mg, cg or direct");
}

const char* to_string(OctreeLinearSolver solver) {
  switch (solver) {
    case OctreeLinearSolver::mgpcg: return "mgpcg";
    case OctreeLinearSolver::mg: return "mg";
    case OctreeLinearSolver::cg: return "cg";
    case OctreeLinearSolver::direct: return "direct";
  }
  return "?";
}

Lame lame_parameters(double young_modulus, double poisson_ratio) {
  const double mu = young_modulus / (2.0 * (1.0 + poisson_ratio));
  const double lambda = young_modulus * poisson_ratio / ((1.0 + poisson_ratio) * (1.0 - 2.0 * poisson_ratio));
  return {mu, lambda};
}

OctreeFlesh::OctreeFlesh(const BalancedOctree& tree, std::vector<Vec3> bone_points, std::vector<Vec3> surface_points,
                         const OctreeFleshOptions& options)
    : options_(options), bone_count_(static_cast<Index>(bone_points.size())) {
  if (!(options.time_step > 0.0) || options.max_newton_steps < 1 || options.max_solver_iterations < 1) {
    throw std::invalid_argument("octree flesh: the time step, Newton steps and solver iterations must be positive");
  }
  options_.levels.threads = options.threads;
  const Lame lame = lame_parameters(options.young_modulus, options.poisson_ratio);
  hierarchy_ = std::make_unique<OctreeHierarchy>(tree, lame, options.density, options_.levels);
  std::vector<Vec3> points = std::move(bone_points);
  points.insert(points.end(), surface_points.begin(), surface_points.end());
  hierarchy_->embed_points(points);
  const OctreeMesh& finest = mesh();
  x_ = rest_positions();
  v_.assign(x_.size(), 0.0);
  for (std::vector<double>* vector : {&work_.iterate, &work_.residual, &work_.correction}) vector->resize(x_.size());
  surface_count_ = static_cast<Index>(surface_points.size());
  const double stiffness_scale = options.young_modulus * finest.cell_size;
  bone_stiffness_ = options.bone_stiffness > 0.0 ? options.bone_stiffness : 1e2 * stiffness_scale;
  contact_stiffness_ = options.contact_stiffness > 0.0 ? options.contact_stiffness : 1e2 * stiffness_scale;
}

OctreeFlesh::~OctreeFlesh() = default;

void OctreeFlesh::update_springs(std::span<const double> x, double time, std::span<const Vec3> bone_targets) {
  springs_.clear();
  const Mat3 bone_stiffness = bone_stiffness_ * Mat3::identity();
  for (Index p = 0; p < bone_count_; ++p) springs_.push_back({p, bone_stiffness, bone_targets[p]});
  if (obstacles_.empty()) return;
  // Which surface points touch an obstacle, in parallel: tens of thousands of tests a Newton
  // step were a serial 1 % of a two-thread frame. The few in contact get their springs below,
  // in point order.
  touching_.resize(static_cast<std::size_t>(surface_count_));
  linalg::parallel_chunks(surface_count_, options_.threads, [&](Index first, Index last) {
    for (Index s = first; s < last; ++s) {
      const Vec3 p = hierarchy_->point_position(bone_count_ + s, x);
      touching_[static_cast<std::size_t>(s)] = nearest_obstacle(obstacles_, p, time).distance < 0.0;
    }
  });
  const double tangential = options_.tangential_ratio * contact_stiffness_;
  auto anchor = contact_anchors_.begin();  // sorted by point, as this loop visits them
  for (Index s = 0; s < surface_count_; ++s) {
    if (!touching_[static_cast<std::size_t>(s)]) continue;
    const Index point = bone_count_ + s;
    while (anchor != contact_anchors_.end() && anchor->point < point) ++anchor;
    const bool was_in_contact = anchor != contact_anchors_.end() && anchor->point == point;
    const Vec3 p = hierarchy_->point_position(point, x);
    const ObstacleProximity near = nearest_obstacle(obstacles_, p, time);
    // §8: a zero-rest-length spring, stiff along the normal to the surface point q, softer
    // along the surface towards the anchor where contact began (friction), the tangential
    // pull capped by Coulomb's bound μ·|normal force|.
    const Mat3 normal_part = linalg::outer(near.normal, near.normal);
    const Vec3 q = p - near.distance * near.normal;
    Vec3 slip = was_in_contact ? anchor->target - q : Vec3{};
    slip -= linalg::dot(slip, near.normal) * near.normal;
    const double limit = options_.friction * contact_stiffness_ * -near.distance;
    const double pull = tangential * linalg::norm(slip);
    if (pull > limit) slip = (limit / pull) * slip;
    springs_.push_back({point, contact_stiffness_ * normal_part + tangential * (Mat3::identity() - normal_part), q + slip});
  }
}

void OctreeFlesh::update_contact_anchors() {
  // springs_ were made at the step's final positions: its contact springs are the points in
  // contact there, their targets the capped anchors (a sliding point drags its anchor along).
  contact_anchors_.clear();
  for (const EmbeddedSpring& spring : springs_) {
    if (spring.point >= bone_count_) contact_anchors_.push_back({spring.point, spring.target});
  }
}

double OctreeFlesh::residual(std::span<const double> x, std::span<double> g) {
  const double dt = options_.time_step;
  const double mass_scale = 1.0 / (dt * dt);
  OctreeElasticOperator& op = hierarchy_->op(0);
  op.linearize_at(x);  // the residual's forces and the Newton step's stiffness share its SVDs
  const std::span<const double> mass = op.nodal_mass();
  // The forces first, then g = M(x − x̂)/Δt² − f in place.
  linalg::parallel_chunks(static_cast<Index>(g.size()), options_.threads, [&](Index first, Index last) {
    std::fill(g.begin() + first, g.begin() + last, 0.0);
  });
  op.add_linearized_forces(x, g);
  op.add_spring_forces(x, g);
  linalg::parallel_chunks(static_cast<Index>(x.size()), options_.threads, [&](Index first, Index last) {
    for (Index k = first; k < last; ++k) {
      // x̂ = x + Δt·v + Δt²·gravity of the step's start, formed here rather than stored.
      const double predicted = x_[k] + dt * v_[k] + dt * dt * options_.gravity[static_cast<int>(k % 3)];
      g[k] = mass_scale * mass[k / 3] * (x[k] - predicted) - g[k];
    }
  });
  return linalg::norm2(g);
}

int OctreeFlesh::solve(std::span<const double> rhs, std::span<double> dx, double& relative_residual) {
  std::fill(dx.begin(), dx.end(), 0.0);
  OctreeElasticOperator& op = hierarchy_->op(0);
  switch (options_.solver) {
    case OctreeLinearSolver::mgpcg:
    case OctreeLinearSolver::mg: {
      solvers::MultigridSolveOptions solve_options;
      solve_options.relative_tolerance = options_.solver_tolerance;
      solve_options.max_iterations = options_.max_solver_iterations;
      // A state whose operator outgrows the damping (damping·λmax(D⁻¹A) > 2: a user's damping,
      // or elements far stiffer than at rest) makes the Jacobi smoothing diverge and the cycle
      // indefinite: MGPCG then halves the damping for the rest of the run and solves again.
      solve_options.max_damping_halvings = kMaxDampingHalvings;
      const solvers::MultigridSolveResult result =
          options_.solver == OctreeLinearSolver::mgpcg
              ? solvers::multigrid_pcg(hierarchy_->cycle(), rhs, dx, solve_options)
              : solvers::multigrid_iterations(hierarchy_->cycle(), rhs, dx, solve_options);
      stats_.damping_halvings += result.damping_halvings;
      relative_residual = result.relative_residual;
      return result.iterations;
    }
    case OctreeLinearSolver::cg: {
      solvers::ConjugateGradientOptions cg_options;
      cg_options.relative_tolerance = options_.solver_tolerance;
      cg_options.max_iterations = options_.max_solver_iterations;
      const auto identity = [](std::span<const double> r, std::span<double> z) { std::copy(r.begin(), r.end(), z.begin()); };
      const solvers::ConjugateGradientResult result = solvers::conjugate_gradient(
          [&op](std::span<const double> v, std::span<double> y) { op.apply(v, y); }, identity, rhs, dx, cg_options);
      relative_residual = result.relative_residual;
      return static_cast<int>(result.iterations);
    }
    case OctreeLinearSolver::direct: {
      const linalg::SymmetricCscMatrix& a = op.assemble();
      if (direct_) {
        direct_->refactor(a);
      } else {
        direct_ = std::make_unique<solvers::DirectCoarseSolver>(a, options_.threads, 3);
      }
      direct_->solve(rhs, dx);
      relative_residual = 0.0;
      return 1;
    }
  }
  return 0;
}

const OctreeFrameStats& OctreeFlesh::step(double time, std::span<const Vec3> bone_targets) {
  if (bone_targets.size() != static_cast<std::size_t>(bone_count_)) {
    throw std::invalid_argument("octree flesh: " + std::to_string(bone_targets.size()) + " bone targets for " +
                                std::to_string(bone_count_) + " bone points");
  }
  const Clock::time_point start = Clock::now();
  stats_ = {};
  const double dt = options_.time_step;
  const double end_time = time + dt;
  const std::size_t n = x_.size();
  std::vector<double>& x = work_.iterate;
  std::vector<double>& g = work_.residual;
  std::vector<double>& dx = work_.correction;
  linalg::parallel_chunks(static_cast<Index>(n), options_.threads, [&](Index first, Index last) {
    for (Index k = first; k < last; ++k) x[k] = x_[k] + dt * v_[k];
  });
  double scale = 0.0;
  for (int newton = 0;; ++newton) {
    update_springs(x, end_time, bone_targets);
    hierarchy_->set_finest_springs(springs_);
    const double norm = residual(x, g);
    if (newton == 0) {
      stats_.initial_residual = norm;
      scale = norm;
    }
    stats_.final_residual = norm;
    if (!std::isfinite(norm)) throw std::runtime_error("octree flesh: the residual is not finite at Newton step " + std::to_string(newton));
    if (norm <= options_.newton_tolerance * scale || newton == options_.max_newton_steps) break;
    const Clock::time_point solve_start = Clock::now();
    const double mass_scale = 1.0 / (dt * dt);
    if (options_.solver == OctreeLinearSolver::mgpcg || options_.solver == OctreeLinearSolver::mg) {
      hierarchy_->prepare(springs_, mass_scale);  // the finest level was linearized by residual()
    } else {
      hierarchy_->op(0).set_mass_scale(mass_scale);
    }
    linalg::parallel_chunks(static_cast<Index>(n), options_.threads, [&](Index first, Index last) {
      for (Index k = first; k < last; ++k) g[k] = -g[k];  // the right-hand side
    });
    stats_.solver_iterations += solve(g, dx, stats_.last_linear_residual);
    stats_.solve_seconds += seconds_since(solve_start);
    linalg::parallel_chunks(static_cast<Index>(n), options_.threads, [&](Index first, Index last) {
      for (Index k = first; k < last; ++k) x[k] += dx[k];
    });
    ++stats_.newton_steps;
  }
  linalg::parallel_chunks(static_cast<Index>(n), options_.threads, [&](Index first, Index last) {
    for (Index k = first; k < last; ++k) {
      v_[k] = (x[k] - x_[k]) / dt;
      x_[k] = x[k];
    }
  });
  update_contact_anchors();
  stats_.contacts = static_cast<int>(contact_anchors_.size());
  stats_.damping = hierarchy_->cycle().options().damping;
  stats_.seconds = seconds_since(start);
  return stats_;
}

std::vector<double> OctreeFlesh::surface_positions() const {
  std::vector<double> positions;
  positions.reserve(3 * static_cast<std::size_t>(surface_count_));
  for (Index s = 0; s < surface_count_; ++s) {
    const Vec3 p = hierarchy_->point_position(bone_count_ + s, x_);
    positions.push_back(p.x);
    positions.push_back(p.y);
    positions.push_back(p.z);
  }
  return positions;
}

std::vector<double> OctreeFlesh::element_strain() const {
  std::vector<Mat3> f(static_cast<std::size_t>(mesh().element_count()));
  hierarchy_->op(0).deformation_gradients(x_, f);
  std::vector<double> strain(f.size());
  for (std::size_t e = 0; e < f.size(); ++e) strain[e] = linalg::frobenius_norm(f[e] - linalg::polar_rotation(f[e]));
  return strain;
}

double OctreeFlesh::elastic_energy() const { return hierarchy_->op(0).elastic_energy(x_); }

double OctreeFlesh::kinetic_energy() const {
  const std::span<const double> mass = hierarchy_->op(0).nodal_mass();
  double energy = 0.0;
  for (std::size_t k = 0; k < v_.size(); ++k) energy += 0.5 * mass[k / 3] * v_[k] * v_[k];
  return energy;
}

void OctreeFlesh::prepare_hierarchy() {
  hierarchy_->prepare(springs_, 1.0 / (options_.time_step * options_.time_step));
}

std::vector<double> OctreeFlesh::rest_positions() const { return mesh().node_positions(); }

std::size_t OctreeFlesh::memory_bytes() const {
  const std::size_t vectors = (x_.capacity() + v_.capacity()) * sizeof(double) +
                              springs_.capacity() * sizeof(EmbeddedSpring) +
                              contact_anchors_.capacity() * sizeof(ContactAnchor) + touching_.capacity();
  const std::size_t work = (work_.iterate.capacity() + work_.residual.capacity() + work_.correction.capacity()) * sizeof(double);
  return hierarchy_->memory_bytes() + vectors + work +
         (direct_ ? direct_->factor_bytes() : 0);
}

}  // namespace cholsim::fem::octree
