#pragma once
// Colour-by-colour parallel loops of the operator-splitting element passes (seed 003 §4: "the
// loop over all meshes is parallelized"): the items of one colour share no node
// (greedy_element_colors), so `threads` workers split each colour and meet at a barrier before
// the next. One set of threads per call — parallel_chunks once per colour would start threads
// for every colour (and run the many colors below kMinParallelIterations items serially).
// Items are split by colour and worker alone, so a body whose items are independent within a
// colour gives the same result for every thread count.
#include <algorithm>
#include <barrier>
#include <cstdint>
#include <span>
#include <thread>
#include <vector>

#include "fem/parallel_loops.hpp"

namespace cholsim::fem {

/// Calls body(worker, k, begin, end) for every colour k, on disjoint pieces [begin, end) of its
/// items [color_begin[k], color_begin[k+1]) that start at multiples of `granularity` from the
/// colour's start (e.g. whole SIMD blocks), with as many workers as
/// resolve_thread_count(threads) gives, numbered 0, 1, … (one when there are fewer than
/// kMinParallelIterations items in all). All pieces of colour k finish before any of colour
/// k + 1 starts. `body` must not throw: a worker that left early would leave the others waiting
/// at the barrier, so an exception ends the program instead.
template <typename Body>
void parallel_colors(std::span<const linalg::Index> color_begin, linalg::Index granularity, int threads,
                     Body&& body) {
  using linalg::Index;
  if (color_begin.size() < 2) return;
  const auto colors = static_cast<Index>(color_begin.size() - 1);
  const int workers = color_begin.back() < kMinParallelIterations ? 1 : resolve_thread_count(threads);
  const auto work = [&](int worker, auto&& wait_for_others) noexcept {
    for (Index k = 0; k < colors; ++k) {
      const std::int64_t begin = color_begin[static_cast<std::size_t>(k)];
      const std::int64_t count = color_begin[static_cast<std::size_t>(k) + 1] - begin;
      const std::int64_t units = (count + granularity - 1) / granularity;
      const auto bound = [&](std::int64_t w) {
        return static_cast<Index>(begin + std::min(count, granularity * (units * w / workers)));
      };
      body(worker, k, bound(worker), bound(worker + 1));
      wait_for_others();  // the next colour may touch this colour's nodes
    }
  };
  if (workers == 1) {
    work(0, [] {});
    return;
  }
  std::barrier colour_done(workers);
  const auto wait = [&colour_done] { colour_done.arrive_and_wait(); };
  std::vector<std::thread> started;
  started.reserve(static_cast<std::size_t>(workers - 1));
  for (int worker = 1; worker < workers; ++worker) started.emplace_back([&, worker] { work(worker, wait); });
  work(0, wait);
  for (std::thread& thread : started) thread.join();
}

}  // namespace cholsim::fem
