#pragma once
// The generalized coordinates of an EOL cloth (seed 002 §2.3): q = (x of every vertex, then X of
// every EOL vertex). Vertex v's Lagrangian DOFs sit at 3v..3v+2; the k-th EOL vertex (in vertex
// order) has its Eulerian DOFs at 3n + 2k and 3n + 2k + 1. A Lagrangian vertex has no Eulerian
// DOFs: its material coordinates are fixed.
#include <span>
#include <vector>

#include "fem/cloth/cloth_mesh.hpp"

namespace cholsim::fem::cloth {

struct ClothDofs {
  Index vertex_count = 0;
  Index size = 0;  ///< 3·vertex_count + 2·(EOL vertices)
  /// Per vertex: the first of its two Eulerian DOFs, −1 for a Lagrangian vertex.
  std::vector<Index> eulerian_offset;

  [[nodiscard]] static Index lagrangian_offset(Index v) { return 3 * v; }
  [[nodiscard]] bool is_eulerian(Index v) const { return eulerian_offset[static_cast<std::size_t>(v)] >= 0; }
  [[nodiscard]] Index eulerian_vertex_count() const { return (size - 3 * vertex_count) / 2; }

  /// The numbering of `cloth`'s EOL flags. Throws std::invalid_argument when the cloth does not
  /// have one flag per vertex.
  static ClothDofs of(const ClothMesh& cloth);
};

/// q̇ = (ẋ of every vertex, Ẋ of every EOL vertex) from cloth.velocities and
/// cloth.material_velocities. Throws std::invalid_argument when `dofs` is not the cloth's.
std::vector<double> gather_velocities(const ClothMesh& cloth, const ClothDofs& dofs);

/// The inverse: writes q̇ into cloth.velocities and cloth.material_velocities (a Lagrangian
/// vertex's Ẋ becomes zero). Throws std::invalid_argument on a size that does not match.
void scatter_velocities(std::span<const double> generalized_velocities, const ClothDofs& dofs, ClothMesh& cloth);

}  // namespace cholsim::fem::cloth
