// A factor whose entries decay below the smallest normal double: with
// FactorOptions::flush_subnormals (the default) they become zeros, on every thread, and the
// solve is as accurate as with gradual underflow.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/csc_matrix.hpp"

namespace cholsim::factor {
namespace {

// A 60×60 5-point grid in natural order whose diagonal (10⁶) dwarfs its couplings (−1): the
// band of L fills in, and its entries fall by about 10⁻⁶ per row away from the diagonal, so
// the band's far end lies around 10⁻³¹², below the normal range.
linalg::SymmetricCscMatrix dominant_grid() {
  constexpr Index side = 60;
  linalg::Triplets triplets;
  for (Index y = 0; y < side; ++y) {
    for (Index x = 0; x < side; ++x) {
      const Index i = x + side * y;
      triplets.add(i, i, 1e6);
      if (x > 0) triplets.add(i, i - 1, -1.0);
      if (y > 0) triplets.add(i, i - side, -1.0);
    }
  }
  return linalg::symmetric_from_triplets(side * side, triplets);
}

Index subnormal_count(std::span<const double> values) {
  return static_cast<Index>(std::count_if(values.begin(), values.end(),
                                          [](double v) { return std::fpclassify(v) == FP_SUBNORMAL; }));
}

double solve_error(const Factor& factor, const linalg::SymmetricCscMatrix& a) {
  std::vector<double> x(static_cast<std::size_t>(a.size()), 1.0), b(x.size());
  linalg::symmetric_multiply(a, x, b);
  factor.solve(b);
  double error = 0.0;
  for (const double v : b) error = std::max(error, std::abs(v - 1.0));
  return error;
}

TEST(SubnormalFactor, FlushedToZeroOnEveryThreadAndTheSolveIsUnchanged) {
  const linalg::SymmetricCscMatrix a = dominant_grid();
  AnalyzeOptions natural;
  natural.ordering = OrderingMethod::natural;
  const auto symbolic = analyze(a, natural);
  for (const int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    Factor gradual(symbolic), flushed(symbolic);
    ASSERT_TRUE(gradual.factorize(a, {.threads = threads, .flush_subnormals = false}).ok());
    ASSERT_TRUE(flushed.factorize(a, {.threads = threads}).ok());
    EXPECT_GT(subnormal_count(gradual.values()), 0) << "the matrix is meant to underflow";
    EXPECT_EQ(subnormal_count(flushed.values()), 0);
    EXPECT_LT(solve_error(gradual, a), 1e-14);
    EXPECT_LT(solve_error(flushed, a), 1e-14);
  }
}

}  // namespace
}  // namespace cholsim::factor
