#pragma once
// Element kernels of a trilinear hexahedron (an octree cell) with corotated linear elasticity
// integrated by McAdams et al.'s stabilized one-point quadrature (seed 001 §4.1–4.2), the
// definiteness fix of seed 001 Algorithm 1, the stiffness diagonal of §7.4 for elements with
// hanging nodes, and the embedded zero-rest-length spring of §8.
//
// Notation (seed 001 §3–4):
//  * local corner a = bit0 x | bit1 y | bit2 z (Morton order, Fig. 7), parameter
//    ξ_a = (a&1, a>>1&1, a>>2&1); rest position X_a = X_0 + h·ξ_a; V = h³;
//  * G is the 3×8 matrix of shape-function gradients at the centre ξ = (½,½,½):
//    column a is g_a = s_a / (4h) with s_a = 2ξ_a − (1,1,1) ∈ {±1}³;
//  * F = Σ_a x_a g_aᵀ (eq. 2 at the centre); F = U Σ Vᵀ by linalg::svd3 (det U = det V = +1,
//    σ3 signed), R = U Vᵀ, S = V Σ Vᵀ;
//  * the energy density splits into Ψ_Δ = μ‖F‖² and Ψ_aux = −2μ tr S + 3μ + (λ/2) tr²(S − I);
//    Ψ_aux is sampled at the centre, Ψ_Δ by the 4-edges-per-direction rule of §4.1.2, which
//    makes its stiffness (2μV / 4h²)·(graph Laplacian of the 12 cube edges) ⊗ I₃;
//  * K = −∂f/∂x, an element 24-vector / 24×24 matrix index is 3a + i (corner a, component i);
//  * W (§3.2) is 8×8 with W_ab = Ñ_b(ξ_a): rows primary nodes a, columns conforming nodes b;
//    the identity for an element without hanging nodes.
//
// All kernels work on fixed-size stack values, never allocate, and accumulate (+=) into their
// output so a caller can scatter several terms into one buffer.
#include <array>
#include <cstdint>

#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

/// One value per local corner a (positions, displacements, forces, diagonal entries).
using HexNodes = std::array<linalg::Vec3, 8>;
/// The 24×24 element matrix, entry (3a + i, 3c + j) at index 24·(3a + i) + 3c + j.
using HexMatrix = std::array<double, 24 * 24>;
/// W of §3.2, w[a][b] = Ñ_b(ξ_a).
using HangingNodeWeights = std::array<std::array<double, 8>, 8>;

/// Lamé parameters of one element (Pa).
struct Lame {
  double mu = 0;
  double lambda = 0;
};

/// g_a, column a of G (§4.1.1): ∂N_a/∂X at the element centre.
linalg::Vec3 hex_center_shape_gradient(int corner, double h);

/// §4.1.1: F at the element centre, F = Σ_a x_a ⊗ g_a.
linalg::Mat3 hex_center_deformation_gradient(const HexNodes& x, double h);

/// The per-element state of one Newton linearization (§4.2), computed once from F and reused
/// by every stiffness product and the diagonal of that linearization.
struct HexLinearization {
  linalg::Mat3 rotation = linalg::Mat3::identity();  ///< R = U Vᵀ of F's polar decomposition
  /// L_aux = V diag(ℓ) Vᵀ, ℓ_i = κ / (tr Σ − σ_i) (Algorithm 1, COMPUTELAUX), each ℓ_i
  /// clamped to ≥ −μ when linearized `definite`, the exact Hessian's value otherwise.
  /// Symmetric: 6 values (the octree keeps one linearization per element on every level).
  linalg::SymmetricMat3 skew_stiffness;
  linalg::Vec3 singular_values{1.0, 1.0, 1.0};  ///< Σ, σ3 signed as in linalg::svd3
  double aux_stress_scale = 0.0;                ///< κ = λ tr(S − I) − 2μ, so P_aux = κ R
};

/// The state of §4.2 at F for `lame`. `definite` = true applies Algorithm 1's clamp, so the
/// element matrix is positive semidefinite for λ ≥ −2μ/3, μ ≥ 0; false keeps the exact
/// Hessian. A vanishing σ_j + σ_k (F collapsed or inverted onto a plane) is clamped to a tiny
/// positive denominator so nothing becomes Inf/NaN.
HexLinearization linearize_hex(const linalg::Mat3& f, const Lame& lame, bool definite = true);

/// E = V·Ψ_aux(F_centre) + E_Δ, E_Δ = (μV / 4h²) Σ over the 12 edges of ‖x_a1 − x_a0‖²
/// (the §4.1.2 quadrature of V∫μ‖F‖²).
double hex_energy(const HexNodes& x, double h, const Lame& lame);

/// forces += −∂E/∂x_a: −V·P_aux(F)·g_a (eq. 3) minus the edge Laplacian of x times
/// 2μV / 4h² (eq. 4–5, the matrix is never formed).
void add_hex_forces(const HexNodes& x, double h, const Lame& lame, HexNodes& forces);
/// The same forces from the linearization at these x's centre gradient (its R and κ), so a
/// Newton step that needs both pays for one SVD per element.
void add_hex_forces(const HexNodes& x, const HexLinearization& lin, double h, const Lame& lame, HexNodes& forces);

/// product += K·dx at the linearization `lin` (definiteness-fixed when linearized `definite`, exact
/// otherwise): V·δP_aux(δF)·g_a with δF = Σ_a dx_a g_aᵀ and δP_aux by Algorithm 1
/// DPAUXDEFINITEFIX, plus the edge Laplacian of dx times 2μV / 4h².
void add_hex_stiffness_product(const HexLinearization& lin, const HexNodes& dx, double h, const Lame& lame,
                               HexNodes& product);

/// §7.4: diagonal[b][i] += (Wᵀ K W)_(bi),(bi) for the 8 conforming nodes b, components i:
/// V(λ(rᵀg̃)² + (g̃ × r)ᵀ L_aux (g̃ × r)) with g̃ = Σ_a W_ab g_a and rᵀ row i of R, plus
/// (2μV / 4h²) Σ_k Σ_edges (W_a1b − W_a0b)².
void add_hex_stiffness_diagonal(const HexLinearization& lin, const HangingNodeWeights& w, double h,
                                const Lame& lame, HexNodes& diagonal);

/// The 3×3 diagonal blocks of Wᵀ·K·W, one per conforming node (the §7.4 diagonal with its
/// off-diagonal partners within a node): the block-Jacobi smoother's data.
void add_hex_stiffness_block_diagonal(const HexLinearization& lin, const HangingNodeWeights& w, double h,
                                      const Lame& lame, std::array<linalg::Mat3, 8>& blocks);

/// The 24×24 K of the linearization (for a coarse level's direct solver, and for tests), from
/// the closed form of its blocks: K_(ai),(cj) = V(λ p_ai p_cj + q_aiᵀ L_aux q_cj)
/// + (2μV / 4h²) Lap_ac δ_ij with p_ai = r_iᵀ g_a, q_ai = g_a × r_i.
HexMatrix hex_stiffness_matrix(const HexLinearization& lin, double h, const Lame& lame);

/// A coarse multigrid element as the present ones of its 2×2×2 one-point children (issue 24):
/// bit q of `children` is set when child q (q = bit0 x | bit1 y | bit2 z, edge h/2) holds body.
/// Its matrix is (8/n)·Σ_q P_qᵀ K_q P_q over the n present children, K_q the stabilized
/// one-point element of the child at this element's linearization and Lamé parameters, P_q the
/// trilinear restriction to the child's corners; the coarse Lamé parameters are §7.3's averages
/// with zeros for missing children, so 8/n gives the present children their own. When the
/// children share the linearization this is PᵀAP of the finer level exactly.
///
/// Why not §7.3's plain re-discretization: a one-point element sees only its centre gradient,
/// so its 12 hourglass modes rest on the edge rule's Ψ_Δ alone, weighted as at the element's
/// edges (η = ±½ from the centre), where the children's centres (η = ±¼) and edges weight them
/// by ¼ of that and add Ψ_aux; and a coarse element that is partly outside the body is the whole
/// cube at averaged stiffness where its children are a corner or a slab of it. Such coarse
/// levels are stiff in some directions and soft in others: MGPCG's Ritz values on the
/// armadillo at 128 cells were 0.037 … 1.41 with four levels; with merged elements 0.068 … 1.04
/// (docs/benchmarks.md, issue 24, stop 56).
void add_merged_hex_stiffness_product(const HexLinearization& lin, const HexNodes& dx, double h, const Lame& lame,
                                      std::uint8_t children, HexNodes& product);
/// The merged element's diagonal of Wᵀ·K·W (as add_hex_stiffness_diagonal).
void add_merged_hex_stiffness_diagonal(const HexLinearization& lin, const HangingNodeWeights& w, double h,
                                       const Lame& lame, std::uint8_t children, HexNodes& diagonal);
/// The merged element's 3×3 diagonal blocks of Wᵀ·K·W, one per conforming node (as
/// add_hex_stiffness_block_diagonal).
void add_merged_hex_stiffness_block_diagonal(const HexLinearization& lin, const HangingNodeWeights& w, double h,
                                             const Lame& lame, std::uint8_t children, std::array<linalg::Mat3, 8>& blocks);
/// The merged element's 24×24 K.
HexMatrix merged_hex_stiffness_matrix(const HexLinearization& lin, double h, const Lame& lame, std::uint8_t children);

/// N_a(ξ), the trilinear shape functions of the 8 corners at the parameter ξ.
std::array<double, 8> trilinear_weights(const linalg::Vec3& xi);

}  // namespace cholsim::fem
