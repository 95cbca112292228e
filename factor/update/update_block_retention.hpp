#pragma once
// Which update blocks a factorization with retain_update_blocks keeps (seed 000 §4.3, §6).
//
// Keeping every block costs ≈ 2.2× the factor's bytes on 3-D elasticity boxes (the paper saw
// 1.9–3.6×). Most of the blocks by count, and a fifth of the bytes, belong to small subtrees
// that recompute in few flops per stored entry. Those are not kept: when the parent of such a
// subtree is recomputed, the subtree is recomputed with it from A (its leaves need no
// blocks). The result is unchanged; the trade is memory for a little extra work.
#include <memory>
#include <span>
#include <vector>

#include "factor/analysis/symbolic.hpp"

namespace cholsim::factor {

class UpdateBlockStore;

/// kept[s] = 1 when s has an update block and its subtree's factorization flops are at least
/// `min_flops_per_entry` per entry of that block (packed lower triangle). 0 keeps every block.
std::vector<char> retained_update_blocks(const Symbolic& symbolic, double min_flops_per_entry);

/// The store one factorization call computes its update blocks in. With `retain`: `retained`,
/// created (for `symbolic`'s supernodes) on first use and then reused in place (a supernode's
/// block size never changes), so that a later refactorization can read it; without:
/// `retained` is dropped and the call uses `transient`, which lives only as long as the call.
UpdateBlockStore& update_blocks_for_call(std::unique_ptr<UpdateBlockStore>& retained, bool retain,
                                         UpdateBlockStore& transient, const Symbolic& symbolic);

/// Frees the blocks of s's children once s has assembled them: those whose block is not kept,
/// and every one when `kept` is empty (no block is retained).
void release_consumed_children(const Symbolic& symbolic, Index s, std::span<const char> kept,
                               UpdateBlockStore& updates);

/// Adds to a `marked` set (closed under ancestors) every supernode whose block is not kept
/// and whose parent is marked, recursively: the parent needs that block, so it is recomputed.
void add_unretained_children(const Symbolic& symbolic, std::span<const char> kept, std::span<char> marked);

/// Per-supernode costs for the update schedulers (seed 000 §4.4) that include what
/// add_unretained_children adds: cost[s] plus the costs of the subtrees below s whose blocks
/// are not kept (recomputed whenever s is). Without this, a schedule's predicted cost misses
/// that work and a budget is overrun. An empty `kept` (every block kept) returns `cost`.
std::vector<double> costs_with_unretained_children(const Symbolic& symbolic, std::span<const char> kept,
                                                   std::span<const double> cost);

}  // namespace cholsim::factor
