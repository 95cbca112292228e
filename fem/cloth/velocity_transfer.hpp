#pragma once
// Velocities of the vertices a remesher creates or changes (seed 002 §2.6.2). An EOL vertex
// carries a Lagrangian velocity ẋ and an Eulerian velocity Ẋ whose world velocity is
// ẋʷ = ẋ − F Ẋ (eq. 2.2 at a node, J = (I  −F)); every rule below keeps the world velocity of
// the cloth where it was and only changes how it is split between ẋ and Ẋ:
//   1. new Lagrangian vertex in a Lagrangian triangle — barycentric average of ẋ;
//   2. new Lagrangian vertex in a triangle with EOL vertices — barycentric average of the
//      world velocities ẋᵢ − F Ẋᵢ (eq. 2.2 with the triangle's F); rule 1 is the case Ẋᵢ = 0;
//   3. new EOL vertex splitting an edge between EOL vertices — ẋ and Ẋ interpolated;
//   4. new EOL vertex from a collision — min ½‖ẋʷ + F Ẋ‖² s.t. A_eq Ẋ = 0 (eq. 2.13), then
//      ẋ = ẋʷ + F Ẋ;
// and an EOL vertex that lifts off becomes Lagrangian with ẋ = ẋʷ, Ẋ = 0.
// F, Vec2 and the per-triangle gradient come from eol_mapping.hpp.
#include <optional>
#include <span>

#include "fem/cloth/cloth_mesh.hpp"
#include "fem/cloth/eol_mapping.hpp"
#include "fem/cloth/triangle_topology.hpp"

namespace cholsim::fem::cloth {

/// Whether F has rank 2 (FᵀF invertible to a relative 1e-14), as eq. 2.13 without a row needs.
bool has_full_rank(const Mat32& gradient);
/// Whether F moves the world point along the material direction a⊥ the row `a` leaves free
/// (‖F a⊥‖² > 1e-14 ‖a‖² ‖F‖²_F), as eq. 2.13 with the row needs.
bool moves_along_free_direction(const Mat32& gradient, const Vec2& row);

/// The element-wise average of F over `triangles` (seed 002 §2.4.2: "whenever we need the
/// deformation gradient at a vertex, we simply take an element-wise average").
Mat32 average_deformation_gradient(const ClothMesh& cloth, std::span<const Index> triangles);
/// F at vertex v: the average over its incident triangles (vertex_deformation_gradients of
/// eol_mapping for one vertex, through the topology).
Mat32 vertex_deformation_gradient(const TriangleTopology& topology, Index v);

/// Rules 1–2: the world velocity Σ wᵢ (ẋᵢ − F Ẋᵢ) of the point Σ wᵢ Xᵢ (eq. 2.2). F is the
/// gradient of the triangle holding the point (the mean of both triangles for a point on an
/// edge: eq. 2.2 is linear in F).
Vec3 interpolated_world_velocity(const ClothMesh& cloth, const VertexOrigin& origin, const Mat32& gradient);
/// Rules 1–2 applied to the created vertex: ẋ = interpolated world velocity, Ẋ = 0.
void transfer_to_lagrangian_vertex(ClothMesh& cloth, const VertexOrigin& origin, const Mat32& gradient);
/// Rule 3: ẋ and Ẋ of the created vertex interpolated from its (EOL) parents.
void transfer_to_split_eulerian_vertex(ClothMesh& cloth, const VertexOrigin& origin);

/// A vertex's generalized velocity (ẋ, Ẋ).
struct GeneralizedVelocity {
  Vec3 lagrangian;
  Vec2 eulerian;
};
/// Eq. 2.13: the Ẋ that minimizes ½‖ẋʷ + F Ẋ‖² subject to a Ẋ = 0 for the Eulerian equality
/// row `a` of Alg. 2.2 (none: unconstrained, a corner vertex), by the 3×3 (2×2) KKT system;
/// and ẋ = ẋʷ + F Ẋ. Throws std::invalid_argument when the system is singular (F a⊥ = 0 with
/// a row, rank F < 2 without).
GeneralizedVelocity split_world_velocity(const Vec3& world, const Mat32& gradient,
                                         const std::optional<Vec2>& equality_row);
/// Rule 4: makes vertex v's generalized velocity the eq. 2.13 split of `world`.
void transfer_to_collision_eulerian_vertex(ClothMesh& cloth, Index v, const Vec3& world, const Mat32& gradient,
                                           const std::optional<Vec2>& equality_row);
/// Lift-off: vertex v becomes Lagrangian (eulerian = 0) with ẋ = ẋ − F Ẋ and Ẋ = 0.
void lift_off(ClothMesh& cloth, Index v, const Mat32& gradient);

}  // namespace cholsim::fem::cloth
