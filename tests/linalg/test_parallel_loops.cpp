// linalg::parallel_chunks on oneTBB: chunks cover the range once and depend only on (count,
// threads), no more threads than asked run them, results do not depend on the thread count,
// the lowest-numbered chunk's exception is rethrown after all chunks ran, many loops in a row
// complete, and nested loops or loops from several application threads give the same results.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "linalg/parallel_loops.hpp"

namespace cholsim::linalg {
namespace {

constexpr Index kCount = 10007;  // above kMinParallelIterations, prime: uneven chunks

/// The [begin, end) pieces a parallel_chunks call made, sorted, and the distinct threads that
/// ran them.
struct Pieces {
  std::vector<std::pair<Index, Index>> ranges;
  std::set<std::thread::id> threads;
};

Pieces pieces_of(Index count, int threads, int work_per_iteration = 0) {
  Pieces result;
  std::mutex mutex;
  parallel_chunks(count, threads, [&](Index begin, Index end) {
    volatile double sink = 0.0;  // keeps a chunk busy long enough for other threads to join
    for (Index i = begin; i < end; ++i) {
      for (int k = 0; k < work_per_iteration; ++k) sink = sink + 1.0 / (i + k + 1);
    }
    const std::lock_guard lock(mutex);
    result.ranges.emplace_back(begin, end);
    result.threads.insert(std::this_thread::get_id());
  });
  std::sort(result.ranges.begin(), result.ranges.end());
  return result;
}

TEST(ParallelLoops, ChunksCoverTheRangeOnce) {
  for (int threads : {1, 2, 3, 5}) {
    const Pieces pieces = pieces_of(kCount, threads);
    ASSERT_FALSE(pieces.ranges.empty());
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

TEST(ParallelLoops, NoMoreThreadsThanAskedRunTheChunks) {
  // The arena of `threads` threads is a hard limit, on any machine (with more threads asked
  // than cores oneTBB may use fewer).
  for (int threads : {1, 2, 3}) {
    for (int repeat = 0; repeat < 20; ++repeat) {
      const Pieces pieces = pieces_of(kCount, threads, 200);
      ASSERT_LE(pieces.threads.size(), static_cast<std::size_t>(threads)) << threads << " threads";
    }
  }
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

TEST(ParallelLoops, NestedAndConcurrentLoopsGiveTheSameResults) {
  // A loop inside a chunk (same arena and another thread count's), and loops from four
  // application threads at once sharing the arenas: same results, no deadlock.
  const std::vector<double> expected = harmonic_tails(1);
  std::vector<std::vector<double>> nested(2);
  parallel_chunks(kMinParallelIterations, 2, [&](Index begin, Index end) {
    for (Index i = begin; i < end; ++i) {
      if (i < 2) nested[static_cast<std::size_t>(i)] = harmonic_tails(2 + static_cast<int>(i));
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

}  // namespace
}  // namespace cholsim::linalg
