#include "linalg/vector_norms.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace cholsim::linalg {
namespace {

TEST(VectorNorms, MatchesPlainSumOfSquaresAtOrdinaryScales) {
  const std::vector<double> v{3.0, -4.0, 12.0};
  EXPECT_DOUBLE_EQ(norm2(v), 13.0);
  EXPECT_EQ(norm2(std::vector<double>{}), 0.0);
  EXPECT_EQ(norm2(std::vector<double>{0.0, 0.0}), 0.0);
}

TEST(VectorNorms, NeitherOverflowsNorUnderflowsAtExtremeScales) {
  // Issue 23 D4: a matrix scaled by 1e300 printed a -nan residual, one scaled by 1e-300 a 0.
  for (const double scale : {1e300, 1e-300, 1e-310}) {
    const std::vector<double> v{3.0 * scale, -4.0 * scale};
    EXPECT_NEAR(norm2(v) / (5.0 * scale), 1.0, 1e-12) << "scale " << scale;
  }
}

TEST(VectorNorms, RelativeNormIsScaleInvariant) {
  const std::vector<double> r{1e-15, 2e-15};
  const std::vector<double> b{1.0, 2.0};
  const double reference = relative_norm2(r, b);
  EXPECT_NEAR(reference, 1e-15, 1e-28);
  // 1e-290, not 1e-300: r·1e-300 would be subnormal and lose digits in the data itself.
  for (const double scale : {1e300, 1e-290}) {
    const std::vector<double> rs{r[0] * scale, r[1] * scale};
    const std::vector<double> bs{b[0] * scale, b[1] * scale};
    EXPECT_NEAR(relative_norm2(rs, bs) / reference, 1.0, 1e-12) << "scale " << scale;
  }
  EXPECT_DOUBLE_EQ(relative_norm2(r, std::vector<double>{0.0, 0.0}), norm2(r));
}

TEST(VectorNorms, PropagatesNanAndInf) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(std::isnan(norm2(std::vector<double>{1.0, std::nan("")})));
  EXPECT_EQ(norm2(std::vector<double>{1.0, -inf}), inf);
}

TEST(VectorNorms, MaxNormsReportNanWhereverItIs) {
  EXPECT_EQ(max_abs(std::vector<double>{1.0, -3.0, 2.0}), 3.0);
  EXPECT_EQ(max_abs(std::vector<double>{}), 0.0);
  EXPECT_EQ(max_abs_difference(std::vector<double>{1.0, 5.0}, std::vector<double>{2.0, 3.0}), 2.0);
  // A NaN after a larger entry: the std::max loops the tests used to copy returned 3 here.
  EXPECT_TRUE(std::isnan(max_abs(std::vector<double>{3.0, std::nan("")})));
  EXPECT_TRUE(std::isnan(max_abs_difference(std::vector<double>{3.0, std::nan("")}, std::vector<double>{0.0, 0.0})));
}

}  // namespace
}  // namespace cholsim::linalg
