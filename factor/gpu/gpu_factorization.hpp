#pragma once
// The device part of a hybrid CPU/GPU multifrontal factorization (issue 22).
//
// The supernodes chosen by supernodes_on_device (the top of the assembly tree) are computed on
// one CUDA GPU, in postorder on one stream: the m×k front and the u×u update block (u = m − k)
// are allocated from CUDA's stream-ordered pool, A's entries are scattered and the children's
// update blocks extend-added by the kernels of front_kernels.cu (a child computed on the CPU
// sends its block over once, in its host layout), then cuSOLVER potrf factors the diagonal
// block, cuBLAS trsm the rows below and syrk + gemm panels form U (the same three steps as the
// CPU's compute_supernode, multifrontal.hpp). L's block goes back to the host through pinned
// staging buffers on a second stream while the next fronts compute; update blocks stay on the
// device until the parent has assembled them, or for as long as the object lives when they
// are retained for refactorization.
//
// Built only with CUDA (CHOLSIM_HAVE_CUDA_KERNELS); without it every entry point reports that
// no GPU is available, so callers need no #if.
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "factor/analysis/symbolic.hpp"

namespace cholsim::factor {

class UpdateBlockStore;

/// True when this build has the CUDA factorization, a CUDA device is present and cuBLAS and
/// cuSOLVER open; otherwise false with the reason in `*why_not` (when given).
bool gpu_available(std::string* why_not = nullptr);

/// Whether cuBLAS and cuSOLVER open: the GPU paths open them on first use instead of linking
/// them (factor/gpu/cuda_libraries.hpp says why), so a missing or mismatched library shows here,
/// not at start-up. False with the reason in a build without the CUDA factorization too.
bool gpu_libraries_available(std::string* why_not = nullptr);

/// What one compute() call did on the device.
struct GpuRunStats {
  Index supernodes = 0;              ///< supernodes computed on the device
  double flops = 0.0;                ///< their flops (Symbolic::supernode_flops)
  double seconds = 0.0;              ///< wall time of the device part (after the host part)
  std::int64_t bytes_to_device = 0;  ///< A's entries and the CPU children's update blocks
  std::int64_t bytes_from_device = 0;  ///< L's blocks
  std::int64_t peak_device_bytes = 0;  ///< most device memory held at once (fronts, blocks, A)
  std::int64_t retained_device_bytes = 0;  ///< update blocks kept on the device afterwards
};

enum class GpuRunOutcome {
  done,           ///< every active device supernode computed (pivot failures are in failing_column)
  out_of_memory,  ///< the device memory (or the limit) ran out; nothing usable was written
  error,          ///< a CUDA call failed otherwise (message in error())
};

/// What GpuFactorization's constructor throws: no usable GPU, or too little device memory
/// for the analysis itself (outcome out_of_memory), or another CUDA failure.
class GpuError : public std::runtime_error {
 public:
  GpuError(GpuRunOutcome outcome, const std::string& message) : std::runtime_error(message), outcome_(outcome) {}
  [[nodiscard]] GpuRunOutcome outcome() const { return outcome_; }

 private:
  GpuRunOutcome outcome_;
};

class GpuFactorization {
 public:
  /// Prepares the device for `symbolic` with `on_device` (supernodes_on_device): uploads the
  /// analysis' maps once. `memory_limit_bytes` caps the device memory used (0: the device's
  /// free memory). Throws GpuError when no GPU is usable or the analysis does not fit.
  GpuFactorization(std::shared_ptr<const Symbolic> symbolic, std::vector<char> on_device,
                   std::int64_t memory_limit_bytes);
  ~GpuFactorization();
  GpuFactorization(const GpuFactorization&) = delete;
  GpuFactorization& operator=(const GpuFactorization&) = delete;

  [[nodiscard]] const std::vector<char>& on_device() const;
  [[nodiscard]] std::int64_t memory_limit_bytes() const;
  [[nodiscard]] const std::string& device_name() const;

  /// Computes the device supernodes marked in `active` (every device supernode when empty)
  /// into `factor_values` (L's supernodal values, host), reading the update blocks of CPU
  /// children from `host_updates` and, for device children that are not recomputed, the
  /// blocks retained by an earlier call. `stale[s]` of a CPU supernode says it failed or was
  /// skipped: its device ancestors are skipped too. Sets `stale[s]` of each active device
  /// supernode (1: skipped, failed, or computed from a failed child) and writes its 1-based
  /// failing pivot column into `failing_column` (0 if none). With `retain`, every device update
  /// block is kept for later calls; without, they are freed when consumed.
  GpuRunOutcome compute(std::span<const double> a_values, std::span<double> factor_values,
                        const UpdateBlockStore& host_updates, std::span<const char> active, bool retain,
                        std::span<char> stale, std::span<int> failing_column);

  /// The message of the last error or out-of-memory outcome.
  [[nodiscard]] const std::string& error() const;
  [[nodiscard]] const GpuRunStats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cholsim::factor
