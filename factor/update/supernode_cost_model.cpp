#include "factor/update/supernode_cost_model.hpp"

#include <numeric>
#include <stdexcept>
#include <string>

namespace cholsim::factor {

SupernodeCostModel::SupernodeCostModel(std::vector<double> measured_seconds, double smoothing)
    : cost_(std::move(measured_seconds)), smoothing_(smoothing) {
  if (!(smoothing > 0.0 && smoothing <= 1.0)) {
    throw std::invalid_argument("SupernodeCostModel: smoothing must be in (0, 1], got " + std::to_string(smoothing));
  }
}

void SupernodeCostModel::refine(Index supernode, double measured_seconds) {
  double& cost = cost_.at(static_cast<std::size_t>(supernode));
  cost += smoothing_ * (measured_seconds - cost);
}

double SupernodeCostModel::full_cost() const { return std::accumulate(cost_.begin(), cost_.end(), 0.0); }

}  // namespace cholsim::factor
