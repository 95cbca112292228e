#include "fem/cloth/cloth_mesh.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>

namespace cholsim::fem::cloth {

namespace {

std::string triangle_name(Index t) { return "triangle " + std::to_string(t); }

void require_sizes(const ClothMesh& cloth) {
  const auto n = static_cast<std::size_t>(cloth.vertex_count());
  const auto check = [&](std::size_t given, std::size_t expected, const char* what) {
    if (given != expected) {
      throw InvalidClothError("cloth: " + std::string(what) + " has " + std::to_string(given) +
                              " values, expected " + std::to_string(expected) + " for " + std::to_string(n) +
                              " vertices");
    }
  };
  if (cloth.material.size() % 2 != 0) throw InvalidClothError("cloth: material coordinates are not pairs");
  if (cloth.triangles.size() % 3 != 0) throw InvalidClothError("cloth: triangle list is not triples");
  check(cloth.positions.size(), 3 * n, "positions");
  check(cloth.velocities.size(), 3 * n, "velocities");
  check(cloth.material_velocities.size(), 2 * n, "material velocities");
  check(cloth.attachments.size(), n, "attachments");
  check(cloth.eulerian.size(), n, "Eulerian flags");
}

void require_finite(const ClothMesh& cloth) {
  const auto scan = [](const std::vector<double>& values, int stride, const char* what) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!std::isfinite(values[i])) {
        throw InvalidClothError("cloth: vertex " + std::to_string(i / static_cast<std::size_t>(stride)) + " has a " +
                                "non-finite " + what);
      }
    }
  };
  scan(cloth.positions, 3, "position");
  scan(cloth.material, 2, "material coordinate");
  scan(cloth.velocities, 3, "velocity");
  scan(cloth.material_velocities, 2, "material velocity");
}

void require_inside_domain(const ClothMesh& cloth) {
  const double slack_u = 1e-12 * std::max(1.0, cloth.material_width);
  const double slack_v = 1e-12 * std::max(1.0, cloth.material_height);
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    const double u = cloth.material[2 * v];
    const double w = cloth.material[2 * v + 1];
    if (u < -slack_u || u > cloth.material_width + slack_u || w < -slack_v || w > cloth.material_height + slack_v) {
      throw InvalidClothError("cloth: vertex " + std::to_string(v) + " has material coordinates (" +
                              std::to_string(u) + ", " + std::to_string(w) + ") outside the domain [0, " +
                              std::to_string(cloth.material_width) + "] x [0, " +
                              std::to_string(cloth.material_height) + "]");
    }
  }
}

/// Directed edge (a, b) of a triangle → the triangle, to find shared and misoriented edges.
using DirectedEdges = std::map<std::pair<Index, Index>, Index>;

DirectedEdges directed_edges(const ClothMesh& cloth) {
  DirectedEdges edges;
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    for (int k = 0; k < 3; ++k) {
      const Index a = cloth.triangles[3 * t + k];
      const Index b = cloth.triangles[3 * t + (k + 1) % 3];
      if (!edges.emplace(std::pair{a, b}, t).second) {
        throw InvalidClothError("cloth: " + triangle_name(t) + " and " + triangle_name(edges.at({a, b})) +
                                " share the edge (" + std::to_string(a) + ", " + std::to_string(b) +
                                ") with the same orientation (expected a consistently oriented manifold)");
      }
    }
  }
  return edges;
}

}  // namespace

Index ClothMesh::add_vertex(const Vec3& x, double material_u, double material_v) {
  const Index v = vertex_count();
  positions.insert(positions.end(), {x.x, x.y, x.z});
  material.insert(material.end(), {material_u, material_v});
  velocities.insert(velocities.end(), {0.0, 0.0, 0.0});
  material_velocities.insert(material_velocities.end(), {0.0, 0.0});
  attachments.emplace_back();
  eulerian.push_back(0);
  return v;
}

ClothMesh make_rectangle_cloth(double width, double height, int cells_u, int cells_v, const Vec3& origin,
                               const Vec3& axis_u, const Vec3& axis_v) {
  if (!(width > 0.0) || !(height > 0.0) || cells_u < 1 || cells_v < 1) {
    throw std::invalid_argument("make_rectangle_cloth: need positive sizes and at least one cell each way");
  }
  ClothMesh cloth;
  cloth.material_width = width;
  cloth.material_height = height;
  const Vec3 unit_u = normalized(axis_u);
  const Vec3 unit_v = normalized(axis_v);
  for (int j = 0; j <= cells_v; ++j) {
    for (int i = 0; i <= cells_u; ++i) {
      // The last row and column are set exactly to the domain's size, so the border lies on it.
      const double u = i == cells_u ? width : width * i / cells_u;
      const double w = j == cells_v ? height : height * j / cells_v;
      cloth.add_vertex(origin + u * unit_u + w * unit_v, u, w);
    }
  }
  const auto vertex = [&](int i, int j) { return static_cast<Index>(j * (cells_u + 1) + i); };
  for (int j = 0; j < cells_v; ++j) {
    for (int i = 0; i < cells_u; ++i) {
      const Index a = vertex(i, j), b = vertex(i + 1, j), c = vertex(i + 1, j + 1), d = vertex(i, j + 1);
      if ((i + j) % 2 == 0) {
        cloth.triangles.insert(cloth.triangles.end(), {a, b, c, a, c, d});
      } else {
        cloth.triangles.insert(cloth.triangles.end(), {a, b, d, b, c, d});
      }
    }
  }
  return cloth;
}

double material_area(const ClothMesh& cloth, Index t) {
  const Index a = cloth.triangles[3 * t], b = cloth.triangles[3 * t + 1], c = cloth.triangles[3 * t + 2];
  const double ux = cloth.material[2 * b] - cloth.material[2 * a];
  const double uy = cloth.material[2 * b + 1] - cloth.material[2 * a + 1];
  const double vx = cloth.material[2 * c] - cloth.material[2 * a];
  const double vy = cloth.material[2 * c + 1] - cloth.material[2 * a + 1];
  return 0.5 * (ux * vy - uy * vx);
}

void validate_cloth(const ClothMesh& cloth, double min_area) {
  require_sizes(cloth);
  require_finite(cloth);
  const Index n = cloth.vertex_count();
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    const Index* v = &cloth.triangles[3 * t];
    for (int k = 0; k < 3; ++k) {
      if (v[k] < 0 || v[k] >= n) {
        throw InvalidClothError("cloth: " + triangle_name(t) + " names vertex " + std::to_string(v[k]) +
                                ", expected 0.." + std::to_string(n - 1));
      }
    }
    if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2]) {
      throw InvalidClothError("cloth: " + triangle_name(t) + " repeats a vertex");
    }
    const double area = material_area(cloth, t);
    if (!(area > min_area)) {
      throw InvalidClothError("cloth: " + triangle_name(t) + " has material area " + std::to_string(area) +
                              ", expected more than " + std::to_string(min_area) +
                              " (counter-clockwise, not degenerate)");
    }
  }
  directed_edges(cloth);
  require_inside_domain(cloth);
}

std::vector<unsigned char> border_vertices(const ClothMesh& cloth) {
  const DirectedEdges edges = directed_edges(cloth);
  std::vector<unsigned char> border(static_cast<std::size_t>(cloth.vertex_count()), 0);
  for (const auto& [edge, triangle] : edges) {
    if (!edges.contains({edge.second, edge.first})) {
      border[edge.first] = 1;
      border[edge.second] = 1;
    }
  }
  return border;
}

}  // namespace cholsim::fem::cloth
