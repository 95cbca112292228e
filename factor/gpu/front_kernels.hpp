#pragma once
// The two scatter kernels of the device multifrontal step (gpu_factorization.cpp): A's
// entries into a front, and the extend-add of a child's update block into its parent's front
// and update block (seed 000 §4.3, Figure 3, the "assemble" step). Everything else on the
// device is cuBLAS / cuSOLVER. Built with nvcc (CHOLSIM_HAVE_CUDA_KERNELS); the launchers
// are plain C++ declarations so that only front_kernels.cu needs the CUDA compiler.
#include <cstdint>

#include <cuda_runtime.h>

namespace cholsim::factor::gpu {

/// front[targets[e]] += values[e] for e < count (targets are distinct within one front).
void launch_scatter_add(double* front, const std::int64_t* targets, const double* values, std::int64_t count,
                        cudaStream_t stream);

/// A child's update block of `size` rows in PanelLowerLayout {size, panel_width}
/// (multifrontal.hpp; a square column-major block is panel_width ≥ size) whose row i maps to
/// the parent's row position[i]: entry (i, j), i ≥ j, is added to the parent's m×k front
/// (column-major, leading dimension m) when position[j] < k, else to the parent's u×u update
/// block (column-major, leading dimension u = m − k) at (position[i] − k, position[j] − k).
/// Distinct child entries land on distinct parent entries, so no atomics are needed; children
/// launched one after the other on one stream add in a fixed order (deterministic sums).
struct ChildBlock {
  const double* values = nullptr;
  const std::int32_t* position = nullptr;
  std::int32_t size = 0;
  std::int32_t panel_width = 0;
};
void launch_extend_add(ChildBlock child, double* front, std::int32_t m, std::int32_t k, double* update,
                       cudaStream_t stream);

}  // namespace cholsim::factor::gpu
