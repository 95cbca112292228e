#pragma once
// Colour-by-colour parallel loops of the operator-splitting element passes (seed 003 §4: "the
// loop over all meshes is parallelized"): the items of one colour share no node
// (greedy_element_colors), so each colour is one parallel region of the fem::parallel_loops
// pool, cut into pieces that the calling thread and the pool's workers run, and the next
// colour starts when all pieces of this one have finished. The workers wait spinning between
// the colours of a sweep, so a colour costs no thread start and no sleep; each thread starts
// with the same share of every colour — the colour's tets in element order, so about the same
// region of the mesh — and so mostly finds the nodes it moves in its own cache. Pieces depend only
// on the colour, its size and the thread count, so a body whose items are independent within a
// colour gives the same result for every thread count.
#include <algorithm>
#include <cstdint>
#include <span>

#include "fem/parallel_loops.hpp"

namespace cholsim::fem {

/// A colour with fewer items than this runs on the calling thread: handing out its two halves
/// and waiting for both costs a few µs, about what 1000 tets' projections take (the ≈ 540-tet
/// colours of a 16K-tet mesh were slower split; the last colours of a greedy colouring hold a
/// few items each).
inline constexpr linalg::Index kMinParallelColorItems = 1024;

/// Pieces per thread and colour: fewer than parallel_chunks takes, since a colour is short
/// (≈ 20 µs on 55K tets) and every piece boundary is a place where the two threads' nodes
/// meet in one cache line; two still let the caller take half of a late worker's share.
inline constexpr std::int64_t kColorPiecesPerThread = 2;

/// Calls body(k, begin, end) for every colour k, on disjoint pieces [begin, end) of its items
/// [color_begin[k], color_begin[k+1]) that start at multiples of `granularity` from the
/// colour's start (e.g. whole SIMD blocks), with as many threads as
/// resolve_thread_count(threads) gives (one when there are fewer than kMinParallelIterations
/// items in all). All pieces of colour k finish before any of colour k + 1 starts. `body` must
/// not throw: an exception ends the program (std::terminate).
template <typename Body>
void parallel_colors(std::span<const linalg::Index> color_begin, linalg::Index granularity, int threads,
                     Body&& body) {
  using linalg::Index;
  if (color_begin.size() < 2) return;
  const int workers = color_begin.back() < kMinParallelIterations
                          ? 1
                          : std::min(resolve_thread_count(threads), detail::kMaxThreads);
  struct Piece {
    Body& body;
    Index color;
    std::int64_t begin, count, units, chunks, granularity;
    /// Start of piece p: a whole number of granules from the colour's start.
    [[nodiscard]] Index bound(std::int64_t p) const {
      return static_cast<Index>(begin + std::min(count, granularity * (units * p / chunks)));
    }
  };
  for (std::size_t k = 0; k + 1 < color_begin.size(); ++k) {
    const Index begin = color_begin[k], end = color_begin[k + 1];
    if (workers == 1 || end - begin < kMinParallelColorItems) {
      body(static_cast<Index>(k), begin, end);
      continue;
    }
    const std::int64_t units = (std::int64_t{end} - begin + granularity - 1) / granularity;
    Piece piece{body, static_cast<Index>(k), begin, end - begin, units,
                std::min<std::int64_t>(units, kColorPiecesPerThread * workers),
                granularity};
    detail::run_chunks(static_cast<Index>(piece.chunks), workers, [](void* raw, Index p) noexcept {
      const auto& c = *static_cast<const Piece*>(raw);
      c.body(c.color, c.bound(p), c.bound(p + 1));
    }, &piece);
  }
}

}  // namespace cholsim::fem
