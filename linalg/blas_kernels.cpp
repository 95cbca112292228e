#include "linalg/blas_kernels.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

extern "C" char* openblas_get_corename(void);

namespace cholsim::linalg {
namespace {

// __builtin_cpu_supports also checks that the operating system saves the wide registers
// (XGETBV), so the kernels named here cannot fault for want of OS support.
bool has_avx512_kernels_features() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
}

bool has_avx2_kernels_features() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

}  // namespace

std::string blas_kernels() {
  const char* name = openblas_get_corename();
  return name != nullptr ? name : "";
}

std::string faster_blas_kernels() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return "";
  if (blas_kernels() != "Prescott") return "";
  if (has_avx512_kernels_features()) return "SkylakeX";
  if (has_avx2_kernels_features()) return "Haswell";
  return "";
}

void use_faster_blas_kernels(char** argv) {
  const std::string kernels = faster_blas_kernels();
  if (kernels.empty() || argv == nullptr || argv[0] == nullptr) return;
  if (setenv("OPENBLAS_CORETYPE", kernels.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Still here: exec failed (no /proc?). Going on is correct, only slower.
  std::fprintf(stderr, "note: OpenBLAS runs its Prescott kernels on this CPU; re-running with OPENBLAS_CORETYPE=%s failed (%s)\n",
               kernels.c_str(), std::strerror(errno));
  unsetenv("OPENBLAS_CORETYPE");
}

}  // namespace cholsim::linalg
