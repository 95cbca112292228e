#pragma once
// Wall-clock helpers shared by the commands: every report gives medians of repeated runs.
#include <algorithm>
#include <chrono>
#include <vector>

namespace cholsim::apps {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Median of the values (mean of the middle two for an even count); 0 for none.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

}  // namespace cholsim::apps
