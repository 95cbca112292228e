#pragma once
// The supernodal tree cut for a substitution on several threads. A forward or backward pass
// with a few right-hand sides reads every value of L once and does two flops per value: it is
// bound by memory bandwidth, and on a large factor one thread does not use the machine's
// (one thread streamed 7.6 GB/s on the Emerald Rapids VMs of issue 18, two about twice that).
// Disjoint subtrees of the supernodal tree touch disjoint rows of the right-hand sides except
// those of their common ancestors, so they can be substituted at the same time: the backward
// pass after the ancestors, the forward pass before them, each thread adding its updates of
// the ancestors' rows into a copy of its own (supernodal_solve.cpp).
//
// The cut: starting from the roots, the subtree with the most values is replaced by its
// children until there are kSubtreesPerThread per thread (or nothing left to split); the
// replaced supernodes (the top separators of a nested dissection) are substituted on one
// thread. The subtrees are dealt to the threads largest first, each to the least loaded.
// Subtrees are contiguous in postorder, so each is a range of supernodes and of rows.
#include <vector>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/dense_tasks.hpp"

namespace cholsim::factor {

struct SolveSplit {
  /// Per thread, the supernode ranges [begin, end) of its subtrees, in increasing order.
  std::vector<std::vector<IndexRange>> subtrees;
  /// The supernodes above every subtree, increasing (postorder).
  std::vector<Index> top;
  /// Rows every thread's forward pass may update: the columns of the top supernodes and the
  /// Schur set's, as increasing ranges.
  std::vector<IndexRange> shared_rows;
  /// Whether a pass should use the split: more than one thread and a factor large enough.
  [[nodiscard]] bool parallel() const { return subtrees.size() > 1; }
};

/// Subtrees per thread the cut aims at, so that the dealing can balance the threads.
inline constexpr int kSubtreesPerThread = 4;
/// Below this many values in L's eliminated supernodes a pass stays on one thread: at 10⁶
/// values (8 MB) a pass with three right-hand sides takes about a millisecond, and a fork,
/// the copies of the shared rows and a join cost tens of microseconds.
inline constexpr double kMinParallelSolveValues = 1e6;

/// The split for `threads` threads; a serial one (parallel() false) for threads ≤ 1 or a
/// small factor.
SolveSplit split_for_solve(const Symbolic& symbolic, int threads);

}  // namespace cholsim::factor
