#pragma once
// A triangle cloth with both coordinates of Eulerian-on-Lagrangian cloth (seed 002 §2.3–2.4):
// each vertex has a world position x ∈ R³ (Lagrangian DOFs) and a material position X ∈ R²
// (Eulerian DOFs, the "texture coordinates" of the cloth). For a Lagrangian vertex X is fixed;
// an EOL vertex sits on an obstacle feature (a box edge or corner, a wire, a nail tip) and
// the material slides through it as X moves.
//
// Flat structure-of-arrays like the rest of fem/: vertex v's x at [3v, 3v+3), X at
// [2v, 2v+2); triangle t's vertices at [3t, 3t+3), counter-clockwise in material space.
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "linalg/index_types.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem::cloth {

using linalg::Index;
using linalg::Vec3;

/// The obstacle feature a vertex is attached to (conformal vertices, §2.6.1).
struct FeatureAttachment {
  enum class Kind : unsigned char {
    none,    ///< a free (Lagrangian, non-conformal) vertex
    edge,    ///< on a box edge or along a wire: `feature` is the edge's index in its obstacle
    corner,  ///< on a box corner or a nail tip: `feature` is the corner's index
  };
  Kind kind = Kind::none;
  int obstacle = -1;  ///< index of the obstacle in the scene
  int feature = -1;   ///< edge or corner index inside that obstacle
  friend bool operator==(const FeatureAttachment&, const FeatureAttachment&) = default;
};

struct ClothMesh {
  std::vector<double> positions;            ///< x, 3 per vertex (world, m)
  std::vector<double> material;             ///< X, 2 per vertex (material space, m)
  std::vector<Index> triangles;             ///< 3 per triangle, counter-clockwise in X
  std::vector<double> velocities;           ///< ẋ, 3 per vertex
  std::vector<double> material_velocities;  ///< Ẋ, 2 per vertex (zero on Lagrangian vertices)
  std::vector<FeatureAttachment> attachments;  ///< per vertex; kind none on free vertices
  /// Per vertex: 1 when the vertex carries Eulerian DOFs (an EOL vertex), 0 otherwise. A
  /// conformal Lagrangian simulation attaches vertices to features without making them EOL.
  std::vector<unsigned char> eulerian;
  /// The material domain [0, width] × [0, height] that X must stay inside.
  double material_width = 1.0;
  double material_height = 1.0;

  [[nodiscard]] Index vertex_count() const { return static_cast<Index>(material.size() / 2); }
  [[nodiscard]] Index triangle_count() const { return static_cast<Index>(triangles.size() / 3); }
  [[nodiscard]] Vec3 position(Index v) const {
    return {positions[3 * v], positions[3 * v + 1], positions[3 * v + 2]};
  }
  [[nodiscard]] Vec3 velocity(Index v) const {
    return {velocities[3 * v], velocities[3 * v + 1], velocities[3 * v + 2]};
  }
  [[nodiscard]] bool is_eulerian(Index v) const { return eulerian[v] != 0; }
  /// Appends a vertex with zero velocities, no attachment and no Eulerian DOFs; returns it.
  Index add_vertex(const Vec3& x, double material_u, double material_v);

  friend bool operator==(const ClothMesh&, const ClothMesh&) = default;
};

/// A cloth that cannot be simulated; what() names the element and what was expected.
class InvalidClothError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A width × height sheet of (cells_u × cells_v) squares, each cut into two triangles along
/// alternating diagonals ("regular"), placed in the world by x = origin + u·axis_u + v·axis_v.
ClothMesh make_rectangle_cloth(double width, double height, int cells_u, int cells_v, const Vec3& origin,
                               const Vec3& axis_u, const Vec3& axis_v);

/// Signed material-space area of triangle t (positive when counter-clockwise).
double material_area(const ClothMesh& cloth, Index t);

/// Throws InvalidClothError on: array sizes that disagree, out-of-range or repeated vertex
/// indices, a triangle with material area ≤ `min_area`, an edge shared by more than two
/// triangles or by two triangles with the same orientation, NaN/Inf coordinates, or a
/// material coordinate outside the domain (by more than 1e-12 of its size).
void validate_cloth(const ClothMesh& cloth, double min_area = 0.0);

/// Per vertex: 1 when it lies on the cloth border (an edge with one triangle), else 0.
std::vector<unsigned char> border_vertices(const ClothMesh& cloth);

}  // namespace cholsim::fem::cloth
