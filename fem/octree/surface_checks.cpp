#include "fem/octree/surface_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace cholsim::fem::octree {
namespace {

void check_coordinates(const SurfaceMesh& surface) {
  for (std::size_t i = 0; i < surface.positions.size(); ++i) {
    if (!std::isfinite(surface.positions[i])) {
      throw OctreeInputError("octree: vertex " + std::to_string(i / 3) + " has a coordinate that is NaN or Inf");
    }
  }
}

void check_triangle_vertices(const SurfaceMesh& surface) {
  const Index nodes = surface.node_count();
  for (Index t = 0; t < surface.triangle_count(); ++t) {
    const Index* v = &surface.triangles[3 * static_cast<std::size_t>(t)];
    for (int k = 0; k < 3; ++k) {
      if (v[k] < 0 || v[k] >= nodes) {
        throw OctreeInputError("octree: triangle " + std::to_string(t) + " names vertex " + std::to_string(v[k]) +
                               " but the mesh has " + std::to_string(nodes) + " vertices");
      }
    }
    if (v[0] == v[1] || v[1] == v[2] || v[2] == v[0]) {
      throw OctreeInputError("octree: triangle " + std::to_string(t) + " repeats a vertex (" + std::to_string(v[0]) +
                             ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + ")");
    }
  }
}

/// A triangle edge as (smaller vertex, larger vertex) plus whether the triangle runs it
/// from the larger to the smaller.
struct DirectedEdge {
  Index low;
  Index high;
  bool reversed;
  friend bool operator<(const DirectedEdge& a, const DirectedEdge& b) {
    return a.low != b.low ? a.low < b.low : (a.high != b.high ? a.high < b.high : a.reversed < b.reversed);
  }
};

std::vector<DirectedEdge> sorted_edges(const SurfaceMesh& surface) {
  std::vector<DirectedEdge> edges;
  edges.reserve(surface.triangles.size());
  for (std::size_t t = 0; t < surface.triangles.size(); t += 3) {
    for (std::size_t k = 0; k < 3; ++k) {
      const Index from = surface.triangles[t + k];
      const Index to = surface.triangles[t + (k + 1) % 3];
      edges.push_back({std::min(from, to), std::max(from, to), from > to});
    }
  }
  std::sort(edges.begin(), edges.end());
  return edges;
}

std::string edge_name(const DirectedEdge& e) {
  return "edge (" + std::to_string(e.low) + ", " + std::to_string(e.high) + ")";
}

/// Closed and manifold: every edge in exactly two triangles; consistently oriented: those two
/// run it in opposite directions.
void check_edges(const SurfaceMesh& surface) {
  const std::vector<DirectedEdge> edges = sorted_edges(surface);
  for (std::size_t first = 0; first < edges.size();) {
    std::size_t last = first + 1;
    while (last < edges.size() && edges[last].low == edges[first].low && edges[last].high == edges[first].high) ++last;
    const std::size_t sharing = last - first;
    if (sharing != 2) {
      throw OctreeInputError("octree: surface is not closed and manifold: " + edge_name(edges[first]) +
                             " is shared by " + std::to_string(sharing) + " triangle" + (sharing == 1 ? "" : "s") +
                             " (every edge must be shared by exactly 2)");
    }
    if (edges[first].reversed == edges[first + 1].reversed) {
      throw OctreeInputError("octree: triangles are inconsistently oriented: both triangles at " +
                             edge_name(edges[first]) + " run it in the same direction");
    }
    first = last;
  }
}

}  // namespace

void check_closed_surface(const SurfaceMesh& surface) {
  if (surface.triangle_count() == 0 || surface.node_count() == 0) {
    throw OctreeInputError("octree: the surface mesh is empty (no triangles)");
  }
  check_coordinates(surface);
  check_triangle_vertices(surface);
  check_edges(surface);
}

}  // namespace cholsim::fem::octree
