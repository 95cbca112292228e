#pragma once
// The dense kernels of one supernode, cut into oneTBB tasks of the arena the factorization
// runs in (tree_scheduler.hpp), each task a one-thread BLAS call.
//
// Why not threaded BLAS for the big fronts: the tree tasks and BLAS would be two thread pools
// taking turns on the same cores — OpenBLAS's idle threads spin (sched_yield) for a while
// after each call — and a thread that runs out of tree tasks while another still works on the
// last big supernode of its subtree would sit idle. As tasks of the same arena, a thread with
// nothing else to do takes over pieces of whichever front is being computed, in the subtree
// phase and at the top of the tree alike.
//
// The pieces depend only on the matrix sizes, never on the thread count or on which thread
// runs them, so a factor is bitwise the same for every thread count.
#include <tbb/parallel_for.h>

#include <vector>

#include "linalg/dense_matrix.hpp"
#include "linalg/floating_point_mode.hpp"

namespace cholsim::factor {

/// Work of one task, in flops: about 0.2 ms of one-thread dgemm — long enough that the task's
/// overhead (a microsecond) and the repacked right operand do not show, short enough that
/// an idle thread finds pieces of any front worth splitting.
inline constexpr double kTaskFlops = 2e7;

/// True when the dense kernels may cut their work into tasks: while BLAS runs on one thread.
/// A caller that gives BLAS several threads gets plain BLAS calls instead.
bool split_dense_work();

/// Runs body(i) for every i in [0, count): as tasks of the current arena when `as_tasks`, else
/// in order on the calling thread. The tree scheduler isolates each supernode
/// (tree_scheduler.cpp), so a thread waiting here runs pieces of its own supernode only. Every
/// piece runs in the calling thread's floating-point mode (linalg/floating_point_mode.hpp).
template <typename Body>
void run_pieces(linalg::Index count, bool as_tasks, const Body& body) {
  if (!as_tasks || count <= 1) {
    for (linalg::Index i = 0; i < count; ++i) body(i);
    return;
  }
  tbb::parallel_for(linalg::Index{0}, count, linalg::in_current_mode([&](linalg::Index i) { body(i); }),
                    tbb::simple_partitioner());
}

/// A range [begin, end) of rows or columns.
struct IndexRange {
  linalg::Index begin;
  linalg::Index end;
};

/// Entries of a memory-bound piece (zero fill, scatter, extend-add): 2 MiB of doubles, about
/// a tenth of a millisecond.
inline constexpr double kTaskEntries = 262144;

/// [0, count) cut into consecutive ranges of about `piece_weight` each, item i weighing
/// weight(i) (every range holds at least one item).
template <typename Weight>
std::vector<IndexRange> cut_into_pieces(linalg::Index count, const Weight& weight, double piece_weight) {
  std::vector<IndexRange> pieces;
  double held = 0.0;
  linalg::Index begin = 0;
  for (linalg::Index i = 0; i < count; ++i) {
    held += weight(i);
    if (held >= piece_weight || i + 1 == count) {
      pieces.push_back({begin, i + 1});
      begin = i + 1;
      held = 0.0;
    }
  }
  return pieces;
}

/// target = beta·target − rows·rows(0:w, :)ᵀ on the lower trapezoid of target (entries (i, j)
/// with i ≥ j; the strict upper part of the top w×w block is not referenced), w = target.cols,
/// rows being target.rows × c. The top w×w block is a syrk, the rows below a gemm; large
/// updates are cut into tiles of columns and rows, each a syrk on its diagonal square or a gemm.
void lower_trapezoid_update(double beta, linalg::ConstDenseView rows, linalg::DenseView target);

/// b = b·lower⁻ᵀ (trsm: right side, lower triangular, transposed), cut into row pieces.
void solve_rows_lower_transposed(linalg::ConstDenseView lower, linalg::DenseView b);

}  // namespace cholsim::factor
