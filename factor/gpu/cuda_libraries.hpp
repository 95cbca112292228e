#pragma once
// cuBLAS and cuSOLVER, opened when a GPU path first needs them (dlopen) instead of linked. Their
// shared libraries' start-up code costs ~0.15–0.25 s and ~250 MB in every process that loads
// them, GPU or not: every `cholsim` command (even --help) and every one of the ~1,300 processes
// the test suite starts (measured: an empty program linked with them takes 0.25 s; the Release
// suite spent ~4 of its ~5½ minutes of CPU there). The CUDA runtime costs nothing at start-up
// and stays linked. Included only where CHOLSIM_HAVE_CUSOLVER is set.
#include <cublas_v2.h>
#include <cusolverDn.h>

namespace cholsim::factor::gpu {

/// The cuBLAS and cuSOLVER functions the GPU paths call, X(name) for each: one list for the
/// table's members and for the loader.
#define CHOLSIM_CUBLAS_FUNCTIONS(X)                                                                  \
  X(cublasCreate) X(cublasDestroy) X(cublasSetStream) X(cublasDgemm) X(cublasDsyrk) X(cublasDsyrkx) \
  X(cublasDtrsm) X(cublasDgeam) X(cublasDdgmm)
#define CHOLSIM_CUSOLVER_FUNCTIONS(X)                                                             \
  X(cusolverDnCreate) X(cusolverDnDestroy) X(cusolverDnSetStream) X(cusolverDnDpotrf_bufferSize) \
  X(cusolverDnDpotrf) X(cusolverDnDpotrs) X(cusolverDnXtrtri_bufferSize) X(cusolverDnXtrtri)

/// The functions, each member named as the headers spell the function (cublas_v2.h turns some
/// names into their `_v2` symbols, the members too), so a call reads
/// `cuda_libraries().cublasDgemm(...)`.
struct CudaLibraries {
#define CHOLSIM_CUDA_FUNCTION_MEMBER(name) decltype(&::name) name = nullptr;
  CHOLSIM_CUBLAS_FUNCTIONS(CHOLSIM_CUDA_FUNCTION_MEMBER)
  CHOLSIM_CUSOLVER_FUNCTIONS(CHOLSIM_CUDA_FUNCTION_MEMBER)
#undef CHOLSIM_CUDA_FUNCTION_MEMBER
};

/// Opens both libraries on the first call (thread-safe) and returns the same table afterwards.
/// Throws std::runtime_error naming the library or function and the loader's reason when one
/// cannot be opened or lacks a function (then on every call).
const CudaLibraries& cuda_libraries();

}  // namespace cholsim::factor::gpu
