#include "linalg/svd3.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace cholsim::linalg {
namespace {

constexpr double kEpsilon = std::numeric_limits<double>::epsilon();
constexpr int kMaxSweeps = 32;

/// A unit vector orthogonal to the unit vector `u`: the coordinate axis least aligned with
/// u, with its u-component removed.
Vec3 any_orthogonal_unit(const Vec3& u) {
  const double ax = std::abs(u.x), ay = std::abs(u.y), az = std::abs(u.z);
  Vec3 axis{0.0, 0.0, 1.0};
  if (ax <= ay && ax <= az) {
    axis = {1.0, 0.0, 0.0};
  } else if (ay <= az) {
    axis = {0.0, 1.0, 0.0};
  }
  return normalized(axis - dot(u, axis) * u);
}

}  // namespace

Svd3 svd3(const Mat3& f, Svd3Stats* stats) {
  // g[j] = F·v[j]; every rotation below is applied to both, so F = G·Vᵀ holds throughout.
  std::array<Vec3, 3> g = {f.col(0), f.col(1), f.col(2)};
  std::array<Vec3, 3> v = {Vec3{1.0, 0.0, 0.0}, Vec3{0.0, 1.0, 0.0}, Vec3{0.0, 0.0, 1.0}};
  constexpr std::array<std::pair<int, int>, 3> pairs = {{{0, 1}, {0, 2}, {1, 2}}};

  Svd3Stats local;
  while (local.sweeps < kMaxSweeps) {
    ++local.sweeps;
    bool rotated = false;
    for (const auto& [p, q] : pairs) {
      const double alpha = squared_norm(g[p]);
      const double beta = squared_norm(g[q]);
      const double gamma = dot(g[p], g[q]);
      // Relative orthogonality test (Demmel–Veselić): what makes one-sided Jacobi accurate
      // for small singular values. Written as !(>) so a NaN input terminates.
      if (!(std::abs(gamma) > kEpsilon * std::sqrt(alpha) * std::sqrt(beta))) continue;
      // The rotation that diagonalizes the 2×2 Gram matrix [[α, γ], [γ, β]]; t is the
      // smaller root of t² + 2ζt − 1 = 0, so |angle| ≤ π/4 (Rutishauser's formulation).
      const double zeta = (beta - alpha) / (2.0 * gamma);
      const double t = std::abs(zeta) > 1e150
                           ? 0.5 / zeta
                           : std::copysign(1.0, zeta) / (std::abs(zeta) + std::sqrt(1.0 + zeta * zeta));
      const double c = 1.0 / std::sqrt(1.0 + t * t);
      const double s = c * t;
      const Vec3 gp = g[p], vp = v[p];
      g[p] = c * gp - s * g[q];
      g[q] = s * gp + c * g[q];
      v[p] = c * vp - s * v[q];
      v[q] = s * vp + c * v[q];
      ++local.rotations;
      rotated = true;
    }
    if (!rotated) {
      local.converged = true;
      break;
    }
  }

  // Sort the columns by decreasing norm (three compare-and-swaps), keeping g and v paired.
  std::array<double, 3> norms = {norm(g[0]), norm(g[1]), norm(g[2])};
  const auto order = [&](int a, int b) {
    if (norms[a] < norms[b]) {
      std::swap(norms[a], norms[b]);
      std::swap(g[a], g[b]);
      std::swap(v[a], v[b]);
    }
  };
  order(0, 1);
  order(1, 2);
  order(0, 1);
  // Swaps may have made V a reflection; negating one column pair keeps F = G·Vᵀ.
  Mat3 v_matrix = Mat3::from_columns(v[0], v[1], v[2]);
  if (determinant(v_matrix) < 0.0) {
    g[2] = -g[2];
    v[2] = -v[2];
    v_matrix.set_col(2, v[2]);
  }
  if (stats != nullptr) *stats = local;

  Svd3 result;
  result.v = v_matrix;
  if (norms[0] == 0.0) {  // F = 0: U = I, σ = 0
    result.singular_values = {0.0, 0.0, 0.0};
    return result;
  }

  const Vec3 u0 = g[0] / norms[0];
  // g[1] is already orthogonal to u0 to ε relative; one Gram–Schmidt pass removes the rest.
  // Below ε²·σ1 the column is rounding noise of a rank-1 F: any orthogonal direction will do.
  const Vec3 w1 = g[1] - dot(u0, g[1]) * u0;
  const double w1_norm = norm(w1);
  const Vec3 u1 = w1_norm > kEpsilon * kEpsilon * norms[0] ? w1 / w1_norm : any_orthogonal_unit(u0);
  // u2 = u0 × u1 makes det U = +1 by construction; the orientation of F then shows up as the
  // sign of u2ᵀg[2], which becomes the sign of σ3 (Irving et al.'s inversion convention).
  const Vec3 u2 = cross(u0, u1);
  const double sigma2 = std::copysign(norms[2], dot(u2, g[2]));

  result.u = Mat3::from_columns(u0, u1, u2);
  result.singular_values = {norms[0], norms[1], sigma2};
  return result;
}

}  // namespace cholsim::linalg
