#include "solvers/nonlinear/refresh_costs.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace cholsim::solvers {
namespace {

/// A refresh of 0.2 s followed by two iterations of 40 ms at `fresh` reduction each, then
/// iterations at `current`: the costs of the BAR's twist (docs/benchmarks.md, issue 19).
RefreshCosts measured(double fresh, double current, int current_iterations = 2) {
  RefreshCosts costs;
  costs.record_refresh(0.2);
  costs.record_iteration(0.04, fresh);
  costs.record_iteration(0.04, fresh);
  for (int k = 0; k < current_iterations; ++k) costs.record_iteration(0.04, current);
  return costs;
}

TEST(RefreshCosts, RefreshesUntilEveryCostIsMeasured) {
  RefreshCosts costs;
  EXPECT_TRUE(costs.refresh_pays(1e6));
  costs.record_iteration(0.04, 0.9);  // an iteration, but no refresh timed yet
  EXPECT_TRUE(costs.refresh_pays(1e6));
}

TEST(RefreshCosts, RefreshesWhenAFreshFactorSavesMoreThanTheRefreshCosts) {
  // Fresh 0.1 an iteration, the current factor slowing to 0.9.
  EXPECT_TRUE(measured(0.1, 0.9).refresh_pays(1e6));
}

TEST(RefreshCosts, KeepsTheFactorWhenAFreshOneIsNoFaster) {
  // The twist: a fresh factor of the definiteness-fixed Hessian converges at 0.7, a stale one
  // at 0.72 — refreshing after every slow iteration made HYBRID-R a Newton method.
  EXPECT_FALSE(measured(0.7, 0.72).refresh_pays(1e6));
  EXPECT_FALSE(measured(0.7, 0.6).refresh_pays(1e6));
}

TEST(RefreshCosts, KeepsTheFactorNearTheTolerance) {
  // Fresh 0.1, now 0.5: a factor 3 from the tolerance takes 2 iterations (80 ms) as it is,
  // against the 0.2 s refresh.
  EXPECT_FALSE(measured(0.1, 0.5).refresh_pays(3.0));
  EXPECT_TRUE(measured(0.1, 0.5).refresh_pays(1e6));
}

TEST(RefreshCosts, RefreshesWhenTheCurrentFactorMakesNoProgress) {
  EXPECT_TRUE(measured(0.7, 1.0).refresh_pays(10.0));
  EXPECT_TRUE(measured(0.7, 1.5).refresh_pays(10.0));
}

TEST(RefreshCosts, CountsTheIterationsSinceTheLastRefresh) {
  RefreshCosts costs = measured(0.5, 0.5, 3);
  EXPECT_EQ(costs.iterations_since_refresh(), 5);
  costs.record_refresh(0.1);
  EXPECT_EQ(costs.iterations_since_refresh(), 0);
}

TEST(RefreshCosts, AZeroToleranceDoesNotMakeTheComparisonMeaningless) {
  // ‖∇E‖ / 0 = ∞ orders to go: capped, so a faster fresh factor still wins.
  EXPECT_TRUE(measured(0.1, 0.9).refresh_pays(std::numeric_limits<double>::infinity()));
}

}  // namespace
}  // namespace cholsim::solvers
