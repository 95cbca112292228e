#include "linalg/vector_norms.hpp"

#include <cassert>
#include <cmath>
#include <limits>

namespace cholsim::linalg {

double norm2(std::span<const double> v) {
  double largest = 0.0;
  for (double value : v) {
    if (std::isnan(value)) return std::numeric_limits<double>::quiet_NaN();
    largest = std::max(largest, std::abs(value));
  }
  if (largest == 0.0 || std::isinf(largest)) return largest;
  double scaled_sum = 0.0;
  for (double value : v) {
    const double scaled = value / largest;
    scaled_sum += scaled * scaled;
  }
  return largest * std::sqrt(scaled_sum);
}

double dot(std::span<const double> a, std::span<const double> b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

double relative_norm2(std::span<const double> r, std::span<const double> b) {
  const double b_norm = norm2(b);
  const double r_norm = norm2(r);
  return b_norm > 0.0 ? r_norm / b_norm : r_norm;
}

double max_abs(std::span<const double> v) {
  double largest = 0.0;
  for (double value : v) {
    if (std::isnan(value)) return std::numeric_limits<double>::quiet_NaN();
    largest = std::max(largest, std::abs(value));
  }
  return largest;
}

double max_abs_difference(std::span<const double> a, std::span<const double> b) {
  assert(a.size() == b.size());
  double largest = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double difference = std::abs(a[i] - b[i]);
    if (std::isnan(difference)) return std::numeric_limits<double>::quiet_NaN();
    largest = std::max(largest, difference);
  }
  return largest;
}

}  // namespace cholsim::linalg
