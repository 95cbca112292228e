#include <gtest/gtest.h>

#include "linalg/blas_threads.hpp"

namespace cholsim::linalg {
namespace {

TEST(BlasThreads, ScopedCountIsSetAndRestored) {
  const int before = blas_threads();
  {
    ScopedBlasThreads scoped(1);
    EXPECT_EQ(blas_threads(), 1);
  }
  EXPECT_EQ(blas_threads(), before);
}

TEST(BlasThreads, NonPositiveCountMeansOne) {
  ScopedBlasThreads scoped(0);
  EXPECT_EQ(blas_threads(), 1);
}

}  // namespace
}  // namespace cholsim::linalg
