#pragma once
// Statistics shared by the benchmark programs.
#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

namespace cholsim::bench {

/// The median of `values` (the mean of the middle two for an even count); NaN when empty.
inline double median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

/// The value below which a `fraction` of `values` lie (nearest rank: the ⌈fraction·n⌉-th
/// smallest, the smallest for fraction 0); NaN when empty.
inline double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(values.size())));
  return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
}

/// max |x − reference| / max |reference| (the absolute difference when the reference is 0).
inline double max_relative_difference(std::span<const double> x, std::span<const double> reference) {
  double difference = 0.0;
  double scale = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    difference = std::max(difference, std::abs(x[i] - reference[i]));
    scale = std::max(scale, std::abs(reference[i]));
  }
  return scale > 0.0 ? difference / scale : difference;
}

}  // namespace cholsim::bench
