#pragma once
// What a numeric factorization will allocate, predicted from the symbolic analysis alone, so
// that a caller can refuse an impossible request before allocating (issue 23, "memory
// admission") instead of being killed by the operating system half-way through.
#include <algorithm>
#include <cstdint>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"

namespace cholsim::factor {

struct MemoryEstimate {
  std::int64_t symbolic_bytes = 0;   ///< the analysis itself (held for the factor's lifetime)
  std::int64_t factor_bytes = 0;     ///< L's values (a Schur complement's S included)
  /// Most bytes in update blocks at once, as the factorization's tree schedule for the given
  /// thread count would hold them if every supernode took time ∝ its flops. Exact for one
  /// thread: FactorStats::peak_update_bytes equals it.
  std::int64_t peak_update_bytes = 0;
  /// An upper bound on peak_update_bytes over every order the tree allows (any thread count,
  /// any timing): the heaviest set of blocks that can be alive together.
  std::int64_t peak_update_bound_bytes = 0;
  /// Update blocks kept after the factorization for refactorize (retain_update_blocks).
  std::int64_t retained_update_bytes = 0;
  /// Without retain_update_blocks the blocks are placed first-fit in one arena
  /// (first_fit_placement.hpp): its high-water mark, replayed in the same order as
  /// peak_update_bytes (exact for one thread: FactorStats::update_arena_bytes equals it).
  /// At least peak_update_bytes; 0 with retain_update_blocks (blocks allocated one by one).
  std::int64_t update_arena_bytes = 0;
  /// Supernodes computed left-looking (FactorOptions::left_looking_update_bytes) and the
  /// buffers their threads hold (left_looking_top.hpp); the blocks above are then the
  /// columns the others keep.
  Index left_looking_supernodes = 0;
  std::int64_t left_looking_workspace_bytes = 0;
  /// Per-supernode arrays of the call (costs, times, flags, block handles): an approximation.
  std::int64_t bookkeeping_bytes = 0;
  /// The memory the update blocks take at their predicted peak: the arena's pages, or the
  /// blocks allocated one by one (retained ones included: they are never released).
  [[nodiscard]] std::int64_t update_block_memory_bytes() const {
    return std::max(peak_update_bytes, update_arena_bytes);
  }
  /// What the factorization call adds to the process: L, the update blocks, the left-looking
  /// workspace and the bookkeeping.
  [[nodiscard]] std::int64_t factorization_bytes() const {
    return factor_bytes + update_block_memory_bytes() + left_looking_workspace_bytes + bookkeeping_bytes;
  }
};

/// Predicts the bytes `Factor::factorize(a, options)` will allocate for this analysis.
/// Threads are resolved as the factorization resolves them (0: all hardware threads).
MemoryEstimate estimate_factor_memory(const Symbolic& symbolic, const FactorOptions& options);

}  // namespace cholsim::factor
