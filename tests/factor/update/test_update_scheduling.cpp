// Update scheduling (seed 000 §4.4) on hand-made trees: target-quality, target-time (budget
// exhaustion, shared ancestors, fractions of the full cost) and the hybrid mark exactly the
// sets the paper's rules give.
#include <gtest/gtest.h>

#include <numeric>

#include "factor/numeric/cholesky_factor.hpp"
#include "factor/update/changed_supernodes.hpp"
#include "factor/update/update_scheduling.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

//            6
//          /   \ .
//         2     5
//        / \   / \ .
//       0   1 3   4        (postorder numbering)
const std::vector<Index> tree = {2, 2, 6, 5, 5, 6, -1};

std::vector<Index> marked_list(const UpdateSchedule& schedule) {
  std::vector<Index> list;
  for (Index s = 0; s < static_cast<Index>(schedule.marked.size()); ++s) {
    if (schedule.marked[s]) list.push_back(s);
  }
  return list;
}

TEST(UpdateScheduling, TargetQualityMarksEveryBadSupernodeAndItsAncestors) {
  const std::vector<double> cost = {1, 2, 3, 1, 1, 4, 10};
  const std::vector<double> badness = {0.1, 0.9, 0.0, 0.6, 0.2, 0.0, 0.0};
  const UpdateSchedule schedule = schedule_target_quality(tree, badness, cost, 0.5);
  EXPECT_EQ(marked_list(schedule), (std::vector<Index>{1, 2, 3, 5, 6}));
  EXPECT_DOUBLE_EQ(schedule.cost, 2 + 3 + 1 + 4 + 10);
  EXPECT_EQ(schedule.marked_count, 5);
  // "above the threshold": equal badness is not marked.
  EXPECT_EQ(marked_list(schedule_target_quality(tree, badness, cost, 0.6)), (std::vector<Index>{1, 2, 6}));
  EXPECT_TRUE(marked_list(schedule_target_quality(tree, badness, cost, 1.0)).empty());
}

// Budget 9: leaf 0 (worst) pays for itself, 2 and the root (7); leaf 1 then only pays for
// itself (1); leaves 3 and 4 would need 5 as well (3) but only 1 is left — budget exhausted.
TEST(UpdateScheduling, TargetTimeStopsWhenNothingFitsTheRemainingBudget) {
  const std::vector<double> cost = {1, 1, 2, 1, 1, 2, 4};
  const std::vector<double> badness = {5, 4, 0, 3, 1, 0, 0};
  const UpdateSchedule schedule = schedule_target_time(tree, badness, cost, UpdateBudget::seconds(9));
  EXPECT_EQ(marked_list(schedule), (std::vector<Index>{0, 1, 2, 6}));
  EXPECT_DOUBLE_EQ(schedule.cost, 8);
  EXPECT_DOUBLE_EQ(schedule.budget_left, 1);
  // With 11, leaf 3 fits after the root is paid for (1 + 2), leaf 4 then costs only itself.
  EXPECT_EQ(marked_list(schedule_target_time(tree, badness, cost, UpdateBudget::seconds(11))),
            (std::vector<Index>{0, 1, 2, 3, 5, 6}));
  EXPECT_EQ(marked_list(schedule_target_time(tree, badness, cost, UpdateBudget::seconds(12))),
            (std::vector<Index>{0, 1, 2, 3, 4, 5, 6}));
}

// Leaves 3 and 4 share ancestors 5 and 6: the worst one pays for them, the other then costs
// only itself. A supernode whose total exceeds the budget is skipped, and a less bad one
// that fits is still taken.
TEST(UpdateScheduling, TargetTimeChargesSharedAncestorsOnce) {
  const std::vector<double> cost = {6, 1, 1, 1, 1, 2, 3};
  const std::vector<double> badness = {9, 0, 0, 5, 4, 0, 0};
  // Leaf 0 needs 6 + 1 + 3 = 10 > 8: skipped. Leaf 3 needs 1 + 2 + 3 = 6, leaf 4 then 1.
  const UpdateSchedule schedule = schedule_target_time(tree, badness, cost, UpdateBudget::seconds(8));
  EXPECT_EQ(marked_list(schedule), (std::vector<Index>{3, 4, 5, 6}));
  EXPECT_DOUBLE_EQ(schedule.budget_left, 1);
  // Supernodes of zero badness are never bought for their own sake.
  const UpdateSchedule rich = schedule_target_time(tree, badness, cost, UpdateBudget::seconds(100));
  EXPECT_EQ(marked_list(rich), (std::vector<Index>{0, 2, 3, 4, 5, 6}));
  EXPECT_FALSE(rich.marked[1]);
}

TEST(UpdateScheduling, BudgetAsAFractionOfTheFullCost) {
  const std::vector<double> cost = {1, 1, 2, 1, 1, 2, 4};  // full cost 12
  const std::vector<double> badness = {5, 4, 0, 3, 1, 0, 0};
  EXPECT_DOUBLE_EQ(UpdateBudget::fraction_of_full(0.75).in_seconds(cost), 9);
  EXPECT_EQ(marked_list(schedule_target_time(tree, badness, cost, UpdateBudget::fraction_of_full(0.75))),
            (std::vector<Index>{0, 1, 2, 6}));
  // Half the cost (6) is less than any leaf's path to the root (7): nothing fits.
  EXPECT_TRUE(marked_list(schedule_target_time(tree, badness, cost, UpdateBudget::fraction_of_full(0.5))).empty());
  EXPECT_THROW((void)UpdateBudget::seconds(-1).in_seconds(cost), std::invalid_argument);
}

// Hybrid: the must-update set is marked whatever it costs; the budget left then goes to
// target-time.
TEST(UpdateScheduling, HybridMarksMustUpdateSetThenSpendsTheRest) {
  const std::vector<double> cost = {1, 1, 2, 1, 1, 2, 4};
  const std::vector<double> badness = {5, 4, 0, 3, 1, 0, 0};
  // Must-update above 2.5 is leaves 0, 1, 3: with ancestors they cost 11 > 9, and leaf 4
  // (1 + nothing else) is no longer affordable.
  const UpdateSchedule over = schedule_hybrid(tree, badness, cost, 2.5, UpdateBudget::seconds(9));
  EXPECT_EQ(marked_list(over), (std::vector<Index>{0, 1, 2, 3, 5, 6}));
  EXPECT_DOUBLE_EQ(over.budget_left, -2);
  // Must-update above 4.5 is leaf 0: cost 7, the 2 left buy leaf 1 (1), not leaf 3 (3).
  const UpdateSchedule rest = schedule_hybrid(tree, badness, cost, 4.5, UpdateBudget::seconds(9));
  EXPECT_EQ(marked_list(rest), (std::vector<Index>{0, 1, 2, 6}));
  EXPECT_DOUBLE_EQ(rest.budget_left, 1);
}

TEST(UpdateScheduling, UpdateCostIncludesUnmarkedAncestors) {
  const std::vector<double> cost = {1, 2, 3, 4, 5, 6, 7};
  std::vector<char> marked = {0, 1, 0, 0, 0, 0, 0};
  EXPECT_DOUBLE_EQ(update_cost(tree, cost, marked), 2 + 3 + 7);
  marked[4] = 1;
  EXPECT_DOUBLE_EQ(update_cost(tree, cost, marked), 2 + 3 + 7 + 5 + 6);
  close_under_ancestors(tree, marked);
  EXPECT_EQ(marked, (std::vector<char>{0, 1, 1, 0, 1, 1, 1}));
  const std::vector<double> one_badness = {1.0};
  EXPECT_THROW(schedule_target_quality(tree, one_badness, cost, 0.0), std::invalid_argument);
}

// On a real factor: the schedule from the measured cost model is what refactorize recomputes.
TEST(UpdateScheduling, ScheduleOnAFactorsCostModelIsWhatRefactorizeRecomputes) {
  const linalg::SymmetricCscMatrix a = testing::spd_test_matrices().back().matrix;  // 12×12 grid
  Factor factor(analyze(a));
  ASSERT_TRUE(factor.factorize(a, {.threads = 1, .retain_update_blocks = true, .retain_min_flops_per_entry = 0.0}).ok());
  const std::vector<Index> parent = supernode_parents(factor.symbolic());
  std::vector<double> badness(parent.size(), 0.0);
  badness[0] = 1.0;
  badness[parent.size() / 2] = 2.0;
  const auto costs = factor.cost_model().costs();
  const UpdateSchedule schedule = schedule_target_quality(parent, badness, costs, 0.5);
  EXPECT_DOUBLE_EQ(schedule.cost, update_cost(parent, costs, schedule.marked));
  std::vector<Index> marked = marked_list(schedule);
  ASSERT_TRUE(factor.refactorize(ChangedEntries::supernodes(marked), a, {.threads = 1}).ok());
  EXPECT_EQ(factor.stats().recomputed_supernodes, schedule.marked_count);
}

}  // namespace
}  // namespace cholsim::factor
