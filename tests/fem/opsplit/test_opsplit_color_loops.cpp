// fem::parallel_colors, the colour-by-colour loops of operator splitting on the oneTBB arena:
// pieces cover each colour in order on whole granules, and two simulations stepped alternately
// give what each gives alone.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "fem/opsplit/operator_splitting.hpp"
#include "fem/opsplit/opsplit_color_loops.hpp"
#include "linalg/generators.hpp"

namespace cholsim::fem {
namespace {

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
