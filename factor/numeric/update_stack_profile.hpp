#pragma once
// The memory of update blocks over the course of a sequential multifrontal factorization
// (seed 000 §4.3): supernode s's update block lives from the moment s computes it until its
// parent has assembled it. Processing the supernodes in postorder, the live blocks form a
// stack — the classic "update-block stack" whose peak bounds the transient memory. Sizes are
// those UpdateBlockStore allocates (PanelLowerLayout), so the peak equals
// FactorStats::peak_update_bytes of a one-thread factorize without retained blocks.
#include <cstdint>
#include <vector>

#include <span>

#include "factor/analysis/symbolic.hpp"

namespace cholsim::factor {

/// Bytes of supernode s's whole update block as the numeric factorization allocates it.
std::int64_t update_block_bytes(const Symbolic& symbolic, Index s);

/// Bytes of every supernode's update block when block s keeps only its first kept_columns[s]
/// columns (PanelLowerLayout; under a left-looking top, left_looking_top.hpp), every block
/// whole when `kept_columns` is empty.
std::vector<std::int64_t> update_block_sizes(const Symbolic& symbolic, std::span<const Index> kept_columns = {});

struct UpdateStackProfile {
  /// Per supernode in postorder: bytes live while s holds its own new update block and its
  /// children's blocks are still held (the moment the peak can occur) …
  std::vector<std::int64_t> bytes_while_computing;
  /// … and once s's children's blocks have been released.
  std::vector<std::int64_t> bytes_after_release;
  std::int64_t peak_bytes = 0;
  Index peak_supernode = -1;  ///< the supernode whose computation reaches the peak (−1: none)
};

/// The update-block stack of a sequential postorder factorization of the whole tree, its
/// blocks keeping `kept_columns` (update_block_sizes).
UpdateStackProfile sequential_update_stack(const Symbolic& symbolic, std::span<const Index> kept_columns = {});

}  // namespace cholsim::factor
