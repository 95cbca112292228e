#pragma once
// The analytic polar decomposition (seed 003 §3.3) of many deformation gradients at once,
// laid out structure-of-arrays so that the Newton iteration runs as straight-line code over
// a block of lanes the compiler turns into SIMD instructions (seed 003 §4: "All steps of our
// algorithm are explicitly vectorized using AVX instructions"; 8 APDs at once in Table 4).
//
// The vector path is Algorithm 3 as printed: Newton steps Δω = −H⁻¹g (eq. 22–25), clamped to
// ‖Δω‖ ≤ π, applied through the Cayley quaternion, until every lane of the block has taken a
// step below the tolerance. A lane that meets a Hessian that is not positive definite (an
// inverted or badly rotated element, where the scalar analytic_polar_decomposition takes its
// flip step) or a step longer than π (far from its answer, where the scalar routine clamps
// and backtracks) is recomputed by the scalar routine from its original warm start, so the
// batch returns what the scalar APD returns for those lanes and agrees with it to the
// tolerance for the others. A lane stopped by max_iterations keeps its last iterate.
#include <array>
#include <cstdint>
#include <span>

#include "linalg/index_types.hpp"
#include "linalg/polar_decomposition.hpp"

namespace cholsim::linalg {

/// Lanes processed together by the vector path.
inline constexpr Index kApdBatchLanes = 8;
/// Blocks of lanes iterated together: the steps of one block are a chain of dependent
/// operations (divisions among them), and issuing two independent blocks' steps back to back
/// lets the core overlap them.
inline constexpr Index kApdInterleavedBlocks = 2;

/// One block of lanes in the layout of the vector path, for callers that build F and use R in
/// the same pass over their elements (fem/opsplit_element_pass) rather than through arrays.
/// A block is one 64-byte vector per entry: 8 lanes of double, 16 of float (the single-precision
/// pass of seed 003's own code, which iterates in float on AVX vectors).
template <typename Real>
struct ApdBlockOf {
  static constexpr int kLanes = static_cast<int>(64 / sizeof(Real));
  alignas(64) Real f[9][kLanes];  ///< f[k][l]: entry k (row-major) of lane l's F
  alignas(64) Real q[4][kLanes];  ///< (w, x, y, z) of lane l: warm start in, rotation out
};
using ApdBlock = ApdBlockOf<double>;
static_assert(ApdBlock::kLanes == kApdBatchLanes);

/// Deformation gradients as nine arrays: entries[3·i + j][e] = F_e(i, j) (row-major entry
/// order, as Mat3::entries). All nine spans have the same length, the element count.
struct Mat3Arrays {
  std::array<std::span<const double>, 9> entries;
  [[nodiscard]] Index size() const { return static_cast<Index>(entries[0].size()); }
};

/// Quaternions as four arrays (w, x, y, z), one entry per element, updated in place.
struct QuaternionArrays {
  std::span<double> w, x, y, z;
  [[nodiscard]] Index size() const { return static_cast<Index>(w.size()); }
  [[nodiscard]] Quaternion get(Index e) const;
  void set(Index e, const Quaternion& q) const;
};

/// What one batch call did.
struct ApdBatchStats {
  std::int64_t vector_iterations = 0;  ///< Newton iterations of the vector path, summed over blocks
  Index scalar_fallbacks = 0;          ///< lanes recomputed by analytic_polar_decomposition
  Index unconverged = 0;               ///< lanes stopped by options.max_iterations (either path)
};

/// For every element e: rotations[e] ← APD(F_e) warm-started from rotations[e] (normalized
/// first), with options.tolerance on ‖Δω‖ and options.max_iterations per lane. Throws
/// std::invalid_argument when the arrays' lengths differ. Elements [begin, end) only when the
/// overload with a range is used (for splitting the work over threads).
ApdBatchStats analytic_polar_decomposition_batch(const Mat3Arrays& gradients, const QuaternionArrays& rotations,
                                                 const ApdOptions& options = {});
ApdBatchStats analytic_polar_decomposition_batch(const Mat3Arrays& gradients, const QuaternionArrays& rotations,
                                                 Index begin, Index end, const ApdOptions& options = {});

/// The batch routine on up to kApdInterleavedBlocks blocks at once: lanes [0, lanes[b]) of
/// blocks[b].q become the APD of blocks[b].f, warm-started from blocks[b].q; the other lanes
/// are padding, set to F = I and q = identity (converged at once). Each block iterates until
/// its own lanes have converged, as if it were alone (vector_iterations counts per block). The
/// warm starts must be unit to rounding, as the routine's own results are: they are
/// renormalized to first order, (3 − ‖q‖²)/2·q, which keeps repeated use from drifting
/// without a square root. Same stopping rule, statistics and scalar fallback as
/// analytic_polar_decomposition_batch. Throws std::invalid_argument when the spans' sizes
/// differ, exceed kApdInterleavedBlocks, or a lane count lies outside [0, ApdBlockOf::kLanes].
/// The float overload iterates in single precision (16 lanes a block); lanes that need the
/// scalar routine are recomputed in double and rounded back.
ApdBatchStats analytic_polar_decomposition_blocks(std::span<ApdBlockOf<double>> blocks, std::span<const int> lanes,
                                                  const ApdOptions& options = {});
ApdBatchStats analytic_polar_decomposition_blocks(std::span<ApdBlockOf<float>> blocks, std::span<const int> lanes,
                                                  const ApdOptions& options = {});

}  // namespace cholsim::linalg
