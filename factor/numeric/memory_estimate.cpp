#include "factor/numeric/memory_estimate.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <span>
#include <vector>

#include "factor/numeric/first_fit_placement.hpp"
#include "factor/numeric/left_looking_top.hpp"
#include "factor/numeric/tree_scheduler.hpp"
#include "factor/numeric/update_stack_profile.hpp"
#include "factor/update/update_block_retention.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::factor {
namespace {

// Per-supernode arrays a factorization call keeps besides L and the blocks (costs, times,
// failure columns, stale flags, the block store's handles, the scheduler's counters).
constexpr std::int64_t kBookkeepingBytesPerSupernode = 96;

// The update blocks alive during one factorization call, replayed supernode by supernode.
// A supernode allocates its block while its children's blocks are still held (they are
// released when it finishes), and blocks marked `kept` are never released. Without kept
// blocks the store places them in its arena (BlockLifetime::one_call), replayed here with
// the same first-fit placement.
class LiveBlocks {
 public:
  // block_bytes[s]: the bytes of s's block as the store allocates it.
  LiveBlocks(const Symbolic& symbolic, std::span<const std::int64_t> block_bytes, std::span<const char> kept)
      : symbolic_(symbolic), block_bytes_(block_bytes), kept_(kept), arena_(std::numeric_limits<std::int64_t>::max()),
        offset_(kept.empty() ? static_cast<std::size_t>(symbolic.supernode_count()) : 0) {}

  void start(Index s) {
    const std::int64_t bytes = block_bytes_[s];
    live_ += bytes;
    peak_ = std::max(peak_, live_);
    if (bytes > 0 && uses_arena()) offset_[s] = *arena_.place(bytes);
  }
  void finish(Index s) {
    for (Index child : symbolic_.children(s)) {
      if (!kept_.empty() && kept_[child]) continue;
      const std::int64_t bytes = block_bytes_[child];
      live_ -= bytes;
      if (bytes > 0 && uses_arena()) arena_.remove(offset_[child], bytes);
    }
  }
  [[nodiscard]] std::int64_t peak() const { return peak_; }
  [[nodiscard]] std::int64_t arena_high_water() const { return uses_arena() ? arena_.high_water() : 0; }

 private:
  // A store that keeps no block is a one_call store, whose blocks live in its arena.
  [[nodiscard]] bool uses_arena() const { return kept_.empty(); }

  const Symbolic& symbolic_;
  std::span<const std::int64_t> block_bytes_;
  std::span<const char> kept_;
  std::int64_t live_ = 0;
  std::int64_t peak_ = 0;
  FirstFitPlacement arena_;
  std::vector<std::int64_t> offset_;  ///< each arena block's offset
};

// Phase 1 of run_tree_schedule on `threads` workers, in simulated time where supernode s
// takes cost[s]: every worker pops the newest ready supernode, and a supernode becomes ready
// when its last child finishes — the order the real ReadyStack produces when times follow flops.
void replay_parallel_phase(const Symbolic& symbolic, const TreeSchedule& schedule, std::span<const double> cost,
                           int threads, LiveBlocks& live) {
  const Index count = symbolic.supernode_count();
  std::vector<Index> pending(static_cast<std::size_t>(count), 0);
  std::vector<char> in_phase1(static_cast<std::size_t>(count), 0);
  std::vector<Index> ready;
  for (auto root = schedule.subtree_roots.rbegin(); root != schedule.subtree_roots.rend(); ++root) {
    for (Index s = symbolic.subtree_begin(*root); s <= *root; ++s) {
      in_phase1[s] = 1;
      pending[s] = static_cast<Index>(symbolic.children(s).size());
      if (pending[s] == 0) ready.push_back(s);
    }
  }
  using Running = std::pair<double, Index>;  // (finish time, supernode), earliest first
  std::priority_queue<Running, std::vector<Running>, std::greater<>> running;
  double now = 0.0;
  const auto start_ready = [&] {
    while (!ready.empty() && static_cast<int>(running.size()) < threads) {
      const Index s = ready.back();
      ready.pop_back();
      live.start(s);
      running.emplace(now + cost[s], s);
    }
  };
  start_ready();
  while (!running.empty()) {
    const auto [finish_time, s] = running.top();
    running.pop();
    now = finish_time;
    live.finish(s);
    const Index p = symbolic.parent(s);
    if (p != -1 && in_phase1[p] && --pending[p] == 0) ready.push_back(p);
    start_ready();
  }
}

// The heaviest set of update blocks that can be alive together in any order the tree allows:
// within s's subtree either s has not started (its children's subtrees each at their worst)
// or s runs with its children's blocks and its own. Blocks of `kept` supernodes are counted
// by the caller once and for all, so they weigh nothing here.
std::int64_t any_order_bound(const Symbolic& symbolic, std::span<const std::int64_t> block_bytes,
                             std::span<const char> kept) {
  const Index count = symbolic.supernode_count();
  const auto weight = [&](Index s) { return !kept.empty() && kept[s] ? 0 : block_bytes[s]; };
  std::vector<std::int64_t> worst(static_cast<std::size_t>(count), 0);
  std::int64_t total = 0;
  for (Index s = 0; s < count; ++s) {  // postorder: children first
    std::int64_t children_worst = 0;
    std::int64_t running_together = weight(s);
    for (Index child : symbolic.children(s)) {
      children_worst += worst[child];
      running_together += weight(child);
    }
    worst[s] = std::max(children_worst, running_together);
    if (symbolic.parent(s) == -1) total += worst[s];
  }
  return total;
}

}  // namespace

MemoryEstimate estimate_factor_memory(const Symbolic& symbolic, const FactorOptions& options) {
  const Index count = symbolic.supernode_count();
  const int threads = linalg::resolve_thread_count(options.threads);
  const std::vector<char> kept = options.retain_update_blocks
                                     ? retained_update_blocks(symbolic, options.retain_min_flops_per_entry)
                                     : std::vector<char>{};
  std::vector<double> cost(static_cast<std::size_t>(count));
  for (Index s = 0; s < count; ++s) cost[s] = symbolic.supernode_flops(s);
  const TreeSchedule schedule = plan_tree_schedule(symbolic, cost, threads);
  const LeftLookingTop top = left_looking_top_for(symbolic, options);
  const std::vector<std::int64_t> block_bytes = update_block_sizes(symbolic, top.kept_columns());

  LiveBlocks live(symbolic, block_bytes, kept);
  if (threads <= 1) {
    for (Index root : schedule.subtree_roots) {
      for (Index s = symbolic.subtree_begin(root); s <= root; ++s) {
        live.start(s);
        live.finish(s);
      }
    }
  } else {
    replay_parallel_phase(symbolic, schedule, cost, threads, live);
  }
  for (Index s : schedule.top) {
    live.start(s);
    live.finish(s);
  }

  MemoryEstimate estimate;
  estimate.symbolic_bytes = symbolic.bytes();
  estimate.bookkeeping_bytes = kBookkeepingBytesPerSupernode * count;
  estimate.left_looking_supernodes = top.supernode_count();
  estimate.left_looking_workspace_bytes = threads * top.workspace_bytes_per_thread(symbolic);
  estimate.factor_bytes = 8 * symbolic.factor_value_count();
  estimate.peak_update_bytes = live.peak();
  estimate.update_arena_bytes = live.arena_high_water();
  for (Index s = 0; s < count; ++s) {
    if (!kept.empty() && kept[s]) estimate.retained_update_bytes += block_bytes[s];
  }
  estimate.peak_update_bound_bytes = estimate.retained_update_bytes + any_order_bound(symbolic, block_bytes, kept);
  return estimate;
}

}  // namespace cholsim::factor
