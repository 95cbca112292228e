// A thread's floating-point mode: flushing subnormals to zero, and restoring the thread's own
// mode when a scope ends (linalg/floating_point_mode.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "linalg/floating_point_mode.hpp"

namespace cholsim::linalg {
namespace {

// Kept out of the optimizer's reach, so that the product is computed at run time.
volatile double tiny = 1e-300;
volatile double factor = 1e-10;

double subnormal_product() { return tiny * factor; }

TEST(FloatingPointMode, FlushingScopeZeroesSubnormalResultsAndRestoresTheMode) {
#if defined(__SSE__) || defined(__x86_64__)
  const double before = subnormal_product();
  ASSERT_EQ(std::fpclassify(before), FP_SUBNORMAL) << "the test needs IEEE gradual underflow to start with";
  {
    const FloatingPointMode::Scope flushing(FloatingPointMode::flushing_subnormals());
    EXPECT_EQ(subnormal_product(), 0.0);
  }
  EXPECT_EQ(std::fpclassify(subnormal_product()), FP_SUBNORMAL);
#else
  GTEST_SKIP() << "no flush-to-zero control on this processor";
#endif
}

TEST(FloatingPointMode, CapturedModeTravelsToAnotherScope) {
#if defined(__SSE__) || defined(__x86_64__)
  FloatingPointMode captured = FloatingPointMode::current();
  {
    const FloatingPointMode::Scope flushing(FloatingPointMode::flushing_subnormals());
    captured = FloatingPointMode::current();  // what a task handed out here would carry
  }
  const FloatingPointMode::Scope applied(captured);
  EXPECT_EQ(subnormal_product(), 0.0);
#else
  GTEST_SKIP() << "no flush-to-zero control on this processor";
#endif
}

}  // namespace
}  // namespace cholsim::linalg
