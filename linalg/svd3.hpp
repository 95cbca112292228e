#pragma once
// Inversion-safe singular value decomposition of a 3×3 matrix (Irving, Teran, Fedkiw 2004,
// "Invertible finite elements", the reference rotation of seed 003 §4).
#include "linalg/small_matrix.hpp"

namespace cholsim::linalg {

/// F = U · diag(singular_values) · Vᵀ in the "rotation-variant" convention of Irving et al.:
///  * U and V are proper rotations, det U = det V = +1;
///  * σ1 ≥ σ2 ≥ |σ3| ≥ 0 with σ1, σ2 ≥ 0, and σ3 carries the sign of det F — when F is
///    inverted (det F < 0) the smallest singular value is the negative one, so that
///    U·Vᵀ is the rotation of the "as uninverted as possible" element.
/// For rank-deficient F the singular vectors of the zero singular values complete U and V
/// to rotations (any completion is a valid SVD there).
struct Svd3 {
  Mat3 u = Mat3::identity();
  Vec3 singular_values;
  Mat3 v = Mat3::identity();
};

/// What one svd3 call did.
struct Svd3Stats {
  int sweeps = 0;     ///< one-sided Jacobi sweeps over the three column pairs, the last one rotation-free
  int rotations = 0;  ///< plane rotations applied
  bool converged = false;  ///< false only if the sweep limit (32) was hit; the result is still usable
};

/// The SVD of F by one-sided (Hestenes) Jacobi: plane rotations V are applied to the columns
/// of G = F·V until every pair is orthogonal to working precision, |g_pᵀg_q| ≤ ε‖g_p‖‖g_q‖.
/// Unlike an eigen-decomposition of FᵀF it never squares the condition number, so
/// ‖U·Σ·Vᵀ − F‖ ≈ ε‖F‖ and UᵀU = I to ε even with tiny or repeated singular values.
/// Then σ_i = ‖g_i‖ sorted descending, u_i = g_i/σ_i (Gram–Schmidt-cleaned; completed to an
/// orthonormal basis where σ_i vanishes), u3 = u1 × u2 so det U = +1, and σ3 = u3ᵀg3 takes
/// the sign of det F. Handles the zero matrix (U = V = I, σ = 0). Never throws.
[[nodiscard]] Svd3 svd3(const Mat3& f, Svd3Stats* stats = nullptr);

}  // namespace cholsim::linalg
