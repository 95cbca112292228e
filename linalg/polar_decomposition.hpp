#pragma once
// Rotation extraction from a deformation gradient F:
//  * polar_decomposition / polar_rotation — the reference, from the inversion-safe SVD;
//  * analytic_polar_decomposition — the warm-started Newton iteration on SO(3) of
//    seed 003 §3.3 (Kugelstadt, Koschier, Bender 2018, Algorithm 3), which is what a
//    time-stepping corotated FEM calls once per element per step;
//  * random_near_rotation — the accuracy/benchmark input distribution of seed 003 §4.
#include <random>

#include "linalg/small_matrix.hpp"

namespace cholsim::linalg {

/// F = R·S with R a proper rotation and S symmetric.
struct PolarDecomposition {
  Mat3 rotation = Mat3::identity();  ///< det R = +1 always, also for inverted F
  Mat3 stretch = Mat3::identity();   ///< S = V·Σ·Vᵀ: positive semidefinite iff det F ≥ 0
};

/// Polar decomposition from svd3 (Irving et al. 2004): R = U·Vᵀ, S = V·Σ·Vᵀ with the signed
/// Σ of svd3, so R·S = F exactly in exact arithmetic for every F. For det F > 0 this is the
/// classical polar decomposition; for inverted F (det F < 0) R is the rotation of the
/// "as uninverted as possible" element and S carries the reflection (one negative eigenvalue).
[[nodiscard]] PolarDecomposition polar_decomposition(const Mat3& f);
/// Only the rotation factor U·Vᵀ of polar_decomposition. It is also the maximizer of
/// tr(Rᵀ·F) over SO(3), the quantity analytic_polar_decomposition converges to.
[[nodiscard]] Mat3 polar_rotation(const Mat3& f);

/// Options of analytic_polar_decomposition.
struct ApdOptions {
  /// Stop after the first Newton step with ‖Δω‖ < tolerance (radians). 1e-12 gives the
  /// rotation to about working precision; seed 003 Algorithm 3 uses a loose τ (its
  /// benchmark runs one iteration), set max_iterations = 1 for that behaviour.
  double tolerance = 1e-12;
  /// Upper bound on steps (Newton, flip, gradient and backtracking steps all count).
  /// Near-rotations need 3–4 cold and 1–3 warm; arbitrary matrices from random starts
  /// needed ≤ 19 in the tests (tests/linalg/test_polar_decomposition.cpp). It bounds the
  /// work on degenerate input.
  int max_iterations = 30;
};

/// What one analytic_polar_decomposition call did.
struct ApdStats {
  int iterations = 0;      ///< steps taken (each one evaluation of gradient and Hessian)
  int flips = 0;           ///< π-rotations taken where the Hessian was not positive definite
  int gradient_steps = 0;  ///< gradient steps taken at a singular positive-semidefinite Hessian
  int backtracks = 0;      ///< steps retried at half length because tr(Rᵀ·F) went down
  double last_step_norm = 0.0;  ///< ‖Δω‖ of the last step (π for a flip)
  bool converged = false;  ///< a step below tolerance was taken, or a maximizer with singular Hessian was reached
};

/// The second-order model of E_APD(R) = ½‖R − F‖² at R0 in the local parameter ω of
/// R(ω) = R0·exp([ω]×) (seed 003 eq. 19–21). With B = R0ᵀ·F:
///   gradient g = −2·axial_vector(B)      (eq. 24; axial_vector([v]×) = v),
///   Hessian  H = tr(B)·I − sym(B)         (eq. 25).
/// Minimizing E over SO(3) is maximizing tr(Rᵀ·F).
struct ApdLocalModel {
  double objective = 0.0;  ///< E_APD(R0)
  Vec3 gradient;
  Mat3 hessian;
};
[[nodiscard]] ApdLocalModel apd_local_model(const Mat3& rotation, const Mat3& f);

/// The unit quaternion of the Cayley map of the local step ω (seed 003 eq. 27 evaluated at
/// ω/2): ((1 − ‖ω/4‖²), ω/2) / (1 + ‖ω/4‖²). It rotates about ω by 4·atan(‖ω‖/4) =
/// ‖ω‖ − ‖ω‖³/48 + …, so it agrees with exp([ω]×) to second order — as the Newton step
/// needs — and is unit without a square root. (Eq. 27 taken literally at ω rotates by
/// ≈ 2‖ω‖ and would overshoot every Newton step by a factor two.)
[[nodiscard]] constexpr Quaternion cayley_quaternion(const Vec3& omega) {
  const Vec3 quarter = 0.25 * omega;
  const double scale = 1.0 / (1.0 + squared_norm(quarter));
  return {(1.0 - squared_norm(quarter)) * scale, 2.0 * scale * quarter.x, 2.0 * scale * quarter.y,
          2.0 * scale * quarter.z};
}

/// Analytic polar decomposition (seed 003 §3.3, Algorithm 3): the rotation R = R(q)
/// maximizing tr(Rᵀ·F), by Newton's method on SO(3) started at `warm_start` (the previous
/// time step's answer; the identity quaternion when there is none). Each step evaluates
/// g and H (eq. 24–25) at R(q); if H is positive definite it takes Δω = −H⁻¹g, clamped to
/// ‖Δω‖ ≤ π, as q ← q ∘ cayley_quaternion(Δω). Otherwise R(q) is near a saddle or minimum
/// of tr(Rᵀ·F) — e.g. q = identity for F = −I, where g = 0 and Algorithm 3 would stop on
/// the spot — and the step is a π-rotation about the dominant eigenvector e of sym(B),
/// q ← q ∘ (0, e), which raises tr(Rᵀ·F) by 2(eᵀ·sym(B)·e − tr B) > 0: the quaternion
/// form of Irving et al.'s sign flip. So inverted elements recover to a proper rotation.
/// A step that lowers tr(Rᵀ·F) (a clamped Newton step far from the answer can) is retried at
/// half length; this costs nothing when steps succeed, which is always the case near a
/// rotation. Every accepted step is ascent, and tr(Rᵀ·F) has one local maximum on SO(3).
/// For det F ≠ 0 and distinct |σ| the result equals polar_rotation(F) (σ3 signed).
/// `warm_start` need not be normalized (it is, once); the result is a unit quaternion.
[[nodiscard]] Quaternion analytic_polar_decomposition(const Mat3& f, Quaternion warm_start,
                                                      const ApdOptions& options = {},
                                                      ApdStats* stats = nullptr);

/// Seed 003 §4 input distribution for rotation extraction.
struct NearRotationSampling {
  /// The rotation is drawn from the Haar (uniform) measure on SO(3) restricted to rotation
  /// angles ≤ this: 10° in the paper (167 rpm at Δt = 10 ms).
  double max_rotation_degrees = 10.0;
  /// Each vertex of a regular reference tetrahedron is displaced uniformly inside a ball of
  /// this fraction of the mean edge length: 0.1 in the paper.
  double max_displacement_fraction = 0.1;
};

/// A rotation uniform on SO(3) restricted to angles ≤ max_angle_radians (≤ π).
[[nodiscard]] Quaternion random_rotation(std::mt19937_64& rng, double max_angle_radians);

/// One deformation gradient of the seed 003 §4 protocol: F = R·D_s·D_m⁻¹ where D_m holds the
/// edges of a regular tetrahedron, D_s those of its randomly displaced copy, and R is
/// random_rotation(max_rotation_degrees). Near a rotation, det F > 0.
[[nodiscard]] Mat3 random_near_rotation(std::mt19937_64& rng, const NearRotationSampling& sampling = {});

}  // namespace cholsim::linalg
