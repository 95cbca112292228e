#pragma once
// The per-element and per-node loops of the simulation methods (seed 003 §4: "the loop over
// all meshes is parallelized"; seed 000 §5.3) split into `threads` contiguous chunks: chunk 0
// runs on the calling thread, the others on short-lived std::threads. Each iteration writes
// only its own slots, so the only synchronisation is the final join, and chunks fixed by
// (count, threads) give the same result for every thread count.
#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

#include "linalg/index_types.hpp"

namespace cholsim::fem {

/// Threads to use for `requested` (≤ 0: the hardware's concurrency, at least 1).
inline int resolve_thread_count(int requested) {
  if (requested > 0) return requested;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

/// Below this many iterations a loop runs on the calling thread: starting a thread costs more.
inline constexpr linalg::Index kMinParallelIterations = 2048;

/// Calls body(begin, end) on disjoint chunks covering [0, count), with `threads` as
/// resolve_thread_count reads it. Rethrows the first exception a chunk threw after all
/// chunks finished.
template <typename Body>
void parallel_chunks(linalg::Index count, int threads, Body&& body) {
  const linalg::Index chunks =
      count < kMinParallelIterations ? 1 : std::clamp<linalg::Index>(resolve_thread_count(threads), 1, count);
  if (chunks <= 1) {
    body(linalg::Index{0}, count);
    return;
  }
  const auto bound = [&](linalg::Index k) { return count * k / chunks; };
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(chunks));
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(chunks - 1));
  for (linalg::Index k = 1; k < chunks; ++k) {
    workers.emplace_back([&, k] {
      try {
        body(bound(k), bound(k + 1));
      } catch (...) {
        errors[static_cast<std::size_t>(k)] = std::current_exception();
      }
    });
  }
  try {
    body(bound(0), bound(1));
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (std::thread& worker : workers) worker.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace cholsim::fem
