#pragma once
// Per-element kernels of corotational linear tetrahedra (seed 000 §3.1, §4.1–4.2).
//
// Notation: an element's 12-vectors are ordered 3·vertex + component (AssemblyPattern's local
// numbering); Kₑ is the rest-frame linear stiffness (linalg::linear_tet::elastic_stiffness on
// the rest positions); a "frame" is a block-diagonal matrix B = diag(Q₀, Q₁, Q₂, Q₃) of 3×3
// blocks, one per vertex, and an element matrix is rotated as B·Kₑ·Bᵀ:
//   eq. 3 (exact corotation)      Q_a = Rₑ for every vertex a;
//   eq. 5 (warp-canceling)        Q_a = R_aᵀ·Rₑ with R_a the per-node rotation of vertex a.
#include <array>
#include <span>

#include "fem/elastic_body.hpp"
#include "linalg/linear_tetrahedron.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

using linalg::Mat3;
using ElementMatrix = linalg::linear_tet::ElasticStiffness;  ///< 12×12, column-major
using ElementVector = std::array<double, 12>;
using ElementFrame = std::array<Mat3, 4>;  ///< the blocks Q₀..Q₃ of B

/// The 12 coordinates of element e's vertices gathered from a 3·nodes array.
ElementVector gather_element(const ElasticBody& body, Index element, std::span<const double> node_values);

/// F = Dₛ·Dₘ⁻¹ with Dₛ = [x₁−x₀, x₂−x₀, x₃−x₀] of the current positions `x` (3·nodes).
Mat3 deformation_gradient(const ElasticBody& body, Index element, std::span<const double> x);

/// Rₑ of seed 000 §3.1: the rotation factor of F by the inversion-safe SVD (Irving et al.
/// 2004, linalg::polar_rotation), a proper rotation (det = +1) also for inverted elements.
Mat3 element_rotation(const ElasticBody& body, Index element, std::span<const double> x);

/// Kₑ of element e from its rest positions and Lamé parameters.
ElementMatrix rest_stiffness(const ElasticBody& body, Index element);

/// The corotated elastic force f = −Rₑ·Kₑ·(Rₑᵀ·xₑ − mₑ) (seed 000 eq. 2's f_els per element):
/// zero for any rigid motion of the rest shape, since Kₑ annihilates translations.
ElementVector corotated_elastic_force(const ElementMatrix& stiffness, const Mat3& rotation,
                                      const ElementVector& current, const ElementVector& rest);

/// scale·B·Kₑ·Bᵀ for the frame B = diag(frame[0..3]); symmetric when Kₑ is.
ElementMatrix rotate_element_matrix(const ElementMatrix& stiffness, const ElementFrame& frame, double scale);

/// y = scale·B·Kₑ·Bᵀ·v without forming the 12×12 product (the force estimates of §4.2).
ElementVector rotated_matrix_times(const ElementMatrix& stiffness, const ElementFrame& frame, double scale,
                                   const ElementVector& v);

/// The eq. 3 frame (Rₑ on every vertex).
ElementFrame corotational_frame(const Mat3& element_rotation);

/// The eq. 5 frame Q_a = R_aᵀ·Rₑ for the per-node rotations of the element's vertices.
ElementFrame warp_canceling_frame(const Mat3& element_rotation, const std::array<Mat3, 4>& node_rotations);

}  // namespace cholsim::fem
