#pragma once
// CUDA, cuBLAS and cuSOLVER status checks shared by factor/gpu's sources: a failed call becomes
// a DeviceFailure naming the call, out-of-memory statuses as GpuRunOutcome::out_of_memory; the
// cuBLAS/cuSOLVER functions; and the device they all use. Included only where
// CHOLSIM_HAVE_CUDA_KERNELS is set.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "factor/gpu/cuda_libraries.hpp"
#include "factor/gpu/gpu_factorization.hpp"

namespace cholsim::factor::gpu {

struct DeviceFailure {
  GpuRunOutcome outcome;
  std::string message;
};

inline void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  const GpuRunOutcome outcome =
      status == cudaErrorMemoryAllocation ? GpuRunOutcome::out_of_memory : GpuRunOutcome::error;
  throw DeviceFailure{outcome, std::string(call) + ": " + cudaGetErrorString(status)};
}

inline void check(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const GpuRunOutcome outcome =
      status == CUBLAS_STATUS_ALLOC_FAILED ? GpuRunOutcome::out_of_memory : GpuRunOutcome::error;
  throw DeviceFailure{outcome, std::string(call) + " failed with cuBLAS status " + std::to_string(static_cast<int>(status))};
}

inline void check(cusolverStatus_t status, const char* call) {
  if (status == CUSOLVER_STATUS_SUCCESS) return;
  const GpuRunOutcome outcome =
      status == CUSOLVER_STATUS_ALLOC_FAILED ? GpuRunOutcome::out_of_memory : GpuRunOutcome::error;
  throw DeviceFailure{outcome,
                      std::string(call) + " failed with cuSOLVER status " + std::to_string(static_cast<int>(status))};
}

/// cuBLAS and cuSOLVER (cuda_libraries.hpp); a DeviceFailure when they cannot be opened.
inline const CudaLibraries& blas_and_solver() {
  try {
    return cuda_libraries();
  } catch (const std::runtime_error& failure) {
    throw DeviceFailure{GpuRunOutcome::error, failure.what()};
  }
}

/// Device 0, made current: its name and its free memory now.
struct DeviceInfo {
  std::string name;
  std::int64_t free_bytes = 0;
};

inline DeviceInfo select_device() {
  check(cudaSetDevice(0), "cudaSetDevice");
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  return {properties.name, static_cast<std::int64_t>(free_bytes)};
}

}  // namespace cholsim::factor::gpu
