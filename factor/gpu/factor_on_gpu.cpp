// Factor's device path (issue 22): the CPU computes the subtrees below the device split on its
// tree tasks (tree_scheduler.hpp), then GpuFactorization computes the top of the tree from
// their update blocks. A refactorize of a factor whose retaining factorize ran this way keeps
// the same split: the device part's blocks are retained on the device.
#include <algorithm>
#include <chrono>

#include "factor/gpu/device_split.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/numeric/multifrontal.hpp"
#include "factor/update/update_block_retention.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::factor {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

bool automatic_device_picks_gpu(const Symbolic& symbolic, const FactorOptions& options) {
  return symbolic.schur_size() == 0 && symbolic.stats().flops >= options.gpu_min_total_flops && gpu_available();
}

bool Factor::compute_with_gpu(const linalg::SymmetricCscMatrix& a, std::span<const char> active,
                              const FactorOptions& options, UpdateBlockStore& updates, std::vector<double>& seconds) {
  const Symbolic& sym = *symbolic_;
  const bool refactorizing = !active.empty();
  if (!refactorizing) {
    std::string why_not;
    const bool usable = options.device != FactorDevice::cpu && gpu_available(&why_not);
    const bool wanted = options.device == FactorDevice::gpu ||
                        (options.device == FactorDevice::automatic && automatic_device_picks_gpu(sym, options));
    if (!wanted) {
      gpu_.reset();
      return false;
    }
    if (!usable) {
      gpu_.reset();
      status_ = failed_status(FactorStatusCode::device_unavailable, "GPU factorization unavailable: " + why_not);
      seconds.assign(static_cast<std::size_t>(sym.supernode_count()), 0.0);
      return true;
    }
    if (sym.schur_size() > 0) {
      gpu_.reset();
      stats_.device_fallback = "a partial (Schur) factorization runs on the CPU";
      return false;
    }
    if (!gpu_ || gpu_min_supernode_flops_ != options.gpu_min_supernode_flops ||
        gpu_memory_limit_ != options.gpu_memory_limit_bytes) {
      gpu_.reset();
      try {
        gpu_ = std::make_unique<GpuFactorization>(symbolic_, supernodes_on_device(sym, options.gpu_min_supernode_flops),
                                                  options.gpu_memory_limit_bytes);
        gpu_min_supernode_flops_ = options.gpu_min_supernode_flops;
        gpu_memory_limit_ = options.gpu_memory_limit_bytes;
      } catch (const GpuError& error) {
        return handle_device_failure(a, active, options, updates, seconds, error.outcome(), error.what());
      }
    }
    // The device part's update blocks are retained on the device, all of them.
    if (retained_) {
      for (Index s = 0; s < sym.supernode_count(); ++s) keeps_block_[s] = keeps_block_[s] || gpu_->on_device()[s];
    }
  }
  GpuRunOutcome outcome = GpuRunOutcome::done;
  if (run_hybrid(a, active, options, updates, seconds, outcome)) return true;
  return handle_device_failure(a, active, options, updates, seconds, outcome, gpu_->error());
}

bool Factor::run_hybrid(const linalg::SymmetricCscMatrix& a, std::span<const char> active,
                        const FactorOptions& options, UpdateBlockStore& updates, std::vector<double>& seconds,
                        GpuRunOutcome& outcome) {
  const Symbolic& sym = *symbolic_;
  const Index count = sym.supernode_count();
  const std::vector<char>& on_device = gpu_->on_device();
  std::vector<char> cpu_active(static_cast<std::size_t>(count), 0);
  bool any_on_cpu = false;
  for (Index s = 0; s < count; ++s) {
    cpu_active[s] = (active.empty() || active[s]) && !on_device[s] ? 1 : 0;
    any_on_cpu = any_on_cpu || cpu_active[s];
  }
  const auto cpu_start = Clock::now();
  if (any_on_cpu) {
    // Blocks of CPU supernodes whose parent is on the device stay until the device read them.
    seconds = compute_supernodes(a, cpu_active, options, updates, keeps_block_, {});
  } else {
    seconds.assign(static_cast<std::size_t>(count), 0.0);
    failing_column_.assign(static_cast<std::size_t>(count), 0);
    stats_.threads = linalg::resolve_thread_count(options.threads);
  }
  stats_.cpu_seconds = std::chrono::duration<double>(Clock::now() - cpu_start).count();

  outcome = gpu_->compute(a.lower.values, values_, updates, active, retained_ != nullptr, stale_, failing_column_);
  if (outcome != GpuRunOutcome::done) return false;
  for (Index s = 0; s < count; ++s) {
    if (on_device[s] && (active.empty() || active[s])) release_consumed_children(sym, s, keeps_block_, updates);
  }
  const GpuRunStats& device = gpu_->stats();
  for (Index s = 0; s < count; ++s) {
    // The cost model's seconds of a device supernode: its share of the device time by flops.
    if (on_device[s] && (active.empty() || active[s]) && device.flops > 0) {
      seconds[s] = device.seconds * sym.supernode_flops(s) / device.flops;
    }
  }
  status_ = first_pivot_failure(sym, failing_column_);
  stats_.gpu = device;
  stats_.device = "gpu (" + gpu_->device_name() + ")";
  stats_.recomputed_supernodes += device.supernodes;
  stats_.recomputed_flops += device.flops;
  stats_.flops = stats_.recomputed_flops;
  stats_.factor_bytes = sym.stats().factor_bytes;
  stats_.retained_update_bytes = retained_ ? retained_->bytes() : 0;
  return true;
}

bool Factor::handle_device_failure(const linalg::SymmetricCscMatrix& a, std::span<const char> active,
                                   const FactorOptions& options, UpdateBlockStore& updates, std::vector<double>& seconds,
                                   GpuRunOutcome outcome, const std::string& reason) {
  const Symbolic& sym = *symbolic_;
  // The device's blocks are gone: its supernodes must be computed again, on the CPU.
  std::vector<char> recompute(active.begin(), active.end());
  if (gpu_) {
    for (Index s = 0; s < sym.supernode_count(); ++s) {
      if (!gpu_->on_device()[s]) continue;
      stale_[s] = 1;
      if (!recompute.empty()) recompute[s] = 1;
    }
  }
  gpu_.reset();
  seconds.assign(static_cast<std::size_t>(sym.supernode_count()), 0.0);
  if (!options.gpu_fallback_to_cpu) {
    const FactorStatusCode code = outcome == GpuRunOutcome::out_of_memory ? FactorStatusCode::device_out_of_memory
                                                                          : FactorStatusCode::device_error;
    status_ = failed_status(code, reason);
    return true;
  }
  stats_ = {};
  stats_.device_fallback = reason;
  if (!recompute.empty() && keeps_block_.size() == recompute.size()) add_unretained_children(sym, keeps_block_, recompute);
  seconds = compute_supernodes(a, recompute, options, updates, keeps_block_, {});
  return true;
}

}  // namespace cholsim::factor
