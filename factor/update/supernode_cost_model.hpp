#pragma once
// The cost of recomputing each supernode (seed 000 §4.4): "When we compute the initial
// factorization we record the time required to factor each supernode ... It is refined each
// time the supernode is updated using an exponentially weighted moving average." The work of
// a supernode does not depend on A's values, so its past time predicts its next one.
//
// Costs are seconds of one task (a supernode's assembly + potrf + trsm + syrk), summed over
// supernodes as if run one after another; the update schedulers (update_scheduling.hpp)
// compare these sums with a budget.
#include <span>
#include <vector>

#include "linalg/index_types.hpp"

namespace cholsim::factor {

using linalg::Index;

class SupernodeCostModel {
 public:
  /// Weight of the newest measurement in the moving average.
  static constexpr double default_smoothing = 0.25;

  SupernodeCostModel() = default;
  /// Starts from the times measured in a full factorization, one per supernode.
  explicit SupernodeCostModel(std::vector<double> measured_seconds, double smoothing = default_smoothing);

  /// cost ← (1 − smoothing)·cost + smoothing·measured.
  void refine(Index supernode, double measured_seconds);

  [[nodiscard]] std::span<const double> costs() const { return cost_; }
  [[nodiscard]] double cost(Index supernode) const { return cost_[supernode]; }
  /// Predicted time of a full refactorization: the sum of all costs.
  [[nodiscard]] double full_cost() const;
  [[nodiscard]] double smoothing() const { return smoothing_; }

 private:
  std::vector<double> cost_;
  double smoothing_ = default_smoothing;
};

}  // namespace cholsim::factor
