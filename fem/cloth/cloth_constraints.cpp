#include "fem/cloth/cloth_constraints.hpp"

#include <algorithm>
#include <cmath>

namespace cholsim::fem::cloth {

namespace {

using Kind = FeatureAttachment::Kind;

/// Material coordinates this close to the domain's border are on it.
double border_tolerance(const ClothMesh& cloth) {
  return 1e-9 * std::max(cloth.material_width, cloth.material_height);
}

/// Which material axes the border fixes at vertex v: bit 0 for u (on u = 0 or u = width),
/// bit 1 for v.
int border_axes(const ClothMesh& cloth, Index v) {
  const double tol = border_tolerance(cloth);
  const double u = cloth.material[2 * v], w = cloth.material[2 * v + 1];
  int axes = 0;
  if (u <= tol || u >= cloth.material_width - tol) axes |= 1;
  if (w <= tol || w >= cloth.material_height - tol) axes |= 2;
  return axes;
}

/// Rows accumulate as triplets and become CSC at the end.
struct RowBuilder {
  linalg::Triplets triplets;
  std::vector<double> rhs;
  Index add_row(double value) {
    rhs.push_back(value);
    return static_cast<Index>(rhs.size()) - 1;
  }
  void add_lagrangian(Index row, Index v, const Vec3& n) {
    for (int k = 0; k < 3; ++k) {
      if (n[k] != 0.0) triplets.add(row, 3 * v + k, n[k]);
    }
  }
  linalg::CscMatrix matrix(Index columns) const {
    return linalg::csc_from_triplets(static_cast<Index>(rhs.size()), columns, triplets);
  }
};

struct Builder {
  const ClothMesh& cloth;
  const ClothDofs& dofs;
  double h;
  RowBuilder equality, inequality;
  ClothConstraints out;

  void inequality_row(Index v, int obstacle, const Vec3& n, double rhs, RowKind kind) {
    const Index row = inequality.add_row(rhs);
    inequality.add_lagrangian(row, v, n);
    out.inequality_vertex.push_back(v);
    out.inequality_kind.push_back(kind);
    out.inequality_normal.push_back(n);
    out.inequality_obstacle.push_back(obstacle);
  }
  void material_row(Index v, int axis, double sign, double rhs, bool is_equality) {
    const Index column = dofs.eulerian_offset[static_cast<std::size_t>(v)] + axis;
    if (is_equality) {
      equality.triplets.add(equality.add_row(rhs), column, sign);
      return;
    }
    inequality.triplets.add(inequality.add_row(rhs), column, sign);
    out.inequality_vertex.push_back(v);
    out.inequality_kind.push_back(RowKind::material_domain);
    out.inequality_normal.push_back({});
    out.inequality_obstacle.push_back(-1);
  }
};

/// Keeps X of an EOL vertex inside the material domain over the step: X + hẊ within
/// [0, size] on each axis the border does not already fix. Only near the border (within a
/// twentieth of the domain), where a step could cross it.
void add_material_domain_rows(Builder& b, Index v, int fixed_axes) {
  const double sizes[2] = {b.cloth.material_width, b.cloth.material_height};
  for (int axis = 0; axis < 2; ++axis) {
    if (fixed_axes & (1 << axis)) continue;
    const double x = b.cloth.material[2 * v + axis];
    if (x < 0.05 * sizes[axis]) b.material_row(v, axis, 1.0, -x / b.h, false);
    if (sizes[axis] - x < 0.05 * sizes[axis]) b.material_row(v, axis, -1.0, -(sizes[axis] - x) / b.h, false);
  }
}

/// Keeps every triangle with EOL vertices from inverting in material space over the step:
/// A(X + hẊ) ≥ ¼A(X). The material area is linear in each vertex's X (∂A/∂X_a = ½ perp(X_b −
/// X_c)), so the row is exact for one EOL vertex and first-order for more. The thesis slows the
/// step down where remeshing cannot avoid such triangles (§2.6.1); a row lets the QP do it.
void add_material_area_rows(Builder& b) {
  const ClothMesh& cloth = b.cloth;
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    const Index* v = &cloth.triangles[3 * t];
    if (!cloth.is_eulerian(v[0]) && !cloth.is_eulerian(v[1]) && !cloth.is_eulerian(v[2])) continue;
    const double area = material_area(cloth, t);
    const Index row = b.inequality.add_row(-0.75 * area / b.h);
    for (int k = 0; k < 3; ++k) {
      if (!cloth.is_eulerian(v[k])) continue;
      const Index next = v[(k + 1) % 3], previous = v[(k + 2) % 3];
      const double du = cloth.material[2 * next] - cloth.material[2 * previous];
      const double dv = cloth.material[2 * next + 1] - cloth.material[2 * previous + 1];
      const Index column = b.dofs.eulerian_offset[static_cast<std::size_t>(v[k])];
      b.inequality.triplets.add(row, column, 0.5 * dv);
      b.inequality.triplets.add(row, column + 1, -0.5 * du);
    }
    b.out.inequality_vertex.push_back(v[0]);
    b.out.inequality_kind.push_back(RowKind::material_domain);
    b.out.inequality_normal.push_back({});
    b.out.inequality_obstacle.push_back(-1);
  }
}

void add_eulerian_rows(Builder& b, Index v) {
  const int fixed = border_axes(b.cloth, v);
  if (fixed == 3) {  // a corner of the cloth carries no Eulerian motion (§2.8.1)
    b.material_row(v, 0, 1.0, 0.0, true);
    b.material_row(v, 1, 1.0, 0.0, true);
    return;
  }
  const auto direction = eulerian_constraint_direction(b.cloth, v);
  const Index row = b.equality.add_row(0.0);
  const Index column = b.dofs.eulerian_offset[static_cast<std::size_t>(v)];
  b.equality.triplets.add(row, column, direction[0]);
  b.equality.triplets.add(row, column + 1, direction[1]);
  add_material_domain_rows(b, v, fixed);
}

void add_feature_rows(Builder& b, const ClothObstacles& obstacles, Index v, double t, const ConstraintOptions& options) {
  const FeatureAttachment& a = b.cloth.attachments[static_cast<std::size_t>(v)];
  std::array<Vec3, 3> normals{};
  int count = 0;
  if (a.kind == Kind::edge) {
    const FeatureEdge edge = obstacles.box_edge(a.obstacle, a.feature, t);
    normals = {edge.normal_1, edge.normal_2, Vec3{}};
    count = 2;
  } else {
    const FeatureCorner corner = obstacles.corner(a.obstacle, a.feature, t);
    normals = corner.normals;
    count = corner.normal_count;
  }
  // From the feature's point nearest the vertex (EOL vertices sit on it).
  const Vec3 p = b.cloth.position(v);
  const Vec3 offset = p - nearest_feature_point(obstacles, a.kind == Kind::edge, a.obstacle, a.feature, p, t);
  const Vec3 obstacle_velocity = obstacles.velocity(a.obstacle, t);
  // As for a face contact: the gap along n plus h·nᵀ(ẋ − v_box) stays ≥ 0.
  const auto row = [&](const Vec3& n) {
    b.inequality_row(v, a.obstacle, n, dot(n, obstacle_velocity) - dot(n, offset) / b.h, RowKind::feature_normal);
  };
  const bool eulerian = b.cloth.is_eulerian(v);
  if (eulerian || options.cone) {
    for (int k = 0; k < count; ++k) row(normals[static_cast<std::size_t>(k)]);
  } else {  // Fig. 2.3(e): the averaged normal treats the feature as smooth
    Vec3 sum;
    for (int k = 0; k < count; ++k) sum += normals[static_cast<std::size_t>(k)];
    row(normalized(sum));
  }
  if (eulerian && a.kind == Kind::edge) add_eulerian_rows(b, v);
}

}  // namespace

std::array<double, 2> eulerian_constraint_direction(const ClothMesh& cloth, Index v) {
  const FeatureAttachment& a = cloth.attachments[static_cast<std::size_t>(v)];
  if (a.kind != Kind::edge) return {0.0, 0.0};
  const int fixed = border_axes(cloth, v);
  if (fixed == 1) return {1.0, 0.0};  // b̄, Fig. 2.4a: the material normal of the border
  if (fixed == 2) return {0.0, 1.0};
  // t̄, Fig. 2.4b: the average of the material tangents of the conformal edges at v (both
  // oriented the same way along the feature).
  double tu = 0.0, tv = 0.0;
  int found = 0;
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    for (int k = 0; k < 3; ++k) {
      if (cloth.triangles[3 * t + k] != v) continue;
      const Index w = cloth.triangles[3 * t + (k + 1) % 3];  // each neighbour once: the next vertex
      if (!(cloth.attachments[static_cast<std::size_t>(w)] == a)) continue;
      double du = cloth.material[2 * w] - cloth.material[2 * v];
      double dv = cloth.material[2 * w + 1] - cloth.material[2 * v + 1];
      const double length = std::hypot(du, dv);
      if (length <= 0.0) continue;
      du /= length;
      dv /= length;
      if (found > 0 && du * tu + dv * tv < 0.0) {
        du = -du;
        dv = -dv;
      }
      tu += du;
      tv += dv;
      ++found;
    }
  }
  const double length = std::hypot(tu, tv);
  if (found == 0 || length <= 0.0) return {0.0, 0.0};
  return {tu / length, tv / length};
}

ClothConstraints build_constraints(const ClothMesh& cloth, const ClothDofs& dofs, const ClothObstacles& obstacles,
                                   std::span<const VertexContact> contacts, std::span<const ScriptedVertex> scripted,
                                   double t, double h, const ConstraintOptions& options) {
  Builder b{cloth, dofs, h, {}, {}, {}};
  for (const ScriptedVertex& s : scripted) {
    for (int k = 0; k < 3; ++k) {
      if (!s.axes[static_cast<std::size_t>(k)]) continue;
      b.equality.triplets.add(b.equality.add_row(s.velocity[k]), 3 * s.vertex + k, 1.0);
    }
  }
  for (const VertexContact& c : contacts) {
    const double rhs = dot(c.normal, obstacles.velocity(c.obstacle, t)) - c.gap / h;
    b.inequality_row(c.vertex, c.obstacle, c.normal, rhs, RowKind::face_contact);
  }
  if (options.method != ClothMethod::lagrangian_regular) {
    for (Index v = 0; v < cloth.vertex_count(); ++v) {
      if (cloth.attachments[static_cast<std::size_t>(v)].kind != Kind::none) add_feature_rows(b, obstacles, v, t, options);
    }
  }
  if (options.method == ClothMethod::eol) add_material_area_rows(b);
  b.out.equality = b.equality.matrix(dofs.size);
  b.out.equality_rhs = std::move(b.equality.rhs);
  b.out.inequality = b.inequality.matrix(dofs.size);
  b.out.inequality_rhs = std::move(b.inequality.rhs);
  return std::move(b.out);
}

}  // namespace cholsim::fem::cloth
