// The tree scheduler's phase 1 (oneTBB tasks popping ready supernodes) on a tree of 2·10⁵
// leaves and 10⁵ nested branchings per subtree — deeper than any stack would hold as one
// nested task per branching: the schedule is the two deep subtrees, and two threads give the
// one-thread factor.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <utility>
#include <vector>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/numeric/tree_scheduler.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

using testing::spd_from_edges;

/// Two combs joined at a last node: comb k has a spine s₀ … s_{m−1} (a path) and a tooth tᵢ
/// on every spine node, numbered tᵢ, sᵢ in turn. In natural order each spine node's
/// supernode has two children (its tooth and the spine below), so each comb is a subtree with
/// m nested branchings, and the last node balances the two combs for a two-thread cut.
linalg::SymmetricCscMatrix two_deep_combs(Index teeth_per_comb) {
  std::vector<std::pair<Index, Index>> edges;
  const Index comb_size = 2 * teeth_per_comb, joint = 2 * comb_size;
  for (Index comb = 0; comb < 2; ++comb) {
    const Index base = comb * comb_size;
    for (Index i = 0; i < teeth_per_comb; ++i) {
      const Index tooth = base + 2 * i, spine = tooth + 1;
      edges.emplace_back(spine, tooth);
      if (i > 0) edges.emplace_back(spine, spine - 2);
    }
    edges.emplace_back(joint, base + comb_size - 1);
  }
  return spd_from_edges(joint + 1, edges, 7);
}

TEST(TreeScheduler, DeepSubtreesFactorOnTwoThreadsLikeOnOne) {
  constexpr Index kTeeth = 100'000;  // 10⁵ nested branchings per comb
  const linalg::SymmetricCscMatrix a = two_deep_combs(kTeeth);
  AnalyzeOptions options;
  options.ordering = OrderingMethod::natural;
  options.amalgamation.enabled = false;  // keep one supernode per column pair
  const auto symbolic = analyze(a, options);

  const std::vector<double> cost(static_cast<std::size_t>(symbolic->supernode_count()), 1.0);
  const TreeSchedule schedule = plan_tree_schedule(*symbolic, cost, 2);
  ASSERT_EQ(schedule.subtree_roots.size(), 2u);
  EXPECT_EQ(schedule.top.size(), 1u);

  Factor one(symbolic), two(symbolic);
  ASSERT_TRUE(one.factorize(a, {.threads = 1}).ok()) << one.status().message;
  ASSERT_TRUE(two.factorize(a, {.threads = 2}).ok()) << two.status().message;
  ASSERT_EQ(one.values().size(), two.values().size());
  EXPECT_TRUE(std::equal(one.values().begin(), one.values().end(), two.values().begin()))
      << "supernodes of one column pair have no BLAS rounding to change with the thread count";

  std::vector<double> x(static_cast<std::size_t>(a.size()), 1.0), b(x.size());
  linalg::symmetric_multiply(a, x, b);
  two.solve(b);
  double error = 0.0;
  for (const double v : b) error = std::max(error, std::abs(v - 1.0));
  EXPECT_LT(error, 1e-12);
}

// The CPU part below a GPU factorization's top (factor/gpu/) is closed under descendants, not
// ancestors: its roots are the supernodes whose parent is on the device. Every one of them
// must run exactly once, after its children, on one thread and on two.
TEST(TreeScheduler, RunsASetClosedUnderDescendantsChildrenFirst) {
  AnalyzeOptions options;
  options.ordering = OrderingMethod::natural;
  options.amalgamation.enabled = false;
  const auto symbolic = analyze(two_deep_combs(2000), options);
  const Index count = symbolic->supernode_count();
  std::vector<double> cost(static_cast<std::size_t>(count));
  for (Index s = 0; s < count; ++s) cost[s] = symbolic->supernode_flops(s) + 1.0;
  // The top: the last quarter in postorder (closed under ancestors, whose numbers are
  // higher), off the CPU.
  std::vector<char> active(static_cast<std::size_t>(count), 1);
  for (Index s = count - 1; s >= count - count / 4; --s) active[s] = 0;
  for (const int threads : {1, 2}) {
    const TreeSchedule schedule = plan_tree_schedule(*symbolic, cost, threads, active);
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(count));
    std::vector<std::atomic<int>> done(static_cast<std::size_t>(count));
    std::atomic<int> out_of_order{0};
    run_tree_schedule(*symbolic, schedule, threads, [&](Index s) {
      for (Index c : symbolic->children(s)) {
        if (active[c] && done[c].load() == 0) ++out_of_order;
      }
      ++runs[s];
      done[s] = 1;
      return true;
    }, active);
    for (Index s = 0; s < count; ++s) EXPECT_EQ(runs[s].load(), active[s] ? 1 : 0) << "supernode " << s << ", " << threads << " threads";
    EXPECT_EQ(out_of_order.load(), 0);
  }
}

}  // namespace
}  // namespace cholsim::factor
