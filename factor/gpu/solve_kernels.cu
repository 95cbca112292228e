#include "factor/gpu/solve_kernels.hpp"

namespace cholsim::factor::gpu {
namespace {

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;

// The next unit in ticket order: blocks start in ticket order, whatever order the hardware
// launches them in, so the units a block waits for are held by blocks already running.
__device__ int claim_ticket(int* tickets) {
  __shared__ int claimed;
  if (threadIdx.x == 0) claimed = atomicAdd(tickets, 1);
  __syncthreads();
  return claimed;
}

// Thread 0 stamps event `which` (0 claimed, 1 ready, 2 signalled) of unit u when asked to.
__device__ void stamp(std::int64_t* timeline, int u, int which) {
  if (timeline == nullptr || threadIdx.x != 0) return;
  std::int64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  timeline[3 * static_cast<long long>(u) + which] = now;
}

// While a block waits for the units before its own, it pulls its unit's entries into L1 when
// they fit (each column's m entries are contiguous): the products after the wait then read L1
// instead of L2, on the critical path's small units most of their time.
constexpr long long kPrefetchBytes = 96 * 1024;
__device__ void prefetch_unit(const double* l, int ld, int k, int m) {
  if (static_cast<long long>(k) * m * 8 > kPrefetchBytes) return;
  const int lines = (m + 15) / 16 + 1;  // 128-byte lines of a column, one more if misaligned
  for (int p = threadIdx.x; p < k * lines; p += kThreads) {
    const int j = p / lines;
    const int line = p - j * lines;
    const int row = min(line * 16, m - 1);
    asm volatile("prefetch.global.L1 [%0];" ::"l"(l + static_cast<long long>(j) * ld + row));
  }
}

// One thread spins on the flag, then fences so that what the signalling blocks wrote before
// their own fence is seen by the whole block (every later read of x goes to L2: __ldcg).
__device__ void wait_for(const int* flag, int expected) {
  if (threadIdx.x == 0) {
    while (*reinterpret_cast<const volatile int*>(flag) != expected) __nanosleep(32);
    __threadfence();
  }
  __syncthreads();
}

__device__ void signal(int* flag, bool decrement) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    if (decrement) {
      atomicSub(flag, 1);
    } else {
      atomicExch(flag, 1);
    }
  }
}

template <int R>
__device__ void load_segment(const double* x, int stride, int first_row, int k, double* segment) {
  for (int e = threadIdx.x; e < k * R; e += kThreads) {
    const int i = e / R;
    const int c = e - i * R;
    segment[e] = __ldcg(x + static_cast<long long>(first_row + i) * stride + c);
  }
}

// segment[e] += x at the segment's place (the updates the units below subtracted there).
template <int R>
__device__ void add_to_segment(const double* x, int stride, int first_row, int k, double* segment) {
  for (int e = threadIdx.x; e < k * R; e += kThreads) {
    const int i = e / R;
    const int c = e - i * R;
    segment[e] += __ldcg(x + static_cast<long long>(first_row + i) * stride + c);
  }
}

template <int R>
__device__ void store_segment(const double* segment, int first_row, int k, double* x, int stride) {
  for (int e = threadIdx.x; e < k * R; e += kThreads) {
    const int i = e / R;
    const int c = e - i * R;
    x[static_cast<long long>(first_row + i) * stride + c] = segment[e];
  }
}

// The products below cut a unit's trapezoid into 32×32 tiles. A warp sums the tiles of one
// block of 32 outputs (rows forward, columns backward) in registers, a lane per output, and adds
// its sums to their target once; when there are fewer output blocks than warps, each block's
// tiles are dealt to several warps (a warp left without tiles adds nothing: on a small unit,
// empty slices adding zeros to the same few entries cost more than the products).
template <int R, typename Range, typename Tile, typename Emit>
__device__ void sum_tiles(int outputs, Range range, Tile tile, Emit emit) {
  const int slices = max(1, kWarps / max(outputs, 1));
  for (int item = threadIdx.x / 32; item < outputs * slices; item += kWarps) {
    const int output = item / slices;
    const int slice = item - output * slices;
    int begin = 0;
    int end = 0;
    range(output, begin, end);
    if (begin + slice >= end) continue;
    double sum[R] = {};
    for (int input = begin + slice; input < end; input += slices) tile(output, input, sum);
    emit(output, sum);
  }
}

// One lane's part of a tile: sum[c] += Σ_q entries[q·step]·vector[index(q)·R + c] over the
// q < 32 with keep(q). The 32 loads go first, fully unrolled: their addresses depend on nothing
// computed, so they are all in flight before the first multiply.
template <int R, typename Keep, typename Index>
__device__ void lane_tile_products(const double* entries, long long step, Keep keep, const double* vector, Index index,
                                   double* sum) {
  double entry[32];
#pragma unroll
  for (int q = 0; q < 32; ++q) entry[q] = keep(q) ? entries[q * step] : 0.0;
#pragma unroll
  for (int q = 0; q < 32; ++q) {
    const double* v = vector + index(q) * R;
    for (int c = 0; c < R; ++c) sum[c] += entry[q] * v[c];
  }
}

// target[c] += sign·sum[c]: several warps (and, for x, several units) add to the same entries.
template <int R>
__device__ void add_sums(double* target, double sign, const double* sum) {
  for (int c = 0; c < R; ++c) atomicAdd(target + c, sign * sum[c]);
}

// Forward, the unit's own rows: solved[i] = Σ_{j ≤ i} D(i, j)·rhs[j] over the lower k×k triangle
// D (the inverted diagonal block); lanes along the rows (coalesced: column-major).
template <int R>
__device__ void diagonal_product(const double* d, int ld, int k, const double* rhs, double* solved) {
  const int lane = threadIdx.x % 32;
  sum_tiles<R>(
      (k + 31) / 32, [](int row_block, int& begin, int& end) { begin = 0, end = row_block + 1; },
      [=](int row_block, int column_block, double* sum) {
        const int i = row_block * 32 + lane;
        const int j0 = column_block * 32;
        lane_tile_products<R>(
            d + static_cast<long long>(j0) * ld + i, ld, [=](int q) { return i < k && j0 + q <= i; }, rhs,
            [=](int q) { return min(j0 + q, k - 1); }, sum);
      },
      [=](int row_block, const double* sum) {
        const int i = row_block * 32 + lane;
        if (i < k) add_sums<R>(solved + i * R, 1.0, sum);
      });
}

// Forward, the rows below: x[rows[i]] −= Σ_j L(i, j)·solved[j] for i ∈ [k, m). Siblings update
// the same ancestor rows concurrently: global atomics.
template <int R>
__device__ void below_product(const double* l, int ld, int k, int m, const int* rows, const double* solved, double* x,
                              int stride) {
  const int lane = threadIdx.x % 32;
  const int column_blocks = (k + 31) / 32;
  sum_tiles<R>(
      (m - k + 31) / 32, [=](int, int& begin, int& end) { begin = 0, end = column_blocks; },
      [=](int row_block, int column_block, double* sum) {
        const int i = k + row_block * 32 + lane;
        const int j0 = column_block * 32;
        lane_tile_products<R>(
            l + static_cast<long long>(j0) * ld + i, ld, [=](int q) { return i < m && j0 + q < k; }, solved,
            [=](int q) { return min(j0 + q, k - 1); }, sum);
      },
      [=](int row_block, const double* sum) {
        const int i = k + row_block * 32 + lane;
        if (i < m) add_sums<R>(x + static_cast<long long>(rows[i]) * stride, -1.0, sum);
      });
}

// Backward, the rows below: rhs[j] −= Σ_i Lᵀ(j, i)·x[rows[i]] for i ∈ [k, m), with Lᵀ the
// unit's transpose t (k×m, leading dimension k): lanes along j. The values of x are gathered
// into shared memory a chunk of kSolveUnitColumns rows at a time.
template <int R>
__device__ void below_transpose_product(const double* t, int k, int m, const int* rows, const double* x, int stride,
                                        double* gathered, double* rhs) {
  const int lane = threadIdx.x % 32;
  const int column_blocks = (k + 31) / 32;
  for (int first = k; first < m; first += kSolveUnitColumns) {
    const int count = min(kSolveUnitColumns, m - first);
    for (int e = threadIdx.x; e < count * R; e += kThreads) {
      const int i = e / R;
      const int c = e - i * R;
      gathered[e] = __ldcg(x + static_cast<long long>(rows[first + i]) * stride + c);
    }
    __syncthreads();
    sum_tiles<R>(
        column_blocks, [=](int, int& begin, int& end) { begin = 0, end = (count + 31) / 32; },
        [=](int column_block, int row_block, double* sum) {
          const int j = column_block * 32 + lane;
          const int i0 = row_block * 32;
          lane_tile_products<R>(
              t + static_cast<long long>(first + i0) * k + j, k, [=](int q) { return j < k && i0 + q < count; },
              gathered, [=](int q) { return min(i0 + q, count - 1); }, sum);
        },
        [=](int column_block, const double* sum) {
          const int j = column_block * 32 + lane;
          if (j < k) add_sums<R>(rhs + j * R, -1.0, sum);
        });
    __syncthreads();
  }
}

// Backward, the unit's own rows: solved[j] = Σ_{i ≥ j} Dᵀ(j, i)·rhs[i], D the inverted diagonal
// block, from the transpose (lanes along j).
template <int R>
__device__ void diagonal_transpose_product(const double* t, int k, const double* rhs, double* solved) {
  const int lane = threadIdx.x % 32;
  const int blocks = (k + 31) / 32;
  sum_tiles<R>(
      blocks, [=](int column_block, int& begin, int& end) { begin = column_block, end = blocks; },
      [=](int column_block, int row_block, double* sum) {
        const int j = column_block * 32 + lane;
        const int i0 = row_block * 32;
        lane_tile_products<R>(
            t + static_cast<long long>(i0) * k + j, k, [=](int q) { return j < k && i0 + q >= j && i0 + q < k; }, rhs,
            [=](int q) { return min(i0 + q, k - 1); }, sum);
      },
      [=](int column_block, const double* sum) {
        const int j = column_block * 32 + lane;
        if (j < k) add_sums<R>(solved + j * R, 1.0, sum);
      });
}

template <int R>
__device__ void zero(double* values, int count) {
  for (int e = threadIdx.x; e < count * R; e += kThreads) values[e] = 0.0;
}

template <int R>
__global__ void __launch_bounds__(kThreads, 1) forward_kernel(SolveTree tree, SolveCounters counters, const double* b,
                                                           double* x, int stride) {
  __shared__ double rhs[R * kSolveUnitColumns];
  __shared__ double solved[R * kSolveUnitColumns];
  const int u = tree.forward_order[claim_ticket(counters.tickets)];
  stamp(counters.timeline, u, 0);
  const SolveUnit unit = tree.units[u];
  const int k = unit.columns;
  prefetch_unit(tree.values + unit.values, unit.leading, k, unit.rows);
  // The unit's rows of B depend on no other unit: read them (across the bus when B is mapped host
  // memory) while waiting, off the critical path.
  load_segment<R>(b, stride, unit.first_row, k, rhs);
  wait_for(counters.pending + u, 0);
  stamp(counters.timeline, u, 1);
  const double* l = tree.values + unit.values;
  add_to_segment<R>(x, stride, unit.first_row, k, rhs);  // each thread its own entries of rhs
  zero<R>(solved, k);
  __syncthreads();
  diagonal_product<R>(l, unit.leading, k, rhs, solved);  // the diagonal block holds L₁₁⁻¹
  __syncthreads();
  store_segment<R>(solved, unit.first_row, k, x, stride);
  // The rows below belong to ancestors (or to the next unit of the same supernode), which wait
  // for this one; siblings may update the same rows at the same time, hence the atomics.
  below_product<R>(l, unit.leading, k, unit.rows, tree.row_lists + unit.row_list, solved, x, stride);
  if (unit.parent_unit >= 0) signal(counters.pending + unit.parent_unit, true);
  stamp(counters.timeline, u, 2);
}

template <int R>
__global__ void __launch_bounds__(kThreads, 1) backward_kernel(SolveTree tree, SolveCounters counters, double* x,
                                                            double* result, int stride) {
  __shared__ double rhs[R * kSolveUnitColumns];
  __shared__ double solved[R * kSolveUnitColumns];  // also the gathered x below, before it is zeroed
  const int u = tree.backward_order[claim_ticket(counters.tickets + 1)];
  stamp(counters.timeline, u, 0);
  const SolveUnit unit = tree.units[u];
  const double* t = tree.transposed + unit.transposed;
  prefetch_unit(t, unit.columns, unit.rows, unit.columns);
  // The rows below are the parent unit's or its ancestors': final once the parent unit is.
  if (unit.parent_unit >= 0) wait_for(counters.done + unit.parent_unit, 1);
  stamp(counters.timeline, u, 1);
  const int k = unit.columns;
  load_segment<R>(x, stride, unit.first_row, k, rhs);
  __syncthreads();
  // rhs −= L₂₁ᵀ·x_below, then x = L₁₁⁻ᵀ·rhs (the diagonal block holds L₁₁⁻¹).
  below_transpose_product<R>(t, k, unit.rows, tree.row_lists + unit.row_list, x, stride, solved, rhs);
  zero<R>(solved, k);
  __syncthreads();
  diagonal_transpose_product<R>(t, k, rhs, solved);
  __syncthreads();
  store_segment<R>(solved, unit.first_row, k, x, stride);
  store_segment<R>(solved, unit.first_row, k, result, stride);  // posted writes: nothing waits on them
  signal(counters.done + u, false);
  stamp(counters.timeline, u, 2);
}

// The right-hand-side count R is a template argument: it sizes the per-lane sums in registers.
template <template <int> class Launch, typename... Args>
void launch_for_columns(int columns, Args... args) {
  switch (columns) {
    case 1: Launch<1>::run(args...); break;
    case 2: Launch<2>::run(args...); break;
    case 3: Launch<3>::run(args...); break;
    default: Launch<4>::run(args...); break;
  }
}

template <int R>
struct Forward {
  static void run(const SolveTree& tree, SolveCounters counters, const double* b, double* x, int stride,
                  cudaStream_t stream) {
    forward_kernel<R><<<static_cast<unsigned>(tree.unit_count), kThreads, 0, stream>>>(tree, counters, b, x, stride);
  }
};

template <int R>
struct Backward {
  static void run(const SolveTree& tree, SolveCounters counters, double* x, double* result, int stride,
                  cudaStream_t stream) {
    backward_kernel<R><<<static_cast<unsigned>(tree.unit_count), kThreads, 0, stream>>>(tree, counters, x, result,
                                                                                         stride);
  }
};

}  // namespace

void launch_forward_substitution(const SolveTree& tree, SolveCounters counters, const double* b, double* x, int stride,
                                 int columns, cudaStream_t stream) {
  if (tree.unit_count > 0) launch_for_columns<Forward>(columns, tree, counters, b, x, stride, stream);
}

void launch_backward_substitution(const SolveTree& tree, SolveCounters counters, double* x, double* result, int stride,
                                  int columns, cudaStream_t stream) {
  if (tree.unit_count > 0) launch_for_columns<Backward>(columns, tree, counters, x, result, stride, stream);
}

}  // namespace cholsim::factor::gpu
