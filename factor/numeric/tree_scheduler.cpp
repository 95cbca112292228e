#include "factor/numeric/tree_scheduler.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <numeric>

#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "linalg/blas_threads.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::factor {
namespace {

bool is_active(std::span<const char> active, Index s) { return active.empty() || active[s] != 0; }

// Longest-processing-time-first makespan of `costs` (sorted decreasingly) on `threads` bins.
double lpt_makespan(std::vector<double> costs, int threads) {
  std::sort(costs.begin(), costs.end(), std::greater<>());
  std::vector<double> load(static_cast<std::size_t>(threads), 0.0);
  for (double c : costs) *std::min_element(load.begin(), load.end()) += c;
  return *std::max_element(load.begin(), load.end());
}

// Phase-1 state shared by the tree tasks: a stack of ready supernodes. Why one shared stack and
// not oneTBB's per-thread deques: with a task spawned per ready supernode (the last child's
// task running its parent), or with nested task groups per subtree, each thread works through
// a different subtree and a thread steals the oldest task of the other; both were 5–8% slower
// than this on the 32³ elasticity box with 2 threads (docs/benchmarks.md, issue 17). Popping
// the newest ready supernode — a parent as soon as its last child is done — keeps every
// thread near the supernodes just finished.
class ReadyStack {
 public:
  explicit ReadyStack(std::vector<Index> initial) : ready_(std::move(initial)) {}

  // A ready supernode, or -1 when none is ready now.
  Index pop() {
    const std::lock_guard lock(mutex_);
    if (ready_.empty()) return -1;
    const Index s = ready_.back();
    ready_.pop_back();
    return s;
  }

  void push(Index s) {
    const std::lock_guard lock(mutex_);
    ready_.push_back(s);
  }

 private:
  std::mutex mutex_;
  std::vector<Index> ready_;
};

// Phase 1 on `threads` threads: `threads` tasks of a oneTBB task_group inside the arena of that
// thread count — the calling thread and the arena's workers — each popping ready supernodes;
// a supernode becomes ready when its last child has finished, and the task that finished that
// child pushes it and pops it next. A task that finds the stack empty ends: only finishing
// tasks make supernodes ready and they go on popping, so nothing is left behind, and the
// thread returns to the arena, where it takes over pieces of the fronts still being computed
// (dense_tasks.hpp) instead of waiting. Every supernode reads its children's results itself,
// in a fixed order, so which thread ran what never shows in the factor.
template <typename RunOne>
void run_subtrees_as_tasks(const Symbolic& symbolic, const TreeSchedule& schedule, int threads,
                           const RunOne& run_one, std::vector<char>& failed, std::span<const char> active) {
  const Index count = symbolic.supernode_count();
  std::vector<std::atomic<Index>> pending(static_cast<std::size_t>(count));
  std::vector<char> in_phase1(static_cast<std::size_t>(count), 0);
  std::vector<Index> leaves;
  // Roots are listed largest first; leaves are pushed in reverse so that the stack starts with
  // the biggest subtree.
  for (auto root = schedule.subtree_roots.rbegin(); root != schedule.subtree_roots.rend(); ++root) {
    for (Index s = symbolic.subtree_begin(*root); s <= *root; ++s) {
      if (!is_active(active, s)) continue;
      in_phase1[s] = 1;
      Index children = 0;
      for (Index c : symbolic.children(s)) children += is_active(active, c) ? 1 : 0;
      pending[s].store(children, std::memory_order_relaxed);
      if (children == 0) leaves.push_back(s);
    }
  }
  ReadyStack stack(std::move(leaves));
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto work = [&] {
    for (Index s = stack.pop(); s != -1; s = stack.pop()) {
      try {
        run_one(s);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        failed[s] = 1;
      }
      const Index p = symbolic.parent(s);
      // The last child to finish makes the parent ready (acq_rel publishes its results).
      if (p != -1 && in_phase1[p] && pending[p].fetch_sub(1, std::memory_order_acq_rel) == 1) stack.push(p);
    }
  };
  tbb::task_group helpers;
  for (int t = 1; t < threads; ++t) helpers.run(work);
  work();
  helpers.wait();
  if (error) std::rethrow_exception(error);
}

}  // namespace

TreeSchedule plan_tree_schedule(const Symbolic& symbolic, std::span<const double> cost,
                                int threads, std::span<const char> active) {
  const Index count = symbolic.supernode_count();
  TreeSchedule schedule;
  std::vector<double> subtree_cost(static_cast<std::size_t>(count), 0.0);
  for (Index s = 0; s < count; ++s) {
    if (!is_active(active, s)) continue;
    subtree_cost[s] += cost[s];
    const Index p = symbolic.parent(s);
    if (p != -1) subtree_cost[p] += subtree_cost[s];
  }
  std::vector<Index> frontier;
  for (Index s = 0; s < count; ++s) {
    // Roots of the active set: also the tops of CPU subtrees under a GPU part (factor/gpu/).
    const Index p = symbolic.parent(s);
    if (is_active(active, s) && (p == -1 || !is_active(active, p))) frontier.push_back(s);
  }
  if (threads > 1) {
    // Split the most expensive subtree until the subtrees balance across the threads within
    // 5%; the split-off roots move to the top phase, where every thread takes their pieces.
    constexpr double balance_tolerance = 1.05;
    while (!frontier.empty()) {
      std::vector<double> costs;
      for (Index s : frontier) costs.push_back(subtree_cost[s]);
      const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
      if (lpt_makespan(costs, threads) <= balance_tolerance * total / threads) break;
      const auto largest = std::max_element(frontier.begin(), frontier.end(), [&](Index a, Index b) {
        return subtree_cost[a] < subtree_cost[b];
      });
      const Index root = *largest;
      frontier.erase(largest);
      schedule.top.push_back(root);
      for (Index c : symbolic.children(root)) {
        if (is_active(active, c)) frontier.push_back(c);
      }
    }
  }
  std::sort(schedule.top.begin(), schedule.top.end());
  std::sort(frontier.begin(), frontier.end(), [&](Index a, Index b) {
    return subtree_cost[a] > subtree_cost[b] || (subtree_cost[a] == subtree_cost[b] && a < b);
  });
  schedule.subtree_roots = std::move(frontier);
  for (Index s : schedule.subtree_roots) schedule.parallel_cost += subtree_cost[s];
  for (Index s : schedule.top) schedule.top_cost += cost[s];
  return schedule;
}

void run_tree_schedule(const Symbolic& symbolic, const TreeSchedule& schedule, int threads,
                       const std::function<bool(Index)>& task, std::span<const char> active, TopPhase top_phase) {
  const Index count = symbolic.supernode_count();
  // failed[s]: s or one of its descendants failed, so s must not run.
  std::vector<char> failed(static_cast<std::size_t>(count), 0);
  auto run_one = [&](Index s) {
    bool blocked = false;
    for (Index c : symbolic.children(s)) blocked = blocked || (is_active(active, c) && failed[c]);
    // Isolated: while a supernode waits for its own dense pieces (dense_tasks.hpp) its thread
    // takes no other supernode, whose work could reuse this one's thread-local buffers and
    // would delay the parent waiting for it.
    if (!blocked) tbb::this_task_arena::isolate([&] { blocked = !task(s); });
    if (blocked) failed[s] = 1;
  };

  // Everything runs in the arena of `threads` threads, so that the dense pieces of a front
  // (dense_tasks.hpp) never use more threads than asked, with BLAS on one thread — except in
  // the top phase when the caller asked for threaded BLAS there.
  linalg::thread_arena(threads).execute([&] {
    {
      // Phase 1: the subtrees below the cut.
      const linalg::ScopedBlasThreads one_blas_thread(1);
      if (threads <= 1) {
        for (Index root : schedule.subtree_roots) {
          for (Index s = symbolic.subtree_begin(root); s <= root; ++s) {
            if (is_active(active, s)) run_one(s);
          }
        }
      } else {
        run_subtrees_as_tasks(symbolic, schedule, threads, run_one, failed, active);
      }
    }
    // Phase 2: the top of the tree, one supernode at a time, its dense pieces (or BLAS) on
    // every thread.
    const linalg::ScopedBlasThreads top_blas_threads(top_phase == TopPhase::dense_tasks ? 1 : threads);
    for (Index s : schedule.top) run_one(s);
  });
}

}  // namespace cholsim::factor
