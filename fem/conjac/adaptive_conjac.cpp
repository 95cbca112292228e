#include "fem/conjac/adaptive_conjac.hpp"

#include <algorithm>
#include <chrono>

#include "fem/conjac/dynamic_nodes.hpp"

namespace cholsim::fem {

AdaptiveConjac::AdaptiveConjac(ElasticSystem& system, std::vector<Index> representatives, ConjacOptions options,
                               LivelinessOptions liveliness, bool start_active)
    : system_(system),
      representatives_(std::move(representatives)),
      stepper_(system, free_dofs_of_nodes(system, representatives_), options),
      metric_(system.body(), representatives_, liveliness),
      active_(representatives_.size(), start_active ? 1 : 0) {
  stepper_.set_active(std::vector<char>(3 * representatives_.size(), start_active ? 1 : 0));
}

Index AdaptiveConjac::active_count() const { return static_cast<Index>(std::count(active_.begin(), active_.end(), 1)); }

void AdaptiveConjac::step(double time, std::vector<double>& x, std::vector<double>& v) {
  const auto start = std::chrono::steady_clock::now();
  positions_.resize(system_.body().rest.positions.size());
  velocities_.resize(positions_.size());
  system_.full_positions(x, positions_);
  system_.full_velocities(v, velocities_);
  metric_.update(positions_, velocities_);
  if (metric_.switch_states(active_)) {
    std::vector<char> dofs(3 * active_.size());
    for (std::size_t r = 0; r < active_.size(); ++r) std::fill_n(dofs.begin() + 3 * r, 3, active_[r]);
    stepper_.set_active(dofs);
  }
  const double metric_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stepper_.step(time, x, v);
  phases_ = stepper_.last_phases();
  phases_.other += metric_seconds;
}

}  // namespace cholsim::fem
