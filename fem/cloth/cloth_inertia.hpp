#pragma once
// Inertia of EOL cloth (seed 002 §2.4.1). The kinetic energy of a triangle, T = ½∫ρ|ẋ|² dA over its
// material area (eq. 2.5) with ẋ = J q̇ (eq. 2.4), is ½ q̇ᵀ M q̇ with the 15×15 generalized inertia
//   M = ∫ ρ JᵀJ dA = Σ_ij ρA m_ij [[I, −F], [−Fᵀ, FᵀF]] at block (i, j)          (eq. 2.8)
// (rows and columns ordered ẋ_a ẋ_b ẋ_c Ẋ_a Ẋ_b Ẋ_c), m_ij = ∫N_i N_j dA / A = (1 + δ_ij)/12 exactly.
// Its upper-left 9×9 block is the Lagrangian consistent mass. The lumped alternative integrates
// eq. 2.5 with the vertex rule instead (weights A/3 at the corners), m_ij = δ_ij/3: ρA/3 per
// vertex, and ρA/3 [[I, −F], [−Fᵀ, FᵀF]] for an EOL vertex. ρ is an area density (kg/m²), A the
// material area |det D_X|/2 and F the triangle's deformation gradient (eq. 2.3).
#include <array>
#include <vector>

#include "fem/cloth/eol_mapping.hpp"

namespace cholsim::fem::cloth {

enum class MassModel : unsigned char {
  consistent,  ///< eq. 2.8, exact integration of eq. 2.5
  lumped,      ///< vertex quadrature of eq. 2.5: ρA/3 per vertex
};

/// m_ij of the model: the (i, j) world mass block of a triangle is ρA·m_ij·I.
double inertia_weight(MassModel model, int i, int j);

using TriangleInertia = std::array<double, 225>;  ///< 15×15, column-major
using TriangleMass = std::array<double, 81>;      ///< 9×9, column-major

/// The generalized inertia of a triangle (eq. 2.8 for MassModel::consistent). Throws
/// std::invalid_argument on a negative density or area.
TriangleInertia triangle_generalized_inertia(double density, double area, const Mat32& f,
                                             MassModel model = MassModel::consistent);

/// The Lagrangian 9×9 block (the mass matrix of a Lagrangian triangle).
TriangleMass triangle_mass(double density, double area, MassModel model = MassModel::consistent);

/// Per vertex, ρ·(material area of its triangles)/3: the lumped mass, and the row sums of the
/// consistent mass (the world weight of each vertex under a uniform field such as gravity).
std::vector<double> vertex_masses(const ClothMesh& cloth, double density);

}  // namespace cholsim::fem::cloth
