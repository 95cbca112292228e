#include "solvers/cg/cg_spectrum.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace cholsim::solvers {
namespace {

// Unpreconditioned CG on A = diag(eigenvalues), b = ones, feeding its coefficients to the
// estimate: the Ritz values of Krylov spaces of A.
CgSpectrumEstimate cg_on_diagonal(const std::vector<double>& eigenvalues, int iterations) {
  const std::size_t n = eigenvalues.size();
  std::vector<double> r(n, 1.0), p(n, 1.0), ap(n);
  CgSpectrumEstimate estimate;
  double rr = static_cast<double>(n);
  for (int k = 0; k < iterations; ++k) {
    double curvature = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      ap[i] = eigenvalues[i] * p[i];
      curvature += p[i] * ap[i];
    }
    const double step = rr / curvature;
    estimate.add_step(step);
    double rr_next = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      r[i] -= step * ap[i];
      rr_next += r[i] * r[i];
    }
    if (k + 1 == iterations) break;  // the solve stops: no direction update follows
    const double beta = rr_next / rr;
    estimate.add_direction_update(beta);
    rr = rr_next;
    for (std::size_t i = 0; i < n; ++i) p[i] = r[i] + beta * p[i];
  }
  return estimate;
}

TEST(CgSpectrum, ReachesTheExtremeEigenvaluesWhenTheKrylovSpaceIsComplete) {
  const std::vector<double> eigenvalues = {0.05, 0.3, 0.7, 1.0, 1.2, 1.9, 2.5, 4.0};
  const SpectrumBounds bounds = cg_on_diagonal(eigenvalues, 8).bounds();
  EXPECT_NEAR(bounds.smallest, 0.05, 1e-9);
  EXPECT_NEAR(bounds.largest, 4.0, 1e-9);
  EXPECT_NEAR(bounds.condition_number(), 80.0, 1e-6);
  EXPECT_NEAR(bounds.stationary_factor(), 3.0, 1e-9);
}

TEST(CgSpectrum, EarlyEstimatesLieInsideTheSpectrumAndWidenWithIterations) {
  std::vector<double> eigenvalues;
  for (int i = 0; i < 200; ++i) eigenvalues.push_back(0.1 + 0.01 * i * std::sqrt(1.0 + i));
  double previous_smallest = 1e300, previous_largest = 0.0;
  for (const int iterations : {1, 3, 10, 30}) {
    const SpectrumBounds bounds = cg_on_diagonal(eigenvalues, iterations).bounds();
    EXPECT_GE(bounds.smallest, eigenvalues.front() - 1e-12) << iterations;
    EXPECT_LE(bounds.largest, eigenvalues.back() + 1e-12) << iterations;
    EXPECT_LE(bounds.smallest, previous_smallest + 1e-12) << iterations;
    EXPECT_GE(bounds.largest, previous_largest - 1e-12) << iterations;
    previous_smallest = bounds.smallest;
    previous_largest = bounds.largest;
  }
  // After 30 iterations the ends are close (Kaniel–Paige): within 2 % of the spread.
  const double spread = eigenvalues.back() - eigenvalues.front();
  EXPECT_LE(previous_smallest - eigenvalues.front(), 0.02 * spread);
  EXPECT_LE(eigenvalues.back() - previous_largest, 0.02 * spread);
}

TEST(CgSpectrum, IsEmptyBeforeTheFirstIteration) {
  const SpectrumBounds bounds = CgSpectrumEstimate{}.bounds();
  EXPECT_EQ(bounds.smallest, 0.0);
  EXPECT_EQ(bounds.largest, 0.0);
  EXPECT_EQ(bounds.condition_number(), 0.0);
}

}  // namespace
}  // namespace cholsim::solvers
