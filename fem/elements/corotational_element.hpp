#pragma once
// Per-element kernels of corotational linear tetrahedra (seed 000 §3.1, §4.1–4.2).
//
// Notation: an element's 12-vectors are ordered 3·vertex + component (AssemblyPattern's local
// numbering); Kₑ is the rest-frame linear stiffness (linalg::linear_tet::elastic_stiffness on
// the rest positions); a "frame" is a block-diagonal matrix B = diag(Q₀, Q₁, Q₂, Q₃) of 3×3
// blocks, one per vertex, and an element matrix is rotated as B·Kₑ·Bᵀ:
//   eq. 3 (exact corotation)      Q_a = Rₑ for every vertex a;
//   eq. 5 (warp-canceling)        Q_a = R_aᵀ·Rₑ with R_a the per-node rotation of vertex a.
//
// Kₑ is never stored. For an isotropic tet, block (a, b) of Kₑ is
//   V·(λ gₐ g_bᵀ + μ g_b gₐᵀ + μ (gₐ·g_b) I)        (gₐ the rest shape-function gradients),
// so Kₑ·u = (V·σ(H)·gₐ)ₐ with H = Σ_b u_b g_bᵀ and σ(H) = λ tr(H) I + μ (H + Hᵀ): a product
// with a rotated Kₑ is one 3×3 "stress", and a rotated Kₑ is built from rotated gradients. The
// 12 gradients and two moduli come straight from ElasticBody (Dₘ⁻¹, V, λ, μ), where a stored
// Kₑ took 1152 bytes per element — 115 MB of memory traffic per pass at 100K elements.
#include <array>
#include <span>

#include "fem/elements/elastic_body.hpp"
#include "linalg/linear_tetrahedron.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

using linalg::Mat3;
using ElementMatrix = linalg::linear_tet::ElasticStiffness;  ///< 12×12, column-major
using ElementVector = std::array<double, 12>;
using ElementFrame = std::array<Mat3, 4>;  ///< the blocks Q₀..Q₃ of B

/// What an isotropic tet's Kₑ depends on: the rest gradients gₐ and the volume-weighted
/// Lamé parameters V·λ, V·μ.
struct IsotropicTet {
  std::array<linalg::Vec3, 4> gradients;
  double volume_lambda = 0.0;
  double volume_mu = 0.0;
};

/// Element e's gradients (g₁..g₃ the rows of Dₘ⁻¹, g₀ = −(g₁ + g₂ + g₃)) and V·λ, V·μ.
IsotropicTet isotropic_tet(const ElasticBody& body, Index element);

/// The 12 coordinates of element e's vertices gathered from a 3·nodes array.
ElementVector gather_element(const ElasticBody& body, Index element, std::span<const double> node_values);

/// F = Dₛ·Dₘ⁻¹ with Dₛ = [x₁−x₀, x₂−x₀, x₃−x₀] of the current positions `x` (3·nodes).
Mat3 deformation_gradient(const ElasticBody& body, Index element, std::span<const double> x);

/// The corotated elastic force f = −Rₑ·Kₑ·(Rₑᵀ·xₑ − mₑ) (seed 000 eq. 2's f_els per element)
/// for the deformation gradient F of xₑ: Σ_b (Rₑᵀx_b − m_b) g_bᵀ = RₑᵀF − I, so
/// f_a = −Rₑ·V·σ(RₑᵀF − I)·gₐ. Zero for any rigid motion of the rest shape.
ElementVector corotated_elastic_force(const IsotropicTet& tet, const Mat3& rotation, const Mat3& deformation_gradient);

/// scale·B·Kₑ·Bᵀ for the frame B = diag(frame[0..3]), both triangles filled; block (a, b) is
/// scale·(Vλ (Q_a gₐ)(Q_b g_b)ᵀ + Vμ (Q_a g_b)(Q_b gₐ)ᵀ + Vμ (gₐ·g_b) Q_a Q_bᵀ).
ElementMatrix rotate_element_matrix(const IsotropicTet& tet, const ElementFrame& frame, double scale);

/// y = scale·B·Kₑ·Bᵀ·v without forming the 12×12 product (the force estimates of §4.2).
ElementVector rotated_matrix_times(const IsotropicTet& tet, const ElementFrame& frame, double scale,
                                   const ElementVector& v);

/// The eq. 3 frame (Rₑ on every vertex).
ElementFrame corotational_frame(const Mat3& element_rotation);

/// The eq. 5 frame Q_a = R_aᵀ·Rₑ for the per-node rotations of the element's vertices.
ElementFrame warp_canceling_frame(const Mat3& element_rotation, const std::array<Mat3, 4>& node_rotations);

}  // namespace cholsim::fem
