// The worker pool behind fem::parallel_chunks and fem::parallel_colors: chunks cover the range
// once, chunk 0 runs on the caller, results do not depend on the thread count, the
// lowest-numbered chunk's exception is rethrown after all chunks ran, many loops in a row
// complete, and nested or concurrent regions (two simulations) fall back to the caller.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fem/opsplit/operator_splitting.hpp"
#include "fem/opsplit/opsplit_color_loops.hpp"
#include "fem/parallel_loops.hpp"
#include "linalg/generators.hpp"

namespace cholsim::fem {
namespace {

constexpr Index kCount = 10007;  // above kMinParallelIterations, prime: uneven chunks

/// The [begin, end) pieces a parallel_chunks call made, sorted, and whether the piece starting
/// at 0 ran on the calling thread.
struct Pieces {
  std::vector<std::pair<Index, Index>> ranges;
  bool first_on_caller = false;
};

Pieces pieces_of(Index count, int threads) {
  Pieces result;
  std::mutex mutex;
  const std::thread::id caller = std::this_thread::get_id();
  parallel_chunks(count, threads, [&](Index begin, Index end) {
    const std::lock_guard lock(mutex);
    result.ranges.emplace_back(begin, end);
    if (begin == 0) result.first_on_caller = std::this_thread::get_id() == caller;
  });
  std::sort(result.ranges.begin(), result.ranges.end());
  return result;
}

TEST(ParallelLoops, ChunksCoverTheRangeOnceWithChunkZeroOnTheCaller) {
  for (int threads : {1, 2, 3, 5}) {
    const Pieces pieces = pieces_of(kCount, threads);
    ASSERT_FALSE(pieces.ranges.empty());
    EXPECT_TRUE(pieces.first_on_caller) << threads << " threads";
    Index next = 0;
    for (const auto& [begin, end] : pieces.ranges) {
      EXPECT_EQ(begin, next) << threads << " threads";
      EXPECT_LT(begin, end);
      next = end;
    }
    EXPECT_EQ(next, kCount) << threads << " threads";
    if (threads == 1) {
      EXPECT_EQ(pieces.ranges.size(), 1u);
    }
  }
  // Short loops stay on the caller in one piece.
  EXPECT_EQ(pieces_of(kMinParallelIterations - 1, 4).ranges.size(), 1u);
  // The same (count, threads) always gives the same pieces.
  EXPECT_EQ(pieces_of(kCount, 3).ranges, pieces_of(kCount, 3).ranges);
}

TEST(ParallelLoops, OneThreadRunsOnTheCallerOnly) {
  const std::thread::id caller = std::this_thread::get_id();
  bool all_on_caller = true;
  parallel_chunks(kCount, 1, [&](Index, Index) { all_on_caller = all_on_caller && std::this_thread::get_id() == caller; });
  EXPECT_TRUE(all_on_caller);
}

/// A per-iteration result that is expensive enough to spread over the workers.
std::vector<double> harmonic_tails(int threads) {
  std::vector<double> out(static_cast<std::size_t>(kCount));
  parallel_chunks(kCount, threads, [&](Index begin, Index end) {
    for (Index i = begin; i < end; ++i) {
      double sum = 0.0;
      for (Index k = 1; k <= 50; ++k) sum += 1.0 / static_cast<double>(i + k);
      out[static_cast<std::size_t>(i)] = sum;
    }
  });
  return out;
}

TEST(ParallelLoops, ResultsAreIdenticalForOneTwoAndThreeThreads) {
  const std::vector<double> one = harmonic_tails(1);
  EXPECT_EQ(harmonic_tails(2), one);
  EXPECT_EQ(harmonic_tails(3), one);
  EXPECT_EQ(harmonic_tails(0), one);  // the hardware's concurrency
}

TEST(ParallelLoops, RethrowsTheLowestChunksExceptionAfterAllChunksRan) {
  for (int threads : {1, 2, 3}) {
    std::atomic<Index> visited{0};
    std::string message;
    try {
      parallel_chunks(kCount, threads, [&](Index begin, Index end) {
        visited += end - begin;
        // Iterations 7000 and 9000 throw; with one chunk per call only the first is reached.
        for (Index bad : {Index{7000}, Index{9000}}) {
          if (begin <= bad && bad < end) throw std::runtime_error("iteration " + std::to_string(bad));
        }
      });
    } catch (const std::runtime_error& error) {
      message = error.what();
    }
    EXPECT_EQ(message, "iteration 7000") << threads << " threads";
    EXPECT_EQ(visited.load(), kCount) << threads << " threads";
  }
}

TEST(ParallelLoops, TenThousandLoopsInARowComplete) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(kMinParallelIterations), 0);
  constexpr int kLoops = 10000;
  for (int loop = 0; loop < kLoops; ++loop) {
    parallel_chunks(kMinParallelIterations, 2 + loop % 2, [&](Index begin, Index end) {
      for (Index i = begin; i < end; ++i) ++counts[static_cast<std::size_t>(i)];
    });
  }
  EXPECT_TRUE(std::all_of(counts.begin(), counts.end(), [](std::int64_t c) { return c == kLoops; }));
}

TEST(ParallelLoops, NestedAndConcurrentLoopsRunOnTheirCaller) {
  // A loop inside a chunk, and loops from two application threads at once: the pool is busy
  // for one of them, which then runs its chunks itself — same results, no deadlock.
  const std::vector<double> expected = harmonic_tails(1);
  std::vector<std::vector<double>> nested(2);
  parallel_chunks(kMinParallelIterations, 2, [&](Index begin, Index end) {
    for (Index i = begin; i < end; ++i) {
      if (i < 2) nested[static_cast<std::size_t>(i)] = harmonic_tails(2);
    }
  });
  EXPECT_EQ(nested[0], expected);
  EXPECT_EQ(nested[1], expected);
  std::vector<std::vector<double>> concurrent(4);
  {
    std::vector<std::thread> callers;
    for (std::size_t t = 0; t < concurrent.size(); ++t) {
      callers.emplace_back([&, t] {
        for (int repeat = 0; repeat < 20; ++repeat) concurrent[t] = harmonic_tails(2);
      });
    }
    for (std::thread& caller : callers) caller.join();
  }
  for (const auto& result : concurrent) EXPECT_EQ(result, expected);
}

TEST(ParallelColors, PiecesCoverEachColourInOrderOnWholeGranules) {
  // Colours of 5000, 3, 700 and 2049 items, granules of 8.
  const std::vector<Index> color_begin = {0, 5000, 5003, 5703, 7752};
  constexpr Index kGranularity = 8;
  for (int threads : {1, 2, 3}) {
    std::vector<int> color_of(static_cast<std::size_t>(color_begin.back()), -1);
    std::atomic<bool> ordered{true}, aligned{true};
    std::atomic<Index> finished_color{-1};
    std::mutex mutex;
    std::vector<Index> items_done(color_begin.size() - 1, 0);
    parallel_colors(color_begin, kGranularity, threads, [&](Index k, Index begin, Index end) {
      const auto c = static_cast<std::size_t>(k);
      if (finished_color.load() != k - 1) ordered = false;  // colour k − 1 must be complete
      if ((begin - color_begin[c]) % kGranularity != 0) aligned = false;
      for (Index i = begin; i < end; ++i) color_of[static_cast<std::size_t>(i)] += static_cast<int>(k) + 1;
      const std::lock_guard lock(mutex);
      items_done[c] += end - begin;
      if (items_done[c] == color_begin[c + 1] - color_begin[c]) finished_color = k;
    });
    EXPECT_TRUE(ordered) << threads << " threads";
    EXPECT_TRUE(aligned) << threads << " threads";
    for (std::size_t k = 0; k + 1 < color_begin.size(); ++k) {
      for (Index i = color_begin[k]; i < color_begin[k + 1]; ++i) {
        ASSERT_EQ(color_of[static_cast<std::size_t>(i)], static_cast<int>(k)) << "item " << i << ", " << threads << " threads";
      }
    }
  }
}

OperatorSplittingSimulation swinging_bar(int threads) {
  Material material;
  material.youngs_modulus = 1e5;
  material.poisson_ratio = 0.3;
  material.density = 1000.0;
  ElasticBody body = make_elastic_body(linalg::structured_tet_box(10, 8, 6, 0.05), material, "bar");  // 2880 tets
  OperatorSplittingOptions options;
  options.threads = threads;
  for (Index v = 0; v < body.node_count(); ++v) {
    if (body.rest.positions[static_cast<std::size_t>(3 * v)] == 0.0) options.fixed_nodes.push_back(v);
  }
  return OperatorSplittingSimulation(std::move(body), options);
}

std::vector<double> positions_after(OperatorSplittingSimulation& simulation, int steps) {
  for (int s = 0; s < steps; ++s) simulation.step();
  return {simulation.positions().begin(), simulation.positions().end()};
}

TEST(ParallelLoops, TwoSimulationsSteppedAlternatelyMatchEachSteppedAlone) {
  // (Compared at equal thread counts: the factorization's threads may order its sums
  // differently.)
  constexpr int kSteps = 4;
  OperatorSplittingSimulation alone_two = swinging_bar(2), alone_three = swinging_bar(3);
  const std::vector<double> expected_two = positions_after(alone_two, kSteps);
  const std::vector<double> expected_three = positions_after(alone_three, kSteps);
  OperatorSplittingSimulation first = swinging_bar(2), second = swinging_bar(3);
  for (int s = 0; s < kSteps; ++s) {
    first.step();
    second.step();
  }
  EXPECT_EQ(std::vector<double>(first.positions().begin(), first.positions().end()), expected_two);
  EXPECT_EQ(std::vector<double>(second.positions().begin(), second.positions().end()), expected_three);
}

}  // namespace
}  // namespace cholsim::fem
