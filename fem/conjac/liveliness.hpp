#pragma once
// CONJAC's adaptivity metric (seed 002 §4.4.1): how much a region deforms *now*, beyond rigid
// motion — the rate of stretch Ṡ = Rᵀ(Ḟ − Ṙ·S) (eq. 4.17) of F = R·S, averaged over the
// region's elements (|Ṡ|'s entries, volume-weighted, eq. 4.20) and over a window of steps.
// A representative node turns dynamic when its region's metric rises above the upper
// threshold and quasistatic when it falls below the lower one (0.10/s and 0.02/s, §4.5).
#include <deque>
#include <span>
#include <vector>

#include "fem/elements/elastic_body.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

/// Ṡ for F and Ḟ. Ṙ = ∂R/∂F : Ḟ (eq. 4.19) in closed form from F = U·Σ·Vᵀ: with M = UᵀḞV,
/// Ṙ = U·X·Vᵀ, X_ij = (M_ij − M_ji)/(σ_i + σ_j) off the diagonal, 0 on it (and where
/// σ_i + σ_j vanishes, as for a collapsed element).
linalg::Mat3 stretch_rate(const linalg::Mat3& f, const linalg::Mat3& f_dot);

struct LivelinessOptions {
  int window = 10;             ///< steps averaged (§4.4.1's window)
  double activate = 0.10;      ///< 1/s: a quasistatic representative above it turns dynamic
  double deactivate = 0.02;    ///< 1/s: a dynamic one below it turns quasistatic
  int threads = 2;             ///< for the per-element pass
};

class LivelinessMetric {
 public:
  /// Each element belongs to the region of the representative node nearest its centroid.
  LivelinessMetric(const ElasticBody& body, std::vector<Index> representatives, LivelinessOptions options = {});

  /// Adds a frame (full position and velocity arrays, 3 per node) and returns each region's
  /// metric averaged over the last `window` frames.
  std::span<const double> update(std::span<const double> positions, std::span<const double> velocities);
  /// The hysteresis switch on the last metrics: per representative, 1 = dynamic. `active`
  /// holds the current states and is updated in place; returns whether any changed.
  bool switch_states(std::vector<char>& active) const;

  [[nodiscard]] std::span<const Index> region_of_element() const { return region_; }
  [[nodiscard]] std::span<const double> metrics() const { return averaged_; }

 private:
  const ElasticBody& body_;
  std::vector<Index> representatives_;
  LivelinessOptions options_;
  std::vector<Index> region_;
  std::vector<double> region_volume_;
  std::deque<std::vector<double>> history_;
  std::vector<double> averaged_;
  std::vector<double> element_metric_;
  int threads_ = 2;
};

}  // namespace cholsim::fem
