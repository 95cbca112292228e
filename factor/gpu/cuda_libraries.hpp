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

/// The cuBLAS and cuSOLVER functions the GPU paths call. Members carry the functions' names as
/// the headers spell them (cublas_v2.h turns some into their `_v2` symbols, the members too), so
/// a call reads `cuda_libraries().cublasDgemm(...)`.
struct CudaLibraries {
  decltype(&::cublasCreate) cublasCreate = nullptr;
  decltype(&::cublasDestroy) cublasDestroy = nullptr;
  decltype(&::cublasSetStream) cublasSetStream = nullptr;
  decltype(&::cublasDgemm) cublasDgemm = nullptr;
  decltype(&::cublasDsyrk) cublasDsyrk = nullptr;
  decltype(&::cublasDsyrkx) cublasDsyrkx = nullptr;
  decltype(&::cublasDtrsm) cublasDtrsm = nullptr;
  decltype(&::cublasDgeam) cublasDgeam = nullptr;
  decltype(&::cublasDdgmm) cublasDdgmm = nullptr;
  decltype(&::cusolverDnCreate) cusolverDnCreate = nullptr;
  decltype(&::cusolverDnDestroy) cusolverDnDestroy = nullptr;
  decltype(&::cusolverDnSetStream) cusolverDnSetStream = nullptr;
  decltype(&::cusolverDnDpotrf_bufferSize) cusolverDnDpotrf_bufferSize = nullptr;
  decltype(&::cusolverDnDpotrf) cusolverDnDpotrf = nullptr;
  decltype(&::cusolverDnDpotrs) cusolverDnDpotrs = nullptr;
  decltype(&::cusolverDnXtrtri_bufferSize) cusolverDnXtrtri_bufferSize = nullptr;
  decltype(&::cusolverDnXtrtri) cusolverDnXtrtri = nullptr;
};

/// Opens both libraries on the first call (thread-safe) and returns the same table afterwards.
/// Throws std::runtime_error naming the library or function and the loader's reason when one
/// cannot be opened or lacks a function (then on every call).
const CudaLibraries& cuda_libraries();

}  // namespace cholsim::factor::gpu
