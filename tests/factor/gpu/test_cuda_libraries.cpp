// cuBLAS and cuSOLVER are opened on first use, not linked (factor/gpu/cuda_libraries.hpp): a
// process that never uses the GPU does not pay their start-up code (~0.25 s and ~250 MB).
#include <link.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "factor/gpu/gpu_factorization.hpp"

namespace cholsim::factor {
namespace {

bool library_mapped(const char* name_part) {
  struct Search {
    const char* part;
    bool found;
  } search{name_part, false};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        if (info->dlpi_name && std::string(info->dlpi_name).find(s->part) != std::string::npos) s->found = true;
        return 0;
      },
      &search);
  return search.found;
}

// Before main(): whatever a program links is mapped before its first static initializer runs.
const bool cublas_mapped_at_start = library_mapped("libcublas");
const bool cusolver_mapped_at_start = library_mapped("libcusolver");

TEST(GpuLibraries, AreNotLoadedAtStartUp) {
  EXPECT_FALSE(cublas_mapped_at_start);
  EXPECT_FALSE(cusolver_mapped_at_start);
}

TEST(GpuLibraries, OpenOnFirstUseWhereTheBuildHasTheCudaFactorization) {
  std::string why_not;
  if (!gpu_libraries_available(&why_not)) {
    if (why_not.find("this build has no CUDA") != std::string::npos) GTEST_SKIP() << why_not;
    FAIL() << "cuBLAS/cuSOLVER of the toolkit this was built with: " << why_not;
  }
  EXPECT_TRUE(library_mapped("libcublas"));
  EXPECT_TRUE(library_mapped("libcusolver"));
}

}  // namespace
}  // namespace cholsim::factor
