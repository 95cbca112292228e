#include "linalg/polar_decomposition_batch.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

namespace cholsim::linalg {
namespace {

/// Per-lane state of the Newton iteration beside the block's F and q.
template <typename Real>
struct LaneState {
  static constexpr int kLanes = ApdBlockOf<Real>::kLanes;
  alignas(64) Real pivot_floor_sq[kLanes];  ///< (1e-12·‖F‖)²: the scalar routine's relative pivot floor, squared
  alignas(64) Real step_norm_sq[kLanes];    ///< ‖Δω‖² of the last step
  alignas(64) Real needs_scalar[kLanes];    ///< 1 once a lane met an indefinite H or a step > π
  alignas(64) Real warm_start[4][kLanes];   ///< q before the first step, for the scalar fallback
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

/// Renormalizes the warm starts to first order and sets up the lane state. Square-root free
/// (the pivot floor is kept squared) so that the loop vectorizes: a vector sqrt needs
/// -fno-math-errno, which the build lacks. Inlined into one clone set per precision below
/// (target_clones does not apply to templates).
template <typename Real>
[[gnu::always_inline]] inline void prepare_lanes_of(ApdBlockOf<Real>& __restrict b, LaneState<Real>& __restrict s) {
  constexpr int kLanes = ApdBlockOf<Real>::kLanes;
  for (int l = 0; l < kLanes; ++l) {
    Real norm_sq = 0;
    for (int k = 0; k < 9; ++k) norm_sq += b.f[k][l] * b.f[k][l];
    s.pivot_floor_sq[l] = Real(1e-24) * norm_sq;
    const Real q_norm_sq = b.q[0][l] * b.q[0][l] + b.q[1][l] * b.q[1][l] + b.q[2][l] * b.q[2][l] + b.q[3][l] * b.q[3][l];
    const Real renormalize = Real(0.5) * (Real(3) - q_norm_sq);  // 1/√(1 + ε) to O(ε²)
    for (int k = 0; k < 4; ++k) {
      b.q[k][l] *= renormalize;
      s.warm_start[k][l] = b.q[k][l];
    }
    s.step_norm_sq[l] = std::numeric_limits<Real>::infinity();  // no step taken yet
    s.needs_scalar[l] = 0;
  }
}

/// One Newton step of seed 003 Algorithm 3 on every lane: R(q), B = Rᵀ·F, g = −2·axl(B)
/// (eq. 24), H = tr(B)·I − sym(B) (eq. 25), Δω = −H⁻¹g clamped to ‖Δω‖ ≤ π (eq. 20's
/// chart), q ← q ∘ cay(Δω). Written without branches (selects only) so it vectorizes; a lane
/// whose H is not positive definite or whose step leaves the chart takes no step and is
/// flagged for the scalar routine.
// __restrict: without it GCC 12 finds "control flow" and vectorizes nothing.
template <typename Real>
[[gnu::always_inline]] inline void newton_step_of(ApdBlockOf<Real>& __restrict b, LaneState<Real>& __restrict s) {
  constexpr int kLanes = ApdBlockOf<Real>::kLanes;
  for (int l = 0; l < kLanes; ++l) {
    const Real w = b.q[0][l], x = b.q[1][l], y = b.q[2][l], z = b.q[3][l];
    const Real r00 = Real(1) - Real(2) * (y * y + z * z), r01 = Real(2) * (x * y - w * z), r02 = Real(2) * (x * z + w * y);
    const Real r10 = Real(2) * (x * y + w * z), r11 = Real(1) - Real(2) * (x * x + z * z), r12 = Real(2) * (y * z - w * x);
    const Real r20 = Real(2) * (x * z - w * y), r21 = Real(2) * (y * z + w * x), r22 = Real(1) - Real(2) * (x * x + y * y);
    // B = Rᵀ·F: B(i, j) = Σ_k R(k, i)·F(k, j). Spelt out (no inner loop) so that every
    // target's vectorizer sees one straight-line body.
    const Real f00 = b.f[0][l], f01 = b.f[1][l], f02 = b.f[2][l];
    const Real f10 = b.f[3][l], f11 = b.f[4][l], f12 = b.f[5][l];
    const Real f20 = b.f[6][l], f21 = b.f[7][l], f22 = b.f[8][l];
    const Real bm[3][3] = {{r00 * f00 + r10 * f10 + r20 * f20, r00 * f01 + r10 * f11 + r20 * f21, r00 * f02 + r10 * f12 + r20 * f22},
                             {r01 * f00 + r11 * f10 + r21 * f20, r01 * f01 + r11 * f11 + r21 * f21, r01 * f02 + r11 * f12 + r21 * f22},
                             {r02 * f00 + r12 * f10 + r22 * f20, r02 * f01 + r12 * f11 + r22 * f21, r02 * f02 + r12 * f12 + r22 * f22}};
    const Real trace_b = bm[0][0] + bm[1][1] + bm[2][2];
    const Real g0 = -(bm[2][1] - bm[1][2]);
    const Real g1 = -(bm[0][2] - bm[2][0]);
    const Real g2 = -(bm[1][0] - bm[0][1]);
    const Real h00 = trace_b - bm[0][0], h11 = trace_b - bm[1][1], h22 = trace_b - bm[2][2];
    const Real h10 = Real(-0.5) * (bm[1][0] + bm[0][1]);
    const Real h20 = Real(-0.5) * (bm[2][0] + bm[0][2]);
    const Real h21 = Real(-0.5) * (bm[2][1] + bm[1][2]);
    // Δω = −H⁻¹·g by the adjugate: one division where L·D·Lᵀ has three in a row, which
    // shortens the dependency chain the step's latency is made of. The pivots of L·D·Lᵀ are the
    // ratios of the leading minors, d0 = m1, d1 = m2/m1, d2 = det/m2, so "every pivot above the
    // scalar routine's floor 1e-12·‖F‖" (H positive definite, not nearly singular) reads, with
    // squares instead of a square root, m1 > 0, m1² > f², m2 > 0, m2² > f²·m1², det > 0,
    // det² > f²·m2² (f² = floor²).
    const Real floor_sq = s.pivot_floor_sq[l];
    const Real c00 = h11 * h22 - h21 * h21, c01 = h20 * h21 - h10 * h22, c02 = h10 * h21 - h11 * h20;
    const Real c11 = h00 * h22 - h20 * h20, c12 = h10 * h20 - h00 * h21, c22 = h00 * h11 - h10 * h10;
    const Real det = h00 * c00 + h10 * c01 + h20 * c02;
    const auto above_floor = [floor_sq](Real minor, Real previous_minor) {
      return static_cast<Real>(minor > 0) * static_cast<Real>(minor * minor > floor_sq * previous_minor * previous_minor);
    };
    // Masks as 0/1 doubles and blends as arithmetic: if-conversion for targets without mask
    // registers (AVX2, SSE2) then needs nothing from the compiler.
    const Real definite = above_floor(h00, Real(1)) * above_floor(c22, h00) * above_floor(det, c22);
    const Real inverse_det = Real(1) / (definite * det + (Real(1) - definite));
    const Real s0 = -(c00 * g0 + c01 * g1 + c02 * g2) * inverse_det;
    const Real s1 = -(c01 * g0 + c11 * g1 + c12 * g2) * inverse_det;
    const Real s2 = -(c02 * g0 + c12 * g1 + c22 * g2) * inverse_det;
    // A step longer than π would leave the chart of eq. 20: the lane is far from its answer,
    // which is the scalar routine's business (it clamps and backtracks). Comparing squares
    // keeps sqrt — and its errno path, which blocks vectorization — out of the loop.
    const Real length_sq = s0 * s0 + s1 * s1 + s2 * s2;
    const Real usable = definite * static_cast<Real>(length_sq <= std::numbers::pi_v<Real> * std::numbers::pi_v<Real>);
    const Real scale = Real(0.25) * usable;  // ¼: the Cayley quarter-step
    const Real a0 = scale * s0, a1 = scale * s1, a2 = scale * s2;
    const Real quarter_sq = a0 * a0 + a1 * a1 + a2 * a2;
    const Real inv = Real(1) / (Real(1) + quarter_sq);
    const Real cw = (Real(1) - quarter_sq) * inv, cx = Real(2) * inv * a0, cy = Real(2) * inv * a1, cz = Real(2) * inv * a2;
    b.q[0][l] = w * cw - x * cx - y * cy - z * cz;
    b.q[1][l] = w * cx + x * cw + y * cz - z * cy;
    b.q[2][l] = w * cy - x * cz + y * cw + z * cx;
    b.q[3][l] = w * cz + x * cy - y * cx + z * cw;
    s.step_norm_sq[l] = usable * length_sq;
    s.needs_scalar[l] = std::max(s.needs_scalar[l], Real(1) - usable);
  }
}

/// Lanes [0, count) whose last step was not below the tolerance (NaN included) and, with
/// `vector_lanes_only`, are not flagged for the scalar routine. Counted without branches and
/// vectorized: the outcome varies from lane to lane, and mispredicted per-lane tests cost more
/// than the counting. `tolerance_sq` is the squared tolerance rounded up to Real, so that the
/// float comparison decides as a double one would.
template <typename Real>
[[gnu::always_inline]] inline int moving_lanes_of(const LaneState<Real>& __restrict s, int count, Real tolerance_sq,
                                                  bool vector_lanes_only) {
  const Real scalar_weight = vector_lanes_only ? Real(1) : Real(0);
  Real moving = 0;
  for (int l = 0; l < count; ++l) {
    const Real still_moving = static_cast<Real>(!(s.step_norm_sq[l] < tolerance_sq));
    moving += still_moving * (Real(1) - scalar_weight * s.needs_scalar[l]);
  }
  return static_cast<int>(moving);
}

/// Lanes [0, count) flagged for the scalar routine.
template <typename Real>
[[gnu::always_inline]] inline int scalar_lanes_of(const LaneState<Real>& __restrict s, int count) {
  Real flagged = 0;
  for (int l = 0; l < count; ++l) flagged += s.needs_scalar[l];
  return static_cast<int>(flagged);
}

CHOLSIM_APD_CLONES void prepare_lanes(ApdBlockOf<double>& __restrict b, LaneState<double>& __restrict s) { prepare_lanes_of(b, s); }
CHOLSIM_APD_CLONES void prepare_lanes(ApdBlockOf<float>& __restrict b, LaneState<float>& __restrict s) { prepare_lanes_of(b, s); }
CHOLSIM_APD_CLONES void newton_step(ApdBlockOf<double>& __restrict b, LaneState<double>& __restrict s) { newton_step_of(b, s); }
CHOLSIM_APD_CLONES void newton_step(ApdBlockOf<float>& __restrict b, LaneState<float>& __restrict s) { newton_step_of(b, s); }
CHOLSIM_APD_CLONES int moving_lanes(const LaneState<double>& s, int count, double tolerance_sq, bool vector_lanes_only) {
  return moving_lanes_of(s, count, tolerance_sq, vector_lanes_only);
}
CHOLSIM_APD_CLONES int moving_lanes(const LaneState<float>& s, int count, float tolerance_sq, bool vector_lanes_only) {
  return moving_lanes_of(s, count, tolerance_sq, vector_lanes_only);
}
CHOLSIM_APD_CLONES int scalar_lanes(const LaneState<double>& s, int count) { return scalar_lanes_of(s, count); }
CHOLSIM_APD_CLONES int scalar_lanes(const LaneState<float>& s, int count) { return scalar_lanes_of(s, count); }

/// The smallest Real ≥ value: for every Real x, x < rounded_up(t) exactly when double(x) < t.
template <typename Real>
Real rounded_up(double value) {
  Real rounded = static_cast<Real>(value);
  if (static_cast<double>(rounded) < value) rounded = std::nextafter(rounded, std::numeric_limits<Real>::infinity());
  return rounded;
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

namespace {

template <typename Real>
ApdBatchStats iterate_blocks(std::span<ApdBlockOf<Real>> blocks, std::span<const int> lanes, const ApdOptions& options) {
  constexpr int kLanes = ApdBlockOf<Real>::kLanes;
  if (blocks.size() != lanes.size() || static_cast<Index>(blocks.size()) > kApdInterleavedBlocks) {
    throw std::invalid_argument("analytic_polar_decomposition_blocks: " + std::to_string(blocks.size()) +
                                " blocks with " + std::to_string(lanes.size()) + " lane counts (at most " +
                                std::to_string(kApdInterleavedBlocks) + " blocks)");
  }
  for (int count : lanes) {
    if (count < 0 || count > kLanes) {
      throw std::invalid_argument("analytic_polar_decomposition_blocks: " + std::to_string(count) +
                                  " lanes outside 0.." + std::to_string(kLanes));
    }
  }
  std::array<LaneState<Real>, kApdInterleavedBlocks> states;
  std::array<bool, kApdInterleavedBlocks> converged{};
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    for (int l = lanes[b]; l < kLanes; ++l) {  // padding: F = I from the identity, converged at once
      for (int k = 0; k < 9; ++k) blocks[b].f[k][l] = k % 4 == 0 ? Real(1) : Real(0);
      for (int k = 0; k < 4; ++k) blocks[b].q[k][l] = k == 0 ? Real(1) : Real(0);
    }
    prepare_lanes(blocks[b], states[b]);
  }
  const Real tolerance_sq = rounded_up<Real>(options.tolerance * options.tolerance);
  ApdBatchStats stats;
  for (int iteration = 0; iteration < options.max_iterations; ++iteration) {
    bool all_converged = true;
    // The blocks' steps are independent: issued back to back, the out-of-order core overlaps
    // them, where one block alone waits on its own chain of divisions.
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      if (converged[b]) continue;
      newton_step(blocks[b], states[b]);
      ++stats.vector_iterations;
    }
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      converged[b] = converged[b] || moving_lanes(states[b], kLanes, tolerance_sq, false) == 0;
      all_converged = all_converged && converged[b];
    }
    if (all_converged) break;
  }
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const LaneState<Real>& state = states[b];
    // A lane stopped by max_iterations keeps its iterate, as the scalar routine would.
    stats.unconverged += moving_lanes(state, lanes[b], tolerance_sq, true);
    if (scalar_lanes(state, lanes[b]) == 0) continue;
    for (int l = 0; l < lanes[b]; ++l) {
      if (state.needs_scalar[l] == 0) continue;
      Mat3 f;
      for (int k = 0; k < 9; ++k) f.entries[static_cast<std::size_t>(k)] = blocks[b].f[k][l];
      const Quaternion warm_start{state.warm_start[0][l], state.warm_start[1][l], state.warm_start[2][l],
                                  state.warm_start[3][l]};
      ApdStats scalar;
      const Quaternion q = analytic_polar_decomposition(f, warm_start, options, &scalar);
      blocks[b].q[0][l] = static_cast<Real>(q.w);
      blocks[b].q[1][l] = static_cast<Real>(q.x);
      blocks[b].q[2][l] = static_cast<Real>(q.y);
      blocks[b].q[3][l] = static_cast<Real>(q.z);
      ++stats.scalar_fallbacks;
      if (!scalar.converged) ++stats.unconverged;
    }
  }
  return stats;
}

}  // namespace

ApdBatchStats analytic_polar_decomposition_blocks(std::span<ApdBlockOf<double>> blocks, std::span<const int> lanes,
                                                  const ApdOptions& options) {
  return iterate_blocks(blocks, lanes, options);
}

ApdBatchStats analytic_polar_decomposition_blocks(std::span<ApdBlockOf<float>> blocks, std::span<const int> lanes,
                                                  const ApdOptions& options) {
  return iterate_blocks(blocks, lanes, options);
}

ApdBatchStats analytic_polar_decomposition_batch(const Mat3Arrays& gradients, const QuaternionArrays& rotations,
                                                 Index begin, Index end, const ApdOptions& options) {
  check_sizes(gradients, rotations, begin, end);
  ApdBatchStats stats;
  std::array<ApdBlock, kApdInterleavedBlocks> blocks{};
  std::array<int, kApdInterleavedBlocks> lanes{};
  constexpr Index kGroup = kApdBatchLanes * kApdInterleavedBlocks;
  for (Index group = begin; group < end; group += kGroup) {
    const auto count = static_cast<std::size_t>((std::min(kGroup, end - group) + kApdBatchLanes - 1) / kApdBatchLanes);
    for (std::size_t b = 0; b < count; ++b) {
      const Index first = group + static_cast<Index>(b) * kApdBatchLanes;
      lanes[b] = static_cast<int>(std::min<Index>(kApdBatchLanes, end - first));
      for (int l = 0; l < lanes[b]; ++l) {
        const auto e = static_cast<std::size_t>(first + l);
        for (int k = 0; k < 9; ++k) blocks[b].f[k][l] = gradients.entries[static_cast<std::size_t>(k)][e];
        // Arbitrary warm starts are normalized exactly here; the blocks only renormalize.
        const Quaternion q = normalized(rotations.get(first + l));
        blocks[b].q[0][l] = q.w;
        blocks[b].q[1][l] = q.x;
        blocks[b].q[2][l] = q.y;
        blocks[b].q[3][l] = q.z;
      }
    }
    const ApdBatchStats group_stats =
        analytic_polar_decomposition_blocks(std::span(blocks).first(count), std::span<const int>(lanes).first(count), options);
    stats.vector_iterations += group_stats.vector_iterations;
    stats.scalar_fallbacks += group_stats.scalar_fallbacks;
    stats.unconverged += group_stats.unconverged;
    for (std::size_t b = 0; b < count; ++b) {
      const Index first = group + static_cast<Index>(b) * kApdBatchLanes;
      for (int l = 0; l < lanes[b]; ++l) {
        rotations.set(first + l, {blocks[b].q[0][l], blocks[b].q[1][l], blocks[b].q[2][l], blocks[b].q[3][l]});
      }
    }
  }
  return stats;
}

}  // namespace cholsim::linalg
