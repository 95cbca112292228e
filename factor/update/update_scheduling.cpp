#include "factor/update/update_scheduling.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace cholsim::factor {
namespace {

void check_sizes(std::span<const Index> parent, std::span<const double> badness, std::span<const double> cost) {
  if (badness.size() != parent.size() || cost.size() != parent.size()) {
    throw std::invalid_argument("update scheduling: " + std::to_string(parent.size()) + " supernodes but " +
                                std::to_string(badness.size()) + " badness values and " +
                                std::to_string(cost.size()) + " costs");
  }
}

// Cost of s and of its unmarked ancestors: the walk stops at the first marked one, since the
// marked set is closed under ancestors (this is the paper's per-descendant running total,
// kept up to date by recomputing it when examined).
double total_cost(std::span<const Index> parent, std::span<const double> cost, std::span<const char> marked, Index s) {
  double total = 0.0;
  for (Index a = s; a != -1 && !marked[a]; a = parent[a]) total += cost[a];
  return total;
}

void mark_with_ancestors(std::span<const Index> parent, std::span<const double> cost, UpdateSchedule& schedule, Index s) {
  for (Index a = s; a != -1 && !schedule.marked[a]; a = parent[a]) {
    schedule.marked[a] = 1;
    schedule.cost += cost[a];
    ++schedule.marked_count;
  }
}

// Target-time marking on top of `schedule`, within schedule.budget_left.
void spend_budget(std::span<const Index> parent, std::span<const double> badness, std::span<const double> cost,
                  UpdateSchedule& schedule) {
  std::vector<Index> order;
  for (Index s = 0; s < static_cast<Index>(parent.size()); ++s) {
    if (badness[s] > 0.0 && !schedule.marked[s]) order.push_back(s);
  }
  std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) { return badness[a] > badness[b]; });
  // One pass suffices for "until no unmarked supernode fits": a supernode that does not fit
  // never fits later, since its total drops only by ancestors paid for, and the budget
  // drops by at least as much.
  for (Index s : order) {
    if (schedule.marked[s]) continue;
    const double total = total_cost(parent, cost, schedule.marked, s);
    if (total > schedule.budget_left) continue;
    mark_with_ancestors(parent, cost, schedule, s);
    schedule.budget_left -= total;
  }
}

}  // namespace

std::vector<Index> supernode_parents(const Symbolic& symbolic) {
  std::vector<Index> parent(static_cast<std::size_t>(symbolic.supernode_count()));
  for (Index s = 0; s < symbolic.supernode_count(); ++s) parent[s] = symbolic.parent(s);
  return parent;
}

void close_under_ancestors(std::span<const Index> parent, std::span<char> marked) {
  for (std::size_t s = 0; s < parent.size(); ++s) {  // postorder: parents come later
    if (marked[s] && parent[s] != -1) marked[parent[s]] = 1;
  }
}

double update_cost(std::span<const Index> parent, std::span<const double> cost, std::span<const char> marked) {
  std::vector<char> closed(marked.begin(), marked.end());
  close_under_ancestors(parent, closed);
  double total = 0.0;
  for (std::size_t s = 0; s < closed.size(); ++s) total += closed[s] ? cost[s] : 0.0;
  return total;
}

double UpdateBudget::in_seconds(std::span<const double> cost) const {
  if (!(amount >= 0.0)) throw std::invalid_argument("update budget must be ≥ 0, got " + std::to_string(amount));
  return unit == Unit::seconds ? amount : amount * std::accumulate(cost.begin(), cost.end(), 0.0);
}

UpdateSchedule schedule_target_quality(std::span<const Index> parent, std::span<const double> badness,
                                       std::span<const double> cost, double threshold) {
  check_sizes(parent, badness, cost);
  UpdateSchedule schedule;
  schedule.marked.assign(parent.size(), 0);
  // Marking ancestors stops at the first marked one; the set stays closed under ancestors.
  for (Index s = 0; s < static_cast<Index>(parent.size()); ++s) {
    if (badness[s] > threshold) mark_with_ancestors(parent, cost, schedule, s);
  }
  return schedule;
}

UpdateSchedule schedule_target_time(std::span<const Index> parent, std::span<const double> badness,
                                    std::span<const double> cost, UpdateBudget budget) {
  check_sizes(parent, badness, cost);
  UpdateSchedule schedule;
  schedule.marked.assign(parent.size(), 0);
  schedule.budget_left = budget.in_seconds(cost);
  spend_budget(parent, badness, cost, schedule);
  return schedule;
}

UpdateSchedule schedule_hybrid(std::span<const Index> parent, std::span<const double> badness,
                               std::span<const double> cost, double must_update_threshold, UpdateBudget budget) {
  UpdateSchedule schedule = schedule_target_quality(parent, badness, cost, must_update_threshold);
  schedule.budget_left = budget.in_seconds(cost) - schedule.cost;
  spend_budget(parent, badness, cost, schedule);
  return schedule;
}

}  // namespace cholsim::factor
