#pragma once
// The per-element and per-node loops of the simulation methods (seed 003 §4: "the loop over
// all meshes is parallelized"; seed 000 §5.3), split into chunks that the calling thread and a
// process-wide pool of worker threads run.
//
// Why a pool and several chunks per thread: a step runs a few dozen parallel loops of
// 0.02–2 ms each. Starting std::threads per loop (≈ 30 µs each here) cost more than the loops
// gained, and with one chunk per thread the caller waited for a worker that the OS had not
// scheduled yet (on a busy machine the step with 2 threads took twice as long as with 1). The
// pool's threads start once and wait between loops, spinning briefly and then sleeping. Each
// thread runs its own share of the chunks first — the same share in every loop, so it finds
// its part of the data in its own cache — and then takes the others' unclaimed chunks, so a
// late or descheduled worker only means that the caller does more of the work itself (see
// parallel_loops.cpp). Chunk bounds depend only on (count, threads), and each iteration of the
// loops here writes only its own slots, so the result does not depend on the thread count nor
// on which thread ran which chunk.
//
// One pool per process, one parallel region at a time: a call that finds the pool busy — a loop
// nested in a chunk, or a second simulation stepped on another application thread — runs its
// chunks in order on its own thread, which gives the same result. (Pools per simulation would
// put twice the threads on the same cores when two simulations step at once.)
#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>

#include "linalg/index_types.hpp"

namespace cholsim::fem {

/// Threads to use for `requested` (≤ 0: the hardware's concurrency, at least 1).
inline int resolve_thread_count(int requested) {
  if (requested > 0) return requested;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

/// Below this many iterations a loop runs on the calling thread: waking a worker costs more.
inline constexpr linalg::Index kMinParallelIterations = 2048;

namespace detail {

/// Runs one chunk; must not throw (parallel_chunks catches inside).
using ChunkTask = void (*)(void* context, linalg::Index chunk);

/// The most chunks one parallel region may have, and the most threads it may use.
inline constexpr linalg::Index kMaxChunks = 4096;
inline constexpr int kMaxThreads = 128;

/// Runs task(context, c) for every c in [0, chunks): chunk 0 first on the calling thread, the
/// others on it or on up to threads − 1 pool workers (started on first use), each thread
/// starting with the same share of the chunks in every call. Returns when all have finished.
/// 1 ≤ chunks ≤ kMaxChunks; threads ≤ 1 runs everything on the calling thread.
void run_chunks(linalg::Index chunks, int threads, ChunkTask task, void* context);

/// Chunks to cut a parallel loop of `units` units into for `threads` threads: several per
/// thread, so that a worker that starts late leaves its share to the others.
inline linalg::Index chunks_for(linalg::Index units, int threads) {
  constexpr linalg::Index kChunksPerThread = 8;
  return std::clamp<linalg::Index>(units, 1, std::min<linalg::Index>(kMaxChunks, kChunksPerThread * threads));
}

/// Collects the exception of the lowest-numbered chunk that threw.
class ChunkErrors {
 public:
  void record(linalg::Index chunk, std::exception_ptr error) {
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
  linalg::Index chunk_ = 0;
};

}  // namespace detail

/// Calls body(begin, end) on disjoint chunks covering [0, count), with `threads` as
/// resolve_thread_count reads it; the chunk bounds depend only on (count, threads), and the
/// chunk starting at 0 runs on the calling thread. threads = 1, or fewer than
/// kMinParallelIterations iterations, is one call body(0, count) on the calling thread, no
/// thread touched. Rethrows the exception of the lowest-numbered chunk that threw, after all
/// chunks finished.
template <typename Body>
void parallel_chunks(linalg::Index count, int threads, Body&& body) {
  using linalg::Index;
  const int workers = count < kMinParallelIterations ? 1 : std::min(resolve_thread_count(threads), detail::kMaxThreads);
  if (workers <= 1) {
    body(Index{0}, count);
    return;
  }
  struct Context {
    Body& body;
    Index count;
    Index chunks;
    detail::ChunkErrors errors;
  } context{body, count, detail::chunks_for(count, workers), {}};
  detail::run_chunks(context.chunks, workers, [](void* raw, Index chunk) {
    auto& c = *static_cast<Context*>(raw);
    try {
      const auto bound = [&c](Index k) {  // 64-bit: count · chunk may not fit in an Index
        return static_cast<Index>(std::int64_t{c.count} * k / c.chunks);
      };
      c.body(bound(chunk), bound(chunk + 1));
    } catch (...) {
      c.errors.record(chunk, std::current_exception());
    }
  }, &context);
  context.errors.rethrow();
}

}  // namespace cholsim::fem
