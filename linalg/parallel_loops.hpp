#pragma once
// Parallel loops and the thread arenas behind them, on oneTBB: the per-element and per-node
// loops of the simulation methods (seed 003 §4: "the loop over all meshes is parallelized";
// seed 000 §5.3) and the assembly-tree tasks of the factorization (factor/numeric/
// tree_scheduler) run inside a tbb::task_arena of the thread count the caller asked for.
//
// Why arenas kept per thread count: `threads` is a hard limit (FactorOptions::threads, a
// simulation's --threads), so work never runs on more threads than asked; an arena made once is
// not rebuilt for each of the few dozen short loops of a time step (0.02–2 ms each), and its
// workers are oneTBB's, started once per process.
//
// Why the chunks are ours and not the partitioner's: a loop is cut into chunks whose bounds
// depend only on (count, threads), and every chunk writes only its own slots, so results do
// not depend on which thread ran which chunk nor on how oneTBB balanced them. The static
// partitioner hands each thread the same contiguous share of chunks in every loop (the same
// elements in every colour of a sweep, found in its own cache), and a share whose thread is
// late is run by the thread that waits for it.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include "linalg/index_types.hpp"

namespace cholsim::linalg {

/// Threads to use for `requested` (≤ 0: the hardware's concurrency, at least 1).
int resolve_thread_count(int requested);

/// The oneTBB arena for `threads` threads in all, the calling thread's included (threads as
/// resolve_thread_count reads it). Made on first use and kept for the process, one per count.
tbb::task_arena& thread_arena(int threads);

/// Below this many iterations a loop runs on the calling thread: waking a worker costs more.
inline constexpr Index kMinParallelIterations = 2048;

namespace detail {

/// Chunks to cut a parallel loop of `units` units into for `threads` threads: several per
/// thread, so that a thread that starts late leaves part of its share to the others.
inline Index chunks_for(Index units, int threads) {
  constexpr Index kChunksPerThread = 8;
  return std::clamp<Index>(units, 1, kChunksPerThread * Index{threads});
}

/// Runs body(c) for every chunk c in [0, chunks) in the arena the caller is in, each thread
/// taking a contiguous share (static partitioner); returns when all have run. `body` must not
/// throw.
template <typename ChunkBody>
void for_each_chunk(Index chunks, const ChunkBody& body) {
  tbb::parallel_for(tbb::blocked_range<Index>(0, chunks, 1), [&](const tbb::blocked_range<Index>& range) {
    for (Index c = range.begin(); c < range.end(); ++c) body(c);
  }, tbb::static_partitioner());
}

/// Collects the exception of the lowest-numbered chunk that threw.
class ChunkErrors {
 public:
  void record(Index chunk, std::exception_ptr error) {
    const std::lock_guard lock(mutex_);
    if (!error_ || chunk < chunk_) {
      error_ = std::move(error);
      chunk_ = chunk;
    }
  }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
  Index chunk_ = 0;
};

}  // namespace detail

/// Calls body(begin, end) on disjoint chunks covering [0, count), with `threads` as
/// resolve_thread_count reads it; the chunk bounds depend only on (count, threads). threads = 1,
/// or fewer than kMinParallelIterations iterations, is one call body(0, count) on the calling
/// thread. Every chunk runs even when some throw; then the exception of the lowest-numbered
/// chunk that threw is rethrown.
/// `min_parallel_iterations` lowers the threshold for loops whose iterations are long (a
/// collision query costs microseconds, an element's rotation tens of nanoseconds).
template <typename Body>
void parallel_chunks(Index count, int threads, Body&& body, Index min_parallel_iterations = kMinParallelIterations) {
  const int workers = count < min_parallel_iterations ? 1 : resolve_thread_count(threads);
  if (workers <= 1) {
    body(Index{0}, count);
    return;
  }
  const Index chunks = detail::chunks_for(count, workers);
  const auto bound = [&](Index k) {  // 64-bit: count · chunk may not fit in an Index
    return static_cast<Index>(std::int64_t{count} * k / chunks);
  };
  detail::ChunkErrors errors;
  thread_arena(workers).execute([&] {
    detail::for_each_chunk(chunks, [&](Index chunk) {
      try {
        body(bound(chunk), bound(chunk + 1));
      } catch (...) {
        errors.record(chunk, std::current_exception());
      }
    });
  });
  errors.rethrow();
}

}  // namespace cholsim::linalg
