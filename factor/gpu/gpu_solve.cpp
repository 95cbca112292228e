#include "factor/gpu/gpu_solve.hpp"

#include <stdexcept>
#include <string>

#if CHOLSIM_HAVE_CUDA_KERNELS
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <vector>

#include "factor/gpu/cuda_checks.hpp"
#include "factor/gpu/solve_kernels.hpp"
#endif

namespace cholsim::factor {
namespace {

void require_full_factor(const Factor& factor) {
  if (!factor.ok()) {
    throw std::logic_error("GpuSolveFactor: no successful factorization (" +
                           (factor.status().message.empty() ? std::string("not factored") : factor.status().message) +
                           ")");
  }
  if (factor.symbolic().schur_size() > 0) {
    throw std::logic_error("GpuSolveFactor: a partial factorization (Schur set of " +
                           std::to_string(factor.symbolic().schur_size()) + " unknowns) has no full solve");
  }
}

}  // namespace

#if CHOLSIM_HAVE_CUDA_KERNELS
namespace {

using Clock = std::chrono::steady_clock;
using gpu::check;

std::string lanes_size_message(std::size_t given, Index n) {
  return "GpuSolveFactor::solve_lanes: " + std::to_string(given) + " values, expected " +
         std::to_string(GpuSolveFactor::kLaneWidth * (static_cast<std::size_t>(n) + 1)) + " (four a row for " +
         std::to_string(n) + " rows and a work row)";
}


// The solve units on the host: every supernode cut into runs of at most kSolveUnitColumns
// columns (its rows from the run's first column down), in the supernodes' postorder. A unit
// signals the next run of its supernode, the last run its parent supernode's first: that one
// thus waits for every child subtree, and each later run for the run before it.
struct HostSolveTree {
  std::vector<gpu::SolveUnit> units;
  std::vector<std::int32_t> row_lists;
  std::vector<std::int32_t> forward_order;   ///< ticket → unit
  std::vector<std::int32_t> backward_order;
  std::vector<std::int32_t> counters_start;  ///< pending (signals expected), done, tickets
  std::int64_t transposed_entries = 0;       ///< Σ k·m over the units
};

// A unit's cost in the substitutions, in L entries: the entries it reads and a fixed part for
// its synchronization and latencies (about 5 µs per unit on an H100, the time of some 25,000
// entries on one SM).
double unit_cost(const gpu::SolveUnit& unit) {
  constexpr double kFixed = 25000.0;
  const double k = unit.columns;
  return kFixed + k * (static_cast<double>(unit.rows) - 0.5 * k);
}

// The ticket orders: forward, by the work from the unit up to the root (largest first: a unit
// has more ahead of it than its parent, so children come first); backward, by the largest work
// from the unit down to a leaf (a parent has more than any child, so it comes first). Both are
// the classic list-scheduling priorities, and both keep every unit after those it waits for.
void order_by_work_ahead(HostSolveTree& tree) {
  const std::size_t count = tree.units.size();
  std::vector<double> to_root(count, 0.0);
  std::vector<double> to_leaf(count, 0.0);
  for (std::size_t u = count; u-- > 0;) {  // a unit's parent unit has a larger index
    const std::int32_t parent = tree.units[u].parent_unit;
    to_root[u] = unit_cost(tree.units[u]) + (parent >= 0 ? to_root[static_cast<std::size_t>(parent)] : 0.0);
  }
  for (std::size_t u = 0; u < count; ++u) {  // children first
    to_leaf[u] += unit_cost(tree.units[u]);
    const std::int32_t parent = tree.units[u].parent_unit;
    if (parent >= 0) to_leaf[static_cast<std::size_t>(parent)] = std::max(to_leaf[static_cast<std::size_t>(parent)], to_leaf[u]);
  }
  const auto order_by = [count](const std::vector<double>& priority) {
    std::vector<std::int32_t> order(count);
    for (std::size_t u = 0; u < count; ++u) order[u] = static_cast<std::int32_t>(u);
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return priority[a] > priority[b]; });
    return order;
  };
  tree.forward_order = order_by(to_root);
  tree.backward_order = order_by(to_leaf);
}

HostSolveTree build_solve_tree(const Symbolic& sym) {
  const Index count = sym.supernode_count();
  std::vector<std::int64_t> first_unit(static_cast<std::size_t>(count) + 1, 0);
  std::int64_t total_rows = 0;
  for (Index s = 0; s < count; ++s) {
    if (sym.parent(s) >= 0 && sym.parent(s) <= s) {
      throw std::logic_error("GpuSolveFactor: supernode " + std::to_string(s) + " has parent " +
                             std::to_string(sym.parent(s)) + " (the analysis is not in postorder)");
    }
    const Index k = sym.column_count(s);
    first_unit[s + 1] = first_unit[s] + (k + gpu::kSolveUnitColumns - 1) / gpu::kSolveUnitColumns;
    total_rows += sym.row_count(s);
  }
  constexpr auto kMax = std::numeric_limits<std::int32_t>::max();
  if (total_rows > kMax || first_unit[count] > kMax / 3) {
    throw GpuError(GpuRunOutcome::out_of_memory,
                   "GpuSolveFactor: " + std::to_string(total_rows) + " row-list entries and " +
                       std::to_string(first_unit[count]) + " solve units exceed the kernels' 32-bit indices");
  }
  HostSolveTree tree;
  tree.units.reserve(static_cast<std::size_t>(first_unit[count]));
  tree.row_lists.reserve(static_cast<std::size_t>(total_rows));
  for (Index s = 0; s < count; ++s) {
    const auto rows = sym.rows(s);
    const auto row_list = static_cast<std::int32_t>(tree.row_lists.size());
    for (Index r : rows) tree.row_lists.push_back(static_cast<std::int32_t>(r));
    const Index k = sym.column_count(s);
    const Index m = sym.row_count(s);
    for (Index c0 = 0; c0 < k; c0 += gpu::kSolveUnitColumns) {
      const Index width = std::min<Index>(gpu::kSolveUnitColumns, k - c0);
      const bool last = c0 + width == k;
      const auto next = static_cast<std::int32_t>(tree.units.size() + 1);
      const std::int32_t parent_unit =
          !last ? next : (sym.parent(s) >= 0 ? static_cast<std::int32_t>(first_unit[sym.parent(s)]) : -1);
      const std::int64_t transposed_entries = tree.transposed_entries;
      tree.transposed_entries += static_cast<std::int64_t>(width) * (m - c0);
      tree.units.push_back({sym.value_offset(s) + static_cast<std::int64_t>(c0) * m + c0, transposed_entries,
                            static_cast<std::int32_t>(m),
                            static_cast<std::int32_t>(width), static_cast<std::int32_t>(m - c0),
                            static_cast<std::int32_t>(sym.first_column(s) + c0), row_list + static_cast<std::int32_t>(c0),
                            parent_unit});
    }
  }
  const std::size_t units = tree.units.size();
  tree.counters_start.assign(2 * units + 2, 0);  // pending | done | two tickets
  for (const gpu::SolveUnit& unit : tree.units) {
    if (unit.parent_unit >= 0) ++tree.counters_start[static_cast<std::size_t>(unit.parent_unit)];
  }
  order_by_work_ahead(tree);
  return tree;
}

template <typename T>
T* device_copy(const T* host, std::size_t count, std::int64_t& bytes) {
  T* device = nullptr;
  const std::size_t size = std::max<std::size_t>(count, 1) * sizeof(T);
  check(cudaMalloc(reinterpret_cast<void**>(&device), size), "cudaMalloc (GpuSolveFactor)");
  bytes += static_cast<std::int64_t>(size);
  if (count > 0) check(cudaMemcpy(device, host, count * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy (GpuSolveFactor)");
  return device;
}

}  // namespace

struct GpuSolveFactor::Impl {
  std::shared_ptr<const Symbolic> symbolic;
  Index n = 0;
  std::string name;
  GpuSolveStats stats;
  std::int64_t bytes = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t started = nullptr;
  cudaEvent_t finished = nullptr;
  gpu::SolveTree tree;
  gpu::SolveUnit* units = nullptr;
  double* values = nullptr;
  double* transposed = nullptr;  // every unit's trapezoid transposed (backward substitution)
  std::int32_t* row_lists = nullptr;
  std::int32_t* orders = nullptr;  // forward order, then backward order
  std::int32_t* counters = nullptr;
  std::int32_t* counters_start = nullptr;
  std::size_t counter_count = 0;
  double* rhs = nullptr;     // device: n rows of kLaneWidth, Y between the substitutions
  double* pinned = nullptr;  // host, page-locked and mapped: n + 1 rows of kLaneWidth, B in and X out
  double* pinned_on_device = nullptr;  // the same memory as the kernels address it
  std::vector<gpu::SolveUnit> host_units;
  std::int64_t* timeline = nullptr;  // 3 stamps per unit, forward then backward; null: off
  std::vector<GpuSolveUnitTiming> forward_timings;
  std::vector<GpuSolveUnitTiming> backward_timings;

  Impl(const Factor& factor, std::int64_t memory_limit);
  ~Impl();
  void invert_diagonal_blocks();
  void transpose_units();
  void release();
  // Solves the n×kLaneWidth rows of `pinned` in place, the first `columns` lanes.
  void run(int columns);
  void read_timings();
};

GpuSolveFactor::Impl::Impl(const Factor& factor, std::int64_t memory_limit) : symbolic(factor.symbolic_ptr()) {
  const Symbolic& sym = *symbolic;
  n = sym.size();
  try {
    const HostSolveTree host = build_solve_tree(sym);
    const gpu::DeviceInfo device = gpu::select_device();
    name = device.name;
    const auto lane_bytes = static_cast<std::int64_t>(kLaneWidth) * 8 * (n + 1);
    const std::int64_t needed = (static_cast<std::int64_t>(factor.values().size()) + host.transposed_entries) * 8 +
                                static_cast<std::int64_t>(host.row_lists.size()) * 4 +
                                static_cast<std::int64_t>(host.units.size() * (sizeof(gpu::SolveUnit) + 8)) +
                                static_cast<std::int64_t>(host.counters_start.size()) * 8 + lane_bytes;
    const std::int64_t limit = memory_limit > 0 ? std::min(memory_limit, device.free_bytes) : device.free_bytes;
    if (needed > limit) {
      throw gpu::DeviceFailure{GpuRunOutcome::out_of_memory, "L and its solve tree need " + std::to_string(needed) +
                                                                 " bytes of device memory, over the limit of " +
                                                                 std::to_string(limit)};
    }
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&started), "cudaEventCreate");
    check(cudaEventCreate(&finished), "cudaEventCreate");
    values = device_copy(factor.values().data(), factor.values().size(), bytes);
    row_lists = device_copy(host.row_lists.data(), host.row_lists.size(), bytes);
    units = device_copy(host.units.data(), host.units.size(), bytes);
    std::vector<std::int32_t> both_orders = host.forward_order;
    both_orders.insert(both_orders.end(), host.backward_order.begin(), host.backward_order.end());
    orders = device_copy(both_orders.data(), both_orders.size(), bytes);
    counters_start = device_copy(host.counters_start.data(), host.counters_start.size(), bytes);
    counter_count = host.counters_start.size();
    counters = device_copy(host.counters_start.data(), counter_count, bytes);
    check(cudaMalloc(reinterpret_cast<void**>(&rhs), static_cast<std::size_t>(std::max<std::int64_t>(lane_bytes, 8))),
          "cudaMalloc (right-hand sides)");
    bytes += lane_bytes;
    // Mapped: the kernels read B and write X there themselves (solve_kernels.hpp), which saves
    // the two copies' latency and the forward's wait for the whole of B.
    check(cudaHostAlloc(reinterpret_cast<void**>(&pinned), static_cast<std::size_t>(lane_bytes), cudaHostAllocMapped),
          "cudaHostAlloc (right-hand sides)");
    check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&pinned_on_device), pinned, 0),
          "cudaHostGetDevicePointer (right-hand sides)");
    std::memset(pinned, 0, static_cast<std::size_t>(lane_bytes));
    host_units = host.units;
    invert_diagonal_blocks();
    check(cudaMalloc(reinterpret_cast<void**>(&transposed),
                     static_cast<std::size_t>(std::max<std::int64_t>(host.transposed_entries, 1)) * sizeof(double)),
          "cudaMalloc (transposed L)");
    bytes += host.transposed_entries * 8;
    transpose_units();
    tree = {units, values, transposed, row_lists, orders, orders + host.units.size(),
            static_cast<std::int32_t>(host.units.size())};
  } catch (const gpu::DeviceFailure& failure) {
    release();
    throw GpuError(failure.outcome, "GpuSolveFactor: " + failure.message);
  } catch (...) {
    release();
    throw;
  }
}

// Every unit's diagonal triangle replaced by its inverse, in place (cuSOLVER trtri), once: the
// substitutions then multiply by it (solve_kernels.hpp says why).
void GpuSolveFactor::Impl::invert_diagonal_blocks() {
  const gpu::CudaLibraries& cuda = gpu::blas_and_solver();
  cusolverDnHandle_t solver = nullptr;
  check(cuda.cusolverDnCreate(&solver), "cusolverDnCreate");
  void* device_workspace = nullptr;
  int* info = nullptr;
  try {
    check(cuda.cusolverDnSetStream(solver, stream), "cusolverDnSetStream");
    std::size_t device_bytes = 0;
    std::size_t host_bytes = 0;
    for (const gpu::SolveUnit& unit : host_units) {
      std::size_t unit_device = 0;
      std::size_t unit_host = 0;
      check(cuda.cusolverDnXtrtri_bufferSize(solver, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, unit.columns,
                                             CUDA_R_64F, values + unit.values, unit.leading, &unit_device,
                                             &unit_host),
            "cusolverDnXtrtri_bufferSize");
      device_bytes = std::max(device_bytes, unit_device);
      host_bytes = std::max(host_bytes, unit_host);
    }
    std::vector<char> host_workspace(std::max<std::size_t>(host_bytes, 1));
    check(cudaMalloc(&device_workspace, std::max<std::size_t>(device_bytes, 1)), "cudaMalloc (trtri workspace)");
    check(cudaMalloc(reinterpret_cast<void**>(&info), sizeof(int)), "cudaMalloc (trtri info)");
    for (const gpu::SolveUnit& unit : host_units) {
      check(cuda.cusolverDnXtrtri(solver, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, unit.columns, CUDA_R_64F,
                                  values + unit.values, unit.leading, device_workspace, device_bytes,
                                  host_workspace.data(), host_bytes, info),
            "cusolverDnXtrtri");
    }
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (trtri)");
  } catch (...) {
    cudaFree(device_workspace);
    cudaFree(info);
    cuda.cusolverDnDestroy(solver);
    throw;
  }
  cudaFree(device_workspace);
  cudaFree(info);
  cuda.cusolverDnDestroy(solver);
}

// Every unit's m×k trapezoid (its inverted diagonal block included) transposed into its k×m
// block of `transposed`, once (cuBLAS geam).
void GpuSolveFactor::Impl::transpose_units() {
  const gpu::CudaLibraries& cuda = gpu::blas_and_solver();
  cublasHandle_t blas = nullptr;
  check(cuda.cublasCreate(&blas), "cublasCreate");
  try {
    check(cuda.cublasSetStream(blas, stream), "cublasSetStream");
    const double one = 1.0;
    const double zero = 0.0;
    for (const gpu::SolveUnit& unit : host_units) {
      double* target = transposed + unit.transposed;
      check(cuda.cublasDgeam(blas, CUBLAS_OP_T, CUBLAS_OP_N, unit.columns, unit.rows, &one, values + unit.values,
                             unit.leading, &zero, target, unit.columns, target, unit.columns),
            "cublasDgeam (transpose)");
    }
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (transpose)");
  } catch (...) {
    cuda.cublasDestroy(blas);
    throw;
  }
  cuda.cublasDestroy(blas);
}

GpuSolveFactor::Impl::~Impl() { release(); }

void GpuSolveFactor::Impl::release() {
  if (stream) cudaStreamSynchronize(stream);
  cudaFree(values);
  cudaFree(transposed);
  transposed = nullptr;
  cudaFree(row_lists);
  cudaFree(units);
  cudaFree(orders);
  orders = nullptr;
  cudaFree(counters);
  cudaFree(counters_start);
  cudaFree(rhs);
  cudaFree(timeline);
  timeline = nullptr;
  cudaFreeHost(pinned);
  values = nullptr;
  row_lists = nullptr;
  units = nullptr;
  counters = counters_start = nullptr;
  rhs = pinned = pinned_on_device = nullptr;
  if (started) cudaEventDestroy(started);
  if (finished) cudaEventDestroy(finished);
  if (stream) cudaStreamDestroy(stream);
  started = finished = nullptr;
  stream = nullptr;
}

void GpuSolveFactor::Impl::run(int columns) {
  const auto lane_bytes = static_cast<std::size_t>(n) * kLaneWidth * sizeof(double);
  const auto bytes_moved = static_cast<std::size_t>(n) * static_cast<std::size_t>(columns) * sizeof(double);
  try {
    check(cudaEventRecord(started, stream), "cudaEventRecord");
    check(cudaMemcpyAsync(counters, counters_start, counter_count * sizeof(std::int32_t), cudaMemcpyDeviceToDevice,
                          stream),
          "cudaMemcpyAsync (solve counters)");
    check(cudaMemsetAsync(rhs, 0, lane_bytes, stream), "cudaMemsetAsync (right-hand sides)");
    const auto unit_count = static_cast<std::size_t>(tree.unit_count);
    // The layout of HostSolveTree::counters_start.
    gpu::SolveCounters state{counters, counters + unit_count, counters + 2 * unit_count, timeline};
    const auto stride = static_cast<int>(kLaneWidth);
    gpu::launch_forward_substitution(tree, state, pinned_on_device, rhs, stride, columns, stream);
    check(cudaGetLastError(), "forward substitution kernel");
    if (timeline) state.timeline = timeline + 3 * unit_count;
    gpu::launch_backward_substitution(tree, state, rhs, pinned_on_device, stride, columns, stream);
    check(cudaGetLastError(), "backward substitution kernel");
    check(cudaEventRecord(finished, stream), "cudaEventRecord");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (solve)");
    float milliseconds = 0.0F;
    check(cudaEventElapsedTime(&milliseconds, started, finished), "cudaEventElapsedTime");
    stats.device_seconds = 1e-3 * milliseconds;
    if (timeline) read_timings();
  } catch (const gpu::DeviceFailure& failure) {
    throw GpuError(failure.outcome, "GpuSolveFactor: " + failure.message);
  }
  stats.bytes_to_device = static_cast<std::int64_t>(bytes_moved);
  stats.bytes_from_device = static_cast<std::int64_t>(bytes_moved);
}

void GpuSolveFactor::Impl::read_timings() {
  const std::size_t count = host_units.size();
  std::vector<std::int64_t> stamps(6 * count);
  check(cudaMemcpy(stamps.data(), timeline, stamps.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost),
        "cudaMemcpy (unit timings)");
  for (int pass = 0; pass < 2; ++pass) {
    const std::int64_t* first = stamps.data() + 3 * count * static_cast<std::size_t>(pass);
    std::int64_t origin = std::numeric_limits<std::int64_t>::max();
    for (std::size_t u = 0; u < count; ++u) origin = std::min(origin, first[3 * u]);
    std::vector<GpuSolveUnitTiming>& timings = pass == 0 ? forward_timings : backward_timings;
    timings.resize(count);
    for (std::size_t u = 0; u < count; ++u) {
      const gpu::SolveUnit& unit = host_units[u];
      timings[u] = {unit.columns, unit.rows, unit.parent_unit, 1e-9 * static_cast<double>(first[3 * u] - origin),
                    1e-9 * static_cast<double>(first[3 * u + 1] - origin),
                    1e-9 * static_cast<double>(first[3 * u + 2] - origin)};
    }
  }
}

GpuSolveFactor::GpuSolveFactor(const Factor& factor, std::int64_t memory_limit_bytes) {
  require_full_factor(factor);
  std::string why_not;
  if (!gpu_available(&why_not)) throw GpuError(GpuRunOutcome::error, "GpuSolveFactor: " + why_not);
  impl_ = std::make_unique<Impl>(factor, memory_limit_bytes);
}

GpuSolveFactor::~GpuSolveFactor() = default;

void GpuSolveFactor::solve(linalg::DenseView b) {
  Impl& d = *impl_;
  if (b.rows != d.n) {
    throw std::invalid_argument("GpuSolveFactor::solve: right-hand side has " + std::to_string(b.rows) +
                                " rows, the matrix has " + std::to_string(d.n));
  }
  const auto start = Clock::now();
  const auto permutation = d.symbolic->permutation();
  const auto width = static_cast<Index>(kLaneWidth);
  double device_seconds = 0.0;
  for (Index first = 0; first < b.cols; first += width) {
    const Index columns = std::min(width, b.cols - first);
    for (Index k = 0; k < d.n; ++k) {
      double* row = d.pinned + static_cast<std::size_t>(k) * kLaneWidth;
      for (Index c = 0; c < width; ++c) row[c] = c < columns ? b(permutation[k], first + c) : 0.0;
    }
    d.run(static_cast<int>(columns));
    device_seconds += d.stats.device_seconds;
    for (Index k = 0; k < d.n; ++k) {
      const double* row = d.pinned + static_cast<std::size_t>(k) * kLaneWidth;
      for (Index c = 0; c < columns; ++c) b(permutation[k], first + c) = row[c];
    }
  }
  d.stats.device_seconds = device_seconds;
  d.stats.seconds = std::chrono::duration<double>(Clock::now() - start).count();
}

void GpuSolveFactor::solve_lanes(std::span<double> lanes, int columns) {
  Impl& d = *impl_;
  if (lanes.size() != kLaneWidth * (static_cast<std::size_t>(d.n) + 1)) {
    throw std::invalid_argument(lanes_size_message(lanes.size(), d.n));
  }
  if (columns < 1 || columns > static_cast<int>(kLaneWidth)) {
    throw std::invalid_argument("GpuSolveFactor::solve_lanes: " + std::to_string(columns) +
                                " right-hand sides, expected 1 to 4");
  }
  const auto start = Clock::now();
  if (lanes.data() == d.pinned) {
    d.run(columns);
  } else {
    const std::size_t bytes = static_cast<std::size_t>(d.n) * kLaneWidth * sizeof(double);
    std::memcpy(d.pinned, lanes.data(), bytes);
    d.run(columns);
    std::memcpy(lanes.data(), d.pinned, bytes);
  }
  d.stats.seconds = std::chrono::duration<double>(Clock::now() - start).count();
}

std::span<double> GpuSolveFactor::pinned_lanes() {
  return {impl_->pinned, kLaneWidth * (static_cast<std::size_t>(impl_->n) + 1)};
}
std::span<const Index> GpuSolveFactor::permutation() const { return impl_->symbolic->permutation(); }
Index GpuSolveFactor::size() const { return impl_->n; }
Index GpuSolveFactor::unit_count() const { return impl_->tree.unit_count; }
std::int64_t GpuSolveFactor::device_bytes() const { return impl_->bytes; }
const std::string& GpuSolveFactor::device_name() const { return impl_->name; }
const GpuSolveStats& GpuSolveFactor::last_solve() const { return impl_->stats; }

void GpuSolveFactor::record_unit_timings(bool on) {
  Impl& d = *impl_;
  if (on == (d.timeline != nullptr)) return;
  if (!on) {
    cudaStreamSynchronize(d.stream);
    cudaFree(d.timeline);
    d.timeline = nullptr;
    d.forward_timings.clear();
    d.backward_timings.clear();
    return;
  }
  try {
    check(cudaMalloc(reinterpret_cast<void**>(&d.timeline), 6 * d.host_units.size() * sizeof(std::int64_t) + 8),
          "cudaMalloc (unit timings)");
  } catch (const gpu::DeviceFailure& failure) {
    throw GpuError(failure.outcome, "GpuSolveFactor: " + failure.message);
  }
}
const std::vector<GpuSolveUnitTiming>& GpuSolveFactor::forward_timings() const { return impl_->forward_timings; }
const std::vector<GpuSolveUnitTiming>& GpuSolveFactor::backward_timings() const { return impl_->backward_timings; }

#else  // built without the CUDA kernels

struct GpuSolveFactor::Impl {};

GpuSolveFactor::GpuSolveFactor(const Factor& factor, std::int64_t) {
  require_full_factor(factor);
  std::string why_not;
  gpu_available(&why_not);
  throw GpuError(GpuRunOutcome::error, "GpuSolveFactor: " + why_not);
}
GpuSolveFactor::~GpuSolveFactor() = default;
// A constructed object cannot exist in this build: the constructor always throws.
void GpuSolveFactor::solve(linalg::DenseView) {}
void GpuSolveFactor::solve_lanes(std::span<double>, int) {}
std::span<double> GpuSolveFactor::pinned_lanes() { return {}; }
std::span<const Index> GpuSolveFactor::permutation() const { return {}; }
Index GpuSolveFactor::size() const { return 0; }
Index GpuSolveFactor::unit_count() const { return 0; }
std::int64_t GpuSolveFactor::device_bytes() const { return 0; }
const std::string& GpuSolveFactor::device_name() const {
  static const std::string none;
  return none;
}
const GpuSolveStats& GpuSolveFactor::last_solve() const {
  static const GpuSolveStats none;
  return none;
}
void GpuSolveFactor::record_unit_timings(bool) {}
const std::vector<GpuSolveUnitTiming>& GpuSolveFactor::forward_timings() const {
  static const std::vector<GpuSolveUnitTiming> none;
  return none;
}
const std::vector<GpuSolveUnitTiming>& GpuSolveFactor::backward_timings() const { return forward_timings(); }

#endif

}  // namespace cholsim::factor
