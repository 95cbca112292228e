#pragma once
// The two substitutions of a supernodal solve on the device (gpu_solve.hpp), each one kernel
// launch over the whole assembly tree. Level-by-level launches would pay a launch (several
// microseconds) per tree level and leave the device idle between them; here every thread block
// takes the next solve unit in a fixed order from an atomic ticket and spins until the units it
// depends on have signalled (a "synchronization-free" triangular solve). Tickets hand out units
// in the order blocks start, and the order puts every unit after those it waits for, so every
// unit a block waits for belongs to a block already running: the wait cannot deadlock however
// many blocks the grid has. Among such orders the one used ranks units by the longest chain of
// work still ahead of them (gpu_solve.cpp): in postorder, the blocks waiting for their parents
// in the backward substitution filled the device while the root's first child waited for an
// SM (three times the span on a 55K-tet bar).
#include <cstdint>

#include <cuda_runtime.h>

namespace cholsim::factor::gpu {

/// A run of at most kSolveUnitColumns consecutive columns of one supernode, with all of that
/// supernode's rows from its first column down: its values are the m×k trapezoid starting at
/// the diagonal, column-major with leading dimension `leading`, except that its k×k diagonal
/// triangle holds the *inverse* of L's (gpu_solve.cpp inverts it once). A triangular solve is a
/// chain of k dependent steps; a product with the inverse is k independent dot products, and
/// the units on the tree's critical path are the wide ones.
struct SolveUnit {
  std::int64_t values;       ///< offset of the unit's first diagonal entry in L's values
  std::int64_t transposed;   ///< offset of its k×m transpose (leading dimension k) in SolveTree::transposed
  std::int32_t leading;      ///< leading dimension (the supernode's row count)
  std::int32_t columns;      ///< k
  std::int32_t rows;         ///< m ≥ k: the unit's own k rows, then the rows below
  std::int32_t first_row;    ///< its first row = first column (elimination numbering)
  std::int32_t row_list;     ///< its m rows at row_lists[row_list, row_list + m)
  std::int32_t parent_unit;  ///< the unit it signals in the forward substitution, or −1
};

/// Columns of a unit at most: its part of the right-hand sides and of the solution live in
/// shared memory (2 × kSolveUnitColumns × 4 doubles = 32 KiB).
inline constexpr std::int32_t kSolveUnitColumns = 512;

/// Everything both substitutions read, on the device.
struct SolveTree {
  const SolveUnit* units = nullptr;
  const double* values = nullptr;       ///< L, Factor's supernodal layout (inverted diagonal triangles)
  /// Every unit's trapezoid transposed, for the backward substitution: its products with Lᵀ
  /// then read consecutive addresses across a warp, as the forward's do (with L itself, a warp's
  /// lanes each walked their own column, 32 cache lines a load: twice the forward's time).
  const double* transposed = nullptr;
  const std::int32_t* row_lists = nullptr;
  const std::int32_t* forward_order = nullptr;   ///< ticket → unit, every unit after its children
  const std::int32_t* backward_order = nullptr;  ///< ticket → unit, every unit after its parent
  std::int32_t unit_count = 0;
};

/// Per solve: the counters both kernels synchronize through, reset before each solve —
/// `pending` to the number of units signalling each unit (pending_start), `done` and the
/// two tickets to zero.
struct SolveCounters {
  std::int32_t* pending = nullptr;  ///< forward: units still to signal this one
  std::int32_t* done = nullptr;     ///< backward: 1 once the unit's solution is final
  std::int32_t* tickets = nullptr;  ///< [0] forward, [1] backward
  /// Optional (null: off): per unit, the device clock (ns) when its block claimed it, when its
  /// dependencies were met and when it signalled, for GpuSolveFactor::unit_timings.
  std::int64_t* timeline = nullptr;
};

/// The forward substitution L·Y = B, then the backward one Lᵀ·X = Y, on `columns` (1 … 4 ≤
/// stride) right-hand sides stored row by row: row i's value of column c at [i·stride + c]
/// (elimination numbering). The forward reads B from `b` — mapped page-locked host memory: each
/// unit reads its rows while it waits for the units below, so B crosses the bus without a copy
/// before the kernel — and leaves Y in the device buffer `x`, which must be zero on entry (the
/// units below subtract their updates there). The backward solves in place on `x` and writes
/// every final row to `result` as well (mapped host memory: the solution leaves without a copy
/// after the kernel). The counters must be reset before each substitution.
void launch_forward_substitution(const SolveTree& tree, SolveCounters counters, const double* b, double* x, int stride,
                                 int columns, cudaStream_t stream);
void launch_backward_substitution(const SolveTree& tree, SolveCounters counters, double* x, double* result, int stride,
                                  int columns, cudaStream_t stream);

}  // namespace cholsim::factor::gpu
