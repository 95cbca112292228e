#pragma once
// The 4-node linear tetrahedron — the standard constant-strain tetrahedron (CST/"P1" element;
// e.g. Zienkiewicz & Taylor, The Finite Element Method, vol. 1, §6; Hughes, The Finite
// Element Method, §3.I) — used by the generators here and by fem/.
//
// Conventions:
//  * a tet is its 4 vertex positions x₀..x₃; it is positively oriented when
//    (x₁ - x₀)×(x₂ - x₀)·(x₃ - x₀) > 0;
//  * shape functions Nᵢ are linear and sum to one, so their gradients gᵢ = ∇Nᵢ are constant
//    over the tet and g₀ = -(g₁ + g₂ + g₃); with Dₘ = [x₁-x₀, x₂-x₀, x₃-x₀], gᵢ (i = 1..3) is
//    row i-1 of Dₘ⁻¹;
//  * element matrices are column-major; the 12×12 elastic one orders its dofs as
//    3·vertex + component, the 4×4 scalar one by vertex (AssemblyPattern's local numbering).
#include <array>

namespace cholsim::linalg {

/// Lamé parameters of an isotropic linear-elastic material, in Pa.
struct LameParameters {
  double lambda = 0.0;  ///< first Lamé parameter λ
  double mu = 0.0;      ///< shear modulus μ
};

/// λ = Eν / ((1+ν)(1-2ν)), μ = E / (2(1+ν)). Throws std::invalid_argument unless E > 0 and
/// -1 < ν < 1/2 (the range where the material is stable).
LameParameters lame_from_youngs_poisson(double youngs_modulus, double poisson_ratio);

namespace linear_tet {

using Point = std::array<double, 3>;
using Points = std::array<Point, 4>;     ///< the vertices x₀..x₃
using Gradients = std::array<Point, 4>;  ///< gᵢ = ∇Nᵢ, one per vertex
using ElasticStiffness = std::array<double, 144>;  ///< 12×12 column-major
using ScalarStiffness = std::array<double, 16>;    ///< 4×4 column-major

/// Signed volume det(Dₘ)/6: positive for a positively oriented tet.
double signed_volume(const Points& x);

/// The constant shape-function gradients. Throws std::invalid_argument for a degenerate tet
/// (zero volume); an inverted tet gives valid gradients of the inverted element.
Gradients shape_gradients(const Points& x);

/// Linear-elastic stiffness Kₑ = V·Bᵀ·C·B of the constant-strain tet with energy
/// V·(μ ε:ε + λ/2 tr(ε)²), V = |signed volume|. Block (a, b) (rows 3a.., columns 3b..) is
///   V·(λ gₐ g_bᵀ + μ g_b gₐᵀ + μ (gₐ·g_b) I).
/// Symmetric positive semidefinite; its null space holds the 6 rigid-body modes.
ElasticStiffness elastic_stiffness(const Points& x, LameParameters material);

/// The "scalar" (Laplacian-like) stiffness V·GᵀG with G = [g₀ g₁ g₂ g₃] (3×4): entry (a, b)
/// is V·gₐ·g_b. It is the per-coordinate block of the ARAP/corotated matrix (seed 003 §3.1,
/// where it appears scaled by 2μ·Δt²); constant vectors are its null space.
ScalarStiffness scalar_stiffness(const Points& x);

/// Lumped mass per vertex, ρ·V/4 with V = |signed volume| (seed 003 Algorithm 1, line 7).
double lumped_vertex_mass(const Points& x, double density);

}  // namespace linear_tet
}  // namespace cholsim::linalg
