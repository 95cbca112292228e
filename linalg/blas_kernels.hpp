#pragma once
// Which kernels OpenBLAS runs, and a way out of its slowest fallback.
//
// OpenBLAS (built with DYNAMIC_ARCH, as Debian's is) picks its kernels once, when the library
// loads, from the CPU's model number. Debian 12's 0.3.21 does not know CPUs released after it
// (Intel's Sapphire, Emerald and Granite Rapids) nor some virtual machines' masked CPUID, and
// then runs its Prescott (SSE3) kernels: dgemm, dsyrk and dtrsm 2–3× slower, and with them every
// large front of the factorization (the DRAGON stand-in's factorization: 255 ms against 106 ms
// with the AVX-512 kernels on an Emerald Rapids VM). The environment variable
// OPENBLAS_CORETYPE overrides the choice, but only before the library loads — so a program
// re-executes itself with it set, first thing in main().

#include <string>

namespace cholsim::linalg {

/// The kernels OpenBLAS chose at load time ("Haswell", "SkylakeX", "Prescott", ...).
[[nodiscard]] std::string blas_kernels();

/// The OPENBLAS_CORETYPE this CPU's features run well ("SkylakeX" with AVX-512 F/CD/BW/DQ/VL,
/// "Haswell" with AVX2 and FMA) when OpenBLAS fell back to its Prescott kernels and the
/// environment does not name kernels itself; empty otherwise.
[[nodiscard]] std::string faster_blas_kernels();

/// Call first in main(), before any thread starts: when faster_blas_kernels() names kernels,
/// sets OPENBLAS_CORETYPE and re-executes this program with the same arguments (`argv` as
/// main() received it), so that OpenBLAS loads them. Returns only when there is nothing to do
/// or the re-execution failed (then the program goes on with the slow kernels, after a line on
/// stderr). Setting OPENBLAS_CORETYPE yourself — to any value — keeps your choice.
void use_faster_blas_kernels(char** argv);

}  // namespace cholsim::linalg
