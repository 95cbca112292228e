#pragma once
// The checks a triangle mesh must pass before an octree is built around it (seed 001 §6):
// inside/outside is only defined for a closed, consistently oriented 2-manifold surface.
#include <stdexcept>

#include "fem/mesh/tet_mesh.hpp"

namespace cholsim::fem::octree {

/// A surface an octree cannot be built from; what() says which vertex, edge or triangle.
class OctreeInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws OctreeInputError for: no triangles, coordinates that are NaN or Inf, vertex
/// numbers out of range, a triangle repeating a vertex, an edge not shared by exactly two
/// triangles (open or non-manifold surface; the message names the edge by its vertex numbers
/// and the count), and an edge both of whose triangles run it in the same direction
/// (inconsistent orientation).
void check_closed_surface(const SurfaceMesh& surface);

}  // namespace cholsim::fem::octree
