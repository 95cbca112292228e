// main() of the test executables: GoogleTest's, run with OpenBLAS's fast kernels where its
// load-time detection fell back to slow ones (linalg/blas_kernels.hpp) — the same kernels the
// programs run, and minutes less for the suite on such CPUs.
#include <gtest/gtest.h>

#include "linalg/blas_kernels.hpp"

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
