#include "fem/cloth/triangle_topology.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace cholsim::fem::cloth {

namespace {

/// Collinearity tolerance of the border-corner test, relative to the product of edge lengths.
constexpr double kCollinearTolerance = 1e-9;

/// Twice the signed area of (a, b, c).
double doubled_area(Vec2 a, Vec2 b, Vec2 c) { return cross(b - a, c - a); }

Vec2 lerp(Vec2 a, Vec2 b, double s) { return a + s * (b - a); }

void require_vertex(const ClothMesh& cloth, Index v, const char* operation) {
  if (v < 0 || v >= cloth.vertex_count()) {
    throw std::invalid_argument(std::string(operation) + ": vertex " + std::to_string(v) + " is not in 0.." +
                                std::to_string(cloth.vertex_count() - 1));
  }
}

/// values[vertex] = Σ weights[i] · values[parents[i]], `stride` values per vertex.
void interpolate_into(std::vector<double>& values, int stride, const VertexOrigin& origin) {
  const auto target = static_cast<std::size_t>(stride) * static_cast<std::size_t>(origin.vertex);
  for (int k = 0; k < stride; ++k) {
    double sum = 0.0;
    for (int i = 0; i < origin.parent_count(); ++i) {
      const auto source = static_cast<std::size_t>(stride) * static_cast<std::size_t>(origin.parents[i]);
      sum += origin.weights[i] * values[source + static_cast<std::size_t>(k)];
    }
    values[target + static_cast<std::size_t>(k)] = sum;
  }
}

}  // namespace

double material_length(const Vec2& d) { return std::hypot(d.u, d.v); }

std::string_view to_string(EditStatus status) {
  switch (status) {
    case EditStatus::done: return "done";
    case EditStatus::not_an_edge: return "not an edge";
    case EditStatus::border_edge: return "border edge";
    case EditStatus::conformal_edge: return "conformal edge";
    case EditStatus::not_convex: return "quad not convex";
    case EditStatus::edge_exists: return "new diagonal already an edge";
    case EditStatus::protected_vertex: return "vertex must stay";
    case EditStatus::changes_border: return "would change the border";
    case EditStatus::breaks_manifold: return "would break the manifold (link condition)";
    case EditStatus::inverts_triangle: return "would invert or degenerate a triangle";
    case EditStatus::degenerate_triangle: return "split point too close to a corner";
  }
  return "unknown";
}

TriangleTopology::TriangleTopology(ClothMesh& cloth) : cloth_(&cloth) {
  validate_cloth(cloth);
  const double size = std::max(cloth.material_width, cloth.material_height);
  degenerate_area_ = 1e-12 * size * size;
  incident_.resize(static_cast<std::size_t>(cloth.vertex_count()));
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    for (int k = 0; k < 3; ++k) incident_[cloth.triangles[3 * t + k]].push_back(t);
  }
}

// --- Queries -----------------------------------------------------------------------------------

std::vector<Index> TriangleTopology::neighbours(Index v) const {
  std::vector<Index> result;
  for (const Index t : incident_[v]) {
    for (int k = 0; k < 3; ++k) {
      const Index w = cloth_->triangles[3 * t + k];
      if (w != v && std::find(result.begin(), result.end(), w) == result.end()) result.push_back(w);
    }
  }
  return result;
}

EdgeTriangles TriangleTopology::edge_triangles(Index a, Index b) const {
  EdgeTriangles result;
  for (const Index t : incident_[a]) {
    const Index* v = &cloth_->triangles[3 * t];
    for (int k = 0; k < 3; ++k) {
      if (v[k] != a) continue;
      if (v[(k + 1) % 3] == b) result.left = t;
      if (v[(k + 2) % 3] == b) result.right = t;
    }
  }
  return result;
}

bool TriangleTopology::is_edge(Index a, Index b) const {
  const EdgeTriangles edge = edge_triangles(a, b);
  return edge.left >= 0 || edge.right >= 0;
}

bool TriangleTopology::is_border_edge(Index a, Index b) const {
  const EdgeTriangles edge = edge_triangles(a, b);
  return (edge.left >= 0) != (edge.right >= 0);
}

std::vector<Index> TriangleTopology::border_neighbours(Index v) const {
  std::vector<Index> result = neighbours(v);
  std::erase_if(result, [&](Index w) { return !is_border_edge(v, w); });
  return result;
}

bool TriangleTopology::is_border_vertex(Index v) const { return !border_neighbours(v).empty(); }

bool TriangleTopology::is_border_corner(Index v) const {
  const std::vector<Index> border = border_neighbours(v);
  if (border.empty()) return false;
  if (border.size() != 2) return true;
  const Vec2 x = material_point(*cloth_, v);
  const Vec2 e0 = material_point(*cloth_, border[0]) - x;
  const Vec2 e1 = material_point(*cloth_, border[1]) - x;
  // Straight through when the two border edges point in opposite directions.
  return dot(e0, e1) >= 0.0 ||
         std::abs(cross(e0, e1)) > kCollinearTolerance * material_length(e0) * material_length(e1);
}

std::vector<MeshEdge> TriangleTopology::edges() const {
  std::vector<MeshEdge> result;
  for (Index t = 0; t < cloth_->triangle_count(); ++t) {
    for (int k = 0; k < 3; ++k) {
      const Index a = cloth_->triangles[3 * t + k];
      const Index b = cloth_->triangles[3 * t + (k + 1) % 3];
      // An interior edge is listed from its a < b side; a border edge from its only side.
      if (a < b) {
        result.push_back({a, b});
      } else if (edge_triangles(b, a).left < 0) {
        result.push_back({b, a});
      }
    }
  }
  return result;
}

Index TriangleTopology::opposite_vertex(Index t, Index a, Index b) const {
  for (int k = 0; k < 3; ++k) {
    const Index v = cloth_->triangles[3 * t + k];
    if (v != a && v != b) return v;
  }
  throw std::invalid_argument("opposite_vertex: triangle " + std::to_string(t) + " has no third vertex");
}

bool TriangleTopology::is_conformal(Index v) const {
  return cloth_->attachments[v].kind != FeatureAttachment::Kind::none;
}

bool TriangleTopology::is_conformal_edge(Index a, Index b) const {
  if (!is_conformal(a) || !is_conformal(b)) return false;
  const FeatureAttachment& first = cloth_->attachments[a];
  const FeatureAttachment& second = cloth_->attachments[b];
  if (first == second) return true;
  const bool has_corner =
      first.kind == FeatureAttachment::Kind::corner || second.kind == FeatureAttachment::Kind::corner;
  return has_corner && first.obstacle == second.obstacle;
}

// --- Storage helpers ----------------------------------------------------------------------------

Index TriangleTopology::new_vertex(const VertexOrigin& origin) {
  ClothMesh& cloth = *cloth_;
  VertexOrigin made = origin;
  made.vertex = cloth.add_vertex({}, 0.0, 0.0);
  interpolate_into(cloth.positions, 3, made);
  interpolate_into(cloth.material, 2, made);
  interpolate_into(cloth.velocities, 3, made);
  interpolate_into(cloth.material_velocities, 2, made);
  incident_.emplace_back();
  created_.push_back(made);
  return made.vertex;
}

void TriangleTopology::detach(Index v, Index t) { std::erase(incident_[v], t); }

void TriangleTopology::set_triangle(Index t, Index a, Index b, Index c) {
  Index* v = &cloth_->triangles[3 * t];
  const std::array<Index, 3> next{a, b, c};
  for (int k = 0; k < 3; ++k) {
    if (std::find(next.begin(), next.end(), v[k]) == next.end()) detach(v[k], t);
  }
  for (const Index w : next) {
    if (std::find(v, v + 3, w) == v + 3) incident_[w].push_back(t);
  }
  std::copy(next.begin(), next.end(), v);
}

Index TriangleTopology::append_triangle(Index a, Index b, Index c) {
  const Index t = cloth_->triangle_count();
  cloth_->triangles.insert(cloth_->triangles.end(), {a, b, c});
  for (const Index w : {a, b, c}) incident_[w].push_back(t);
  return t;
}

void TriangleTopology::remove_triangle(Index t) {
  std::vector<Index>& triangles = cloth_->triangles;
  for (int k = 0; k < 3; ++k) detach(triangles[3 * t + k], t);
  const Index last = cloth_->triangle_count() - 1;
  if (t != last) {
    // The last triangle takes the freed slot, so triangle numbers stay dense.
    for (int k = 0; k < 3; ++k) {
      const Index w = triangles[3 * last + k];
      triangles[3 * t + k] = w;
      std::replace(incident_[w].begin(), incident_[w].end(), last, t);
    }
  }
  triangles.resize(triangles.size() - 3);
}

bool TriangleTopology::is_positive(Index a, Index b, Index c) const {
  const ClothMesh& cloth = *cloth_;
  return 0.5 * doubled_area(material_point(cloth, a), material_point(cloth, b), material_point(cloth, c)) >
         degenerate_area_;
}

// --- Operators ---------------------------------------------------------------------------------

SplitResult TriangleTopology::split_edge(Index a, Index b, double s) {
  require_vertex(*cloth_, a, "split_edge");
  require_vertex(*cloth_, b, "split_edge");
  if (!(s > 0.0 && s < 1.0)) {
    throw std::invalid_argument("split_edge: parameter " + std::to_string(s) + " is not inside (0, 1)");
  }
  const EdgeTriangles edge = edge_triangles(a, b);
  if (edge.left < 0 && edge.right < 0) return {EditStatus::not_an_edge};
  const Vec2 point = lerp(material_point(*cloth_, a), material_point(*cloth_, b), s);
  // Each triangle (first, second, opposite) of the edge becomes (first, p, opposite) and
  // (p, second, opposite).
  const auto halves_positive = [&](Index t, Index first, Index second) {
    if (t < 0) return true;
    const Vec2 opposite = material_point(*cloth_, opposite_vertex(t, a, b));
    return 0.5 * doubled_area(material_point(*cloth_, first), point, opposite) > degenerate_area_ &&
           0.5 * doubled_area(point, material_point(*cloth_, second), opposite) > degenerate_area_;
  };
  if (!halves_positive(edge.left, a, b) || !halves_positive(edge.right, b, a)) {
    return {EditStatus::degenerate_triangle};
  }
  const Index p = new_vertex({-1, VertexOrigin::Operation::edge_split, {a, b, -1}, {1.0 - s, s, 0.0}});
  const auto cut = [&](Index t, Index first, Index second) {
    if (t < 0) return;
    const Index opposite = opposite_vertex(t, a, b);
    set_triangle(t, first, p, opposite);
    append_triangle(p, second, opposite);
  };
  cut(edge.left, a, b);
  cut(edge.right, b, a);
  return {EditStatus::done, p};
}

SplitResult TriangleTopology::split_face(Index t, const std::array<double, 3>& barycentric) {
  if (t < 0 || t >= cloth_->triangle_count()) {
    throw std::invalid_argument("split_face: triangle " + std::to_string(t) + " is not in 0.." +
                                std::to_string(cloth_->triangle_count() - 1));
  }
  const double sum = barycentric[0] + barycentric[1] + barycentric[2];
  const bool non_negative = std::all_of(barycentric.begin(), barycentric.end(), [](double w) { return w >= 0.0; });
  if (!non_negative || !(std::abs(sum - 1.0) <= 1e-9)) {
    throw std::invalid_argument("split_face: barycentric coordinates must be non-negative and sum to 1");
  }
  const std::array<Index, 3> v{cloth_->triangles[3 * t], cloth_->triangles[3 * t + 1], cloth_->triangles[3 * t + 2]};
  Vec2 point;
  for (int k = 0; k < 3; ++k) point = point + barycentric[k] * material_point(*cloth_, v[k]);
  for (int k = 0; k < 3; ++k) {
    const double area =
        0.5 * doubled_area(material_point(*cloth_, v[k]), material_point(*cloth_, v[(k + 1) % 3]), point);
    if (!(area > degenerate_area_)) return {EditStatus::degenerate_triangle};
  }
  const Index p = new_vertex({-1, VertexOrigin::Operation::face_split, v, barycentric});
  set_triangle(t, v[0], v[1], p);
  append_triangle(v[1], v[2], p);
  append_triangle(v[2], v[0], p);
  return {EditStatus::done, p};
}

EditStatus TriangleTopology::collapse_refusal(Index removed, Index kept, const EdgeTriangles& edge) const {
  const FeatureAttachment& gone = cloth_->attachments[removed];
  const bool absorbed = gone.kind == FeatureAttachment::Kind::none ||
                        (gone.kind == FeatureAttachment::Kind::corner ? cloth_->attachments[kept] == gone
                                                                      : is_conformal_edge(removed, kept));
  if (!absorbed || is_border_corner(removed)) return EditStatus::protected_vertex;
  const bool border_edge = edge.left < 0 || edge.right < 0;
  if (is_border_vertex(removed) && !border_edge) return EditStatus::changes_border;

  // Link condition: the ends may share only the vertices opposite the edge, and each of those
  // must keep a triangle after the edge's triangles go.
  std::vector<Index> expected;
  for (const Index t : {edge.left, edge.right}) {
    if (t < 0) continue;
    const Index opposite = opposite_vertex(t, removed, kept);
    if (incident_[opposite].size() < 2) return EditStatus::changes_border;
    expected.push_back(opposite);
  }
  const std::vector<Index> around_kept = neighbours(kept);
  for (const Index w : neighbours(removed)) {
    const bool shared = std::find(around_kept.begin(), around_kept.end(), w) != around_kept.end();
    if (shared && std::find(expected.begin(), expected.end(), w) == expected.end()) {
      return EditStatus::breaks_manifold;
    }
  }

  for (const Index t : incident_[removed]) {
    if (t == edge.left || t == edge.right) continue;
    std::array<Index, 3> v{cloth_->triangles[3 * t], cloth_->triangles[3 * t + 1], cloth_->triangles[3 * t + 2]};
    std::replace(v.begin(), v.end(), removed, kept);
    if (!is_positive(v[0], v[1], v[2])) return EditStatus::inverts_triangle;
  }
  return EditStatus::done;
}

EditStatus TriangleTopology::collapse_edge(Index removed, Index kept) {
  require_vertex(*cloth_, removed, "collapse_edge");
  require_vertex(*cloth_, kept, "collapse_edge");
  if (removed == kept) throw std::invalid_argument("collapse_edge: the two ends are the same vertex");
  const EdgeTriangles edge = edge_triangles(removed, kept);
  if (edge.left < 0 && edge.right < 0) return EditStatus::not_an_edge;
  if (const EditStatus refusal = collapse_refusal(removed, kept, edge); refusal != EditStatus::done) return refusal;

  const std::vector<Index> star(incident_[removed].begin(), incident_[removed].end());
  for (const Index t : star) {
    if (t == edge.left || t == edge.right) continue;
    std::array<Index, 3> v{cloth_->triangles[3 * t], cloth_->triangles[3 * t + 1], cloth_->triangles[3 * t + 2]};
    std::replace(v.begin(), v.end(), removed, kept);
    set_triangle(t, v[0], v[1], v[2]);
  }
  // Remove the higher slot first: removing a triangle moves the last one into its slot.
  remove_triangle(std::max(edge.left, edge.right));
  if (std::min(edge.left, edge.right) >= 0) remove_triangle(std::min(edge.left, edge.right));
  return EditStatus::done;
}

EditStatus TriangleTopology::flip_edge(Index a, Index b) {
  require_vertex(*cloth_, a, "flip_edge");
  require_vertex(*cloth_, b, "flip_edge");
  const EdgeTriangles edge = edge_triangles(a, b);
  if (edge.left < 0 && edge.right < 0) return EditStatus::not_an_edge;
  if (edge.left < 0 || edge.right < 0) return EditStatus::border_edge;
  if (is_conformal_edge(a, b)) return EditStatus::conformal_edge;
  // (a, b, c) and (b, a, d) become (c, a, d) and (d, b, c): both positive iff the quad
  // a, d, b, c is strictly convex.
  const Index c = opposite_vertex(edge.left, a, b);
  const Index d = opposite_vertex(edge.right, a, b);
  if (!is_positive(c, a, d) || !is_positive(d, b, c)) return EditStatus::not_convex;
  if (is_edge(c, d)) return EditStatus::edge_exists;
  set_triangle(edge.left, c, a, d);
  set_triangle(edge.right, d, b, c);
  return EditStatus::done;
}

std::vector<Index> TriangleTopology::compact() {
  ClothMesh& cloth = *cloth_;
  std::vector<Index> new_number(static_cast<std::size_t>(cloth.vertex_count()), -1);
  Index kept = 0;
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    if (!incident_[v].empty()) new_number[v] = kept++;
  }
  const auto squeeze = [&](auto& values, std::size_t stride) {
    for (std::size_t v = 0; v < new_number.size(); ++v) {
      if (new_number[v] < 0) continue;
      const auto target = stride * static_cast<std::size_t>(new_number[v]);
      for (std::size_t k = 0; k < stride; ++k) values[target + k] = values[stride * v + k];
    }
    values.resize(stride * static_cast<std::size_t>(kept));
  };
  squeeze(cloth.positions, 3);
  squeeze(cloth.material, 2);
  squeeze(cloth.velocities, 3);
  squeeze(cloth.material_velocities, 2);
  squeeze(cloth.attachments, 1);
  squeeze(cloth.eulerian, 1);
  squeeze(incident_, 1);
  for (Index& v : cloth.triangles) v = new_number[v];
  created_.clear();
  return new_number;
}

Index euler_characteristic(const TriangleTopology& topology) {
  const ClothMesh& cloth = topology.cloth();
  Index vertices = 0;
  for (Index v = 0; v < cloth.vertex_count(); ++v) vertices += topology.incident_triangles(v).empty() ? 0 : 1;
  return vertices - static_cast<Index>(topology.edges().size()) + cloth.triangle_count();
}

}  // namespace cholsim::fem::cloth
