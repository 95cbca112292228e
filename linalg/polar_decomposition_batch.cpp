#include "linalg/polar_decomposition_batch.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace cholsim::linalg {
namespace {

constexpr int kLanes = static_cast<int>(kApdBatchLanes);

/// One block of lanes in registers-friendly layout: f[k][l] is entry k of lane l's F.
struct Block {
  alignas(64) double f[9][kLanes];
  alignas(64) double q[4][kLanes];
  alignas(64) double pivot_floor[kLanes];
  alignas(64) double step_norm_sq[kLanes];  ///< ‖Δω‖² of the last step
  alignas(64) double needs_scalar[kLanes];  ///< 1 once a lane met an indefinite H or a step > π
};

// The step is compiled for AVX-512F and AVX2 besides the baseline and picked at load time
// (GCC function multiversioning), since the library is built without -march=native. Feature
// names, not CPU names: "arch=skylake-avx512" is not selected on AMD Zen 4, which has
// AVX-512. (GCC 12 vectorizes the AVX-512 clone; the AVX2 and baseline clones stay scalar —
// it reports "control flow in loop" for them.)
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define CHOLSIM_APD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CHOLSIM_APD_CLONES
#endif

/// One Newton step of seed 003 Algorithm 3 on every lane: R(q), B = Rᵀ·F, g = −2·axl(B)
/// (eq. 24), H = tr(B)·I − sym(B) (eq. 25), Δω = −H⁻¹g by LDLᵀ clamped to ‖Δω‖ ≤ π (eq. 20's
/// chart), q ← q ∘ cay(Δω). Written without branches (selects only) so it vectorizes; a lane
/// whose H is not positive definite or whose step leaves the chart takes no step and is
/// flagged for the scalar routine.
CHOLSIM_APD_CLONES void newton_step(Block& b) {
  for (int l = 0; l < kLanes; ++l) {
    const double w = b.q[0][l], x = b.q[1][l], y = b.q[2][l], z = b.q[3][l];
    const double r00 = 1.0 - 2.0 * (y * y + z * z), r01 = 2.0 * (x * y - w * z), r02 = 2.0 * (x * z + w * y);
    const double r10 = 2.0 * (x * y + w * z), r11 = 1.0 - 2.0 * (x * x + z * z), r12 = 2.0 * (y * z - w * x);
    const double r20 = 2.0 * (x * z - w * y), r21 = 2.0 * (y * z + w * x), r22 = 1.0 - 2.0 * (x * x + y * y);
    // B = Rᵀ·F: B(i, j) = Σ_k R(k, i)·F(k, j). Spelt out (no inner loop) so that every
    // target's vectorizer sees one straight-line body.
    const double f00 = b.f[0][l], f01 = b.f[1][l], f02 = b.f[2][l];
    const double f10 = b.f[3][l], f11 = b.f[4][l], f12 = b.f[5][l];
    const double f20 = b.f[6][l], f21 = b.f[7][l], f22 = b.f[8][l];
    const double bm[3][3] = {{r00 * f00 + r10 * f10 + r20 * f20, r00 * f01 + r10 * f11 + r20 * f21, r00 * f02 + r10 * f12 + r20 * f22},
                             {r01 * f00 + r11 * f10 + r21 * f20, r01 * f01 + r11 * f11 + r21 * f21, r01 * f02 + r11 * f12 + r21 * f22},
                             {r02 * f00 + r12 * f10 + r22 * f20, r02 * f01 + r12 * f11 + r22 * f21, r02 * f02 + r12 * f12 + r22 * f22}};
    const double trace_b = bm[0][0] + bm[1][1] + bm[2][2];
    const double g0 = -(bm[2][1] - bm[1][2]);
    const double g1 = -(bm[0][2] - bm[2][0]);
    const double g2 = -(bm[1][0] - bm[0][1]);
    const double h00 = trace_b - bm[0][0], h11 = trace_b - bm[1][1], h22 = trace_b - bm[2][2];
    const double h10 = -0.5 * (bm[1][0] + bm[0][1]);
    const double h20 = -0.5 * (bm[2][0] + bm[0][2]);
    const double h21 = -0.5 * (bm[2][1] + bm[1][2]);
    const double floor = b.pivot_floor[l];
    const double d0 = h00;
    // Masks as 0/1 doubles and blends as arithmetic: if-conversion for targets without mask
    // registers (AVX2, SSE2) then needs nothing from the compiler.
    const double ok0 = static_cast<double>(d0 > floor);
    const double d0_safe = ok0 * d0 + (1.0 - ok0);
    const double l10 = h10 / d0_safe, l20 = h20 / d0_safe;
    const double d1 = h11 - l10 * h10;
    const double ok1 = static_cast<double>(d1 > floor);
    const double d1_safe = ok1 * d1 + (1.0 - ok1);
    const double l21 = (h21 - l20 * h10) / d1_safe;
    const double d2 = h22 - l20 * h20 - l21 * l21 * d1;
    const double ok2 = static_cast<double>(d2 > floor);
    const double d2_safe = ok2 * d2 + (1.0 - ok2);
    // Δω = −H⁻¹·g through L·D·Lᵀ.
    const double y0 = -g0, y1 = -g1 - l10 * y0, y2 = -g2 - l20 * y0 - l21 * y1;
    const double s2 = y2 / d2_safe;
    const double s1 = y1 / d1_safe - l21 * s2;
    const double s0 = y0 / d0_safe - l10 * s1 - l20 * s2;
    // A step longer than π would leave the chart of eq. 20: the lane is far from its answer,
    // which is the scalar routine's business (it clamps and backtracks). Comparing squares
    // keeps sqrt — and its errno path, which blocks vectorization — out of the loop.
    const double length_sq = s0 * s0 + s1 * s1 + s2 * s2;
    const double usable = ok0 * ok1 * ok2 * static_cast<double>(length_sq <= std::numbers::pi * std::numbers::pi);
    const double scale = 0.25 * usable;  // ¼: the Cayley quarter-step
    const double a0 = scale * s0, a1 = scale * s1, a2 = scale * s2;
    const double quarter_sq = a0 * a0 + a1 * a1 + a2 * a2;
    const double inv = 1.0 / (1.0 + quarter_sq);
    const double cw = (1.0 - quarter_sq) * inv, cx = 2.0 * inv * a0, cy = 2.0 * inv * a1, cz = 2.0 * inv * a2;
    b.q[0][l] = w * cw - x * cx - y * cy - z * cz;
    b.q[1][l] = w * cx + x * cw + y * cz - z * cy;
    b.q[2][l] = w * cy - x * cz + y * cw + z * cx;
    b.q[3][l] = w * cz + x * cy - y * cx + z * cw;
    b.step_norm_sq[l] = usable * length_sq;
    b.needs_scalar[l] = std::max(b.needs_scalar[l], 1.0 - usable);
  }
}

void check_sizes(const Mat3Arrays& gradients, const QuaternionArrays& rotations, Index begin, Index end) {
  const Index n = gradients.size();
  for (const auto& entry : gradients.entries) {
    if (static_cast<Index>(entry.size()) != n) {
      throw std::invalid_argument("analytic_polar_decomposition_batch: the nine gradient arrays differ in length");
    }
  }
  if (rotations.size() != n || static_cast<Index>(rotations.x.size()) != n ||
      static_cast<Index>(rotations.y.size()) != n || static_cast<Index>(rotations.z.size()) != n) {
    throw std::invalid_argument("analytic_polar_decomposition_batch: " + std::to_string(n) +
                                " gradients but quaternion arrays of another length");
  }
  if (begin < 0 || begin > end || end > n) {
    throw std::invalid_argument("analytic_polar_decomposition_batch: range [" + std::to_string(begin) + ", " +
                                std::to_string(end) + ") outside 0.." + std::to_string(n));
  }
}

}  // namespace

Quaternion QuaternionArrays::get(Index e) const {
  const auto i = static_cast<std::size_t>(e);
  return {w[i], x[i], y[i], z[i]};
}

void QuaternionArrays::set(Index e, const Quaternion& q) const {
  const auto i = static_cast<std::size_t>(e);
  w[i] = q.w;
  x[i] = q.x;
  y[i] = q.y;
  z[i] = q.z;
}

ApdBatchStats analytic_polar_decomposition_batch(const Mat3Arrays& gradients, const QuaternionArrays& rotations,
                                                 const ApdOptions& options) {
  return analytic_polar_decomposition_batch(gradients, rotations, 0, gradients.size(), options);
}

ApdBatchStats analytic_polar_decomposition_batch(const Mat3Arrays& gradients, const QuaternionArrays& rotations,
                                                 Index begin, Index end, const ApdOptions& options) {
  check_sizes(gradients, rotations, begin, end);
  ApdBatchStats stats;
  Block block;
  for (Index first = begin; first < end; first += kApdBatchLanes) {
    const int lanes = static_cast<int>(std::min<Index>(kApdBatchLanes, end - first));
    std::array<Quaternion, kApdBatchLanes> warm_starts{};
    for (int l = 0; l < kLanes; ++l) {
      // Padding lanes solve F = I from the identity: converged at once, never flagged.
      const bool real = l < lanes;
      const auto e = static_cast<std::size_t>(first + l);
      double norm_sq = 0.0;
      for (int k = 0; k < 9; ++k) {
        block.f[k][l] = real ? gradients.entries[static_cast<std::size_t>(k)][e] : (k % 4 == 0 ? 1.0 : 0.0);
        norm_sq += block.f[k][l] * block.f[k][l];
      }
      warm_starts[static_cast<std::size_t>(l)] = real ? normalized(rotations.get(first + l)) : Quaternion{};
      const Quaternion& q = warm_starts[static_cast<std::size_t>(l)];
      block.q[0][l] = q.w;
      block.q[1][l] = q.x;
      block.q[2][l] = q.y;
      block.q[3][l] = q.z;
      // Same relative pivot floor as the scalar routine: H scales with ‖F‖.
      block.pivot_floor[l] = 1e-12 * std::sqrt(norm_sq);
      block.needs_scalar[l] = 0.0;
    }
    const double tolerance_sq = options.tolerance * options.tolerance;
    bool converged = false;
    for (int iteration = 0; iteration < options.max_iterations && !converged; ++iteration) {
      newton_step(block);
      ++stats.vector_iterations;
      converged = std::all_of(block.step_norm_sq, block.step_norm_sq + kLanes,
                              [&](double s) { return s < tolerance_sq; });
    }
    for (int l = 0; l < lanes; ++l) {
      if (block.needs_scalar[l] == 0.0) {
        // A lane stopped by max_iterations keeps its iterate, as the scalar routine would.
        if (!(block.step_norm_sq[l] < tolerance_sq)) ++stats.unconverged;
        rotations.set(first + l, {block.q[0][l], block.q[1][l], block.q[2][l], block.q[3][l]});
        continue;
      }
      Mat3 f;
      for (int k = 0; k < 9; ++k) f.entries[static_cast<std::size_t>(k)] = block.f[k][l];
      ApdStats scalar;
      rotations.set(first + l, analytic_polar_decomposition(f, warm_starts[static_cast<std::size_t>(l)], options, &scalar));
      ++stats.scalar_fallbacks;
      if (!scalar.converged) ++stats.unconverged;
    }
  }
  return stats;
}

}  // namespace cholsim::linalg
