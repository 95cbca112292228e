#pragma once
// Which update blocks a factorization with retain_update_blocks keeps (seed 000 §4.3, §6).
//
// Keeping every block costs ≈ 2.2× the factor's bytes on 3-D elasticity boxes (the paper saw
// 1.9–3.6×). Most of the blocks by count, and a fifth of the bytes, belong to small subtrees
// that recompute in few flops per stored entry. Those are not kept: when the parent of such a
// subtree is recomputed, the subtree is recomputed with it from A (its leaves need no
// blocks). The result is unchanged; the trade is memory for a little extra work.
#include <span>
#include <vector>

#include "factor/symbolic.hpp"

namespace cholsim::factor {

/// kept[s] = 1 when s has an update block and its subtree's factorization flops are at least
/// `min_flops_per_entry` per entry of that block (packed lower triangle). 0 keeps every block.
std::vector<char> retained_update_blocks(const Symbolic& symbolic, double min_flops_per_entry);

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
