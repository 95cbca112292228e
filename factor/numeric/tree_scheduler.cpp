#include "factor/numeric/tree_scheduler.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <numeric>

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


// Phase 1 on `threads` threads: the subtrees below the cut as nested oneTBB task groups inside
// the arena of that thread count. At a supernode with several children each child's subtree
// but the last is spawned, the last is run by the same thread, and the supernode runs once all
// have finished. A thread so works depth first through the subtree it holds (its children's
// update blocks still in its cache), and an idle thread steals the oldest task, the largest
// subtree not yet started: few steals, one per subtree handed over. (Spawning every leaf and
// letting the last child's task run its parent cost a steal per supernode and was 8% slower
// on the 32³ elasticity box with 2 threads.) Chains of single children are walked without
// recursion, and below kMaxNesting branchings a subtree runs in postorder on its thread, so
// the stack stays shallow for any tree. Every supernode reads its children's results itself,
// in a fixed order, so which thread ran what never shows in the factor.
template <typename RunOne>
class SubtreeTasks {
 public:
  SubtreeTasks(const Symbolic& symbolic, std::span<const char> active, const RunOne& run_one,
               std::vector<char>& failed)
      : symbolic_(symbolic), active_(active), run_one_(run_one), failed_(failed) {}

  void run(std::span<const Index> roots, int threads) {
    linalg::thread_arena(threads).execute([&] {
      tbb::task_group subtrees;
      for (Index root : roots) subtrees.run([this, root] { run_subtree(root, 0); });
      subtrees.wait();
    });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  static constexpr int kMaxNesting = 48;

  void run_subtree(Index top, int nesting) {
    Index bottom = top;  // the end of the chain of single children below top
    while (true) {
      const Index only = only_active_child(bottom);
      if (only < 0) break;
      bottom = only;
    }
    if (nesting >= kMaxNesting) {
      for (Index s = symbolic_.subtree_begin(bottom); s < bottom; ++s) {
        if (is_active(active_, s)) run_guarded(s);
      }
    } else {
      run_children(bottom, nesting + 1);
    }
    for (Index s = bottom;; s = symbolic_.parent(s)) {
      run_guarded(s);
      if (s == top) break;
    }
  }

  // The children's subtrees of s in parallel (s has none, or several, active children).
  void run_children(Index s, int nesting) {
    Index last = -1;
    for (Index c : symbolic_.children(s)) last = is_active(active_, c) ? c : last;
    if (last < 0) return;
    tbb::task_group subtrees;
    for (Index c : symbolic_.children(s)) {
      if (c != last && is_active(active_, c)) subtrees.run([this, c, nesting] { run_subtree(c, nesting); });
    }
    run_subtree(last, nesting);
    subtrees.wait();
  }

  // The one active child of s; -1 when s has none, -2 when it has several.
  Index only_active_child(Index s) const {
    Index only = -1;
    for (Index c : symbolic_.children(s)) {
      if (!is_active(active_, c)) continue;
      if (only != -1) return -2;
      only = c;
    }
    return only;
  }

  void run_guarded(Index s) {
    try {
      run_one_(s);
    } catch (...) {
      const std::lock_guard lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
      failed_[s] = 1;
    }
  }

  const Symbolic& symbolic_;
  std::span<const char> active_;
  const RunOne& run_one_;
  std::vector<char>& failed_;
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

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
    if (is_active(active, s) && symbolic.parent(s) == -1) frontier.push_back(s);
  }
  if (threads > 1) {
    // Split the most expensive subtree until the subtrees balance across the threads within
    // 5%; the split-off roots move to the top phase, which uses all threads inside BLAS.
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
                       const std::function<bool(Index)>& task, std::span<const char> active) {
  const Index count = symbolic.supernode_count();
  // failed[s]: s or one of its descendants failed, so s must not run.
  std::vector<char> failed(static_cast<std::size_t>(count), 0);
  auto run_one = [&](Index s) {
    bool blocked = false;
    for (Index c : symbolic.children(s)) blocked = blocked || (is_active(active, c) && failed[c]);
    if (blocked || !task(s)) failed[s] = 1;
  };

  // Phase 1: the subtrees below the cut.
  {
    linalg::ScopedBlasThreads one_blas_thread(1);
    if (threads <= 1) {
      for (Index root : schedule.subtree_roots) {
        for (Index s = symbolic.subtree_begin(root); s <= root; ++s) {
          if (is_active(active, s)) run_one(s);
        }
      }
    } else {
      SubtreeTasks(symbolic, active, run_one, failed).run(schedule.subtree_roots, threads);
    }
  }

  // Phase 2: the top of the tree, one supernode at a time, all threads inside BLAS.
  linalg::ScopedBlasThreads all_blas_threads(threads);
  for (Index s : schedule.top) run_one(s);
}

}  // namespace cholsim::factor
