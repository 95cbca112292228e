#pragma once
// Kinematics of Eulerian-on-Lagrangian cloth (seed 002 §2.4 and appendix A.1).
//
// A material point X inside triangle (a, b, c) sits at the world position
//   x(X) = α x_a + β x_b + γ x_c                                              (eq. 2.1)
// with (α, β, γ) its barycentric coordinates in the *moving* material triangle (X_a, X_b, X_c).
// Differentiating through the barycentric coordinates gives its world velocity
//   ẋ = (α ẋ_a + β ẋ_b + γ ẋ_c) − F (α Ẋ_a + β Ẋ_b + γ Ẋ_c)                 (eq. 2.2)
// with F = D_x D_X⁻¹ the triangle's 3×2 deformation gradient (eq. 2.3): moving a vertex's
// texture coordinate moves the cloth the other way. So ẋ = J q̇ with the Jacobian of eq. 2.4,
// and generalized forces and stiffnesses follow as Jᵀf and JᵀKJ (eq. 2.9–2.10).
//
// Conventions: a generalized vertex block is ordered (x: 3, X: 2); 5×5 and 3×n matrices are
// column-major arrays; a Lagrangian vertex keeps only the x part of a block.
#include <array>
#include <vector>

#include "fem/cloth/cloth_mesh.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem::cloth {

using linalg::Mat3;

/// A vector in material space, (u, v).
struct Vec2 {
  double u = 0.0;
  double v = 0.0;
};

constexpr Vec2 operator+(const Vec2& a, const Vec2& b) { return {a.u + b.u, a.v + b.v}; }
constexpr Vec2 operator-(const Vec2& a, const Vec2& b) { return {a.u - b.u, a.v - b.v}; }
constexpr Vec2 operator*(double s, const Vec2& a) { return {s * a.u, s * a.v}; }
constexpr double dot(const Vec2& a, const Vec2& b) { return a.u * b.u + a.v * b.v; }
/// The z component of a × b, twice the signed area of the triangle (0, a, b).
constexpr double cross(const Vec2& a, const Vec2& b) { return a.u * b.v - a.v * b.u; }

/// A 3×2 matrix stored by columns; as a deformation gradient, col_u = ∂x/∂u and col_v = ∂x/∂v.
struct Mat32 {
  Vec3 col_u;
  Vec3 col_v;

  [[nodiscard]] constexpr Vec3 col(int j) const { return j == 0 ? col_u : col_v; }
  [[nodiscard]] constexpr double operator()(int i, int j) const { return col(j)[i]; }
};

constexpr Vec3 operator*(const Mat32& f, const Vec2& w) { return w.u * f.col_u + w.v * f.col_v; }
constexpr Mat32 operator+(const Mat32& a, const Mat32& b) { return {a.col_u + b.col_u, a.col_v + b.col_v}; }
constexpr Mat32 operator*(double s, const Mat32& a) { return {s * a.col_u, s * a.col_v}; }
constexpr Mat32 operator*(const Mat3& a, const Mat32& b) { return {a * b.col_u, a * b.col_v}; }
/// Fᵀw.
constexpr Vec2 transpose_times(const Mat32& f, const Vec3& w) { return {dot(f.col_u, w), dot(f.col_v, w)}; }

/// What a triangle's material shape fixes: its material area A = |det D_X|/2 and the gradients
/// g_a, g_b, g_c of its barycentric coordinates (g_b, g_c the rows of D_X⁻¹, g_a = −g_b − g_c),
/// so that F = Σ_i x_i g_iᵀ (eq. 2.3).
struct TriangleShape {
  double area = 0.0;
  std::array<Vec2, 3> gradients;
};

/// The shape of material triangle X = (X_a, X_b, X_c). Throws std::invalid_argument when the
/// triangle is degenerate (det D_X zero or not finite): it has no deformation gradient.
TriangleShape triangle_shape(const std::array<Vec2, 3>& material);

/// F = D_x D_X⁻¹ = Σ_i x_i g_iᵀ (eq. 2.3).
Mat32 triangle_deformation_gradient(const TriangleShape& shape, const std::array<Vec3, 3>& x);

/// The world and material positions of triangle t's vertices.
std::array<Vec3, 3> triangle_positions(const ClothMesh& cloth, Index t);
std::array<Vec2, 3> triangle_material(const ClothMesh& cloth, Index t);
Vec2 material_point(const ClothMesh& cloth, Index v);
Vec2 material_velocity(const ClothMesh& cloth, Index v);

/// Triangle t's F from the cloth's current x and X.
Mat32 triangle_deformation_gradient(const ClothMesh& cloth, Index t);

/// Per vertex, the element-wise average of the incident triangles' F (seed 002 §2.4.2: "whenever
/// we need the deformation gradient at a vertex, we simply take an element-wise average");
/// zero for a vertex no triangle uses.
std::vector<Mat32> vertex_deformation_gradients(const ClothMesh& cloth);

/// (α, β, γ) of `point` in the material triangle (eq. A.3): (β, γ) = D_X⁻¹ (X − X_a), α = 1 − β − γ.
std::array<double, 3> barycentric_coordinates(const std::array<Vec2, 3>& material, const Vec2& point);

/// x(X) = α x_a + β x_b + γ x_c (eq. 2.1).
Vec3 world_position(const std::array<Vec3, 3>& x, const std::array<double, 3>& barycentric);

using VertexJacobian = std::array<double, 15>;  ///< 3×5, column-major
using PointJacobian = std::array<double, 45>;   ///< 3×15, column-major, columns (ẋ_a ẋ_b ẋ_c Ẋ_a Ẋ_b Ẋ_c)

/// J = (I  −F): the world velocity of the material point at an EOL vertex (eq. 2.4 at a node).
VertexJacobian vertex_jacobian(const Mat32& f);

/// J = (αI βI γI −αF −βF −γF) (eq. 2.4) for the material point with barycentric coordinates
/// (α, β, γ) in a triangle with deformation gradient F.
PointJacobian point_jacobian(const std::array<double, 3>& barycentric, const Mat32& f);

/// ẋʷ = ẋ − F Ẋ (eq. 2.2 at a vertex): the world velocity of the material under a vertex.
constexpr Vec3 world_velocity(const Vec3& velocity, const Vec2& material_velocity, const Mat32& f) {
  return velocity - f * material_velocity;
}

/// Vertex v's ẋʷ with its vertex deformation gradient f: eq. 2.2 for an EOL vertex, ẋ for a
/// Lagrangian one (its material does not move under it).
Vec3 vertex_world_velocity(const ClothMesh& cloth, Index v, const Mat32& f);

/// A world force mapped to a vertex's generalized DOFs (eq. 2.9).
struct GeneralizedForce {
  Vec3 lagrangian;
  Vec2 eulerian;
};

/// (f, −Fᵀf) = Jᵀf with J = (I −F) (eq. 2.9).
GeneralizedForce map_force(const Vec3& force, const Mat32& f);

using GeneralizedBlock = std::array<double, 25>;  ///< 5×5, column-major, rows/cols (x: 3, X: 2)

/// The block of vertex pair (i, j) of a world matrix K mapped to generalized DOFs:
///   J_iᵀ K_ij J_j = [[K_ij, −K_ij F_j], [−F_iᵀ K_ij, F_iᵀ K_ij F_j]].
/// Derivation: the force on vertex i's generalized DOFs is J_iᵀ f_i (eq. 2.9) and a change dq_j of
/// vertex j's generalized DOFs moves the material at j by J_j dq_j, so ∂(J_iᵀ f_i)/∂q_j =
/// J_iᵀ (∂f_i/∂x_j) J_j with the F's held fixed, as eq. 2.10 does for i = j (F_i = F_j = F).
/// F_i multiplies from the left, F_j from the right; for a Lagrangian vertex only its x rows
/// (or columns) are used.
GeneralizedBlock map_stiffness_block(const Mat3& block, const Mat32& f_i, const Mat32& f_j);

}  // namespace cholsim::fem::cloth
