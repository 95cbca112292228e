#pragma once
// The 3 × 3 helpers the small-matrix, SVD and polar-decomposition tests share.
#include <numbers>
#include <random>

#include "linalg/polar_decomposition.hpp"
#include "linalg/small_matrix.hpp"
#include "linalg/vector_norms.hpp"

namespace cholsim::linalg {

/// max |a_ij − b_ij|, NaN if any entry is NaN.
inline double max_abs_difference(const Mat3& a, const Mat3& b) { return max_abs_difference(a.entries, b.entries); }

/// Entries uniform in [−scale, scale].
inline Mat3 random_mat3(std::mt19937_64& rng, double scale = 1.0) {
  std::uniform_real_distribution<double> entry(-scale, scale);
  Mat3 a;
  for (double& e : a.entries) e = entry(rng);
  return a;
}

/// A rotation uniform on SO(3).
inline Mat3 random_rotation_matrix(std::mt19937_64& rng) { return to_rotation_matrix(random_rotation(rng, std::numbers::pi)); }

}  // namespace cholsim::linalg
