#pragma once
// Bending forces of EOL cloth: the quadratic discrete-Willmore energy of Bergou, Wardetzky,
// Harmon, Zorin and Grinspun 2006, "A quadratic bending model for inextensible surfaces"
// (seed 002 §2.4.2, refs. [31, 34]).
//
// Stencil: every interior edge (v0, v1) with the vertex v2 opposite it in one triangle and v3 in
// the other (a "hinge"). With the interior angles a0, a1 at v0, v1 of triangle (v0, v1, v2) and
// b0, b1 of triangle (v0, v1, v3), measured in the MATERIAL configuration X, the weights are
//   w = (cot a1 + cot b1,  cot a0 + cot b0,  −cot a0 − cot a1,  −cot b0 − cot b1).
// cot a1 x0 + cot a0 x1 − (cot a0 + cot a1) x2 is (cot a0 + cot a1) times the altitude vector from
// x2 to the edge, whose length is ‖e‖/(cot a0 + cot a1): so for a deformation that keeps the
// triangles' shapes, H = Σ w_i x_i = ‖e‖ (u_A + u_B) with u_A, u_B the unit in-plane normals of the
// edge in the two triangles, |H| = 2‖e‖ sin(θ/2) for the bend angle θ between the triangles, and
// H = 0 for any flat (affine) image of the material hinge: Σ w_i = 0 and Σ w_i X_i = 0.
//
// Scaling: E = ½ k_b xᵀ Q x with Q = Σ_e (3/A_e) w_e w_eᵀ ⊗ I₃, A_e the material area of the
// edge's two triangles (each edge stands for a third of them), so for an isometric bend
//   E_e = ½ k_b · 3‖e‖²/A_e · 4 sin²(θ_e/2) ≈ ½ k_b · 3‖e‖² θ_e²/A_e,
// the discrete-shells form. Against the continuum ½ k_b ∫ (κ₁ + κ₂)² dA this carries a
// mesh-dependent constant: on make_rectangle_cloth's right-triangle grid a cylinder bent about a
// grid axis gets 3× (only the axis-parallel hinges bend), bent about a diagonal ≈ 4.4×
// (test_bending.cpp checks the first and the κ² scaling).
//
// Q is constant for fixed material coordinates: the force is −k_b Q x and the stiffness
// K = −k_b Q (negative semi-definite). Q is rebuilt from the current X every step, since EOL
// vertices move in material space; its dependence on X is not differentiated (the Eulerian
// forces come from eq. 2.9). k_b is in N·m (J); the public EDGE scene uses 1e-5.
#include <array>
#include <vector>

#include "fem/cloth/eol_mapping.hpp"

namespace cholsim::fem::cloth {

/// An interior edge's 4-vertex stencil: (v0, v1) the edge, v2 opposite it in the triangle where it
/// runs v0 → v1, v3 opposite it in the other triangle.
struct BendingHinge {
  std::array<Index, 4> vertices{};
};

/// Every interior edge of the cloth, in the order of its first triangle's corners. Throws
/// InvalidClothError on an edge shared by more than two triangles.
std::vector<BendingHinge> bending_hinges(const ClothMesh& cloth);

/// What a hinge's material shape fixes.
struct HingeWeights {
  std::array<double, 4> weights{};  ///< w above
  double area_scale = 0.0;          ///< 3/A_e
};

/// The weights of the hinge with material positions X (ordered as BendingHinge::vertices).
/// Throws std::invalid_argument when either triangle is degenerate.
HingeWeights hinge_weights(const std::array<Vec2, 4>& material);

/// One hinge's energy, forces and stiffness.
struct BendingElement {
  double energy = 0.0;
  std::array<Vec3, 4> forces{};
  /// K = coupling ⊗ I₃: coupling[4i + j] = −k_b (3/A_e) w_i w_j is the scalar of block ∂f_i/∂x_j.
  std::array<double, 16> coupling{};
};

/// ½ k_b (3/A_e)|H|², f_i = −k_b (3/A_e) w_i H and K, for world positions x of the hinge's
/// vertices and bending stiffness k_b ≥ 0.
BendingElement bending_element(const HingeWeights& hinge, const std::array<Vec3, 4>& x, double stiffness);

}  // namespace cholsim::fem::cloth
