#include "linalg/polar_decomposition.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "linalg/svd3.hpp"

namespace cholsim::linalg {
namespace {

/// The result of trying to Cholesky-factor the 3×3 Hessian: H = L·D·Lᵀ.
struct HessianFactor {
  bool positive_definite = false;
  double d0 = 0.0, d1 = 0.0, d2 = 0.0;
  double l10 = 0.0, l20 = 0.0, l21 = 0.0;
};

/// LDLᵀ of a symmetric 3×3 matrix; positive definite when every pivot exceeds
/// `pivot_floor` (a tiny multiple of ‖F‖: a flatter direction gives no usable Newton step).
HessianFactor factor_hessian(const Mat3& h, double pivot_floor) {
  HessianFactor c;
  c.d0 = h(0, 0);
  if (!(c.d0 > pivot_floor)) return c;
  c.l10 = h(1, 0) / c.d0;
  c.l20 = h(2, 0) / c.d0;
  c.d1 = h(1, 1) - c.l10 * h(1, 0);
  if (!(c.d1 > pivot_floor)) return c;
  c.l21 = (h(2, 1) - c.l20 * h(1, 0)) / c.d1;
  c.d2 = h(2, 2) - c.l20 * h(2, 0) - c.l21 * c.l21 * c.d1;
  c.positive_definite = c.d2 > pivot_floor;
  return c;
}

/// Solves L·D·Lᵀ·x = b.
Vec3 solve(const HessianFactor& c, const Vec3& b) {
  const double y0 = b.x;
  const double y1 = b.y - c.l10 * y0;
  const double y2 = b.z - c.l20 * y0 - c.l21 * y1;
  const double x2 = y2 / c.d2;
  const double x1 = y1 / c.d1 - c.l21 * x2;
  const double x0 = y0 / c.d0 - c.l10 * x1 - c.l20 * x2;
  return {x0, x1, x2};
}

/// A unit eigenvector of the largest eigenvalue of the symmetric matrix m (any unit vector
/// of its eigenspace when that eigenvalue is repeated). Closed form: the eigenvalue from the
/// trigonometric solution of the characteristic cubic, the vector as the longest cross
/// product of two rows of m − λ1·I. Only used on the rare flip step, so it favours
/// robustness over speed; its accuracy is irrelevant to the final result (Newton follows).
Vec3 dominant_eigenvector(const Mat3& m) {
  const double mean = trace(m) / 3.0;
  const Mat3 shifted = m - mean * Mat3::identity();
  const double p = std::sqrt(squared_frobenius_norm(shifted) / 6.0);
  if (!(p > 0.0)) return {1.0, 0.0, 0.0};  // m = mean·I: every vector is an eigenvector
  const double half_det = 0.5 * determinant((1.0 / p) * shifted);
  const double phi = std::acos(std::clamp(half_det, -1.0, 1.0)) / 3.0;
  const double lambda_max = mean + 2.0 * p * std::cos(phi);

  const Mat3 n = m - lambda_max * Mat3::identity();
  const std::array<Vec3, 3> rows = {n.row(0), n.row(1), n.row(2)};
  const std::array<Vec3, 3> candidates = {cross(rows[0], rows[1]), cross(rows[0], rows[2]),
                                          cross(rows[1], rows[2])};
  const auto longest = [](const std::array<Vec3, 3>& vectors) {
    std::size_t best = 0;
    for (std::size_t k = 1; k < 3; ++k) {
      if (squared_norm(vectors[k]) > squared_norm(vectors[best])) best = k;
    }
    return vectors[best];
  };
  const Vec3 candidate = longest(candidates);
  const double scale = squared_frobenius_norm(n);
  if (squared_norm(candidate) > 1e-20 * scale * scale) return normalized(candidate);
  // rank(m − λ1·I) ≤ 1: λ1 is (numerically) a double eigenvalue; its eigenspace is the
  // orthogonal complement of the one remaining row direction.
  const Vec3 row = longest(rows);
  if (!(squared_norm(row) > 0.0)) return {1.0, 0.0, 0.0};
  const Vec3 r = normalized(row);
  const Vec3 axis = std::abs(r.x) < 0.5 ? Vec3{1.0, 0.0, 0.0} : Vec3{0.0, 1.0, 0.0};
  return normalized(axis - dot(r, axis) * r);
}

}  // namespace

PolarDecomposition polar_decomposition(const Mat3& f) {
  const Svd3 svd = svd3(f);
  PolarDecomposition result;
  result.rotation = svd.u * transpose(svd.v);
  result.stretch = svd.v * Mat3::diagonal(svd.singular_values) * transpose(svd.v);
  return result;
}

Mat3 polar_rotation(const Mat3& f) {
  const Svd3 svd = svd3(f);
  return svd.u * transpose(svd.v);
}

ApdLocalModel apd_local_model(const Mat3& rotation, const Mat3& f) {
  const Mat3 b = transpose_times(rotation, f);
  ApdLocalModel model;
  model.objective = 0.5 * squared_frobenius_norm(rotation - f);
  model.gradient = -2.0 * axial_vector(b);                           // seed 003 eq. 24
  model.hessian = trace(b) * Mat3::identity() - symmetric_part(b);  // seed 003 eq. 25
  return model;
}

Quaternion analytic_polar_decomposition(const Mat3& f, Quaternion warm_start, const ApdOptions& options,
                                        ApdStats* stats) {
  ApdStats local;
  Quaternion q = normalized(warm_start);
  const double f_norm = frobenius_norm(f);
  // Relative floors: H, g and tr(Rᵀ·F) scale with ‖F‖, Δω does not.
  const double pivot_floor = 1e-12 * f_norm;
  const double flip_gain_floor = 1e-12 * f_norm;
  const double alignment_slack = 1e-14 * f_norm;
  // Below this step length the quadratic model is exact to rounding: no backtracking test.
  constexpr double kBacktrackMinStep = 1e-4;

  // The last accepted iterate; `pending_step` took us from it to q.
  Quaternion accepted = q;
  double accepted_alignment = 0.0;
  Vec3 pending_step;
  bool check_pending_step = false;

  while (local.iterations < options.max_iterations) {
    ++local.iterations;
    const Mat3 b = transpose_times(to_rotation_matrix(q), f);
    const double alignment = trace(b);  // tr(Rᵀ·F) = const − E_APD
    // Safeguard (not in Algorithm 3): far from the solution a clamped Newton step can
    // overshoot and cycle (seen on inverted elements started at the identity). Every step
    // must raise tr(Rᵀ·F); if the last one did not, retry it at half length. The value is
    // tr B, which this iteration needs anyway, so the check is free on the common path.
    if (check_pending_step && alignment < accepted_alignment - alignment_slack) {
      pending_step *= 0.5;
      q = accepted * cayley_quaternion(pending_step);
      ++local.backtracks;
      local.last_step_norm = norm(pending_step);
      check_pending_step = local.last_step_norm > kBacktrackMinStep;
      continue;
    }
    accepted = q;
    accepted_alignment = alignment;

    // The model of apd_local_model, inlined from B so the hot loop forms R(q) only once.
    const Vec3 gradient = -2.0 * axial_vector(b);
    const Mat3 sym_b = symmetric_part(b);
    const Mat3 hessian = alignment * Mat3::identity() - sym_b;

    const HessianFactor factor = factor_hessian(hessian, pivot_floor);
    if (factor.positive_definite) {
      Vec3 step = -solve(factor, gradient);
      const double step_norm = norm(step);
      // Algorithm 3 line 7: stay inside the chart ‖ω‖ < π of eq. 20.
      if (step_norm > std::numbers::pi) step *= std::numbers::pi / step_norm;
      q = q * cayley_quaternion(step);
      local.last_step_norm = std::min(step_norm, std::numbers::pi);
      if (step_norm < options.tolerance) {
        local.converged = true;
        break;
      }
      pending_step = step;
      check_pending_step = step_norm > kBacktrackMinStep;
      continue;
    }

    // H is not positive definite, i.e. λ2 + λ3 ≤ 0 for the eigenvalues λ1 ≥ λ2 ≥ λ3 of
    // sym(B) (H has eigenvalues tr B − λi). Rotating by π about the eigenvector e of λ1
    // changes tr(Rᵀ·F) from tr B to 2λ1 − tr B, a gain of −2(λ2 + λ3) ≥ 0, and lands where
    // H has eigenvalues −λ2 − λ3, λ1 − λ3, λ1 − λ2 ≥ 0.
    const Vec3 axis = dominant_eigenvector(sym_b);
    const double gain = dot(axis, sym_b * axis) - alignment;
    if (gain > flip_gain_floor) {
      q = q * Quaternion{0.0, axis.x, axis.y, axis.z};
      ++local.flips;
      local.last_step_norm = std::numbers::pi;
      check_pending_step = false;  // a flip raises tr(Rᵀ·F) by construction
      continue;
    }
    // H is positive semidefinite and singular: either a maximizer on a degenerate set
    // (F = −I: every π-rotation maximizes tr(Rᵀ·F)) or a flat direction with a slope.
    const double gradient_norm = norm(gradient);
    if (!(gradient_norm > 1e-14 * f_norm)) {
      local.converged = true;
      local.last_step_norm = 0.0;
      break;
    }
    // A gradient step of length 1/L, with L = 3‖F‖ ≥ ‖H‖₂ bounding the curvature.
    pending_step = (-1.0 / (3.0 * f_norm)) * gradient;
    q = q * cayley_quaternion(pending_step);
    ++local.gradient_steps;
    local.last_step_norm = norm(pending_step);
    check_pending_step = local.last_step_norm > kBacktrackMinStep;
  }
  if (stats != nullptr) *stats = local;
  return q;
}

Quaternion random_rotation(std::mt19937_64& rng, double max_angle_radians) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform;
  Vec3 axis;
  do {
    axis = {normal(rng), normal(rng), normal(rng)};
  } while (!(squared_norm(axis) > 1e-20));
  // Haar measure on SO(3): the angle θ has density ∝ 1 − cos θ on [0, π]. Sample the
  // proposal ∝ θ²/2 (θ = θmax·u^⅓) and accept with probability (1 − cos θ)/(θ²/2) ∈ (0.77, 1].
  const double max_angle = std::min(max_angle_radians, std::numbers::pi);
  double angle = 0.0;
  for (;;) {
    angle = max_angle * std::cbrt(uniform(rng));
    const double ratio = angle > 1e-8 ? (1.0 - std::cos(angle)) / (0.5 * angle * angle) : 1.0;
    if (uniform(rng) < ratio) break;
  }
  return quaternion_from_axis_angle(axis, angle);
}

Mat3 random_near_rotation(std::mt19937_64& rng, const NearRotationSampling& sampling) {
  // Regular tetrahedron with unit edges (any reference shape gives the same distribution
  // of F up to the displacement scale, which is relative to the mean edge length).
  const std::array<Vec3, 4> rest = {Vec3{0.0, 0.0, 0.0}, Vec3{1.0, 0.0, 0.0},
                                    Vec3{0.5, std::sqrt(3.0) / 2.0, 0.0},
                                    Vec3{0.5, std::sqrt(3.0) / 6.0, std::sqrt(2.0 / 3.0)}};
  constexpr double mean_edge_length = 1.0;
  const double radius = sampling.max_displacement_fraction * mean_edge_length;
  std::uniform_real_distribution<double> cube(-1.0, 1.0);
  std::array<Vec3, 4> deformed = rest;
  for (Vec3& vertex : deformed) {
    Vec3 displacement;
    do {
      displacement = {cube(rng), cube(rng), cube(rng)};
    } while (squared_norm(displacement) > 1.0);  // uniform in the unit ball
    vertex += radius * displacement;
  }
  const auto edges = [](const std::array<Vec3, 4>& x) {
    return Mat3::from_columns(x[1] - x[0], x[2] - x[0], x[3] - x[0]);
  };
  const Mat3 deformation = edges(deformed) * inverse(edges(rest));
  const Quaternion rotation = random_rotation(rng, sampling.max_rotation_degrees * std::numbers::pi / 180.0);
  return to_rotation_matrix(rotation) * deformation;
}

}  // namespace cholsim::linalg
