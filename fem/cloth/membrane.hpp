#pragma once
// Membrane forces of EOL cloth: corotated linear elasticity on triangles (seed 002 §2.4.2, the
// model of its refs. [76] Etzmuß et al. 2003 and [57] Bender & Deul 2013), plane stress.
//
// Per triangle with deformation gradient F = D_x D_X⁻¹ (3×2, eq. 2.3) and R the polar factor of F
// (F = R S, R 3×2 with orthonormal columns, S = (FᵀF)^½), the energy is
//   E = A (μ ‖F − R‖² + λ/2 tr(RᵀF − I)²) = A (μ ‖S − I‖² + λ/2 tr(S − I)²),
// A the material area. Forces f_i = −∂E/∂x_i = −A R σ g_i with the corotated stress
// σ = 2μ (S − I) + λ tr(S − I) I and g_i the barycentric gradients (F = Σ x_i g_iᵀ); the ∂R/∂x
// terms vanish because RᵀdR is skew and S − I symmetric.
//
// Stiffness: K = −∂²E_R/∂x² with R held fixed, for E_R written in the corotated-linear form
//   E_R(F) = A (μ ‖sym(RᵀF) − I‖² + λ/2 tr(RᵀF − I)²),
// which equals E and has the same gradient at R = polar(F). Its blocks are
//   K_ij = −A (μ (g_i·g_j) R Rᵀ + μ (R g_j)(R g_i)ᵀ + λ (R g_i)(R g_j)ᵀ),
// the rotated plane-stress stiffness R K₀ Rᵀ of refs. [76, 57]; negative semi-definite. Writing
// E_R as μ‖F − R‖² instead would give blocks −A (2μ (g_i·g_j) I + λ (R g_i)(R g_j)ᵀ): the same
// forces, but a stiffness that resists out-of-plane motion and rotation (its 2μ I acts on the
// normal too), which a linearly implicit step (eq. 2.11) turns into heavy artificial damping of
// draping and folding; R K₀ Rᵀ has no normal stiffness and no stiffness against in-plane
// infinitesimal rotation.
#include <array>

#include "fem/cloth/eol_mapping.hpp"

namespace cholsim::fem::cloth {

/// Lamé parameters of a membrane (N/m: the cloth is a surface).
struct MembraneLame {
  double mu = 0.0;
  double lambda = 0.0;
};

/// Plane stress: μ = E/(2(1+ν)), λ = Eν/(1−ν²). Throws std::invalid_argument unless E ≥ 0 and
/// −1 < ν ≤ 0.5.
MembraneLame plane_stress_lame(double youngs, double poisson);

/// R of the polar decomposition F = R S (3×2 with orthonormal columns), through the eigensystem
/// of the 2×2 FᵀF. A rank-deficient F (collapsed triangle) gets one of its many valid R.
Mat32 membrane_rotation(const Mat32& f);

/// One triangle's energy, forces and stiffness.
struct MembraneElement {
  double energy = 0.0;
  std::array<Vec3, 3> forces{};
  /// The 9×9 force Jacobian ∂f/∂x as 3×3 blocks: stiffness[3i + j] = K_ij = ∂f_i/∂x_j.
  std::array<Mat3, 9> stiffness{};
};

/// E_R, −∂E_R/∂x and K for a given rotation R (the frozen-R quantities; at R = polar(F) they are
/// the energy, forces and corotated stiffness above).
MembraneElement membrane_element(const TriangleShape& shape, const std::array<Vec3, 3>& x, const MembraneLame& lame,
                                 const Mat32& rotation);

/// The element with R = polar(F), for world positions x and material positions X of its vertices
/// (X moves for EOL vertices, so the shape is recomputed).
MembraneElement membrane_element(const std::array<Vec3, 3>& x, const std::array<Vec2, 3>& material,
                                 const MembraneLame& lame);

}  // namespace cholsim::fem::cloth
