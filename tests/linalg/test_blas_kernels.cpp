#include "linalg/blas_kernels.hpp"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace cholsim::linalg {
namespace {

// The suite's main() re-executed it with better kernels if OpenBLAS had fallen back to Prescott's
// on a CPU with AVX2 — so here, on such a CPU, they must be gone.
TEST(BlasKernels, TheTestsRunWithoutTheSlowFallbackWhereTheCpuHasAvx2) {
  const char* asked = std::getenv("OPENBLAS_CORETYPE");
  if (asked != nullptr && std::string(asked) == "Prescott") GTEST_SKIP() << "OPENBLAS_CORETYPE=Prescott was asked for";
  EXPECT_FALSE(blas_kernels().empty());
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_NE(blas_kernels(), "Prescott");
  }
  EXPECT_EQ(faster_blas_kernels(), "") << "a faster choice is left after main() chose";
}

TEST(BlasKernels, AChoiceInTheEnvironmentIsKept) {
  const char* previous = std::getenv("OPENBLAS_CORETYPE");
  const std::string saved = previous != nullptr ? previous : "";
  setenv("OPENBLAS_CORETYPE", "Prescott", 1);
  EXPECT_EQ(faster_blas_kernels(), "");
  if (previous != nullptr) {
    setenv("OPENBLAS_CORETYPE", saved.c_str(), 1);
  } else {
    unsetenv("OPENBLAS_CORETYPE");
  }
}

}  // namespace
}  // namespace cholsim::linalg
