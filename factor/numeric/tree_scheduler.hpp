#pragma once
// Tree-parallel execution over the supernodal assembly tree (seed 000 §5.3).
//
// Two phases, a classic subtree-to-thread mapping (Geist and Ng 1989):
//  1. the tree is cut into independent subtrees whose costs balance across the threads;
//     their supernodes run on the threads of oneTBB tasks (a task_group inside
//     linalg::thread_arena of the thread count) that pop ready supernodes from one shared
//     stack, driven by dependency counters — a supernode is ready when its last child has
//     finished — with BLAS kept at one thread per task;
//  2. the supernodes above the cut (few, with the largest fronts) run in postorder, each with
//     its dense work cut into tasks that every thread of the arena takes (dense_tasks.hpp).
// A thread with no ready supernode left in phase 1 joins the pieces of the fronts the other
// threads are computing, so the end of phase 1 leaves no thread idle either.
// Every supernode's task reads its children's results itself in a fixed order, so the result
// does not depend on which thread ran what: the same thread count gives bitwise-identical
// factors.
#include <functional>
#include <span>
#include <vector>

#include "factor/analysis/symbolic.hpp"

namespace cholsim::factor {

struct TreeSchedule {
  std::vector<Index> subtree_roots;  ///< roots of the phase-1 subtrees, largest cost first
  std::vector<Index> top;            ///< phase-2 supernodes, in postorder
  double parallel_cost = 0.0;        ///< summed cost of the phase-1 subtrees
  double top_cost = 0.0;             ///< summed cost of the phase-2 supernodes
};

/// Chooses the cut for `threads` threads. `cost[s]` is supernode s's estimated cost;
/// `active[s]` (optional, empty = all) restricts the schedule to a set of supernodes: one
/// closed under ancestors (an incremental refactorization's marked set) or the CPU part below
/// a GPU factorization's top (factor/gpu/); its roots are the active supernodes whose parent
/// is not active.
TreeSchedule plan_tree_schedule(const Symbolic& symbolic, std::span<const double> cost,
                                int threads, std::span<const char> active = {});

/// How the top phase uses the threads.
enum class TopPhase {
  /// BLAS on one thread, the fronts' dense work cut into tasks of the arena (the factorization).
  dense_tasks,
  /// BLAS on all threads: for tasks whose kernels are plain BLAS calls (the derivative
  /// factorization's L̇ step runs after each L step on the same schedule).
  threaded_blas,
};

/// Runs `task(s)` for every scheduled supernode, children before parents, on `threads`
/// threads in all (tree tasks, dense tasks and BLAS), inside linalg::thread_arena(threads).
/// `task` returns false when the supernode failed; its ancestors are then skipped while
/// unrelated subtrees still run, so the set of failures seen does not depend on timing.
/// Exceptions thrown by a task are rethrown after all threads stop.
void run_tree_schedule(const Symbolic& symbolic, const TreeSchedule& schedule, int threads,
                       const std::function<bool(Index)>& task, std::span<const char> active = {},
                       TopPhase top_phase = TopPhase::dense_tasks);

}  // namespace cholsim::factor
