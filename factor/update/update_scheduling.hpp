#pragma once
// Choosing which supernodes to recompute (seed 000 §4.4), generic over a caller's badness.
//
// The tree is given by `parent` in postorder (parent[s] > s, −1 for a root), e.g.
// supernode_parents(symbolic); `cost[s]` is the predicted time of recomputing s
// (SupernodeCostModel) and `badness[s]` the caller's error measure of s, e.g. the largest
// element error among the elements landing in s (ElementSupernodeMap::supernode_badness).
// A marked set is always closed under ancestors: recomputing s invalidates every ancestor.
//
//  * target-quality: mark every supernode with badness > τ, and its ancestors;
//  * target-time: examine the supernodes from the worst badness down; mark one (with its
//    ancestors) when its total cost — its own plus that of its still unmarked ancestors —
//    fits the remaining budget, and charge that total; totals shrink as ancestors get paid
//    for. Supernodes of badness ≤ 0 have nothing to correct and are never marked by the
//    budget (only as ancestors);
//  * hybrid: target-quality with a high must-update threshold first, charged to the
//    budget, then target-time with what is left.
#include <span>
#include <vector>

#include "factor/analysis/symbolic.hpp"

namespace cholsim::factor {

/// parent[s] of every supernode (−1 for roots), in postorder.
std::vector<Index> supernode_parents(const Symbolic& symbolic);

/// Adds every ancestor of a marked supernode to `marked`.
void close_under_ancestors(std::span<const Index> parent, std::span<char> marked);

/// Predicted cost of updating `marked` together with its unmarked ancestors.
double update_cost(std::span<const Index> parent, std::span<const double> cost, std::span<const char> marked);

/// A time budget, in seconds or as a fraction of a full refactorization (Σ cost).
struct UpdateBudget {
  enum class Unit { seconds, fraction_of_full };
  double amount = 0.0;
  Unit unit = Unit::seconds;

  static UpdateBudget seconds(double s) { return {s, Unit::seconds}; }
  static UpdateBudget fraction_of_full(double f) { return {f, Unit::fraction_of_full}; }
  /// The budget in cost units (seconds) for these costs.
  [[nodiscard]] double in_seconds(std::span<const double> cost) const;
};

struct UpdateSchedule {
  std::vector<char> marked;    ///< closed under ancestors
  double cost = 0.0;           ///< summed cost of the marked supernodes
  double budget_left = 0.0;    ///< what the budget did not use (negative if the must-update set exceeded it)
  Index marked_count = 0;
};

/// Target-quality (§4.4): badness > threshold, plus ancestors.
UpdateSchedule schedule_target_quality(std::span<const Index> parent, std::span<const double> badness,
                                       std::span<const double> cost, double threshold);

/// Target-time (§4.4): greedy by badness within the budget.
UpdateSchedule schedule_target_time(std::span<const Index> parent, std::span<const double> badness,
                                    std::span<const double> cost, UpdateBudget budget);

/// Hybrid (§4.4): badness > must_update_threshold regardless of cost, then the rest of the
/// budget by target-time.
UpdateSchedule schedule_hybrid(std::span<const Index> parent, std::span<const double> badness,
                               std::span<const double> cost, double must_update_threshold, UpdateBudget budget);

}  // namespace cholsim::factor
