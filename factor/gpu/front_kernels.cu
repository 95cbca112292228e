#include "factor/gpu/front_kernels.hpp"

namespace cholsim::factor::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void scatter_add_kernel(double* front, const std::int64_t* targets, const double* values,
                                   std::int64_t count) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) front[targets[e]] += values[e];
}

// PanelLowerLayout::column_offset (multifrontal.hpp), on the device.
__device__ std::int64_t column_offset(std::int64_t size, std::int64_t width, std::int64_t j) {
  const std::int64_t p = j / width;
  const std::int64_t within = j - p * width;
  const std::int64_t panel_offset = width * (p * size - width * p * (p - 1) / 2);
  return panel_offset + within * (size - p * width) + within;
}

// One thread block per child column: every row i ≥ j of column j, strided by the block. Rows
// of one column land in one parent column, consecutive child rows usually in consecutive
// parent rows, so the writes coalesce where the child's rows are contiguous in the parent.
__global__ void extend_add_kernel(ChildBlock child, double* front, std::int32_t m, std::int32_t k,
                                  double* update) {
  const std::int32_t j = blockIdx.x;
  const std::int32_t target_column = child.position[j];
  const double* source = child.values + column_offset(child.size, child.panel_width, j) - j;
  double* target;
  std::int32_t shift;
  if (target_column < k) {
    target = front + static_cast<std::int64_t>(target_column) * m;
    shift = 0;
  } else {
    const std::int64_t u = m - k;
    target = update + static_cast<std::int64_t>(target_column - k) * u;
    shift = k;
  }
  for (std::int32_t i = j + threadIdx.x; i < child.size; i += blockDim.x) {
    target[child.position[i] - shift] += source[i];
  }
}

}  // namespace

void launch_scatter_add(double* front, const std::int64_t* targets, const double* values, std::int64_t count,
                        cudaStream_t stream) {
  if (count == 0) return;
  const auto blocks = static_cast<unsigned>((count + kThreads - 1) / kThreads);
  scatter_add_kernel<<<blocks, kThreads, 0, stream>>>(front, targets, values, count);
}

void launch_extend_add(ChildBlock child, double* front, std::int32_t m, std::int32_t k, double* update,
                       cudaStream_t stream) {
  if (child.size == 0) return;
  // Narrow children (few rows) waste most of a 256-thread block: use 64 then.
  const int threads = child.size >= 1024 ? kThreads : 64;
  extend_add_kernel<<<static_cast<unsigned>(child.size), threads, 0, stream>>>(child, front, m, k, update);
}

}  // namespace cholsim::factor::gpu
