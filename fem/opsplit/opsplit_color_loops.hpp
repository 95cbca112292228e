#pragma once
// Colour-by-colour parallel loops of the operator-splitting element passes (seed 003 §4: "the
// loop over all meshes is parallelized"): the items of one colour share no node
// (greedy_element_colors), so each colour is one oneTBB parallel loop, cut into pieces that
// the threads of the arena (linalg::thread_arena) run, and the next colour starts when all
// pieces of this one have finished. The whole sweep runs inside the arena, so a colour costs
// one parallel loop and no arena entry; the static partitioner gives each thread the same share
// of every colour — the colour's tets in element order, so about the same region of the mesh —
// and so it mostly finds the nodes it moves in its own cache. Pieces depend only on the colour,
// its size and the thread count, so a body whose items are independent within a colour gives
// the same result for every thread count.
#include <algorithm>
#include <cstdint>
#include <span>

#include "linalg/parallel_loops.hpp"

namespace cholsim::fem {

/// A colour with fewer items than this runs on the calling thread: handing out its two halves
/// and waiting for both costs a few µs, about what 1000 tets' projections take (the ≈ 540-tet
/// colours of a 16K-tet mesh were slower split; the last colours of a greedy colouring hold a
/// few items each).
inline constexpr linalg::Index kMinParallelColorItems = 1024;

/// Pieces per thread and colour: fewer than parallel_chunks takes, since a colour is short
/// (≈ 20 µs on 55K tets) and every piece boundary is a place where the two threads' nodes
/// meet in one cache line; two still let a waiting thread take half of a late one's share.
inline constexpr std::int64_t kColorPiecesPerThread = 2;

/// Calls body(k, begin, end) for every colour k, on disjoint pieces [begin, end) of its items
/// [color_begin[k], color_begin[k+1]) that start at multiples of `granularity` from the
/// colour's start (e.g. whole SIMD blocks), with as many threads as
/// linalg::resolve_thread_count(threads) gives (one when there are fewer than
/// linalg::kMinParallelIterations items in all). All pieces of colour k finish before any of
/// colour k + 1 starts. `body` must not throw: an exception ends the program (std::terminate).
template <typename Body>
void parallel_colors(std::span<const linalg::Index> color_begin, linalg::Index granularity, int threads,
                     Body&& body) {
  using linalg::Index;
  if (color_begin.size() < 2) return;
  const int workers = color_begin.back() < linalg::kMinParallelIterations ? 1 : linalg::resolve_thread_count(threads);
  const auto sweep = [&] {
    for (std::size_t k = 0; k + 1 < color_begin.size(); ++k) {
      const Index color = static_cast<Index>(k), begin = color_begin[k], end = color_begin[k + 1];
      if (workers == 1 || end - begin < kMinParallelColorItems) {
        body(color, begin, end);
        continue;
      }
      const std::int64_t count = end - begin;
      const std::int64_t units = (count + granularity - 1) / granularity;
      const std::int64_t pieces = std::min<std::int64_t>(units, kColorPiecesPerThread * workers);
      // Start of piece p: a whole number of granules from the colour's start.
      const auto bound = [&](std::int64_t p) {
        return static_cast<Index>(begin + std::min(count, granularity * (units * p / pieces)));
      };
      linalg::detail::for_each_chunk(static_cast<Index>(pieces), [&](Index p) noexcept {
        body(color, bound(p), bound(p + 1));
      });
    }
  };
  if (workers == 1) {
    sweep();
  } else {
    linalg::thread_arena(workers).execute(sweep);
  }
}

}  // namespace cholsim::fem
