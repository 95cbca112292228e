#pragma once
// HYBRID-R's rule for when to bring its factor up to date (solvers/nonlinear/newton_solver.hpp).
#include <algorithm>
#include <cmath>
#include <limits>

namespace cholsim::solvers {

/// A running average that halves the weight of older samples (0: none yet): timings drift with
/// a simulation's motion, and the last few tell it.
inline double halving_average(double average, double sample) {
  return average == 0.0 ? sample : 0.5 * (average + sample);
}

/// HYBRID-R's refresh rule (seed 000 §4.4's idea of updating only where it pays), from costs
/// and rates measured in the run itself: bringing the factor up to date pays when the refresh
/// plus the quasi-Newton iterations a just-refreshed factor needs cost less than the iterations
/// the current factor needs at its present rate. Rates are ‖∇E‖ reductions per iteration,
/// averaged as logarithms; the averages halve the weight of older samples, as the motion's
/// phases change them.
class RefreshCosts {
 public:
  /// A quasi-Newton iteration took `seconds` and multiplied ‖∇E‖ by `reduction`.
  void record_iteration(double seconds, double reduction) {
    iteration_seconds_ = halving_average(iteration_seconds_, seconds);
    const double log_rate = std::log(std::max(reduction, std::numeric_limits<double>::min()));
    ++since_refresh_;
    current_log_rate_ = since_refresh_ == 1 ? log_rate : 0.5 * (current_log_rate_ + log_rate);
    if (since_refresh_ <= kFreshIterations) {
      fresh_log_rate_ = fresh_measured_ ? 0.5 * (fresh_log_rate_ + log_rate) : log_rate;
      fresh_measured_ = true;
    }
  }
  /// The factor was brought up to date in `seconds`.
  void record_refresh(double seconds) {
    refresh_seconds_ = halving_average(refresh_seconds_, seconds);
    since_refresh_ = 0;
  }
  [[nodiscard]] int iterations_since_refresh() const { return since_refresh_; }
  /// Whether refreshing now is predicted to reach ‖∇E‖ ≤ tolerance sooner, ‖∇E‖ being
  /// `gradient_over_tolerance` times the tolerance. True until every cost has been measured.
  [[nodiscard]] bool refresh_pays(double gradient_over_tolerance) const {
    if (iteration_seconds_ == 0.0 || refresh_seconds_ == 0.0 || !fresh_measured_) return true;
    if (current_log_rate_ >= 0.0) return true;           // the current factor makes no progress
    if (fresh_log_rate_ >= current_log_rate_) return false;  // a fresh one would be no faster
    // Orders of e still to go (capped: a zero tolerance would make them infinite).
    const double remaining = std::min(std::log(gradient_over_tolerance), 50.0);
    const double keep = remaining / -current_log_rate_ * iteration_seconds_;
    const double refresh = refresh_seconds_ + remaining / -fresh_log_rate_ * iteration_seconds_;
    return refresh < keep;
  }

 private:
  /// The iterations after a refresh whose rates stand for a fresh factor's.
  static constexpr int kFreshIterations = 2;
  double iteration_seconds_ = 0.0;
  double refresh_seconds_ = 0.0;
  double current_log_rate_ = 0.0;
  double fresh_log_rate_ = 0.0;
  bool fresh_measured_ = false;
  int since_refresh_ = 0;
};

}  // namespace cholsim::solvers
