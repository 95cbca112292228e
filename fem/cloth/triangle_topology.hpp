#pragma once
// Edge adjacency of a ClothMesh and the local operators a conformal remesher needs (seed 002
// §2.6.1): split an edge, split a face, collapse an edge, flip an edge. Every operator keeps
// the mesh a consistently oriented 2-manifold whose triangles have positive material area,
// or refuses and leaves the mesh untouched, returning why.
//
// The adjacency is one list of incident triangles per vertex, kept up to date by the
// operators; an edge (a, b) is found in a's list, so with the small valences of a cloth the
// queries cost a few comparisons and the operators touch only the stars they change.
// Collapses leave the removed vertex unreferenced (its arrays stay in place, so vertex
// numbers do not move while a remesher works); compact() drops such vertices at the end.
#include <array>
#include <span>
#include <string_view>
#include <vector>

#include "fem/cloth/cloth_mesh.hpp"
#include "fem/cloth/eol_mapping.hpp"

namespace cholsim::fem::cloth {

/// The length of a material-space vector.
double material_length(const Vec2& d);

/// Why an operator did nothing (`done` when it did its work).
enum class EditStatus : unsigned char {
  done,
  not_an_edge,          ///< the two vertices share no triangle
  border_edge,          ///< a flip of an edge with one triangle
  conformal_edge,       ///< a flip of an edge that lies on an obstacle feature
  not_convex,           ///< a flip whose quad is not strictly convex in material space
  edge_exists,          ///< a flip whose new diagonal is already an edge
  protected_vertex,     ///< a collapse would remove a cloth corner or a conformal vertex that must stay
  changes_border,       ///< a collapse would move or pinch the cloth border
  breaks_manifold,      ///< a collapse would glue two triangles' edges (link condition)
  inverts_triangle,     ///< a collapse would invert or degenerate a triangle in material space
  degenerate_triangle,  ///< a split point so close to a corner that a new triangle has no area
};
std::string_view to_string(EditStatus status);

/// A created vertex and where it came from: vertex = Σ weights[i] · parents[i] (x, X, ẋ, Ẋ),
/// for the velocity transfer (seed 002 §2.6.2) and the remeshing statistics.
struct VertexOrigin {
  enum class Operation : unsigned char { edge_split, face_split };
  Index vertex = -1;
  Operation operation = Operation::edge_split;
  std::array<Index, 3> parents{-1, -1, -1};  ///< two parents for an edge split (parents[2] = -1)
  std::array<double, 3> weights{};
  [[nodiscard]] int parent_count() const { return operation == Operation::edge_split ? 2 : 3; }
};

/// The result of a split: the new vertex, or -1 with the reason it was refused.
struct SplitResult {
  EditStatus status = EditStatus::done;
  Index vertex = -1;
};

/// The one or two triangles of an edge (a, b): `left` holds the directed edge a → b, `right`
/// holds b → a; -1 where there is none.
struct EdgeTriangles {
  Index left = -1;
  Index right = -1;
};

/// An undirected edge, a < b.
struct MeshEdge {
  Index a = -1;
  Index b = -1;
};

class TriangleTopology {
 public:
  /// Builds the adjacency of `cloth`, which must outlive this object; while it lives, change
  /// the cloth's triangles only through the operators below (positions, velocities and
  /// attachments may be changed freely). Throws InvalidClothError when the cloth is invalid.
  explicit TriangleTopology(ClothMesh& cloth);

  [[nodiscard]] const ClothMesh& cloth() const { return *cloth_; }
  [[nodiscard]] ClothMesh& cloth() { return *cloth_; }

  // --- Queries ---------------------------------------------------------------------------
  [[nodiscard]] std::span<const Index> incident_triangles(Index v) const { return incident_[v]; }
  /// The vertices joined to v by an edge, each once.
  [[nodiscard]] std::vector<Index> neighbours(Index v) const;
  [[nodiscard]] EdgeTriangles edge_triangles(Index a, Index b) const;
  [[nodiscard]] bool is_edge(Index a, Index b) const;
  [[nodiscard]] bool is_border_edge(Index a, Index b) const;
  [[nodiscard]] bool is_border_vertex(Index v) const;
  /// A border vertex where the border turns (seed 002 §2.3: cloth corners stay Lagrangian and
  /// are never removed), or one with more than two border edges.
  [[nodiscard]] bool is_border_corner(Index v) const;
  /// The other ends of v's border edges (two on a manifold border, none inside).
  [[nodiscard]] std::vector<Index> border_neighbours(Index v) const;
  /// Every edge once, a < b.
  [[nodiscard]] std::vector<MeshEdge> edges() const;
  /// The vertex of triangle t that is neither a nor b.
  [[nodiscard]] Index opposite_vertex(Index t, Index a, Index b) const;

  // --- Conformal features (seed 002 §2.6.1) ------------------------------------------------
  [[nodiscard]] bool is_conformal(Index v) const;
  /// Both ends on the same obstacle feature: the same attachment, or one end on a corner and
  /// the other on the same obstacle (the box edges that meet at that corner).
  [[nodiscard]] bool is_conformal_edge(Index a, Index b) const;

  // --- Operators ----------------------------------------------------------------------------
  /// Splits edge (a, b) at a + s (b − a), 0 < s < 1: one new vertex, each triangle of the
  /// edge cut in two. The new vertex interpolates x, X, ẋ and Ẋ and has no attachment.
  SplitResult split_edge(Index a, Index b, double s);
  /// Splits triangle t at the barycentric point Σ barycentric[i] · vertex i (all > 0, sum 1)
  /// into three triangles.
  SplitResult split_face(Index t, const std::array<double, 3>& barycentric);
  /// Moves `removed` onto `kept` and deletes the edge's triangles. Refused when `removed` is
  /// a cloth corner, a conformal vertex not on `kept`'s feature, or a border vertex not
  /// sliding along a border edge; when the link condition fails; or when a remaining
  /// triangle would get material area ≤ the degeneracy bound.
  EditStatus collapse_edge(Index removed, Index kept);
  /// Replaces edge (a, b) by the other diagonal of its two triangles. Refused on border and
  /// conformal edges and when the quad is not strictly convex in material space.
  EditStatus flip_edge(Index a, Index b);
  /// Removes the vertices no triangle names (those of collapses) from every per-vertex array,
  /// renumbering the rest in order; returns the new number of each old vertex (-1: removed).
  /// Clears the log of created vertices, whose numbers it would invalidate.
  std::vector<Index> compact();

  /// Vertices created since construction or the last clear/compact, in order.
  [[nodiscard]] const std::vector<VertexOrigin>& created_vertices() const { return created_; }
  void clear_created_vertices() { created_.clear(); }
  /// Material area a triangle must exceed to be kept: 1e-12 of the domain's area scale.
  [[nodiscard]] double degenerate_area() const { return degenerate_area_; }

 private:
  Index new_vertex(const VertexOrigin& origin);
  void set_triangle(Index t, Index a, Index b, Index c);
  Index append_triangle(Index a, Index b, Index c);
  void remove_triangle(Index t);
  void detach(Index v, Index t);
  [[nodiscard]] bool is_positive(Index a, Index b, Index c) const;
  [[nodiscard]] EditStatus collapse_refusal(Index removed, Index kept, const EdgeTriangles& edge) const;

  ClothMesh* cloth_;
  std::vector<std::vector<Index>> incident_;
  std::vector<VertexOrigin> created_;
  double degenerate_area_ = 0.0;
};

/// Euler characteristic V − E + F of the referenced part of the mesh (1 for a disk).
Index euler_characteristic(const TriangleTopology& topology);

}  // namespace cholsim::fem::cloth
