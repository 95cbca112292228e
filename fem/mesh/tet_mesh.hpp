#pragma once
// Tetrahedral volume meshes and triangle surface meshes, and the checks a mesh must pass
// before a simulation uses it.
//
// The volume mesh type is linalg::TetMesh (flat structure-of-arrays: positions 3·nodes,
// tets 4·tets) so that the generators, AssemblyPattern and the simulators share one layout.
// Every tet is expected positively oriented: det[x₁−x₀, x₂−x₀, x₃−x₀] > 0.
#include <array>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "linalg/generators.hpp"
#include "linalg/index_types.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

using linalg::Index;
using linalg::TetMesh;
using linalg::Vec3;

/// Node `node`'s point in a flat position array (3 per node, node v at [3v, 3v+3)): the layout
/// of TetMesh, SurfaceMesh and every simulation's state.
inline Vec3 node_position(std::span<const double> positions, Index node) {
  const auto first = static_cast<std::size_t>(3 * node);
  return {positions[first], positions[first + 1], positions[first + 2]};
}

/// A triangle surface mesh (obstacles, tetgen input, the boundary of a tet mesh).
struct SurfaceMesh {
  std::vector<double> positions;  ///< 3·node_count, node v at [3v, 3v+3)
  std::vector<Index> triangles;   ///< 3·triangle_count, counter-clockwise seen from outside
  [[nodiscard]] Index node_count() const { return static_cast<Index>(positions.size() / 3); }
  [[nodiscard]] Index triangle_count() const { return static_cast<Index>(triangles.size() / 3); }
};

/// A mesh that cannot be simulated (inverted or zero-volume tets, out-of-range indices,
/// non-manifold boundary). what() names the source, the offending element and what was
/// expected.
class InvalidMeshError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What validate_tet_mesh found besides hard errors.
struct MeshCheck {
  Index node_count = 0;
  Index tet_count = 0;
  Index unused_nodes = 0;           ///< nodes no tet references (a warning, not an error)
  Index boundary_triangles = 0;     ///< faces used by exactly one tet
  double min_volume = 0.0;          ///< smallest tet volume
  double mean_volume = 0.0;
  double total_volume = 0.0;
  std::vector<std::string> warnings;  ///< one line each, ready to print
};

/// Checks `mesh` and throws InvalidMeshError, naming `source` (a file name or "builtin box"),
/// for: a tet index outside 0..node_count-1, a repeated node within a tet, an inverted or
/// zero-volume tet (|volume| ≤ 10⁻¹² × the mean volume), a face shared by more than two tets
/// (non-manifold) or by two tets on the same side of it (overlap), non-finite coordinates, or
/// no tets at all. Unused nodes and slivers (smallest volume < 10⁻³ × mean) are reported as
/// warnings. Sorts all 4·tets faces: well under a second for 300K tets.
MeshCheck validate_tet_mesh(const TetMesh& mesh, std::string_view source);

/// The faces used by exactly one tet, oriented outward, as a surface over the same node
/// numbering (positions copied).
SurfaceMesh boundary_surface(const TetMesh& mesh);

/// `mesh` without the nodes no tet references (they would get no mass and make the system
/// singular), tets renumbered accordingly; `kept_nodes`, when given, receives the old index
/// of every new node.
TetMesh remove_unused_nodes(const TetMesh& mesh, std::vector<Index>* kept_nodes = nullptr);

/// Axis-aligned bounding box {min x, min y, min z, max x, max y, max z}.
std::array<double, 6> bounding_box(const std::vector<double>& positions);

}  // namespace cholsim::fem
