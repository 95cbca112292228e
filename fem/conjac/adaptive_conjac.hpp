#pragma once
// CONJAC with adaptivity (seed 002 Alg. 4.3): representative nodes that turn dynamic while
// their region is lively and quasistatic when it calms down (liveliness.hpp), on a
// ConjacStepper whose Schur set holds every representative DOF once (§4.4.2: no re-analysis
// when nodes switch — the inactive ones are condensed out of S densely each step).
#include <span>
#include <vector>

#include "fem/conjac/conjac_stepper.hpp"
#include "fem/conjac/liveliness.hpp"
#include "fem/dynamics/elastic_system.hpp"

namespace cholsim::fem {

class AdaptiveConjac {
 public:
  /// `representatives`: mesh nodes (free ones), all starting dynamic (`start_active`: a body
  /// set moving by its initial velocity needs them to carry that motion) or all quasistatic.
  AdaptiveConjac(ElasticSystem& system, std::vector<Index> representatives, ConjacOptions options,
                 LivelinessOptions liveliness = {}, bool start_active = true);

  /// Alg. 4.3 lines 4–13: the metric at (x, v), the switch, then a CONJAC step. The metric's
  /// time is counted in the step's `other` phase.
  void step(double time, std::vector<double>& x, std::vector<double>& v);

  [[nodiscard]] std::span<const Index> representatives() const { return representatives_; }
  /// Per representative: 1 while dynamic.
  [[nodiscard]] std::span<const char> active_nodes() const { return active_; }
  [[nodiscard]] Index active_count() const;
  [[nodiscard]] std::span<const double> metrics() const { return metric_.metrics(); }
  [[nodiscard]] const StepPhases& last_phases() const { return phases_; }
  [[nodiscard]] double last_quasistatic_force() const { return stepper_.last_quasistatic_force(); }

 private:
  ElasticSystem& system_;
  std::vector<Index> representatives_;
  ConjacStepper stepper_;
  LivelinessMetric metric_;
  std::vector<char> active_;
  std::vector<double> positions_, velocities_;
  StepPhases phases_;
};

}  // namespace cholsim::fem
