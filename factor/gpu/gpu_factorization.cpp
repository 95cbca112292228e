#include "factor/gpu/gpu_factorization.hpp"

#include <stdexcept>

#if CHOLSIM_HAVE_CUDA_KERNELS
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>

#include "factor/gpu/cuda_checks.hpp"
#include "factor/gpu/front_kernels.hpp"
#include "factor/numeric/multifrontal.hpp"
#endif

namespace cholsim::factor {

#if CHOLSIM_HAVE_CUDA_KERNELS
namespace {

using gpu::check;
using gpu::DeviceFailure;
using Clock = std::chrono::steady_clock;

// Copies device blocks into pageable host memory (L's values) through a ring of pinned staging
// slots: each piece's device-to-host copy runs on the copy stream, and host threads move it
// into place once its event fires. Pageable copies would run at a fraction of the bus's speed
// and hold the calling thread, which must keep the compute stream fed instead; registering
// L's pages with cudaHostRegister costs about as much as copying them, on every new Factor.
class HostCopyBack {
 public:
  HostCopyBack() {
    slots_.resize(kSlots);
    for (Slot& slot : slots_) {
      check(cudaHostAlloc(reinterpret_cast<void**>(&slot.pinned), kSlotEntries * sizeof(double), cudaHostAllocDefault),
            "cudaHostAlloc");
      check(cudaEventCreateWithFlags(&slot.ready, cudaEventDisableTiming), "cudaEventCreate");
    }
    for (int t = 0; t < kWorkers; ++t) workers_.emplace_back([this] { work(); });
  }
  ~HostCopyBack() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (std::thread& worker : workers_) worker.join();
    for (Slot& slot : slots_) {
      cudaEventDestroy(slot.ready);
      cudaFreeHost(slot.pinned);
    }
  }
  HostCopyBack(const HostCopyBack&) = delete;
  HostCopyBack& operator=(const HostCopyBack&) = delete;

  // Queues the copy of `count` doubles from `device` to `host`, ordered after the work already
  // queued on `stream`. Returns once every piece is queued (waiting for free slots).
  void copy(const double* device, double* host, std::int64_t count, cudaStream_t stream) {
    for (std::int64_t done = 0; done < count; done += kSlotEntries) {
      const std::int64_t piece = std::min<std::int64_t>(kSlotEntries, count - done);
      std::unique_lock lock(mutex_);
      Slot& slot = slots_[next_slot_];
      changed_.wait(lock, [&] { return !slot.busy || !error_.empty(); });
      if (!error_.empty()) throw DeviceFailure{GpuRunOutcome::error, error_};
      slot.busy = true;
      lock.unlock();
      check(cudaMemcpyAsync(slot.pinned, device + done, static_cast<std::size_t>(piece) * sizeof(double),
                            cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync (L to host)");
      check(cudaEventRecord(slot.ready, stream), "cudaEventRecord");
      lock.lock();
      queue_.push_back({next_slot_, host + done, piece});
      next_slot_ = (next_slot_ + 1) % kSlots;
      lock.unlock();
      changed_.notify_all();
    }
  }

  // Waits until every queued piece is in place; throws the first failure of a worker.
  void finish() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] {
      return (queue_.empty() && std::none_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.busy; })) ||
             !error_.empty();
    });
    if (!error_.empty()) {
      std::string message = error_;
      error_.clear();
      throw DeviceFailure{GpuRunOutcome::error, message};
    }
  }

 private:
  static constexpr int kSlots = 8;
  static constexpr int kWorkers = 4;  // memcpy into fresh pages runs at ~5 GB/s per thread
  static constexpr std::int64_t kSlotEntries = std::int64_t{4} << 20;  // 32 MiB
  struct Slot {
    double* pinned = nullptr;
    cudaEvent_t ready = nullptr;
    bool busy = false;
  };
  struct Piece {
    int slot;
    double* host;
    std::int64_t count;
  };

  void work() {
    std::unique_lock lock(mutex_);
    while (true) {
      changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and nothing left
      const Piece piece = queue_.front();
      queue_.pop_front();
      Slot& slot = slots_[piece.slot];
      lock.unlock();
      const cudaError_t status = cudaEventSynchronize(slot.ready);
      if (status == cudaSuccess) {
        std::memcpy(piece.host, slot.pinned, static_cast<std::size_t>(piece.count) * sizeof(double));
      }
      lock.lock();
      if (status != cudaSuccess && error_.empty()) error_ = std::string("copy to host: ") + cudaGetErrorString(status);
      slot.busy = false;
      changed_.notify_all();
    }
  }

  std::vector<Slot> slots_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Piece> queue_;
  int next_slot_ = 0;
  bool stop_ = false;
  std::string error_;
};

// A device array allocated once for the object's life (the analysis' maps).
template <typename T>
T* upload_array(const std::vector<T>& host, std::int64_t& bytes) {
  T* device = nullptr;
  const std::size_t size = std::max<std::size_t>(host.size(), 1) * sizeof(T);
  check(cudaMalloc(reinterpret_cast<void**>(&device), size), "cudaMalloc (analysis maps)");
  if (!host.empty()) check(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  bytes += static_cast<std::int64_t>(size);
  return device;
}

}  // namespace

struct GpuFactorization::Impl {
  const gpu::CudaLibraries& cuda = gpu::blas_and_solver();  // first: nothing to undo when it throws
  std::shared_ptr<const Symbolic> symbolic;
  std::vector<char> on_device;
  std::vector<Index> device_supernodes;  // postorder
  std::vector<Index> device_index;       // device_index[s]: position in device_supernodes, or -1
  std::int64_t memory_limit = 0;
  std::string name;
  std::string error;
  GpuRunStats stats;

  cudaStream_t compute_stream = nullptr;
  cudaStream_t copy_stream = nullptr;
  cudaEvent_t factored = nullptr;  // L's block of the current supernode is final
  cudaEvent_t updated = nullptr;   // and its update block formed: the front is no longer read
  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t solver = nullptr;
  std::unique_ptr<HostCopyBack> copy_back;

  // The analysis on the device: A's targets in each front, children's parent positions.
  std::vector<std::int64_t> a_begin;       // per device supernode, into the A arrays (+ end)
  std::vector<std::int64_t> a_sources;     // host: where each packed A entry comes from
  std::vector<std::int64_t> position_begin;  // per supernode (children of device ones), or -1
  std::int64_t* targets_device = nullptr;
  std::int32_t* positions_device = nullptr;
  double* a_device = nullptr;
  double* a_pinned = nullptr;
  int* info_device = nullptr;
  double* workspace = nullptr;
  int workspace_entries = 0;
  std::int64_t fixed_bytes = 0;  // the maps, A, workspace: held for the object's life

  // Update blocks of device supernodes (u×u, column-major), kept until consumed or retained.
  std::vector<double*> blocks;
  std::vector<std::int64_t> block_entries;
  std::int64_t bytes_in_use = 0;  // allocations of the pool, in stream order

  Impl(std::shared_ptr<const Symbolic> symbolic_in, std::vector<char> on_device_in, std::int64_t limit);
  ~Impl();
  void set_up(std::int64_t limit);
  void destroy();
  void prepare_maps();
  double* allocate(std::int64_t entries);
  void release(double* data, std::int64_t entries, cudaStream_t stream);
  void release_blocks();
  void compute_supernode(Index s, std::span<double> factor_values, const UpdateBlockStore& host_updates, bool retain);
  void update_block_product(const double* below, Index ld, Index u, Index k, double* update);
};

GpuFactorization::Impl::Impl(std::shared_ptr<const Symbolic> symbolic_in, std::vector<char> on_device_in,
                             std::int64_t limit)
    : symbolic(std::move(symbolic_in)), on_device(std::move(on_device_in)) {
  const Symbolic& sym = *symbolic;
  blocks.assign(static_cast<std::size_t>(sym.supernode_count()), nullptr);
  block_entries.assign(static_cast<std::size_t>(sym.supernode_count()), 0);
  device_index.assign(static_cast<std::size_t>(sym.supernode_count()), -1);
  for (Index s = 0; s < sym.supernode_count(); ++s) {
    if (!on_device[s]) continue;
    device_index[s] = static_cast<Index>(device_supernodes.size());
    device_supernodes.push_back(s);
  }
  try {
    set_up(limit);
  } catch (...) {
    destroy();  // a constructor that throws runs no destructor
    throw;
  }
}

void GpuFactorization::Impl::set_up(std::int64_t limit) {
  const gpu::DeviceInfo device = gpu::select_device();
  name = device.name;
  // cuBLAS and cuSOLVER take their own workspace besides ours: leave them 1 GiB.
  const std::int64_t usable = device.free_bytes - (std::int64_t{1} << 30);
  memory_limit = limit > 0 ? std::min<std::int64_t>(limit, usable) : usable;
  // Freed blocks stay in the stream-ordered pool for the next front instead of going back to
  // the driver (each cudaFree synchronizes the device).
  cudaMemPool_t pool = nullptr;
  check(cudaDeviceGetDefaultMemPool(&pool, 0), "cudaDeviceGetDefaultMemPool");
  std::uint64_t keep_all = std::numeric_limits<std::uint64_t>::max();
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all), "cudaMemPoolSetAttribute");

  check(cudaStreamCreateWithFlags(&compute_stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreateWithFlags(&factored, cudaEventDisableTiming), "cudaEventCreate");
  check(cudaEventCreateWithFlags(&updated, cudaEventDisableTiming), "cudaEventCreate");
  check(cuda.cublasCreate(&blas), "cublasCreate");
  check(cuda.cublasSetStream(blas, compute_stream), "cublasSetStream");
  check(cuda.cusolverDnCreate(&solver), "cusolverDnCreate");
  check(cuda.cusolverDnSetStream(solver, compute_stream), "cusolverDnSetStream");
  copy_back = std::make_unique<HostCopyBack>();
  prepare_maps();
  if (fixed_bytes > memory_limit) {
    throw DeviceFailure{GpuRunOutcome::out_of_memory,
                        "the analysis needs " + std::to_string(fixed_bytes) + " bytes of device memory, over the limit of " +
                            std::to_string(memory_limit)};
  }
}

void GpuFactorization::Impl::prepare_maps() {
  const Symbolic& sym = *symbolic;
  std::vector<std::int64_t> targets;
  std::vector<std::int32_t> positions;
  position_begin.assign(static_cast<std::size_t>(sym.supernode_count()), -1);
  a_begin.push_back(0);
  for (Index s : device_supernodes) {
    const auto sources = sym.a_sources(s);
    const auto front_targets = sym.a_targets(s);
    a_sources.insert(a_sources.end(), sources.begin(), sources.end());
    targets.insert(targets.end(), front_targets.begin(), front_targets.end());
    a_begin.push_back(static_cast<std::int64_t>(a_sources.size()));
    for (Index c : sym.children(s)) {
      const auto position = sym.parent_positions(c);
      position_begin[c] = static_cast<std::int64_t>(positions.size());
      positions.insert(positions.end(), position.begin(), position.end());
    }
  }
  targets_device = upload_array(targets, fixed_bytes);
  positions_device = upload_array(positions, fixed_bytes);
  const std::size_t a_bytes = std::max<std::size_t>(a_sources.size(), 1) * sizeof(double);
  check(cudaMalloc(reinterpret_cast<void**>(&a_device), a_bytes), "cudaMalloc (A)");
  check(cudaHostAlloc(reinterpret_cast<void**>(&a_pinned), a_bytes, cudaHostAllocDefault), "cudaHostAlloc (A)");
  fixed_bytes += static_cast<std::int64_t>(a_bytes);
  check(cudaMalloc(reinterpret_cast<void**>(&info_device), std::max<std::size_t>(device_supernodes.size(), 1) * sizeof(int)),
        "cudaMalloc (info)");
  // potrf's workspace, once for the largest front.
  double* probe = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&probe), sizeof(double)), "cudaMalloc");
  for (Index s : device_supernodes) {
    int entries = 0;
    check(cuda.cusolverDnDpotrf_bufferSize(solver, CUBLAS_FILL_MODE_LOWER, sym.column_count(s), probe,
                                           sym.row_count(s), &entries),
          "cusolverDnDpotrf_bufferSize");
    workspace_entries = std::max(workspace_entries, entries);
  }
  cudaFree(probe);
  check(cudaMalloc(reinterpret_cast<void**>(&workspace), std::max<std::size_t>(workspace_entries, 1) * sizeof(double)),
        "cudaMalloc (potrf workspace)");
  fixed_bytes += static_cast<std::int64_t>(workspace_entries) * 8;
}

GpuFactorization::Impl::~Impl() { destroy(); }

void GpuFactorization::Impl::destroy() {
  if (compute_stream) cudaStreamSynchronize(compute_stream);
  if (copy_stream) cudaStreamSynchronize(copy_stream);
  copy_back.reset();
  release_blocks();
  if (compute_stream) cudaStreamSynchronize(compute_stream);
  cudaFree(targets_device);
  cudaFree(positions_device);
  cudaFree(a_device);
  cudaFreeHost(a_pinned);
  cudaFree(info_device);
  cudaFree(workspace);
  if (solver) cuda.cusolverDnDestroy(solver);
  if (blas) cuda.cublasDestroy(blas);
  if (factored) cudaEventDestroy(factored);
  if (updated) cudaEventDestroy(updated);
  if (copy_stream) cudaStreamDestroy(copy_stream);
  if (compute_stream) cudaStreamDestroy(compute_stream);
  cudaMemPool_t pool = nullptr;
  if (cudaDeviceGetDefaultMemPool(&pool, 0) == cudaSuccess) cudaMemPoolTrimTo(pool, 0);
}

double* GpuFactorization::Impl::allocate(std::int64_t entries) {
  const std::int64_t bytes = std::max<std::int64_t>(entries, 1) * 8;
  if (fixed_bytes + bytes_in_use + bytes > memory_limit) {
    throw DeviceFailure{GpuRunOutcome::out_of_memory,
                        "a front needs " + std::to_string(bytes) + " more bytes of device memory with " +
                            std::to_string(fixed_bytes + bytes_in_use) + " in use, over the limit of " +
                            std::to_string(memory_limit)};
  }
  double* data = nullptr;
  check(cudaMallocAsync(reinterpret_cast<void**>(&data), static_cast<std::size_t>(bytes), compute_stream),
        "cudaMallocAsync");
  bytes_in_use += bytes;
  stats.peak_device_bytes = std::max(stats.peak_device_bytes, fixed_bytes + bytes_in_use);
  return data;
}

void GpuFactorization::Impl::release(double* data, std::int64_t entries, cudaStream_t stream) {
  if (data == nullptr) return;
  check(cudaFreeAsync(data, stream), "cudaFreeAsync");
  bytes_in_use -= std::max<std::int64_t>(entries, 1) * 8;
}

// Frees every update block without throwing: it also runs when a failure is being handled and
// when the object is destroyed.
void GpuFactorization::Impl::release_blocks() {
  for (std::size_t s = 0; s < blocks.size(); ++s) {
    if (blocks[s] == nullptr) continue;
    cudaFreeAsync(blocks[s], compute_stream);
    bytes_in_use -= std::max<std::int64_t>(block_entries[s], 1) * 8;
    blocks[s] = nullptr;
    block_entries[s] = 0;
  }
}

// U −= L21·L21ᵀ (lower triangle). cuBLAS's syrk runs well below its gemm on large blocks, so
// a wide U is cut into column panels: syrk on each diagonal block, gemm for the rows below it
// (the CPU's compute_update_block does the same for OpenBLAS, multifrontal.cpp).
void GpuFactorization::Impl::update_block_product(const double* below, Index ld, Index u, Index k, double* update) {
  constexpr Index kPanel = 1024;
  const double minus_one = -1.0;
  const double one = 1.0;
  for (Index first = 0; first < u; first += kPanel) {
    const Index width = std::min(kPanel, u - first);
    double* diagonal = update + static_cast<std::int64_t>(first) * u + first;
    check(cuda.cublasDsyrk(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, width, k, &minus_one, below + first, ld, &one,
                           diagonal, u),
          "cublasDsyrk");
    const Index rows = u - first - width;
    if (rows > 0) {
      check(cuda.cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, rows, width, k, &minus_one, below + first + width, ld,
                             below + first, ld, &one, diagonal + width, u),
            "cublasDgemm");
    }
  }
}

void GpuFactorization::Impl::compute_supernode(Index s, std::span<double> factor_values,
                                               const UpdateBlockStore& host_updates, bool retain) {
  const Symbolic& sym = *symbolic;
  const Index k = sym.column_count(s);
  const Index m = sym.row_count(s);
  const Index u = m - k;
  const Index index = device_index[s];
  if (blocks[s]) {  // a block retained by an earlier call, replaced now
    release(blocks[s], block_entries[s], compute_stream);
    blocks[s] = nullptr;
  }

  double* front = allocate(static_cast<std::int64_t>(m) * k);
  check(cudaMemsetAsync(front, 0, static_cast<std::size_t>(m) * k * sizeof(double), compute_stream), "cudaMemsetAsync");
  double* update = nullptr;
  const std::int64_t update_entries = static_cast<std::int64_t>(u) * u;
  if (u > 0) {
    update = allocate(update_entries);
    check(cudaMemsetAsync(update, 0, static_cast<std::size_t>(update_entries) * sizeof(double), compute_stream),
          "cudaMemsetAsync");
  }
  gpu::launch_scatter_add(front, targets_device + a_begin[index], a_device + a_begin[index],
                          a_begin[index + 1] - a_begin[index], compute_stream);

  for (Index c : sym.children(s)) {
    const PanelLowerLayout layout = on_device[c] ? PanelLowerLayout{sym.row_count(c) - sym.column_count(c), 0}
                                                 : update_layout(sym, c);
    if (layout.size == 0) continue;
    const double* source = blocks[c];
    double* uploaded = nullptr;
    const std::int64_t entries = on_device[c] ? static_cast<std::int64_t>(layout.size) * layout.size : layout.entries();
    if (!on_device[c]) {
      uploaded = allocate(entries);
      check(cudaMemcpyAsync(uploaded, host_updates.block(c), static_cast<std::size_t>(entries) * sizeof(double),
                            cudaMemcpyHostToDevice, compute_stream),
            "cudaMemcpyAsync (update block to device)");
      stats.bytes_to_device += entries * 8;
      source = uploaded;
    } else if (source == nullptr) {
      throw DeviceFailure{GpuRunOutcome::error, "the update block of device supernode " + std::to_string(c) +
                                                    " is missing (not retained)"};
    }
    const gpu::ChildBlock child{source, positions_device + position_begin[c], layout.size,
                                on_device[c] ? std::max<Index>(layout.size, 1) : layout.panel_width};
    gpu::launch_extend_add(child, front, m, k, update, compute_stream);
    check(cudaGetLastError(), "extend-add kernel");
    if (uploaded) release(uploaded, entries, compute_stream);
    if (on_device[c] && !retain) {
      release(blocks[c], block_entries[c], compute_stream);
      blocks[c] = nullptr;
      block_entries[c] = 0;
    }
  }

  check(cuda.cusolverDnDpotrf(solver, CUBLAS_FILL_MODE_LOWER, k, front, m, workspace, workspace_entries,
                              info_device + index),
        "cusolverDnDpotrf");
  if (u > 0) {
    const double one = 1.0;
    check(cuda.cublasDtrsm(blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, u, k,
                           &one, front, m, front + k, m),
          "cublasDtrsm");
  }
  // L's block is final: it goes to the host on the copy stream while U is formed.
  check(cudaEventRecord(factored, compute_stream), "cudaEventRecord");
  check(cudaStreamWaitEvent(copy_stream, factored, 0), "cudaStreamWaitEvent");
  const std::int64_t front_entries = static_cast<std::int64_t>(m) * k;
  copy_back->copy(front, factor_values.data() + sym.value_offset(s), front_entries, copy_stream);
  stats.bytes_from_device += front_entries * 8;
  if (u > 0) update_block_product(front + k, m, u, k, update);
  // The front is freed on the copy stream once both its copy and the product reading it are
  // done; the stream-ordered pool then hands the memory to later fronts.
  check(cudaEventRecord(updated, compute_stream), "cudaEventRecord");
  check(cudaStreamWaitEvent(copy_stream, updated, 0), "cudaStreamWaitEvent");
  release(front, front_entries, copy_stream);
  blocks[s] = update;
  block_entries[s] = u > 0 ? update_entries : 0;
  ++stats.supernodes;
  stats.flops += sym.supernode_flops(s);
}

GpuFactorization::GpuFactorization(std::shared_ptr<const Symbolic> symbolic, std::vector<char> on_device,
                                   std::int64_t memory_limit_bytes) {
  std::string why_not;
  if (!gpu_available(&why_not)) throw GpuError(GpuRunOutcome::error, "GPU factorization: " + why_not);
  try {
    impl_ = std::make_unique<Impl>(std::move(symbolic), std::move(on_device), memory_limit_bytes);
  } catch (const DeviceFailure& failure) {
    throw GpuError(failure.outcome, "GPU factorization: " + failure.message);
  }
}

GpuRunOutcome GpuFactorization::compute(std::span<const double> a_values, std::span<double> factor_values,
                                        const UpdateBlockStore& host_updates, std::span<const char> active, bool retain,
                                        std::span<char> stale, std::span<int> failing_column) {
  Impl& d = *impl_;
  const Symbolic& sym = *d.symbolic;
  const auto start = Clock::now();
  d.stats = {};
  d.error.clear();
  const auto is_active = [&](Index s) { return active.empty() || active[s] != 0; };
  for (Index s : d.device_supernodes) {
    if (is_active(s)) stale[s] = 1;  // until computed
  }
  try {
    if (!retain) d.release_blocks();
    d.stats.peak_device_bytes = d.fixed_bytes + d.bytes_in_use;
    for (std::size_t e = 0; e < d.a_sources.size(); ++e) d.a_pinned[e] = a_values[d.a_sources[e]];
    check(cudaMemcpyAsync(d.a_device, d.a_pinned, d.a_sources.size() * sizeof(double), cudaMemcpyHostToDevice,
                          d.compute_stream),
          "cudaMemcpyAsync (A)");
    d.stats.bytes_to_device += static_cast<std::int64_t>(d.a_sources.size()) * 8;
    check(cudaMemsetAsync(d.info_device, 0, d.device_supernodes.size() * sizeof(int), d.compute_stream), "cudaMemsetAsync");
    std::vector<char> computed(static_cast<std::size_t>(sym.supernode_count()), 0);
    for (Index s : d.device_supernodes) {
      if (!is_active(s)) continue;
      // A CPU child that failed, or a device child skipped, leaves s without its update block:
      // skip s too. (Device children's own pivot failures are known only at the end.)
      bool blocked = false;
      for (Index c : sym.children(s)) {
        blocked = blocked || (is_active(c) && (d.on_device[c] ? !computed[c] : stale[c] != 0));
      }
      if (blocked) continue;
      d.compute_supernode(s, factor_values, host_updates, retain);
      computed[s] = 1;
    }
    d.copy_back->finish();
    check(cudaStreamSynchronize(d.compute_stream), "cudaStreamSynchronize");
    check(cudaStreamSynchronize(d.copy_stream), "cudaStreamSynchronize");
    std::vector<int> info(d.device_supernodes.size(), 0);
    check(cudaMemcpy(info.data(), d.info_device, info.size() * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy (info)");
    for (Index s : d.device_supernodes) {  // postorder: a failed child is known before its parent
      if (!computed[s]) continue;
      failing_column[s] = info[d.device_index[s]];
      bool from_failed_child = false;
      for (Index c : sym.children(s)) from_failed_child = from_failed_child || (d.on_device[c] && stale[c]);
      stale[s] = failing_column[s] != 0 || from_failed_child ? 1 : 0;
    }
  } catch (const DeviceFailure& failure) {
    // Leave the device clean: the blocks of this call and any retained ones are gone.
    cudaStreamSynchronize(d.compute_stream);
    cudaStreamSynchronize(d.copy_stream);
    try {
      d.copy_back->finish();
    } catch (const DeviceFailure&) {
    }
    d.release_blocks();
    cudaStreamSynchronize(d.compute_stream);
    for (Index s : d.device_supernodes) stale[s] = 1;
    d.error = failure.message;
    d.stats.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return failure.outcome;
  }
  d.stats.retained_device_bytes = 0;
  for (std::int64_t entries : d.block_entries) d.stats.retained_device_bytes += entries * 8;
  d.stats.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return GpuRunOutcome::done;
}

GpuFactorization::~GpuFactorization() = default;
const std::vector<char>& GpuFactorization::on_device() const { return impl_->on_device; }
std::int64_t GpuFactorization::memory_limit_bytes() const { return impl_->memory_limit; }
const std::string& GpuFactorization::device_name() const { return impl_->name; }
const std::string& GpuFactorization::error() const { return impl_->error; }
const GpuRunStats& GpuFactorization::stats() const { return impl_->stats; }

bool gpu_available(std::string* why_not) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    if (why_not) {
      *why_not = status != cudaSuccess ? std::string("no CUDA device: ") + cudaGetErrorString(status)
                                       : std::string("no CUDA device");
    }
    return false;
  }
  return gpu_libraries_available(why_not);
}

bool gpu_libraries_available(std::string* why_not) {
  try {
    gpu::cuda_libraries();
    return true;
  } catch (const std::runtime_error& failure) {
    if (why_not) *why_not = failure.what();
    return false;
  }
}

#else  // built without the CUDA kernels

struct GpuFactorization::Impl {
  std::vector<char> on_device;
  std::string text;
  GpuRunStats stats;
};

bool gpu_available(std::string* why_not) {
  if (why_not) *why_not = "this build has no CUDA factorization (nvcc was not found when CMake configured it)";
  return false;
}
bool gpu_libraries_available(std::string* why_not) { return gpu_available(why_not); }

GpuFactorization::GpuFactorization(std::shared_ptr<const Symbolic>, std::vector<char>, std::int64_t) {
  std::string why_not;
  gpu_available(&why_not);
  throw GpuError(GpuRunOutcome::error, "GPU factorization: " + why_not);
}
GpuFactorization::~GpuFactorization() = default;
GpuRunOutcome GpuFactorization::compute(std::span<const double>, std::span<double>, const UpdateBlockStore&,
                                        std::span<const char>, bool, std::span<char>, std::span<int>) {
  return GpuRunOutcome::error;
}
const std::vector<char>& GpuFactorization::on_device() const { return impl_->on_device; }
std::int64_t GpuFactorization::memory_limit_bytes() const { return 0; }
const std::string& GpuFactorization::device_name() const { return impl_->text; }
const std::string& GpuFactorization::error() const { return impl_->text; }
const GpuRunStats& GpuFactorization::stats() const { return impl_->stats; }

#endif

}  // namespace cholsim::factor
