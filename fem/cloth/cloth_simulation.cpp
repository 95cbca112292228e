#include "fem/cloth/cloth_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "fem/cloth/cloth_dofs.hpp"
#include "fem/cloth/cloth_inertia.hpp"
#include "fem/cloth/eol_mapping.hpp"
#include "fem/cloth/velocity_coordinates.hpp"
#include "linalg/vector_norms.hpp"

namespace cholsim::fem::cloth {

namespace {

using Clock = std::chrono::steady_clock;
using Kind = FeatureAttachment::Kind;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Appends to `contacts` a face contact for every free, unscripted vertex that the QP's
/// velocities q̇ would carry into a box by the step's end although no contact row held it —
/// linearized at the current position as detection would have reported it. Returns how many.
Index add_late_contacts(const ClothMesh& cloth, const ClothObstacles& obstacles, std::span<const ScriptedVertex> scripts,
                        std::span<const double> velocities, double t, double h, std::vector<VertexContact>& contacts) {
  std::vector<unsigned char> held(static_cast<std::size_t>(cloth.vertex_count()), 0);
  for (const ScriptedVertex& script : scripts) held[static_cast<std::size_t>(script.vertex)] = 1;
  const std::size_t detected = contacts.size();
  for (std::size_t k = 0; k < detected; ++k) held[static_cast<std::size_t>(contacts[k].vertex)] = 1;
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    if (held[static_cast<std::size_t>(v)] || cloth.attachments[static_cast<std::size_t>(v)].kind != Kind::none) continue;
    const Vec3 x = cloth.position(v);
    const Vec3 end = x + h * Vec3{velocities[3 * static_cast<std::size_t>(v)], velocities[3 * static_cast<std::size_t>(v) + 1],
                                  velocities[3 * static_cast<std::size_t>(v) + 2]};
    for (int o = 0; o < static_cast<int>(obstacles.boxes.size()); ++o) {
      const ClothBox& box = obstacles.boxes[static_cast<std::size_t>(o)];
      if (box_distance(box, end, t + h).distance >= 0.0) continue;
      const BoxDistance now = box_distance(box, x, t);
      contacts.push_back({v, o, now.normal, now.distance});
    }
  }
  return static_cast<Index>(contacts.size() - detected);
}

/// The vertex closest to a material point (scripted corners are found this way after
/// remeshing renumbered the vertices).
Index vertex_at_material(const ClothMesh& cloth, double u, double v) {
  Index best = -1;
  double best_distance = std::numeric_limits<double>::infinity();
  for (Index i = 0; i < cloth.vertex_count(); ++i) {
    const double d = std::hypot(cloth.material[2 * i] - u, cloth.material[2 * i + 1] - v);
    if (d < best_distance) {
      best_distance = d;
      best = i;
    }
  }
  return best;
}

double min_box_gap(const ClothMesh& cloth, const ClothObstacles& obstacles, double t) {
  double gap = std::numeric_limits<double>::infinity();
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    if (cloth.attachments[static_cast<std::size_t>(v)].kind != Kind::none) continue;
    for (const ClothBox& box : obstacles.boxes) gap = std::min(gap, box_distance(box, cloth.position(v), t).distance);
  }
  return gap;
}

/// The feature's point nearest a feature vertex.
Vec3 nearest_feature_point(const ClothMesh& cloth, const ClothObstacles& obstacles, Index v, double t) {
  const FeatureAttachment& a = cloth.attachments[static_cast<std::size_t>(v)];
  return nearest_feature_point(obstacles, a.kind == Kind::edge, a.obstacle, a.feature, cloth.position(v), t);
}

double feature_distance(const ClothMesh& cloth, const ClothObstacles& obstacles, Index v, double t) {
  return norm(cloth.position(v) - nearest_feature_point(cloth, obstacles, v, t));
}

/// Moves a feature vertex back onto its feature (the step moved it along the feature to first
/// order; this removes the second-order drift and follows a moving box).
void project_onto_feature(ClothMesh& cloth, const ClothObstacles& obstacles, Index v, double t) {
  const Vec3 target = nearest_feature_point(cloth, obstacles, v, t);
  for (int k = 0; k < 3; ++k) cloth.positions[3 * v + k] = target[k];
}

/// Is the feature vertex still on its edge segment (not past an end)?
bool within_feature(const ClothMesh& cloth, const ClothObstacles& obstacles, Index v, double t) {
  const FeatureAttachment& a = cloth.attachments[static_cast<std::size_t>(v)];
  if (a.kind != Kind::edge) return true;
  const FeatureEdge edge = obstacles.box_edge(a.obstacle, a.feature, t);
  const Vec3 d = edge.b - edge.a;
  const double s = dot(cloth.position(v) - edge.a, d) / dot(d, d);
  return s > 0.0 && s < 1.0;
}

}  // namespace

std::string_view to_string(ClothMethod method) {
  switch (method) {
    case ClothMethod::lagrangian_regular: return "lagrangian-regular";
    case ClothMethod::lagrangian_conformal: return "lagrangian-conformal";
    case ClothMethod::eol: return "eol";
  }
  return "unknown";
}

ClothMethod parse_cloth_method(std::string_view name) {
  for (ClothMethod m : {ClothMethod::lagrangian_regular, ClothMethod::lagrangian_conformal, ClothMethod::eol}) {
    if (name == to_string(m)) return m;
  }
  throw std::invalid_argument("unknown cloth method '" + std::string(name) +
                              "', expected lagrangian-regular, lagrangian-conformal or eol");
}

ClothSimulation::ClothSimulation(ClothMesh cloth, ClothObstacles obstacles, std::vector<ScriptedMotion> scripted,
                                 ClothSimulationOptions options)
    : active_set_solver_(options.active_set),
      augmented_lagrangian_solver_(options.augmented_lagrangian),
      cloth_(std::move(cloth)),
      obstacles_(std::move(obstacles)),
      scripted_(std::move(scripted)),
      options_(options) {
  if (!(options_.time_step > 0.0) || !std::isfinite(options_.time_step)) {
    throw std::invalid_argument("cloth: the time step must be positive and finite");
  }
  validate_cloth(cloth_);
  contact_forces_.assign(cloth_.positions.size(), 0.0);
}

std::vector<ScriptedVertex> ClothSimulation::active_scripts() const {
  std::vector<ScriptedVertex> active;
  for (const ScriptedMotion& s : scripted_) {
    if (time_ < s.from || time_ >= s.until) continue;
    active.push_back({vertex_at_material(cloth_, s.material_u, s.material_v), s.velocity, {true, true, true}});
  }
  return active;
}

void ClothSimulation::remesh(ClothStepStats& stats) {
  CollisionOptions features = options_.collisions;
  features.detect_features = true;
  const ClothCollisions found = detect_collisions(cloth_, obstacles_, time_, features);
  RemeshOptions remesh = options_.remesh;
  remesh.make_eulerian = options_.constraints.method == ClothMethod::eol;
  const Clock::time_point start = Clock::now();
  const RemeshStats done = remesh_conformal(cloth_, found.crossings, remesh);
  stats.remesh_converged = done.converged;
  stats.remesh_seconds += seconds_since(start);
}

ClothStepStats ClothSimulation::step() {
  ClothStepStats stats;
  const Clock::time_point step_start = Clock::now();
  const double h = options_.time_step;
  const bool conformal = options_.constraints.method != ClothMethod::lagrangian_regular;

  // Algorithm 2.1 lines 2–3: features first (they change the mesh), then the face contacts of
  // the remeshed cloth.
  Clock::time_point start = Clock::now();
  if (conformal) remesh(stats);
  CollisionOptions faces = options_.collisions;
  faces.detect_features = false;
  faces.look_ahead = h;
  std::vector<VertexContact> face_contacts = detect_collisions(cloth_, obstacles_, time_, faces).vertex_contacts;
  stats.collision_seconds = seconds_since(start) - stats.remesh_seconds;

  // Line 4–5: the step system (eq. 2.11) and its constraints (§2.5).
  start = Clock::now();
  ClothStepOptions step_options;
  step_options.time_step = h;
  step_options.gravity = options_.gravity;
  const ClothStepSystem& system = assembler_.assemble(cloth_, options_.material, step_options);
  const ClothDofs& dofs = system.dofs;
  const std::vector<ScriptedVertex> scripts = active_scripts();
  ClothConstraints rows = build_constraints(cloth_, dofs, obstacles_, face_contacts, scripts, time_, h, options_.constraints);
  stats.fill_seconds = seconds_since(start);

  // The QP of eq. 2.12, again with the contacts its velocities reveal: detection sees only
  // vertices within reach at the step's start, and a step can accelerate a far vertex into a
  // box (on WIRE, cloth snapping over the 1 cm wire reached 3 m/s from 15 mm away and ended
  // 1.6 mm inside it).
  start = Clock::now();
  solvers::qp::QpProblem problem;
  solvers::qp::InteriorPointResult result = solve_velocity_qp(system, rows, problem, stats);
  for (int pass = 1; pass <= options_.late_contact_passes && result.solution.status == solvers::qp::QpStatus::optimal; ++pass) {
    const Index late = add_late_contacts(cloth_, obstacles_, scripts, result.solution.x, time_, h, face_contacts);
    if (late == 0) break;
    stats.late_contacts += late;
    rows = build_constraints(cloth_, dofs, obstacles_, face_contacts, scripts, time_, h, options_.constraints);
    result = solve_velocity_qp(system, rows, problem, stats);
  }
  const solvers::qp::QpSolution& solution = result.solution;
  stats.qp_seconds = seconds_since(start);
  stats.qp_status = std::string(solvers::qp::to_string(solution.status));
  stats.qp_message = solution.message;
  stats.schur_size = result.stats.schur_size;
  stats.ok = solution.status == solvers::qp::QpStatus::optimal;
  stats.equality_rows = static_cast<Index>(rows.equality_rhs.size());
  stats.inequality_rows = static_cast<Index>(rows.inequality_rhs.size());
  last_problem_ = std::move(problem);

  if (stats.ok) {
    last_velocities_ = solution.x;
    std::vector<double> velocities = solution.x;
    if (options_.friction > 0.0) apply_friction(rows, solution, dofs, velocities);
    scatter_velocities(velocities, dofs, cloth_);
    record_contact_forces(rows, solution);
    // q ← q + h q̇, both coordinates (eq. 2.12's last line).
    for (std::size_t i = 0; i < cloth_.positions.size(); ++i) cloth_.positions[i] += h * cloth_.velocities[i];
    advance_material_coordinates();
    for (PlacedRow& place : previous_active_places_) place.position = cloth_.position(place.vertex);
    time_ += h;
    stats.released = settle_feature_vertices(rows, velocities);
  }
  last_constraints_ = std::move(rows);
  for (std::size_t i = 0; i < solution.inequality_multipliers.size(); ++i) {
    if (solution.inequality_multipliers[i] > 1e-9) ++stats.active_rows;
  }
  stats.kinetic_energy = system.kinetic_energy;
  stats.potential_energy = system.potential_energy();
  stats.faces = cloth_.triangle_count();
  stats.vertices = cloth_.vertex_count();
  for (Index v = 0; v < cloth_.vertex_count(); ++v) {
    if (cloth_.attachments[static_cast<std::size_t>(v)].kind != Kind::none) ++stats.conformal_vertices;
    if (cloth_.is_eulerian(v)) ++stats.eol_vertices;
  }
  stats.min_gap = min_box_gap(cloth_, obstacles_, time_);
  stats.total_seconds = seconds_since(step_start);
  return stats;
}

solvers::qp::InteriorPointResult ClothSimulation::solve_velocity_qp(const ClothStepSystem& system,
                                                                   const ClothConstraints& rows,
                                                                   solvers::qp::QpProblem& solved, ClothStepStats& stats) {
  solved.hessian = system.matrix;
  solved.linear = system.rhs;
  solved.equality = rows.equality;
  solved.equality_rhs = rows.equality_rhs;
  solved.inequality = rows.inequality;
  solved.inequality_rhs = rows.inequality_rhs;
  const std::vector<double> current = gather_velocities(cloth_, system.dofs);
  add_proximal_term(solved, current);
  if (!options_.reduce_coordinates) {
    return solve_qp(solved, rows, current, [&] { return current; }, stats);
  }
  // In per-vertex contact frames with the single-vertex equalities eliminated (q̇ = Ty + q̇₀),
  // a face contact touches one column instead of three: the Schur complement is that much
  // smaller, the active set method sees simple bounds, and the equalities cost nothing. Same
  // solution, same inequality multipliers.
  ReducedVelocityQp reduced = reduce_velocity_qp(solved, system.dofs);
  solvers::qp::InteriorPointResult result = solve_qp(
      reduced.problem, rows, current, [&] { return reduced.coordinates.reduced_velocities(current); }, stats);
  if (result.solution.status == solvers::qp::QpStatus::optimal) {
    result.solution.x = reduced.coordinates.velocities(result.solution.x);
  }
  solved = std::move(reduced.problem);  // kept as the QP this step solved
  return result;
}

void ClothSimulation::add_proximal_term(solvers::qp::QpProblem& problem, std::span<const double> centre) const {
  if (options_.proximal_term <= 0.0) return;
  // In the lower triangle with sorted rows, a column's diagonal entry is its first.
  auto& lower = problem.hessian.lower;
  const auto diagonal = [&](Index j) -> double& {
    const auto k = static_cast<std::size_t>(lower.col_ptr[static_cast<std::size_t>(j)]);
    if (k == static_cast<std::size_t>(lower.col_ptr[static_cast<std::size_t>(j) + 1]) || lower.row_idx[k] != j) {
      throw std::logic_error("cloth: the step QP's Hessian has no diagonal entry in column " + std::to_string(j));
    }
    return lower.values[k];
  };
  double largest = 0.0;
  for (Index j = 0; j < problem.variable_count(); ++j) largest = std::max(largest, diagonal(j));
  // Each column's own scale (a column without curvature takes the largest diagonal's).
  for (Index j = 0; j < problem.variable_count(); ++j) {
    double& entry = diagonal(j);
    const double delta = options_.proximal_term * (entry > 0.0 ? entry : largest);
    entry += delta;
    problem.linear[static_cast<std::size_t>(j)] += delta * centre[static_cast<std::size_t>(j)];
  }
}

ClothSimulation::RowKey ClothSimulation::key_of(const ClothConstraints& rows, std::size_t row) const {
  const Vec3& n = rows.inequality_normal[row];
  const auto v = static_cast<std::size_t>(rows.inequality_vertex[row]);
  return {{cloth_.material[2 * v], cloth_.material[2 * v + 1]},
          {rows.inequality_kind[row],
           rows.inequality_obstacle[row],
           {static_cast<int>(std::lround(1e3 * n[0])), static_cast<int>(std::lround(1e3 * n[1])),
            static_cast<int>(std::lround(1e3 * n[2]))}}};
}

namespace {

/// s = C q̇ − c for every inequality row.
std::vector<double> inequality_slacks(const ClothConstraints& rows, std::span<const double> velocities) {
  std::vector<double> slack(rows.inequality_rhs.size());
  solvers::qp::constraint_multiply(rows.inequality, velocities, slack);
  for (std::size_t i = 0; i < slack.size(); ++i) slack[i] -= rows.inequality_rhs[i];
  return slack;
}

/// Per vertex: a quarter of its shortest incident edge in the world (∞ for a vertex of no
/// triangle) — how far an earlier active row may lie from it and still be its own.
std::vector<double> matching_radii(const ClothMesh& cloth) {
  std::vector<double> radius(static_cast<std::size_t>(cloth.vertex_count()), std::numeric_limits<double>::infinity());
  for (std::size_t t = 0; t < cloth.triangles.size(); t += 3) {
    for (std::size_t k = 0; k < 3; ++k) {
      const Index v = cloth.triangles[t + k], w = cloth.triangles[t + (k + 1) % 3];
      const double quarter = 0.25 * norm(cloth.position(v) - cloth.position(w));
      for (const Index u : {v, w}) radius[static_cast<std::size_t>(u)] = std::min(radius[static_cast<std::size_t>(u)], quarter);
    }
  }
  return radius;
}

}  // namespace

std::vector<char> ClothSimulation::guess_active_rows(const ClothConstraints& rows,
                                                     std::span<const double> current) const {
  // Contact rows only: a vertex's area rows (one per triangle around it) share a key. A row is
  // guessed active when the cloth's current velocities — the last step's answer, the best
  // guess of this one's — violate it (a contact closing in), or when it was active in the last
  // solved QP. A Lagrangian vertex is known by its material coordinates, which never change
  // (remeshing renumbers vertices); an EOL vertex's slide, but it stays on its feature in the
  // world, so it is known by its world position, within a quarter of its shortest edge. On
  // EDGE-EOL the two cut the guesses a QP takes from 6.0 to 4.3 (docs/benchmarks.md, issue 20).
  std::vector<char> guess(rows.inequality_rhs.size(), 0);
  const std::vector<double> slack = inequality_slacks(rows, current);
  std::vector<double> radius;
  for (std::size_t i = 0; i < guess.size(); ++i) {
    const RowKind kind = rows.inequality_kind[i];
    if (kind != RowKind::face_contact && kind != RowKind::feature_normal) continue;
    const Index v = rows.inequality_vertex[i];
    const RowKey key = key_of(rows, i);
    if (slack[i] < 0.0) {
      guess[i] = 1;
    } else if (!cloth_.is_eulerian(v)) {
      guess[i] = std::binary_search(previous_active_rows_.begin(), previous_active_rows_.end(), key) ? 1 : 0;
    } else {
      if (radius.empty()) radius = matching_radii(cloth_);
      const Vec3 x = cloth_.position(v);
      guess[i] = std::any_of(previous_active_places_.begin(), previous_active_places_.end(), [&](const PlacedRow& place) {
        return place.type == key.type && norm(place.position - x) <= radius[static_cast<std::size_t>(v)];
      }) ? 1 : 0;
    }
  }
  return guess;
}

void ClothSimulation::remember_active_rows(const ClothConstraints& rows, const solvers::qp::QpSolution& solution) {
  // The interior point method's multipliers are never exactly zero.
  const std::vector<double>& z = solution.inequality_multipliers;
  const double threshold = 1e-6 * linalg::max_abs(z);
  previous_active_rows_.clear();
  previous_active_places_.clear();
  for (std::size_t i = 0; i < z.size(); ++i) {
    if (!(z[i] > threshold)) continue;
    const RowKey key = key_of(rows, i);
    previous_active_rows_.push_back(key);
    const Index v = rows.inequality_vertex[i];  // its position is refreshed when the step ends
    previous_active_places_.push_back({key.type, v, cloth_.position(v)});
  }
  std::sort(previous_active_rows_.begin(), previous_active_rows_.end());
}

solvers::qp::InteriorPointResult ClothSimulation::solve_qp(const solvers::qp::QpProblem& problem,
                                                           const ClothConstraints& rows,
                                                           std::span<const double> current,
                                                           const StartingPoint& start, ClothStepStats& stats) {
  solvers::qp::InteriorPointResult result;
  bool solved = false;
  if (options_.active_set_first) {
    // A guess (a partial refactorization and a solve) costs a third to a half of an interior
    // point iteration (a full factorization, more right-hand sides): up to twice the
    // iterations the interior point method took last, a QP that has not settled is left to it
    // at a cost of at most its own. Counted, not timed, so that runs repeat exactly.
    if (interior_point_iterations_ > 0) {
      const int most = options_.active_set.max_iterations;
      active_set_solver_.set_max_iterations(std::clamp(2 * interior_point_iterations_, std::min(10, most), most));
    }
    result.solution = active_set_solver_.solve(problem, guess_active_rows(rows, current));
    stats.qp_iterations += result.solution.iterations;
    solved = result.solution.status == solvers::qp::QpStatus::optimal;
    if (solved) ++stats.active_set_solves;
  }
  if (!solved && options_.lagrangian_before_interior_point) solved = solve_by_augmented_lagrangian(problem, start, result, stats);
  if (!solved) {
    result = solvers::qp::solve_interior_point(problem, options_.qp);
    stats.qp_iterations += result.solution.iterations;
    ++stats.interior_point_solves;
    interior_point_iterations_ = result.solution.iterations;
    solved = result.solution.status == solvers::qp::QpStatus::optimal;
  }
  // The last resort: a descent method that cannot cycle and, unlike the interior point method,
  // does not stall short of the tolerance on a nearly singular H (JAWS-EOL stopped at an
  // interior point iteration limit, docs/benchmarks.md, issue 20).
  if (!solved && !options_.lagrangian_before_interior_point) solve_by_augmented_lagrangian(problem, start, result, stats);
  if (result.solution.status == solvers::qp::QpStatus::optimal) remember_active_rows(rows, result.solution);
  return result;
}

bool ClothSimulation::solve_by_augmented_lagrangian(const solvers::qp::QpProblem& problem, const StartingPoint& start,
                                                    solvers::qp::InteriorPointResult& result, ClothStepStats& stats) {
  solvers::qp::QpSolution solution = augmented_lagrangian_solver_.solve(problem, start());
  stats.qp_iterations += solution.iterations;
  if (solution.status != solvers::qp::QpStatus::optimal) {
    if (!result.solution.message.empty()) result.solution.message += "; ";
    result.solution.message += "augmented Lagrangian: " + std::string(solvers::qp::to_string(solution.status)) +
                               " (" + solution.message + ")";
    return false;
  }
  result.solution = std::move(solution);
  ++stats.augmented_lagrangian_solves;
  return true;
}

std::vector<double> ClothSimulation::world_velocities_of(std::span<const double> velocities,
                                                         const ClothDofs& dofs) const {
  std::vector<double> world(velocities.begin(), velocities.begin() + 3 * cloth_.vertex_count());
  if (dofs.eulerian_vertex_count() == 0) return world;
  const std::vector<Mat32> f = vertex_deformation_gradients(cloth_);
  for (Index v = 0; v < cloth_.vertex_count(); ++v) {
    const Index e = dofs.eulerian_offset[static_cast<std::size_t>(v)];
    if (e < 0) continue;
    const Vec3 w = f[static_cast<std::size_t>(v)] * Vec2{velocities[static_cast<std::size_t>(e)],
                                                         velocities[static_cast<std::size_t>(e) + 1]};
    for (int k = 0; k < 3; ++k) world[static_cast<std::size_t>(3 * v + k)] -= w[k];
  }
  return world;
}

std::vector<double> ClothSimulation::world_velocities() const {
  const ClothDofs dofs = ClothDofs::of(cloth_);
  return world_velocities_of(gather_velocities(cloth_, dofs), dofs);
}

void ClothSimulation::clamp_into_domain() {
  // The QP's domain rows keep X inside to first order; a rounding-level overshoot of the
  // border (a border vertex sliding along it) is put back so the mesh stays valid.
  for (Index v = 0; v < cloth_.vertex_count(); ++v) {
    double& u = cloth_.material[static_cast<std::size_t>(2 * v)];
    double& w = cloth_.material[static_cast<std::size_t>(2 * v + 1)];
    u = std::clamp(u, 0.0, cloth_.material_width);
    w = std::clamp(w, 0.0, cloth_.material_height);
  }
}

void ClothSimulation::advance_material_coordinates() {
  // X ← X + hẊ. The QP's area rows keep each triangle with EOL vertices above a quarter of
  // its material area to first order; with two or three EOL vertices the area is quadratic
  // in the step, and a fast pair can still invert a thin triangle. Such a triangle's EOL
  // vertices take a shorter material step (halved until the triangle keeps a tenth of its
  // area) — the thesis slows the step down where remeshing cannot help (§2.6.1).
  const double h = options_.time_step;
  std::vector<double> fraction(static_cast<std::size_t>(cloth_.vertex_count()), 1.0);
  const std::vector<double> start = cloth_.material;
  std::vector<double> start_area(static_cast<std::size_t>(cloth_.triangle_count()));
  for (Index t = 0; t < cloth_.triangle_count(); ++t) start_area[static_cast<std::size_t>(t)] = material_area(cloth_, t);
  for (int attempt = 0; attempt < 30; ++attempt) {
    for (Index v = 0; v < cloth_.vertex_count(); ++v) {
      for (int k = 0; k < 2; ++k) {
        cloth_.material[2 * v + k] = start[static_cast<std::size_t>(2 * v + k)] +
                                     fraction[static_cast<std::size_t>(v)] * h * cloth_.material_velocities[2 * v + k];
      }
    }
    clamp_into_domain();
    bool shrunk = false;
    for (Index t = 0; t < cloth_.triangle_count(); ++t) {
      if (material_area(cloth_, t) >= 0.1 * start_area[static_cast<std::size_t>(t)]) continue;
      for (int k = 0; k < 3; ++k) fraction[static_cast<std::size_t>(cloth_.triangles[3 * t + k])] *= 0.5;
      shrunk = true;
    }
    if (!shrunk) return;
  }
}

Index ClothSimulation::settle_feature_vertices(const ClothConstraints& rows, std::span<const double> velocities) {
  // A feature vertex whose normal constraint went slack lifts off (§2.6.2) — it becomes a
  // free Lagrangian vertex keeping its world velocity — and so does one that slid past the end
  // of its edge. The others are put back on their feature.
  const std::vector<double> slack = inequality_slacks(rows, velocities);
  std::vector<unsigned char> lifting(static_cast<std::size_t>(cloth_.vertex_count()), 0);
  for (std::size_t i = 0; i < slack.size(); ++i) {
    if (rows.inequality_kind[i] == RowKind::feature_normal &&
        slack[i] * options_.time_step > options_.release_distance) {
      lifting[static_cast<std::size_t>(rows.inequality_vertex[i])] = 1;
    }
  }
  Index released = 0;
  std::vector<Mat32> gradients;  // the vertex-averaged F, computed once if anything lifts off
  for (Index v = 0; v < cloth_.vertex_count(); ++v) {
    FeatureAttachment& attachment = cloth_.attachments[static_cast<std::size_t>(v)];
    if (attachment.kind == Kind::none) continue;
    if (!cloth_.is_eulerian(v)) {
      // A conformal Lagrangian vertex moves with the material: it stays conformal while it is
      // within the detection threshold of its feature (its rows carry the gap).
      if (within_feature(cloth_, obstacles_, v, time_) &&
          feature_distance(cloth_, obstacles_, v, time_) <= options_.collisions.threshold) {
        continue;
      }
    } else if (!lifting[static_cast<std::size_t>(v)] && within_feature(cloth_, obstacles_, v, time_)) {
      project_onto_feature(cloth_, obstacles_, v, time_);
      continue;
    }
    // Lift-off (§2.6.2): the vertex keeps its world velocity ẋ − FẊ (eq. 2.2) as its
    // Lagrangian velocity and loses its Eulerian DOFs.
    if (cloth_.is_eulerian(v)) {
      if (gradients.empty()) gradients = vertex_deformation_gradients(cloth_);
      const Vec3 world = vertex_world_velocity(cloth_, v, gradients[static_cast<std::size_t>(v)]);
      for (int k = 0; k < 3; ++k) cloth_.velocities[static_cast<std::size_t>(3 * v + k)] = world[k];
      cloth_.material_velocities[static_cast<std::size_t>(2 * v)] = 0.0;
      cloth_.material_velocities[static_cast<std::size_t>(2 * v + 1)] = 0.0;
      cloth_.eulerian[static_cast<std::size_t>(v)] = 0;
    }
    attachment = {};
    ++released;
  }
  return released;
}

void ClothSimulation::record_contact_forces(const ClothConstraints& rows, const solvers::qp::QpSolution& solution) {
  // A multiplier is the impulse of its row over the step (the QP is in momentum units:
  // b = M q̇ + h f), so the force is z n / h.
  contact_forces_.assign(cloth_.positions.size(), 0.0);
  for (std::size_t i = 0; i < rows.inequality_kind.size(); ++i) {
    const Vec3 f = (solution.inequality_multipliers[i] / options_.time_step) * rows.inequality_normal[i];
    const auto v = static_cast<std::size_t>(rows.inequality_vertex[i]);
    for (int k = 0; k < 3; ++k) contact_forces_[3 * v + static_cast<std::size_t>(k)] += f[k];
  }
}

void ClothSimulation::apply_friction(const ClothConstraints& rows, const solvers::qp::QpSolution& solution,
                                     const ClothDofs& dofs, std::vector<double>& velocities) const {
  // Bridson, Fedkiw & Anderson 2002's filter as §2.7 FRICTION applies it: the normal impulse
  // z (over the vertex's mass: the normal velocity change) caps the tangential velocity change
  // at μ·Δv_n. Lagrangian vertices lose tangential velocity; on a corner only the Eulerian
  // velocity is scaled (it carries the whole tangential motion); on an edge the Eulerian
  // velocity and the Lagrangian velocity along the edge.
  const std::vector<double> mass = vertex_masses(cloth_, options_.material.density);
  std::vector<double> impulse(static_cast<std::size_t>(cloth_.vertex_count()), 0.0);
  std::vector<Vec3> normal(static_cast<std::size_t>(cloth_.vertex_count()));
  std::vector<int> obstacle(static_cast<std::size_t>(cloth_.vertex_count()), 0);
  for (std::size_t i = 0; i < rows.inequality_kind.size(); ++i) {
    if (rows.inequality_kind[i] != RowKind::face_contact && rows.inequality_kind[i] != RowKind::feature_normal) continue;
    const auto v = static_cast<std::size_t>(rows.inequality_vertex[i]);
    impulse[v] += std::max(solution.inequality_multipliers[i], 0.0);
    normal[v] += std::max(solution.inequality_multipliers[i], 0.0) * rows.inequality_normal[i];
    obstacle[v] = rows.inequality_obstacle[i];
  }
  const std::vector<double> world = world_velocities_of(velocities, dofs);
  for (Index v = 0; v < cloth_.vertex_count(); ++v) {
    const auto i = static_cast<std::size_t>(v);
    if (impulse[i] <= 0.0 || mass[i] <= 0.0) continue;
    const FeatureAttachment& a = cloth_.attachments[i];
    const Vec3 n = normalized(normal[i]);
    const Vec3 relative =
        Vec3{world[3 * i], world[3 * i + 1], world[3 * i + 2]} - obstacles_.velocity(obstacle[i], time_);
    const Vec3 tangential = relative - dot(relative, n) * n;
    const double speed = norm(tangential);
    if (speed <= 0.0) continue;
    const double keep = std::max(0.0, 1.0 - options_.friction * (impulse[i] / mass[i]) / speed);
    double* x_dot = &velocities[3 * i];
    if (a.kind == Kind::none) {
      for (int k = 0; k < 3; ++k) x_dot[k] -= (1.0 - keep) * tangential[k];
      continue;
    }
    const Index e = dofs.eulerian_offset[i];
    if (e >= 0) {
      velocities[static_cast<std::size_t>(e)] *= keep;
      velocities[static_cast<std::size_t>(e) + 1] *= keep;
    }
    if (a.kind == Kind::edge) {
      const FeatureEdge edge = obstacles_.box_edge(a.obstacle, a.feature, time_);
      const Vec3 d = normalized(edge.b - edge.a);
      const double along = dot(Vec3{x_dot[0], x_dot[1], x_dot[2]} - obstacles_.velocity(a.obstacle, time_), d);
      for (int k = 0; k < 3; ++k) x_dot[k] -= (1.0 - keep) * along * d[k];
    }
  }
}

}  // namespace cholsim::fem::cloth
