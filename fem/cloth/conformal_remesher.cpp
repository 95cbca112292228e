#include "fem/cloth/conformal_remesher.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "fem/cloth/cloth_constraints.hpp"
#include "fem/cloth/triangle_topology.hpp"
#include "fem/cloth/velocity_transfer.hpp"

namespace cholsim::fem::cloth {

namespace {

using Kind = FeatureAttachment::Kind;
using FeatureKey = std::pair<int, int>;  // (obstacle, feature) of an edge feature
using Corners = std::array<Vec2, 3>;     // a triangle by its material corners

/// How far (relative to the lengths involved) a vertex may sit off a material segment and
/// still count as on it, so that the walk passes through it instead of splitting next to it.
constexpr double kOnSegmentTolerance = 1e-9;
/// How much a fix of an ill-conditioned triangle must raise the smallest angle sine.
constexpr double kRequiredGain = 1.01;
/// Split points closer than this fraction of the edge to an end are not worth a vertex.
constexpr double kEndMargin = 0.05;

FeatureKey key_of(const FeatureAttachment& attachment) { return {attachment.obstacle, attachment.feature}; }

double degrees_to_sine(double degrees) { return std::sin(degrees * std::numbers::pi / 180.0); }

Vec3 lerp(const Vec3& a, const Vec3& b, double s) { return a + s * (b - a); }

void set_position(ClothMesh& cloth, Index v, const Vec3& x) {
  cloth.positions[3 * static_cast<std::size_t>(v)] = x.x;
  cloth.positions[3 * static_cast<std::size_t>(v) + 1] = x.y;
  cloth.positions[3 * static_cast<std::size_t>(v) + 2] = x.z;
}

void require_valid(const RemeshOptions& options) {
  const bool valid = options.collapse_length_fraction >= 0.0 && options.snap_fraction >= 0.0 &&
                     options.min_angle_degrees >= 0.0 && options.min_angle_degrees < 60.0 &&
                     options.min_border_angle_degrees >= 0.0 && options.min_border_angle_degrees <= 90.0 &&
                     options.max_connection_stretch > 0.0 && options.max_iterations >= 0;
  if (!valid) {
    throw std::invalid_argument(
        "remesh_conformal: options out of range (expected fractions ≥ 0, min angle in [0, 60), border angle in "
        "[0, 90], stretch > 0, iterations ≥ 0)");
  }
}

/// Whether a vertex with `attachment` lies on `feature`: attached to it, or, for an edge
/// feature, on a corner of the same obstacle (where the box edge ends).
bool on_feature(const FeatureAttachment& attachment, const FeatureAttachment& feature) {
  return attachment == feature ||
         (feature.kind == Kind::edge && attachment.kind == Kind::corner && attachment.obstacle == feature.obstacle);
}

/// Frees conformal vertex v: lift-off (seed 002 §2.6.2) if it is EOL, then no attachment.
/// Returns whether it was conformal.
bool release_vertex(const TriangleTopology& topology, ClothMesh& cloth, Index v) {
  if (v < 0 || v >= cloth.vertex_count()) {
    throw std::invalid_argument("release_conformal: vertex " + std::to_string(v) + " is not in 0.." +
                                std::to_string(cloth.vertex_count() - 1));
  }
  if (cloth.attachments[v].kind == Kind::none) return false;
  if (cloth.is_eulerian(v)) lift_off(cloth, v, vertex_deformation_gradient(topology, v));
  cloth.attachments[v] = {};
  return true;
}

/// The sine of the smallest interior angle of triangle (a, b, c) (always acute).
double smallest_angle_sine(const Corners& corners) {
  const auto [a, b, c] = corners;
  const double twice_area = std::abs(cross(b - a, c - a));
  const double ab = material_length(b - a), bc = material_length(c - b), ca = material_length(c - a);
  return std::min({twice_area / (ab * ca), twice_area / (ab * bc), twice_area / (bc * ca)});
}

double smallest_angle_sine(std::span<const Corners> triangles) {
  double smallest = 1.0;
  for (const Corners& corners : triangles) smallest = std::min(smallest, smallest_angle_sine(corners));
  return smallest;
}

/// A point of a triangle: its number and barycentric coordinates (all ≥ 0, sum 1).
struct TrianglePoint {
  Index triangle = -1;
  std::array<double, 3> barycentric{};
};

/// A crossing resolved on entry: its material point and, for edge features, the material
/// directions to its neighbours along the feature (for the border-angle test).
struct ResolvedCrossing {
  const FeatureCrossing* crossing = nullptr;
  Vec2 point;
  std::vector<Vec2> along_feature;
};

/// Where a material segment leaves the star of a vertex: through a vertex on the segment, or
/// across edge (b, c) at b + s (c − b).
struct SegmentExit {
  Index through = -1;
  Index b = -1;
  Index c = -1;
  double s = 0.0;
};

std::array<double, 3> checked_barycentric(const FeatureCrossing& crossing, Index triangle_count) {
  if (crossing.attachment.kind == Kind::none) {
    throw std::invalid_argument("remesh_conformal: a crossing has no feature attachment (expected edge or corner)");
  }
  if (crossing.triangle < 0 || crossing.triangle >= triangle_count) {
    throw std::invalid_argument("remesh_conformal: crossing triangle " + std::to_string(crossing.triangle) +
                                " is not in 0.." + std::to_string(triangle_count - 1));
  }
  std::array<double, 3> weights{crossing.barycentric[0], crossing.barycentric[1], crossing.barycentric[2]};
  const double sum = weights[0] + weights[1] + weights[2];
  const bool inside = std::all_of(weights.begin(), weights.end(), [](double w) { return w >= -1e-6; });
  if (!inside || !(std::abs(sum - 1.0) <= 1e-6)) {
    throw std::invalid_argument("remesh_conformal: crossing barycentric coordinates (" + std::to_string(weights[0]) +
                                ", " + std::to_string(weights[1]) + ", " + std::to_string(weights[2]) +
                                ") are not a point of the triangle (expected ≥ 0, sum 1)");
  }
  return weights;
}

class ConformalRemesher {
 public:
  ConformalRemesher(ClothMesh& cloth, const RemeshOptions& options)
      : cloth_(cloth),
        topology_(cloth),
        options_(options),
        collapse_length_(options.collapse_length_fraction * std::max(cloth.material_width, cloth.material_height)),
        snap_length_(options.snap_fraction * collapse_length_),
        entry_vertex_count_(cloth.vertex_count()) {}

  void release(std::span<const Index> vertices);
  void insert(std::span<const FeatureCrossing> crossings);
  void connect_features(std::span<const FeatureCrossing> crossings);
  void clean_up();
  RemeshStats finish();

 private:
  // Step 1: insertion
  [[nodiscard]] std::vector<ResolvedCrossing> resolve(std::span<const FeatureCrossing> crossings) const;
  void insert_one(const ResolvedCrossing& resolved);
  bool snap_to_corner(const ResolvedCrossing& resolved, const TrianglePoint& located);
  bool split_nearby_edge(const ResolvedCrossing& resolved, const TrianglePoint& located);
  [[nodiscard]] TrianglePoint locate(Vec2 point, Index start) const;
  [[nodiscard]] std::array<double, 3> barycentric_in(Index t, Vec2 point) const;
  [[nodiscard]] bool tracked(const FeatureAttachment& feature, Vec2 point) const;
  [[nodiscard]] bool shallow_at_border(Index v, Vec2 direction) const;
  [[nodiscard]] bool shallow_along(Vec2 border, std::span<const Vec2> directions) const;
  // Step 2: conformal edges
  [[nodiscard]] std::map<FeatureKey, std::vector<Index>> edge_feature_chains(
      std::span<const FeatureCrossing> crossings) const;
  bool connect(Index from, Index to, const FeatureAttachment& feature);
  [[nodiscard]] SegmentExit segment_exit(Index current, Vec2 end) const;
  // Step 3: clean-up
  bool collapse_short_edges();
  bool collapse_short_edge(Index a, Index b);
  bool split_ill_conditioned();
  [[nodiscard]] std::vector<int> candidate_edges(const std::array<Index, 3>& triangle) const;
  bool fix_flat_corner(Index apex, Index from, Index to, double s);
  bool try_collapse(Index removed, Index kept);
  [[nodiscard]] bool ill_conditioned(const std::array<Index, 3>& triangle) const;
  [[nodiscard]] FeatureAttachment split_attachment(Index a, Index b) const;
  [[nodiscard]] std::vector<std::array<Index, 3>> triangles_near_conformal() const;
  // Vertices and velocities
  void make_conformal(Index v, const FeatureAttachment& feature, const Vec3& x);
  Index split_edge(Index a, Index b, double s, const FeatureAttachment& feature);
  void adopt_new_vertex(Index v, const FeatureAttachment& feature);
  void split_pending_velocities();

  ClothMesh& cloth_;
  TriangleTopology topology_;
  RemeshOptions options_;
  double collapse_length_;
  double snap_length_;
  Index entry_vertex_count_;
  RemeshStats stats_;
  std::vector<Index> pending_collision_;  ///< new EOL vertices awaiting eq. 2.13 (rule 4)
};

// --- Vertices and velocities --------------------------------------------------------------------

void ConformalRemesher::make_conformal(Index v, const FeatureAttachment& feature, const Vec3& x) {
  cloth_.attachments[v] = feature;
  set_position(cloth_, v, x);
  if (options_.make_eulerian && !topology_.is_border_corner(v) && !cloth_.is_eulerian(v)) {
    cloth_.eulerian[v] = 1;
    pending_collision_.push_back(v);
  }
}

/// A created vertex's attachment, EOL flag and velocity (seed 002 §2.6.2 rules 1–3; rule 4
/// waits until the mesh is final, see split_pending_velocities).
void ConformalRemesher::adopt_new_vertex(Index v, const FeatureAttachment& feature) {
  const VertexOrigin& origin = topology_.created_vertices().back();
  cloth_.attachments[v] = feature;
  const bool eulerian = feature.kind != Kind::none && options_.make_eulerian;
  cloth_.eulerian[v] = eulerian ? 1 : 0;
  const auto parents = std::span(origin.parents).first(static_cast<std::size_t>(origin.parent_count()));
  const bool edge_of_eulerian =
      origin.operation == VertexOrigin::Operation::edge_split &&
      std::all_of(parents.begin(), parents.end(), [&](Index p) { return cloth_.is_eulerian(p); });
  if (eulerian && edge_of_eulerian) {
    transfer_to_split_eulerian_vertex(cloth_, origin);  // rule 3
    // Parents inserted in this call still wait for eq. 2.13; so does their child.
    const bool parent_pending = std::any_of(parents.begin(), parents.end(), [&](Index p) {
      return std::find(pending_collision_.begin(), pending_collision_.end(), p) != pending_collision_.end();
    });
    if (parent_pending) pending_collision_.push_back(v);
    return;
  }
  // Rules 1–2. Right after a split the new vertex's triangles carry their parents' F, so
  // its vertex F is the F of the triangle(s) that held the point (eq. 2.2).
  transfer_to_lagrangian_vertex(cloth_, origin, vertex_deformation_gradient(topology_, v));
  if (eulerian) pending_collision_.push_back(v);
}

Index ConformalRemesher::split_edge(Index a, Index b, double s, const FeatureAttachment& feature) {
  const SplitResult split = topology_.split_edge(a, b, s);
  if (split.status != EditStatus::done) return -1;
  ++stats_.edges_split;
  adopt_new_vertex(split.vertex, feature);
  return split.vertex;
}

void ConformalRemesher::split_pending_velocities() {
  for (const Index v : pending_collision_) {
    if (topology_.incident_triangles(v).empty() || !cloth_.is_eulerian(v)) continue;  // collapsed away
    const Mat32 gradient = vertex_deformation_gradient(topology_, v);
    if (!has_full_rank(gradient)) continue;  // a flat-folded star: keep ẋ = ẋʷ, Ẋ = 0
    // The Eulerian equality row of Alg. 2.2, the one the step's QP will hold Ẋ to (zero: none).
    const auto row = eulerian_constraint_direction(cloth_, v);
    const std::optional<Vec2> equality_row =
        row[0] == 0.0 && row[1] == 0.0 ? std::nullopt : std::optional<Vec2>(Vec2{row[0], row[1]});
    // F maps the one material direction the row leaves free to (nearly) nothing: every Ẋ along
    // it gives the same world velocity, and the least-norm one is Ẋ = 0 — keep ẋ = ẋʷ, as for
    // a flat-folded star (JAWS-EOL ended here, docs/benchmarks.md, issue 20).
    if (equality_row && !moves_along_free_direction(gradient, *equality_row)) continue;
    transfer_to_collision_eulerian_vertex(cloth_, v, vertex_world_velocity(cloth_, v, gradient), gradient,
                                          equality_row);
  }
  pending_collision_.clear();
}

void ConformalRemesher::release(std::span<const Index> vertices) {
  for (const Index v : vertices) stats_.vertices_released += release_vertex(topology_, cloth_, v) ? 1 : 0;
}

// --- Step 1: insertion ------------------------------------------------------------------------------

std::vector<ResolvedCrossing> ConformalRemesher::resolve(std::span<const FeatureCrossing> crossings) const {
  std::vector<ResolvedCrossing> resolved;
  std::map<FeatureKey, std::vector<std::size_t>> by_feature;
  for (const FeatureCrossing& crossing : crossings) {
    const std::array<double, 3> weights = checked_barycentric(crossing, cloth_.triangle_count());
    Vec2 point;
    for (int k = 0; k < 3; ++k) {
      point = point + weights[k] * material_point(cloth_, cloth_.triangles[3 * crossing.triangle + k]);
    }
    if (crossing.attachment.kind == Kind::edge) by_feature[key_of(crossing.attachment)].push_back(resolved.size());
    resolved.push_back({&crossing, point, {}});
  }
  // Neighbours along each edge feature, in the order of its parameter.
  for (auto& [key, members] : by_feature) {
    std::sort(members.begin(), members.end(), [&](std::size_t i, std::size_t j) {
      return resolved[i].crossing->feature_parameter < resolved[j].crossing->feature_parameter;
    });
    for (std::size_t k = 0; k < members.size(); ++k) {
      ResolvedCrossing& here = resolved[members[k]];
      if (k > 0) here.along_feature.push_back(resolved[members[k - 1]].point - here.point);
      if (k + 1 < members.size()) here.along_feature.push_back(resolved[members[k + 1]].point - here.point);
    }
  }
  return resolved;
}

void ConformalRemesher::insert(std::span<const FeatureCrossing> crossings) {
  // Corners first: an edge crossing next to a corner vertex is then that corner's.
  std::vector<ResolvedCrossing> resolved = resolve(crossings);
  std::stable_partition(resolved.begin(), resolved.end(),
                        [](const ResolvedCrossing& r) { return r.crossing->attachment.kind == Kind::corner; });
  for (const ResolvedCrossing& r : resolved) insert_one(r);
}

std::array<double, 3> ConformalRemesher::barycentric_in(Index t, Vec2 point) const {
  const std::array<Vec2, 3> X = triangle_material(cloth_, t);
  const double twice_area = cross(X[1] - X[0], X[2] - X[0]);
  return {cross(X[2] - X[1], point - X[1]) / twice_area, cross(X[0] - X[2], point - X[2]) / twice_area,
          cross(X[1] - X[0], point - X[0]) / twice_area};
}

TrianglePoint ConformalRemesher::locate(Vec2 point, Index start) const {
  // A visibility walk from the crossing's triangle (the point lies in one of the triangles
  // that split it), with a scan of every triangle as the fallback should the walk cycle.
  const auto settle = [](Index t, std::array<double, 3> weights) {
    for (double& w : weights) w = std::max(w, 0.0);
    const double sum = weights[0] + weights[1] + weights[2];
    for (double& w : weights) w /= sum;
    return TrianglePoint{t, weights};
  };
  constexpr double kInside = -1e-12;
  Index t = start;
  for (Index step = 0; step < cloth_.triangle_count(); ++step) {
    const std::array<double, 3> weights = barycentric_in(t, point);
    const auto worst = std::min_element(weights.begin(), weights.end());
    if (*worst >= kInside) return settle(t, weights);
    const auto k = static_cast<int>(worst - weights.begin());
    const Index from = cloth_.triangles[3 * t + (k + 1) % 3], to = cloth_.triangles[3 * t + (k + 2) % 3];
    t = topology_.edge_triangles(from, to).right;
    if (t < 0) break;
  }
  TrianglePoint best;
  double best_worst = -std::numeric_limits<double>::infinity();
  for (Index candidate = 0; candidate < cloth_.triangle_count(); ++candidate) {
    const std::array<double, 3> weights = barycentric_in(candidate, point);
    const double worst = std::min({weights[0], weights[1], weights[2]});
    if (worst > best_worst) {
      best_worst = worst;
      best = settle(candidate, weights);
    }
  }
  return best;
}

/// A vertex already on the feature within the snap length of the crossing's material point.
bool ConformalRemesher::tracked(const FeatureAttachment& feature, Vec2 point) const {
  for (Index v = 0; v < cloth_.vertex_count(); ++v) {
    if (on_feature(cloth_.attachments[v], feature) && !topology_.incident_triangles(v).empty() &&
        material_length(material_point(cloth_, v) - point) < snap_length_) {
      return true;
    }
  }
  return false;
}

bool ConformalRemesher::shallow_along(Vec2 border, std::span<const Vec2> directions) const {
  const double min_sine = degrees_to_sine(options_.min_border_angle_degrees);
  return std::any_of(directions.begin(), directions.end(), [&](Vec2 d) {
    return std::abs(cross(border, d)) < min_sine * material_length(border) * material_length(d);
  });
}

bool ConformalRemesher::shallow_at_border(Index v, Vec2 direction) const {
  const Vec2 here = material_point(cloth_, v);
  for (const Index w : topology_.border_neighbours(v)) {
    if (shallow_along(material_point(cloth_, w) - here, std::span(&direction, 1))) return true;
  }
  return false;
}

void ConformalRemesher::insert_one(const ResolvedCrossing& resolved) {
  if (tracked(resolved.crossing->attachment, resolved.point)) {
    ++stats_.crossings_tracked;
    return;
  }
  const TrianglePoint located = locate(resolved.point, resolved.crossing->triangle);
  if (snap_to_corner(resolved, located) || split_nearby_edge(resolved, located)) return;
  const SplitResult split = topology_.split_face(located.triangle, located.barycentric);
  if (split.status != EditStatus::done) {
    ++stats_.crossings_skipped;
    return;
  }
  ++stats_.faces_split;
  ++stats_.vertices_inserted;
  adopt_new_vertex(split.vertex, resolved.crossing->attachment);
  set_position(cloth_, split.vertex, resolved.crossing->world_position);
}

/// The crossing snaps to the nearest corner of its triangle when that is within the snap
/// length (and free, and not at a shallow angle to the border). Returns whether it was
/// handled (snapped or skipped).
bool ConformalRemesher::snap_to_corner(const ResolvedCrossing& resolved, const TrianglePoint& located) {
  Index nearest = -1;
  double distance = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 3; ++k) {
    const Index v = cloth_.triangles[3 * located.triangle + k];
    const double d = material_length(material_point(cloth_, v) - resolved.point);
    if (d < distance) {
      distance = d;
      nearest = v;
    }
  }
  if (distance >= snap_length_) return false;
  const bool shallow = std::any_of(resolved.along_feature.begin(), resolved.along_feature.end(),
                                   [&](Vec2 d) { return shallow_at_border(nearest, d); });
  if (topology_.is_conformal(nearest) || shallow) {
    ++stats_.crossings_skipped;
  } else {
    make_conformal(nearest, resolved.crossing->attachment, resolved.crossing->world_position);
    ++stats_.vertices_snapped;
  }
  return true;
}

/// The crossing splits the nearest edge of its triangle when it is within the snap length of
/// it: its distance to the edge opposite corner k is barycentric[k] times that corner's
/// height. Returns whether it was handled (split, tracked or skipped).
bool ConformalRemesher::split_nearby_edge(const ResolvedCrossing& resolved, const TrianglePoint& located) {
  const std::array<Vec2, 3> X = triangle_material(cloth_, located.triangle);
  const double twice_area = cross(X[1] - X[0], X[2] - X[0]);
  std::array<double, 3> distance{};
  for (int k = 0; k < 3; ++k) {
    distance[k] = located.barycentric[k] * twice_area / material_length(X[(k + 2) % 3] - X[(k + 1) % 3]);
  }
  const auto k = static_cast<int>(std::min_element(distance.begin(), distance.end()) - distance.begin());
  if (distance[k] >= snap_length_) return false;
  const FeatureCrossing& crossing = *resolved.crossing;
  const Index from = cloth_.triangles[3 * located.triangle + (k + 1) % 3];
  const Index to = cloth_.triangles[3 * located.triangle + (k + 2) % 3];
  if (topology_.is_conformal_edge(from, to)) {
    // On a conformal edge: of its own feature, the crossing is tracked already (the feature
    // runs along the edge); of another, there is no room for it.
    const bool own = on_feature(cloth_.attachments[from], crossing.attachment) &&
                     on_feature(cloth_.attachments[to], crossing.attachment);
    ++(own ? stats_.crossings_tracked : stats_.crossings_skipped);
    return true;
  }
  const double w_from = located.barycentric[(k + 1) % 3], w_to = located.barycentric[(k + 2) % 3];
  const double s = w_to / (w_from + w_to);  // inside (0, 1): a point at a corner has snapped
  const bool shallow =
      topology_.is_border_edge(from, to) && shallow_along(X[(k + 2) % 3] - X[(k + 1) % 3], resolved.along_feature);
  const Index p = shallow ? -1 : split_edge(from, to, s, crossing.attachment);
  if (p < 0) {
    ++stats_.crossings_skipped;
    return true;
  }
  set_position(cloth_, p, crossing.world_position);
  ++stats_.vertices_inserted;
  return true;
}

// --- Step 2: conformal edges -------------------------------------------------------------------------

std::map<FeatureKey, std::vector<Index>> ConformalRemesher::edge_feature_chains(
    std::span<const FeatureCrossing> crossings) const {
  std::map<FeatureKey, std::vector<Index>> chains;
  std::vector<Index> corners;
  for (Index v = 0; v < cloth_.vertex_count(); ++v) {
    if (topology_.incident_triangles(v).empty()) continue;
    const FeatureAttachment& attachment = cloth_.attachments[v];
    if (attachment.kind == Kind::edge) chains[key_of(attachment)].push_back(v);
    if (attachment.kind == Kind::corner) corners.push_back(v);
  }
  for (auto& [key, chain] : chains) {
    if (chain.size() < 2) continue;
    // The feature line: through its crossings, oriented by their parameter; else from one
    // vertex to the one farthest from it.
    Vec3 origin = cloth_.position(chain.front());
    Vec3 direction;
    const FeatureCrossing* lowest = nullptr;
    const FeatureCrossing* highest = nullptr;
    for (const FeatureCrossing& crossing : crossings) {
      if (crossing.attachment.kind != Kind::edge || key_of(crossing.attachment) != key) continue;
      if (!lowest || crossing.feature_parameter < lowest->feature_parameter) lowest = &crossing;
      if (!highest || crossing.feature_parameter > highest->feature_parameter) highest = &crossing;
    }
    if (lowest && highest->feature_parameter > lowest->feature_parameter) {
      origin = lowest->world_position;
      direction = highest->world_position - lowest->world_position;
    } else {
      for (const Index v : chain) {
        if (squared_norm(cloth_.position(v) - origin) > squared_norm(direction))
          direction = cloth_.position(v) - origin;
      }
    }
    // A corner of the same obstacle on the line ends the chain (the box edge meets it there).
    const double length = norm(direction);
    for (const Index c : corners) {
      const Vec3 offset = cloth_.position(c) - origin;
      if (cloth_.attachments[c].obstacle == key.first &&
          norm(cross(offset, direction)) <= 1e-7 * length * std::max(length, norm(offset))) {
        chain.push_back(c);
      }
    }
    std::sort(chain.begin(), chain.end(), [&](Index a, Index b) {
      return dot(cloth_.position(a) - origin, direction) < dot(cloth_.position(b) - origin, direction);
    });
  }
  return chains;
}

void ConformalRemesher::connect_features(std::span<const FeatureCrossing> crossings) {
  for (const auto& [key, chain] : edge_feature_chains(crossings)) {
    const FeatureAttachment feature{Kind::edge, key.first, key.second};
    for (std::size_t k = 0; k + 1 < chain.size(); ++k) {
      const Index from = chain[k], to = chain[k + 1];
      if (topology_.is_edge(from, to)) continue;
      const Vec2 segment = material_point(cloth_, to) - material_point(cloth_, from);
      const double world_length = norm(cloth_.position(to) - cloth_.position(from));
      const bool joinable = material_length(segment) <= options_.max_connection_stretch * world_length &&
                            !shallow_at_border(from, segment) && !shallow_at_border(to, -1.0 * segment);
      if (!joinable || !connect(from, to, feature)) ++stats_.connections_skipped;
    }
  }
}

SegmentExit ConformalRemesher::segment_exit(Index current, Vec2 end) const {
  const Vec2 here = material_point(cloth_, current);
  const Vec2 direction = end - here;
  const auto side = [&](Index v) { return cross(direction, material_point(cloth_, v) - here); };
  const auto on_ray = [&](Index v) {
    const Vec2 offset = material_point(cloth_, v) - here;
    return std::abs(side(v)) <= kOnSegmentTolerance * material_length(direction) * material_length(offset) &&
           dot(offset, direction) > 0.0;
  };
  for (const Index t : topology_.incident_triangles(current)) {
    // (current, b, c) counter-clockwise; the segment leaves through this triangle when b is
    // on its right and c on its left.
    const Index* v = &cloth_.triangles[3 * t];
    const int k = v[0] == current ? 0 : (v[1] == current ? 1 : 2);
    const Index b = v[(k + 1) % 3], c = v[(k + 2) % 3];
    if (on_ray(b)) return {b};
    if (on_ray(c)) return {c};
    if (side(b) < 0.0 && side(c) > 0.0) return {-1, b, c, side(b) / (side(b) - side(c))};
  }
  return {};
}

/// Joins conformal vertices `from` and `to` by a chain of mesh edges along the straight
/// material segment between them: walk from `from` through the triangles the segment
/// crosses; flip the last crossed edge when that joins the ends, else split each crossed
/// edge at the crossing and make the new vertex conformal (placed on the feature between the
/// two ends' world positions). A free vertex the segment passes through joins the chain.
bool ConformalRemesher::connect(Index from, Index to, const FeatureAttachment& feature) {
  const Vec2 start = material_point(cloth_, from), end = material_point(cloth_, to);
  const Vec3 x_start = cloth_.position(from), x_end = cloth_.position(to);
  const auto world_point = [&](Vec2 point) {
    return lerp(x_start, x_end, dot(point - start, end - start) / dot(end - start, end - start));
  };
  Index current = from;
  for (Index step = 0; step < cloth_.triangle_count(); ++step) {
    if (topology_.is_edge(current, to)) return true;
    const SegmentExit exit = segment_exit(current, end);
    if (exit.through >= 0) {
      if (topology_.is_conformal(exit.through)) {
        if (!on_feature(cloth_.attachments[exit.through], feature)) return false;
      } else {
        make_conformal(exit.through, feature, world_point(material_point(cloth_, exit.through)));
        ++stats_.vertices_snapped;
      }
      current = exit.through;
      continue;
    }
    if (exit.b < 0) return false;
    const Index across = topology_.edge_triangles(exit.c, exit.b).left;
    if (across < 0 || topology_.is_conformal_edge(exit.b, exit.c)) return false;
    if (topology_.opposite_vertex(across, exit.b, exit.c) == to &&
        topology_.flip_edge(exit.b, exit.c) == EditStatus::done) {
      ++stats_.edges_flipped;
      return true;
    }
    const Vec2 b = material_point(cloth_, exit.b);
    const Vec2 crossing = b + exit.s * (material_point(cloth_, exit.c) - b);
    const Index p = split_edge(exit.b, exit.c, exit.s, feature);
    if (p < 0) return false;
    set_position(cloth_, p, world_point(crossing));
    ++stats_.vertices_inserted;
    current = p;
  }
  return false;
}

// --- Step 3: clean-up ----------------------------------------------------------------------------------

std::vector<std::array<Index, 3>> ConformalRemesher::triangles_near_conformal() const {
  std::vector<Index> triangles;
  for (Index v = 0; v < cloth_.vertex_count(); ++v) {
    if (!topology_.is_conformal(v)) continue;
    const auto star = topology_.incident_triangles(v);
    triangles.insert(triangles.end(), star.begin(), star.end());
  }
  std::sort(triangles.begin(), triangles.end());
  triangles.erase(std::unique(triangles.begin(), triangles.end()), triangles.end());
  std::vector<std::array<Index, 3>> result;
  for (const Index t : triangles) {
    result.push_back({cloth_.triangles[3 * t], cloth_.triangles[3 * t + 1], cloth_.triangles[3 * t + 2]});
  }
  return result;
}

bool ConformalRemesher::try_collapse(Index removed, Index kept) {
  if (topology_.collapse_edge(removed, kept) != EditStatus::done) return false;
  ++stats_.edges_collapsed;
  return true;
}

bool ConformalRemesher::collapse_short_edges() {
  std::vector<std::pair<double, MeshEdge>> short_edges;
  for (const auto& triangle : triangles_near_conformal()) {
    for (int k = 0; k < 3; ++k) {
      const Index a = std::min(triangle[k], triangle[(k + 1) % 3]), b = std::max(triangle[k], triangle[(k + 1) % 3]);
      const double length = material_length(material_point(cloth_, a) - material_point(cloth_, b));
      if (length < collapse_length_) short_edges.push_back({length, {a, b}});
    }
  }
  std::sort(short_edges.begin(), short_edges.end(), [](const auto& x, const auto& y) {
    return x.first < y.first || (x.first == y.first && x.second.a < y.second.a);
  });
  bool changed = false;
  for (const auto& [length, edge] : short_edges) {
    if (topology_.is_edge(edge.a, edge.b)) changed |= collapse_short_edge(edge.a, edge.b);
  }
  return changed;
}

/// Seed 002 §2.6.1: a non-conformal edge collapses toward its conformal end (both ends on
/// features: neither goes); a conformal edge either way, except that a border vertex stays.
/// Otherwise the newer vertex (b, the higher number) goes first.
bool ConformalRemesher::collapse_short_edge(Index a, Index b) {
  const bool conformal_edge = topology_.is_conformal_edge(a, b);
  const bool keep_a = conformal_edge ? topology_.is_border_vertex(a) : topology_.is_conformal(a);
  const bool keep_b = conformal_edge ? topology_.is_border_vertex(b) : topology_.is_conformal(b);
  if (keep_a && keep_b) return false;
  if (keep_a || keep_b) return keep_a ? try_collapse(b, a) : try_collapse(a, b);
  return try_collapse(b, a) || try_collapse(a, b);
}

bool ConformalRemesher::ill_conditioned(const std::array<Index, 3>& triangle) const {
  const Corners corners{material_point(cloth_, triangle[0]), material_point(cloth_, triangle[1]),
                        material_point(cloth_, triangle[2])};
  return smallest_angle_sine(corners) < degrees_to_sine(options_.min_angle_degrees);
}

/// A vertex splitting edge (a, b) lies on the edge feature of a conformal edge, and on no
/// feature otherwise (nor between two corners, which name no single edge).
FeatureAttachment ConformalRemesher::split_attachment(Index a, Index b) const {
  if (!topology_.is_conformal_edge(a, b)) return {};
  if (cloth_.attachments[a].kind == Kind::edge) return cloth_.attachments[a];
  if (cloth_.attachments[b].kind == Kind::edge) return cloth_.attachments[b];
  return {};
}

/// The edges of an ill-conditioned triangle worth splitting, as the corner k opposite them.
/// Seed 002 §2.6.1: one conformal vertex → the edge opposite it; two → the conformal edge;
/// three → the non-conformal edge. Then the edge opposite the largest angle, in case the
/// thesis' edge is not the one the triangle is flat against.
std::vector<int> ConformalRemesher::candidate_edges(const std::array<Index, 3>& triangle) const {
  std::vector<int> candidates;
  int conformal_count = 0;
  for (const Index v : triangle) conformal_count += topology_.is_conformal(v) ? 1 : 0;
  for (int k = 0; k < 3; ++k) {
    const bool opposite_conformal = topology_.is_conformal(triangle[k]);
    const bool edge_conformal = topology_.is_conformal_edge(triangle[(k + 1) % 3], triangle[(k + 2) % 3]);
    if ((conformal_count == 1 && opposite_conformal) || (conformal_count == 2 && !opposite_conformal) ||
        (conformal_count == 3 && !edge_conformal)) {
      candidates.push_back(k);
    }
  }
  int largest = 0;
  double largest_cosine = 2.0;
  for (int k = 0; k < 3; ++k) {
    const Vec2 apex = material_point(cloth_, triangle[k]);
    const Vec2 e1 = material_point(cloth_, triangle[(k + 1) % 3]) - apex;
    const Vec2 e2 = material_point(cloth_, triangle[(k + 2) % 3]) - apex;
    const double cosine = dot(e1, e2) / (material_length(e1) * material_length(e2));
    if (cosine < largest_cosine) {
      largest_cosine = cosine;
      largest = k;
    }
  }
  candidates.push_back(largest);
  return candidates;
}

bool ConformalRemesher::split_ill_conditioned() {
  bool changed = false;
  for (const auto& triangle : triangles_near_conformal()) {
    const auto [a, b, c] = triangle;
    const EdgeTriangles still = topology_.edge_triangles(a, b);
    if (still.left < 0 || topology_.opposite_vertex(still.left, a, b) != c || !ill_conditioned(triangle)) continue;
    for (const int k : candidate_edges(triangle)) {
      // Only a corner within the collapse length of the edge, its foot inside the edge.
      const Index from = triangle[(k + 1) % 3], to = triangle[(k + 2) % 3];
      const Vec2 base = material_point(cloth_, from);
      const Vec2 edge = material_point(cloth_, to) - base;
      const Vec2 apex = material_point(cloth_, triangle[k]) - base;
      const double s = dot(apex, edge) / dot(edge, edge);
      const double height = std::abs(cross(edge, apex)) / material_length(edge);
      if (height >= collapse_length_ || s <= kEndMargin || s >= 1.0 - kEndMargin) continue;
      if (fix_flat_corner(triangle[k], from, to, s)) {
        changed = true;
        break;
      }
    }
  }
  return changed;
}

/// Seed 002 §2.6.1's fix of the ill-conditioned triangle (apex, from, to), whose corner `apex`
/// lies within the collapse length of edge (from, to): split the edge at the foot of `apex`
/// and collapse the short edge between the new vertex and `apex` toward the conformal end —
/// the new vertex into `apex` (for a free edge this is a flip of it), or a free `apex` into
/// the new vertex when that is on the edge's feature. Done as one step, and only when it
/// raises the smallest material angle of the triangles it replaces, so that repeated fixes
/// cannot cycle (the sorted list of angles grows lexicographically). A collapse the topology
/// refuses undoes the split.
bool ConformalRemesher::fix_flat_corner(Index apex, Index from, Index to, double s) {
  const Index across = topology_.edge_triangles(to, from).left;
  const Index opposite = across < 0 ? -1 : topology_.opposite_vertex(across, from, to);
  const FeatureAttachment attachment = split_attachment(from, to);
  const bool into_new_vertex = attachment.kind != Kind::none && !topology_.is_conformal(apex);
  if (!into_new_vertex && opposite < 0) return false;  // a free vertex on the border cannot go

  // The triangles the step replaces, before and after. The new vertex into `apex`: the two
  // triangles of the edge become (apex, from, opposite) and (opposite, to, apex). `apex` into
  // the new vertex at the foot: apex's star less the edge's triangle, with apex at the foot,
  // and the triangle across cut at the foot.
  const Vec2 a = material_point(cloth_, from), b = material_point(cloth_, to), c = material_point(cloth_, apex);
  const Vec2 foot = a + s * (b - a);
  std::vector<Corners> before, after;
  if (into_new_vertex) {
    const Index own = topology_.edge_triangles(from, to).left;
    for (const Index t : topology_.incident_triangles(apex)) {
      Corners now = triangle_material(cloth_, t);
      before.push_back(now);
      for (int k = 0; k < 3; ++k) now[k] = cloth_.triangles[3 * t + k] == apex ? foot : now[k];
      if (t != own) after.push_back(now);
    }
  } else {
    const Vec2 d = material_point(cloth_, opposite);
    before.push_back({c, a, b});
    after.insert(after.end(), {{c, a, d}, {d, b, c}});
  }
  if (opposite >= 0) {
    const Vec2 d = material_point(cloth_, opposite);
    before.push_back({b, a, d});
    if (into_new_vertex) after.insert(after.end(), {{b, foot, d}, {foot, a, d}});
  }
  if (!(smallest_angle_sine(after) > kRequiredGain * smallest_angle_sine(before))) return false;

  const Index p = split_edge(from, to, s, attachment);
  if (p < 0) return false;
  if (into_new_vertex ? try_collapse(apex, p) : try_collapse(p, apex)) return true;
  // Refused (link condition, a degenerate triangle, apex on another feature): collapsing the
  // new vertex back into `from` restores the triangles the split cut.
  if (const EditStatus undo = topology_.collapse_edge(p, from); undo != EditStatus::done) {
    throw std::logic_error("conformal remesher: undoing a split failed: " + std::string(to_string(undo)));
  }
  --stats_.edges_split;
  return false;
}

void ConformalRemesher::clean_up() {
  stats_.converged = false;
  for (int round = 0; round < options_.max_iterations; ++round) {
    ++stats_.iterations;
    const bool collapsed = collapse_short_edges();
    const bool split = split_ill_conditioned();
    if (!collapsed && !split) {
      stats_.converged = true;
      break;
    }
  }
  for (const auto& triangle : triangles_near_conformal())
    stats_.ill_conditioned_triangles += ill_conditioned(triangle) ? 1 : 0;
}

RemeshStats ConformalRemesher::finish() {
  split_pending_velocities();
  std::vector<Index> numbers = topology_.compact();
  numbers.resize(static_cast<std::size_t>(entry_vertex_count_));
  stats_.new_vertex_numbers = std::move(numbers);
  return stats_;
}

}  // namespace

RemeshStats remesh_conformal(ClothMesh& cloth, std::span<const FeatureCrossing> crossings,
                             std::span<const Index> released_vertices, const RemeshOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  require_valid(options);
  ConformalRemesher remesher(cloth, options);
  remesher.release(released_vertices);
  remesher.insert(crossings);
  remesher.connect_features(crossings);
  remesher.clean_up();
  RemeshStats stats = remesher.finish();
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return stats;
}

RemeshStats remesh_conformal(ClothMesh& cloth, std::span<const FeatureCrossing> crossings,
                             const RemeshOptions& options) {
  return remesh_conformal(cloth, crossings, {}, options);
}

void release_conformal(ClothMesh& cloth, Index v) {
  const TriangleTopology topology(cloth);
  release_vertex(topology, cloth, v);
}

}  // namespace cholsim::fem::cloth
