#include "fem/contact/contact_potential.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "fem/contact/rest_distance_field.hpp"
#include "fem/contact/tet_bvh.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::fem {

using linalg::Mat3;

struct ContactPotential::Body {
  RestDistanceField field;
  double mean_edge_length = 0.0;
};

namespace {

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

// A vertex's terms cost one proximity query per obstacle, tens of nanoseconds each: below this
// many vertices waking a second thread costs more than it saves.
constexpr Index kMinParallelVertices = 1024;
// A body-contact query walks two BVHs and may project onto the rest surface: microseconds, so
// a few dozen vertices are worth the threads (as in fem/pd/pd_collisions).
constexpr Index kMinParallelDetections = 64;

void require(bool holds, const char* field, const char* expected, double value) {
  if (!holds) {
    throw std::invalid_argument(std::string("ContactOptions::") + field + " must be " + expected + " (got " +
                                std::to_string(value) + ")");
  }
}

void validate(const ContactOptions& options) {
  const auto positive = [](double value) { return value > 0.0 && std::isfinite(value); };
  require(positive(options.stiffness), "stiffness", "positive and finite", options.stiffness);
  require(positive(options.activation_distance), "activation_distance", "positive and finite",
          options.activation_distance);
  require(options.friction_coefficient >= 0.0 && std::isfinite(options.friction_coefficient), "friction_coefficient",
          "non-negative and finite", options.friction_coefficient);
  require(positive(options.friction_velocity), "friction_velocity", "positive and finite", options.friction_velocity);
  require(positive(options.distance_field_spacing_edges), "distance_field_spacing_edges", "positive and finite",
          options.distance_field_spacing_edges);
  require(options.self_exclusion_edges >= 0.0 && std::isfinite(options.self_exclusion_edges), "self_exclusion_edges",
          "non-negative and finite", options.self_exclusion_edges);
}

void check_tet_nodes(const TetMesh& mesh) {
  for (const Index node : mesh.tets) {
    if (node < 0 || node >= mesh.node_count()) {
      throw std::invalid_argument("ContactPotential: tet node " + std::to_string(node) + " outside 0.." +
                                  std::to_string(mesh.node_count() - 1));
    }
  }
}

std::vector<Index> boundary_nodes(const TetMesh& mesh) {
  std::vector<Index> nodes = boundary_surface(mesh).triangles;
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

// The body (connected component of the tets, numbered by first node) of every node; −1 for a
// node no tet uses. Union–find with path halving.
std::vector<Index> label_bodies(const TetMesh& mesh, Index& body_count) {
  std::vector<Index> parent(at(mesh.node_count()));
  for (Index node = 0; node < mesh.node_count(); ++node) parent[at(node)] = node;
  const auto root = [&](Index node) {
    while (parent[at(node)] != node) {
      parent[at(node)] = parent[at(parent[at(node)])];
      node = parent[at(node)];
    }
    return node;
  };
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    for (std::size_t k = 1; k < 4; ++k) {
      const Index a = root(mesh.tets[4 * at(tet)]);
      const Index b = root(mesh.tets[4 * at(tet) + k]);
      parent[at(std::max(a, b))] = std::min(a, b);
    }
  }
  std::vector<char> used(at(mesh.node_count()), 0);
  for (const Index node : mesh.tets) used[at(node)] = 1;
  std::vector<Index> label_of_root(at(mesh.node_count()), -1);
  std::vector<Index> body(at(mesh.node_count()), -1);
  body_count = 0;
  for (Index node = 0; node < mesh.node_count(); ++node) {
    if (used[at(node)] == 0) continue;
    Index& label = label_of_root[at(root(node))];
    if (label < 0) label = body_count++;
    body[at(node)] = label;
  }
  return body;
}

// Each body as its own mesh (nodes renumbered in order), so that its distance field covers
// only its own box and sees only its own boundary, however the bodies lie at rest.
std::vector<TetMesh> split_bodies(const TetMesh& mesh, std::span<const Index> body_of_node, Index body_count) {
  std::vector<TetMesh> bodies(at(body_count));
  std::vector<Index> local_node(at(mesh.node_count()), -1);
  for (Index node = 0; node < mesh.node_count(); ++node) {
    const Index body = body_of_node[at(node)];
    if (body < 0) continue;
    TetMesh& part = bodies[at(body)];
    local_node[at(node)] = part.node_count();
    const auto first = mesh.positions.begin() + 3 * node;
    part.positions.insert(part.positions.end(), first, first + 3);
  }
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    TetMesh& part = bodies[at(body_of_node[at(mesh.tets[4 * at(tet)])])];
    for (std::size_t k = 0; k < 4; ++k) part.tets.push_back(local_node[at(mesh.tets[4 * at(tet) + k])]);
  }
  return bodies;
}

double mean_edge_length(const TetMesh& mesh) {
  double sum = 0.0;
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    for (std::size_t a = 0; a < 4; ++a) {
      for (std::size_t b = a + 1; b < 4; ++b) {
        sum += linalg::norm(node_position(mesh.positions, mesh.tets[4 * at(tet) + a]) -
                            node_position(mesh.positions, mesh.tets[4 * at(tet) + b]));
      }
    }
  }
  return sum / (6.0 * static_cast<double>(mesh.tet_count()));
}

// Per contact vertex, the nodes of its incident tets (itself included), sorted: a tet holding
// one of them touches the vertex's own neighbourhood, which contains the vertex to rounding.
void build_one_rings(const TetMesh& mesh, std::span<const Index> contact_nodes, std::vector<Index>& offsets,
                     std::vector<Index>& ring_nodes) {
  std::vector<Index> slot_of_node(at(mesh.node_count()), -1);
  for (std::size_t slot = 0; slot < contact_nodes.size(); ++slot) {
    slot_of_node[at(contact_nodes[slot])] = static_cast<Index>(slot);
  }
  std::vector<std::vector<Index>> rings(contact_nodes.size());
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    const auto nodes = std::span<const Index>(mesh.tets).subspan(4 * at(tet), 4);
    for (const Index node : nodes) {
      if (slot_of_node[at(node)] < 0) continue;
      std::vector<Index>& ring = rings[at(slot_of_node[at(node)])];
      ring.insert(ring.end(), nodes.begin(), nodes.end());
    }
  }
  offsets.assign(1, 0);
  ring_nodes.clear();
  for (std::vector<Index>& ring : rings) {
    std::sort(ring.begin(), ring.end());
    ring.erase(std::unique(ring.begin(), ring.end()), ring.end());
    ring_nodes.insert(ring_nodes.end(), ring.begin(), ring.end());
    offsets.push_back(static_cast<Index>(ring_nodes.size()));
  }
}

// The 3-vectors (positions, velocities) of a tet's four vertices.
std::array<Vec3, 4> tet_vertex_values(std::span<const Index> tets, Index tet, std::span<const double> values) {
  std::array<Vec3, 4> vertex_values;
  for (std::size_t k = 0; k < 4; ++k) vertex_values[k] = node_position(values, tets[4 * at(tet) + k]);
  return vertex_values;
}

template <typename Value>
Value interpolate(const std::array<double, 4>& weights, const std::array<Value, 4>& values) {
  return weights[0] * values[0] + weights[1] * values[1] + weights[2] * values[2] + weights[3] * values[3];
}

Mat3 edge_matrix(const std::array<Vec3, 4>& points) {
  return Mat3::from_columns(points[1] - points[0], points[2] - points[0], points[3] - points[0]);
}

// The deformed normal of a rest level set with gradient `rest_gradient` in a tet: normals
// transform with F⁻ᵀ = Dₛ⁻ᵀ·Dₘᵀ (F = Dₛ·Dₘ⁻¹) whatever the sign of det F, since F⁻ᵀ∇φ is
// the gradient of the level set carried along. Nothing for a flattened tet.
std::optional<Vec3> deformed_normal(const std::array<Vec3, 4>& rest, const std::array<Vec3, 4>& deformed,
                                    const Vec3& rest_gradient) {
  const Mat3 rest_edges = edge_matrix(rest);
  const Mat3 deformed_edges = edge_matrix(deformed);
  if (!(std::abs(linalg::determinant(deformed_edges)) > 1e-12 * std::abs(linalg::determinant(rest_edges)))) {
    return std::nullopt;
  }
  const Vec3 normal =
      linalg::inverse(linalg::transpose(deformed_edges)) * (linalg::transpose(rest_edges) * rest_gradient);
  const double length = linalg::norm(normal);
  if (!(length > 0.0) || !std::isfinite(length)) return std::nullopt;
  return normal / length;
}

// An orthonormal pair spanning the plane normal to the unit `normal`.
std::array<Vec3, 2> tangent_basis(const Vec3& normal) {
  const Vec3 helper = std::abs(normal.x) < 0.9 ? Vec3{1.0, 0.0, 0.0} : Vec3{0.0, 1.0, 0.0};
  const Vec3 first = linalg::normalized(linalg::cross(normal, helper));
  return {first, linalg::cross(normal, first)};
}

void add_to(std::span<double> gradient, Index node, const Vec3& value) {
  for (int c = 0; c < 3; ++c) gradient[3 * at(node) + static_cast<std::size_t>(c)] += value[c];
}

}  // namespace

PenaltyValue smooth_penalty(double distance, double stiffness, double activation_distance) {
  if (distance >= activation_distance) return {};
  if (distance >= 0.0) {
    const double gap = activation_distance - distance;
    return {stiffness * gap * gap * gap / (6.0 * activation_distance),
            -stiffness * gap * gap / (2.0 * activation_distance), stiffness * gap / activation_distance};
  }
  // The quadratic matching value, slope and curvature at 0: stiffness k however deep.
  return {stiffness * (0.5 * distance * distance - 0.5 * activation_distance * distance +
                       activation_distance * activation_distance / 6.0),
          stiffness * (distance - 0.5 * activation_distance), stiffness};
}

ContactPotential::ContactPotential(const TetMesh& rest, std::vector<Obstacle> obstacles, ContactOptions options)
    : node_count_(rest.node_count()), obstacles_(std::move(obstacles)), options_(options) {
  validate(options_);
  check_tet_nodes(rest);
  contact_nodes_ = boundary_nodes(rest);
  friction_offsets_.assign(contact_nodes_.size() + 1, 0);
  scratch_.resize(contact_nodes_.size());
  if (!options_.body_contact) return;
  rest_ = rest;
  Index body_count = 0;
  body_of_node_ = label_bodies(rest_, body_count);
  for (const TetMesh& part : split_bodies(rest_, body_of_node_, body_count)) {
    const double edge = mean_edge_length(part);
    bodies_.push_back({RestDistanceField(part, options_.distance_field_spacing_edges * edge), edge});
  }
  build_one_rings(rest_, contact_nodes_, ring_offsets_, ring_nodes_);
  std::vector<Index> all_tets(at(rest_.tet_count()));
  for (Index tet = 0; tet < rest_.tet_count(); ++tet) all_tets[at(tet)] = tet;
  deformed_tets_ = std::make_unique<TetBvh>(rest_.tets, all_tets, rest_.positions);
  rest_tets_ = std::make_unique<TetBvh>(rest_.tets, std::move(all_tets), rest_.positions);
  planes_.resize(contact_nodes_.size());
}

ContactPotential::~ContactPotential() = default;
ContactPotential::ContactPotential(ContactPotential&&) noexcept = default;
ContactPotential& ContactPotential::operator=(ContactPotential&&) noexcept = default;

void ContactPotential::check_positions(std::span<const double> positions, const char* caller) const {
  if (positions.size() != 3 * at(node_count_)) {
    throw std::invalid_argument(std::string("ContactPotential::") + caller + ": " + std::to_string(positions.size()) +
                                " coordinates for " + std::to_string(node_count_) + " nodes (expected 3 per node)");
  }
}

// ---- begin_solve: what stays frozen over one solve -------------------------------------------

void ContactPotential::begin_solve(std::span<const double> positions, std::span<const double> velocities, double time,
                                   double time_step) {
  check_positions(positions, "begin_solve (positions)");
  check_positions(velocities, "begin_solve (velocities)");
  if (!(time_step > 0.0) || !std::isfinite(time_step)) {
    throw std::invalid_argument("ContactPotential::begin_solve: time_step must be positive and finite (got " +
                                std::to_string(time_step) + ")");
  }
  time_ = time;
  smoothing_displacement_ = options_.friction_velocity * time_step;
  if (options_.body_contact) freeze_planes(positions, velocities, time_step);
  freeze_friction(positions, time_step);
}

bool ContactPotential::find_plane(std::size_t slot, std::span<const double> positions,
                                  std::span<const double> velocities, FrozenPlane& plane) const {
  const Index node = contact_nodes_[slot];
  const auto ring = std::span<const Index>(ring_nodes_)
                        .subspan(at(ring_offsets_[slot]), at(ring_offsets_[slot + 1] - ring_offsets_[slot]));
  const Index own_body = body_of_node_[at(node)];
  const auto touches_own_neighbourhood = [&](Index tet) {
    if (!options_.self_contact && body_of_node_[at(rest_.tets[4 * at(tet)])] == own_body) return true;
    for (std::size_t k = 0; k < 4; ++k) {
      if (std::binary_search(ring.begin(), ring.end(), rest_.tets[4 * at(tet) + k])) return true;
    }
    return false;
  };
  const auto inside = deformed_tets_->locate(node_position(positions, node), touches_own_neighbourhood);
  if (!inside) return false;
  // Where the vertex sits in the other part's rest shape, how deep, and the rest surface point
  // it is pushed to (McAdams et al. 2011's rest-pose level set, seed 004 §5.1).
  const Index body_index = body_of_node_[at(rest_.tets[4 * at(inside->tet)])];
  const Body& body = bodies_[at(body_index)];
  const Vec3 rest_point = interpolate(inside->weights, tet_vertex_values(rest_.tets, inside->tet, rest_.positions));
  if (body.field.sample(rest_point).distance >= 0.0) return false;
  const Vec3 surface = body.field.project_to_surface(rest_point);
  // A target next to the vertex's own rest position is its own surface folded or squashed onto
  // itself, not another part of the body (fem/pd/pd_collisions' rule).
  const double exclusion = options_.self_exclusion_edges * body.mean_edge_length;
  if (body_index == own_body &&
      linalg::squared_norm(surface - node_position(rest_.positions, node)) < exclusion * exclusion) {
    return false;
  }
  // Embed the surface point a hair inside its own body, so that a rest tet contains it.
  const Vec3 surface_gradient = body.field.sample(surface).gradient;
  const auto partner = rest_tets_->locate(surface - (1e-3 * body.mean_edge_length) * surface_gradient,
                                          [&](Index tet) { return body_of_node_[at(rest_.tets[4 * at(tet)])] != body_index; });
  if (!partner) return false;
  const std::array<Vec3, 4> deformed = tet_vertex_values(rest_.tets, partner->tet, positions);
  const std::array<Vec3, 4> at_rest = tet_vertex_values(rest_.tets, partner->tet, rest_.positions);
  const auto normal = deformed_normal(at_rest, deformed, surface_gradient);
  if (!normal) return false;
  plane = {interpolate(partner->weights, deformed), *normal,
           interpolate(partner->weights, tet_vertex_values(rest_.tets, partner->tet, velocities))};
  return true;
}

void ContactPotential::freeze_planes(std::span<const double> positions, std::span<const double> velocities,
                                     double time_step) {
  deformed_tets_->refit(positions, options_.threads);
  linalg::parallel_chunks(static_cast<Index>(contact_nodes_.size()), options_.threads, [&](Index begin, Index end) {
    for (Index slot = begin; slot < end; ++slot) {
      FrozenPlane plane;
      // The partner surface keeps moving during the step: the plane is placed where it will be
      // at the solve's time, as the obstacles are.
      if (find_plane(at(slot), positions, velocities, plane)) plane.point += time_step * plane.velocity;
      planes_[at(slot)] = plane;
    }
  }, kMinParallelDetections);
}

template <typename Visit>
void ContactPotential::for_each_side(std::size_t slot, const Vec3& point, const Visit& visit) const {
  for (const Obstacle& obstacle : obstacles_) visit(proximity(obstacle, point, time_), true);
  if (planes_.empty()) return;
  const FrozenPlane& plane = planes_[slot];
  if (linalg::squared_norm(plane.normal) == 0.0) return;
  visit(ObstacleProximity{linalg::dot(plane.normal, point - plane.point), plane.normal, plane.velocity}, false);
}

void ContactPotential::freeze_friction(std::span<const double> positions, double time_step) {
  std::fill(friction_offsets_.begin(), friction_offsets_.end(), 0);
  friction_.clear();
  if (options_.friction_coefficient == 0.0) return;
  const auto slots = static_cast<Index>(contact_nodes_.size());
  const double activation = options_.activation_distance;
  // Two passes over the same contacts — count, then fill — so that each vertex writes its own
  // range of one flat array.
  const auto for_each_active_side = [&](Index slot, const auto& visit) {
    for_each_side(at(slot), node_position(positions, contact_nodes_[at(slot)]),
                  [&](const ObstacleProximity& side, bool) {
                    if (side.distance < activation) visit(side);
                  });
  };
  linalg::parallel_chunks(slots, options_.threads, [&](Index begin, Index end) {
    for (Index slot = begin; slot < end; ++slot) {
      for_each_active_side(slot, [&](const ObstacleProximity&) { ++friction_offsets_[at(slot) + 1]; });
    }
  }, kMinParallelVertices);
  for (std::size_t slot = 0; slot < at(slots); ++slot) friction_offsets_[slot + 1] += friction_offsets_[slot];
  friction_.resize(at(friction_offsets_.back()));
  linalg::parallel_chunks(slots, options_.threads, [&](Index begin, Index end) {
    for (Index slot = begin; slot < end; ++slot) {
      const Vec3 start = node_position(positions, contact_nodes_[at(slot)]);
      Index next = friction_offsets_[at(slot)];
      for_each_active_side(slot, [&](const ObstacleProximity& side) {
        const auto [first, second] = tangent_basis(side.normal);
        // IPC's lagging: λ from the normal force at the solve's start, the sliding measured
        // against the obstacle's own motion over the step.
        friction_[at(next++)] = {-smooth_penalty(side.distance, options_.stiffness, activation).first,
                                 start + time_step * side.velocity, first, second};
      });
    }
  }, kMinParallelVertices);
}

// ---- evaluation ---------------------------------------------------------------------------------

void ContactPotential::add_penalty(double distance, const Vec3& normal, VertexTerms& terms) const {
  if (distance >= options_.activation_distance) return;
  const PenaltyValue penalty = smooth_penalty(distance, options_.stiffness, options_.activation_distance);
  terms.energy += penalty.value;
  terms.gradient += penalty.first * normal;
  // ψ''·n·nᵀ; the curvature term ψ'·∂n/∂p is dropped (file comment).
  terms.hessian += penalty.second * linalg::outer(normal, normal);
  terms.active = true;
}

// IPC's lagged friction (Li et al. 2020): D = μ·λ·f₀(y), y = ‖u‖, with f₀(y) = −y³/(3ε²) +
// y²/ε + ε/3 below ε and y above; ∇_u D = μ·λ·(f₁(y)/y)·u, f₁ = f₀′.
void ContactPotential::add_friction(const LaggedFriction& friction, const Vec3& point, VertexTerms& terms) const {
  const double epsilon = smoothing_displacement_;
  const Vec3 displacement = point - friction.anchor;
  const double u1 = linalg::dot(friction.tangent_first, displacement);
  const double u2 = linalg::dot(friction.tangent_second, displacement);
  const double y = std::hypot(u1, u2);
  const double scale = options_.friction_coefficient * friction.normal_force;
  double mollified = 0.0;     // f₀(y)
  double force_ratio = 0.0;   // f₁(y)/y
  double radial_term = 0.0;   // the 2×2 Hessian is force_ratio·I + radial_term·u·uᵀ
  if (y >= epsilon) {
    mollified = y;
    force_ratio = 1.0 / y;
    radial_term = -1.0 / (y * y * y);
  } else {
    mollified = y * y * (1.0 / epsilon - y / (3.0 * epsilon * epsilon)) + epsilon / 3.0;
    force_ratio = 2.0 / epsilon - y / (epsilon * epsilon);
    radial_term = y > 0.0 ? -1.0 / (epsilon * epsilon * y) : 0.0;
  }
  const Vec3 tangential = u1 * friction.tangent_first + u2 * friction.tangent_second;
  terms.energy += scale * mollified;
  terms.gradient += (scale * force_ratio) * tangential;
  const Mat3 tangent_projector = linalg::outer(friction.tangent_first, friction.tangent_first) +
                                 linalg::outer(friction.tangent_second, friction.tangent_second);
  terms.hessian += scale * (force_ratio * tangent_projector + radial_term * linalg::outer(tangential, tangential));
  terms.active = true;
}

ContactPotential::VertexTerms ContactPotential::vertex_terms(std::size_t slot, const Vec3& point) const {
  VertexTerms terms;
  for_each_side(slot, point,
                [&](const ObstacleProximity& side, bool) { add_penalty(side.distance, side.normal, terms); });
  for (Index k = friction_offsets_[slot]; k < friction_offsets_[slot + 1]; ++k) {
    add_friction(friction_[at(k)], point, terms);
  }
  return terms;
}

template <typename Visit>
void ContactPotential::for_each_vertex(std::span<const double> positions, const Visit& visit) const {
  linalg::parallel_chunks(static_cast<Index>(contact_nodes_.size()), options_.threads, [&](Index begin, Index end) {
    for (Index slot = begin; slot < end; ++slot) {
      visit(at(slot), vertex_terms(at(slot), node_position(positions, contact_nodes_[at(slot)])));
    }
  }, kMinParallelVertices);
}

double ContactPotential::energy(std::span<const double> positions) const {
  check_positions(positions, "energy");
  for_each_vertex(positions, [&](std::size_t slot, const VertexTerms& terms) { scratch_[slot] = terms; });
  // Summed in vertex order, so the energy does not depend on the thread count.
  double sum = 0.0;
  for (const VertexTerms& terms : scratch_) sum += terms.energy;
  return sum;
}

void ContactPotential::add_gradient(std::span<const double> positions, std::span<double> gradient) const {
  check_positions(positions, "add_gradient (positions)");
  check_positions(gradient, "add_gradient (gradient)");
  // Each vertex writes only its own node's entries.
  for_each_vertex(positions, [&](std::size_t slot, const VertexTerms& terms) {
    if (terms.active) add_to(gradient, contact_nodes_[slot], terms.gradient);
  });
}

void ContactPotential::hessian_blocks(std::span<const double> positions,
                                      std::vector<std::pair<Index, std::array<double, 9>>>& blocks) const {
  check_positions(positions, "hessian_blocks");
  for_each_vertex(positions, [&](std::size_t slot, const VertexTerms& terms) { scratch_[slot] = terms; });
  blocks.clear();
  for (std::size_t slot = 0; slot < scratch_.size(); ++slot) {
    if (scratch_[slot].active) blocks.emplace_back(contact_nodes_[slot], scratch_[slot].hessian.entries);
  }
}

ContactPotential::Statistics ContactPotential::statistics(std::span<const double> positions) const {
  check_positions(positions, "statistics");
  Statistics statistics;
  for (std::size_t slot = 0; slot < contact_nodes_.size(); ++slot) {
    const Vec3 point = node_position(positions, contact_nodes_[slot]);
    for_each_side(slot, point, [&](const ObstacleProximity& side, bool against_obstacle) {
      if (side.distance >= options_.activation_distance) return;
      ++(against_obstacle ? statistics.active_obstacle_contacts : statistics.active_body_contacts);
      statistics.deepest_penetration = std::max(statistics.deepest_penetration, -side.distance);
    });
  }
  const auto has_normal = [](const FrozenPlane& plane) { return linalg::squared_norm(plane.normal) > 0.0; };
  statistics.frozen_planes = static_cast<Index>(std::count_if(planes_.begin(), planes_.end(), has_normal));
  statistics.friction_contacts = static_cast<Index>(friction_.size());
  return statistics;
}

}  // namespace cholsim::fem
