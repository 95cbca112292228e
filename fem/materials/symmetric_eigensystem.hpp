#pragma once
// Eigen-decomposition of small dense symmetric matrices by cyclic Jacobi rotations (Golub &
// Van Loan, Matrix Computations, §8.5): the numerical definiteness fix of the hyperelastic
// kernels (fem/materials/hyperelastic.cpp) where no analytic eigensystem exists, and the
// reference the tests check the analytic ones against. Header-only, no allocation.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

namespace cholsim::fem {

/// A = Q·diag(eigenvalues)·Qᵀ, Q orthogonal.
template <std::size_t n>
struct SymmetricEigensystem {
  std::array<double, n> eigenvalues{};
  std::array<double, n * n> eigenvectors{};  ///< Q row-major: eigenvector m is column m
};

/// The eigensystem of the symmetric n×n row-major matrix `a` (only a's symmetry is assumed,
/// nothing about its definiteness). Sweeps until the off-diagonal mass is below 1e-30 of
/// ‖A‖²_F (eigenvalues to ≈ ε·‖A‖) or 50 sweeps; 9×9 matrices take 6–10. Never throws.
template <std::size_t n>
SymmetricEigensystem<n> symmetric_eigensystem(std::array<double, n * n> a) {
  std::array<double, n * n> q{};
  for (std::size_t i = 0; i < n; ++i) q[i * n + i] = 1.0;
  const auto off_diagonal = [&] {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) sum += i == j ? 0.0 : a[i * n + j] * a[i * n + j];
    }
    return sum;
  };
  double scale = 0.0;
  for (double v : a) scale += v * v;
  for (int sweep = 0; sweep < 50 && off_diagonal() > 1e-30 * scale; ++sweep) {
    for (std::size_t p = 0; p + 1 < n; ++p) {
      for (std::size_t r = p + 1; r < n; ++r) {
        const double apr = a[p * n + r];
        if (apr == 0.0) continue;
        // The rotation that zeroes a[p][r], with |angle| ≤ π/4 (the smaller root t).
        const double theta = (a[r * n + r] - a[p * n + p]) / (2.0 * apr);
        const double t = std::copysign(1.0, theta) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
        for (std::size_t k = 0; k < n; ++k) {  // columns p, r of a and q
          const double akp = a[k * n + p], akr = a[k * n + r];
          a[k * n + p] = c * akp - s * akr;
          a[k * n + r] = s * akp + c * akr;
          const double qkp = q[k * n + p], qkr = q[k * n + r];
          q[k * n + p] = c * qkp - s * qkr;
          q[k * n + r] = s * qkp + c * qkr;
        }
        for (std::size_t k = 0; k < n; ++k) {  // rows p, r of a
          const double apk = a[p * n + k], ark = a[r * n + k];
          a[p * n + k] = c * apk - s * ark;
          a[r * n + k] = s * apk + c * ark;
        }
      }
    }
  }
  SymmetricEigensystem<n> result;
  for (std::size_t i = 0; i < n; ++i) result.eigenvalues[i] = a[i * n + i];
  result.eigenvectors = q;
  return result;
}

}  // namespace cholsim::fem
