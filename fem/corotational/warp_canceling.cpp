#include "fem/corotational/warp_canceling.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "fem/corotational/corotational_simulation.hpp"

namespace cholsim::fem {

double stale_element_error(const IsotropicTet& tet, double stiffness_scale, const Mat3& element_rotation,
                           const ElementFrame& assembled_frame, const std::array<Mat3, 4>& node_rotations,
                           const ElementVector& velocity) {
  ElementFrame stale_in_world;
  for (std::size_t a = 0; a < 4; ++a) stale_in_world[a] = node_rotations[a] * assembled_frame[a];
  const ElementVector correct =
      rotated_matrix_times(tet, corotational_frame(element_rotation), stiffness_scale, velocity);
  const ElementVector approximate = rotated_matrix_times(tet, stale_in_world, stiffness_scale, velocity);
  double squared = 0.0;
  for (std::size_t k = 0; k < 12; ++k) squared += (correct[k] - approximate[k]) * (correct[k] - approximate[k]);
  return std::sqrt(squared);
}

std::vector<Index> element_home_supernodes(const factor::ElementSupernodeMap& map) {
  std::vector<Index> home(static_cast<std::size_t>(map.element_count()));
  for (Index e = 0; e < map.element_count(); ++e) {
    const auto supernodes = map.supernodes(e);  // increasing: the first is the earliest in postorder
    home[static_cast<std::size_t>(e)] = supernodes.front();
  }
  return home;
}

std::vector<double> home_supernode_badness(std::span<const Index> home, std::span<const double> element_error,
                                           Index supernode_count) {
  if (home.size() != element_error.size()) {
    throw std::invalid_argument("home_supernode_badness: one error per element expected");
  }
  std::vector<double> badness(static_cast<std::size_t>(supernode_count), 0.0);
  for (std::size_t e = 0; e < home.size(); ++e) {
    double& b = badness[static_cast<std::size_t>(home[e])];
    b = std::max(b, element_error[e]);
  }
  return badness;
}

factor::UpdateSchedule schedule_updates(std::span<const Index> parent, std::span<const double> badness,
                                        std::span<const double> cost, const WarpCancelingOptions& options) {
  // With both budgets given, the tighter one applies.
  std::optional<factor::UpdateBudget> budget;
  if (options.budget_fraction) budget = factor::UpdateBudget::fraction_of_full(*options.budget_fraction);
  if (options.budget_seconds) {
    const double seconds = budget ? std::min(*options.budget_seconds, budget->in_seconds(cost)) : *options.budget_seconds;
    budget = factor::UpdateBudget::seconds(seconds);
  }
  if (!budget) return factor::schedule_target_quality(parent, badness, cost, options.tau);
  // The budget is spent only on supernodes worth updating (badness above τ): the schedulers
  // never pick a supernode of zero badness.
  std::vector<double> candidates(badness.begin(), badness.end());
  for (double& b : candidates) b = b > options.tau ? b : 0.0;
  if (std::isinf(options.must_update_tau)) return factor::schedule_target_time(parent, candidates, cost, *budget);
  return factor::schedule_hybrid(parent, candidates, cost, options.must_update_tau, *budget);
}

}  // namespace cholsim::fem
