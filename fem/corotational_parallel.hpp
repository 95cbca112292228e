#pragma once
// A minimal static-partition parallel loop for the per-element and per-node kernels of the
// corotational methods: each kernel writes only its own element's or node's slots, so the
// range splits into contiguous chunks with no synchronisation but the final join.
#include <algorithm>
#include <thread>
#include <vector>

#include "linalg/index_types.hpp"

namespace cholsim::fem {

/// Threads to use for `requested` (≤ 0: the hardware's concurrency, at least 1).
inline int resolve_thread_count(int requested) {
  if (requested > 0) return requested;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

/// Calls body(begin, end) on disjoint chunks covering [0, count). Ranges shorter than
/// `serial_below` run on the calling thread: spawning costs more than it saves there.
template <class Body>
void parallel_for(linalg::Index count, int threads, Body&& body, linalg::Index serial_below = 4096) {
  const int workers = std::min<linalg::Index>(resolve_thread_count(threads), std::max<linalg::Index>(1, count / 1024));
  if (workers <= 1 || count < serial_below) {
    body(linalg::Index{0}, count);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(workers - 1));
  const linalg::Index chunk = (count + workers - 1) / workers;
  for (int w = 1; w < workers; ++w) {
    const linalg::Index begin = std::min(count, w * chunk);
    const linalg::Index end = std::min(count, begin + chunk);
    pool.emplace_back([&body, begin, end] { body(begin, end); });
  }
  body(linalg::Index{0}, std::min(count, chunk));
  for (std::thread& t : pool) t.join();
}

}  // namespace cholsim::fem
