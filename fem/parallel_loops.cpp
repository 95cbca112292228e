#include "fem/parallel_loops.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <vector>

namespace cholsim::fem::detail {
namespace {

using linalg::Index;

/// A region is announced in one 64-bit word: bits 0–15 its number of chunks, 16–23 the number
/// of workers that help (threads − 1), 24–63 its generation (1, 2, …), so that every region's
/// word differs from the last.
struct RegionWord {
  static constexpr int kHelpersShift = 16, kGenerationShift = 24;

  static std::uint64_t make(std::uint64_t generation, int helpers, Index chunks) {
    return generation << kGenerationShift | static_cast<std::uint64_t>(helpers) << kHelpersShift |
           static_cast<std::uint64_t>(chunks);
  }
  static Index chunks(std::uint64_t w) { return static_cast<Index>(w & 0xffff); }
  static int helpers(std::uint64_t w) { return static_cast<int>(w >> kHelpersShift & 0xff); }
  static std::uint64_t generation(std::uint64_t w) { return w >> kGenerationShift; }
};
static_assert(kMaxChunks <= 0xffff && kMaxThreads - 1 <= 0xff);

/// Spins for up to `budget` checking ready(), with a CPU pause between checks; after the first
/// kPauseOnly it also yields between rounds of checks — on a machine busier than its cores, a
/// spinning thread must not keep the thread it waits for (or the one that waits for it) off
/// its core. Not from the start: a yield is a system call, slow in a virtual machine, and a
/// worker inside one notices the next colour of a sweep late. True once ready.
constexpr std::chrono::microseconds kPauseOnly{20};

template <typename Ready>
bool spin_until(std::chrono::microseconds budget, Ready&& ready) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited >= budget) return ready();
    if (waited >= kPauseOnly) std::this_thread::yield();
  }
}

// How long a thread spins before it sleeps. Workers: long enough to bridge the gap between the
// loops of one phase (the colours of a Gauss–Seidel sweep come microseconds apart), short
// enough not to hold a core through a serial phase such as the solve. The caller waits only
// for chunks that workers already run.
constexpr std::chrono::microseconds kWorkerSpin{500};
constexpr std::chrono::microseconds kCallerSpin{200};

/// True on the pool's workers and on a caller inside its region: a loop started there runs on
/// its own thread (try_lock on a mutex the thread holds would be undefined).
thread_local bool t_in_region = false;

/// Thread t of T owns the chunks [chunks·t/T, chunks·(t+1)/T) of every region: it runs them
/// first, in order, and then takes the chunks of the others that are still unclaimed, from the
/// end. Without a late thread each thread so works on the same part of the data in every
/// region (the same tets in every colour of a sweep, the same rows as the elements it just
/// did) and finds it in its own cache; taking chunks from another core's part costs a
/// transfer of each cache line it writes (dynamic claiming in chunk order made the colour
/// loops twice as slow with 2 threads as with 1). Stealing keeps a late or descheduled
/// worker from holding up the region.
class WorkerPool {
 public:
  WorkerPool() = default;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  ~WorkerPool() {
    {
      const std::lock_guard lock(sleep_mutex_);
      stopping_.store(true);
    }
    work_posted_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }

  /// run_chunks; false (nothing run) when another region holds the pool.
  bool try_run(Index chunks, int threads, ChunkTask task, void* context) {
    const std::unique_lock region(region_mutex_, std::try_to_lock);
    if (!region.owns_lock()) return false;
    const int helpers = threads - 1;
    while (static_cast<int>(workers_.size()) < helpers) {
      const int worker = static_cast<int>(workers_.size()) + 1;
      workers_.emplace_back([this, worker] {
        t_in_region = true;
        work(worker);
      });
    }
    task_ = task;
    context_ = context;
    done_.store(0, std::memory_order_relaxed);
    const std::uint64_t generation = ++generation_;
    // Chunk 0 is the caller's: claimed before anyone can see the region. The word's store
    // releases task_, context_, done_ and this claim to the workers that read it.
    claimed_[0].generation.store(generation, std::memory_order_relaxed);
    word_.store(RegionWord::make(generation, helpers, chunks), std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      const std::lock_guard lock(sleep_mutex_);
      work_posted_.notify_all();
    }
    task_(context_, 0);
    finish(1 + serve(generation, 0, threads, chunks, 1), chunks);
    wait_for_done(chunks);
    return true;
  }

 private:
  /// Claims chunk c for region `generation`: false when some thread already has it.
  bool claim(Index c, std::uint64_t generation) {
    std::atomic<std::uint64_t>& slot = claimed_[static_cast<std::size_t>(c)].generation;
    std::uint64_t seen = slot.load(std::memory_order_relaxed);
    while (seen < generation) {
      if (slot.compare_exchange_weak(seen, generation, std::memory_order_acq_rel, std::memory_order_relaxed)) {
        return true;
      }
    }
    return false;
  }

  /// Thread `self` of `threads` runs its own chunks in order (after the first `skip_own`, which
  /// it already ran), then whatever the others left unclaimed, from the end; returns how many
  /// it ran.
  Index serve(std::uint64_t generation, int self, int threads, Index chunks, Index skip_own) {
    const auto own_begin = static_cast<Index>(std::int64_t{chunks} * self / threads);
    const auto own_end = static_cast<Index>(std::int64_t{chunks} * (self + 1) / threads);
    Index ran = 0;
    for (Index c = own_begin + skip_own; c < own_end; ++c) {
      if (!claim(c, generation)) break;  // taken from the end by another thread: the rest too
      task_(context_, c);
      ++ran;
    }
    for (Index c = chunks - 1; c >= 0; --c) {
      if ((c < own_begin || c >= own_end) && claim(c, generation)) {
        task_(context_, c);
        ++ran;
      }
    }
    return ran;
  }

  /// Counts `ran` chunks as done, once per thread and region (not once per chunk: the
  /// counter's cache line moves between the cores on every update).
  void finish(Index ran, Index chunks) {
    if (ran == 0) return;
    if (done_.fetch_add(ran, std::memory_order_seq_cst) + ran == chunks &&
        caller_sleeping_.load(std::memory_order_seq_cst)) {
      const std::lock_guard lock(sleep_mutex_);
      all_done_.notify_one();
    }
  }

  void wait_for_done(Index chunks) {
    const auto done = [&] { return done_.load(std::memory_order_seq_cst) == chunks; };
    if (spin_until(kCallerSpin, done)) return;
    std::unique_lock lock(sleep_mutex_);
    caller_sleeping_.store(true, std::memory_order_seq_cst);
    all_done_.wait(lock, done);
    caller_sleeping_.store(false, std::memory_order_relaxed);
  }

  void work(int worker) {
    std::uint64_t served = 0;  // the last generation this worker looked at
    for (;;) {
      const std::uint64_t w = word_.load(std::memory_order_acquire);
      const std::uint64_t generation = RegionWord::generation(w);
      if (generation != served) {
        served = generation;
        if (worker <= RegionWord::helpers(w)) {
          // task_ and context_ are read only after a claim in serve: a region cannot end, and
          // the next one overwrite them, while one of its chunks is claimed and not done.
          finish(serve(generation, worker, RegionWord::helpers(w) + 1, RegionWord::chunks(w), 0), RegionWord::chunks(w));
        }
        continue;
      }
      if (!wait_for_work(served)) return;
    }
  }

  /// Waits until a region newer than `served` is posted; false when the pool stops.
  bool wait_for_work(std::uint64_t served) {
    const auto ready = [&] {
      return RegionWord::generation(word_.load(std::memory_order_seq_cst)) != served ||
             stopping_.load(std::memory_order_relaxed);
    };
    if (!spin_until(kWorkerSpin, ready)) {
      std::unique_lock lock(sleep_mutex_);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      work_posted_.wait(lock, ready);
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    return !stopping_.load(std::memory_order_relaxed);
  }

  /// The last generation that claimed a chunk, one cache line per chunk so that each thread's
  /// claims of its own chunks stay in its cache.
  struct alignas(64) ChunkClaim {
    std::atomic<std::uint64_t> generation{0};
  };

  std::mutex region_mutex_;  ///< one parallel region at a time
  std::vector<std::thread> workers_;
  std::uint64_t generation_ = 0;
  alignas(64) std::atomic<std::uint64_t> word_{0};
  ChunkTask task_ = nullptr;
  void* context_ = nullptr;
  alignas(64) std::atomic<Index> done_{0};  ///< chunks finished in the current region
  std::array<ChunkClaim, kMaxChunks> claimed_{};
  // Sleeping: a thread announces itself (sleepers_, caller_sleeping_) before it checks its
  // condition under sleep_mutex_, and the waker stores the condition before it reads the
  // announcement, so one of them always sees the other (no lost wake-up); a waker that sees
  // nobody asleep skips the mutex and the system call.
  std::mutex sleep_mutex_;
  std::condition_variable work_posted_;
  std::condition_variable all_done_;
  std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stopping_{false};
};

WorkerPool& pool() {
  static WorkerPool instance;
  return instance;
}

}  // namespace

void run_chunks(Index chunks, int threads, ChunkTask task, void* context) {
  if (threads > 1 && chunks > 1 && !t_in_region) {
    struct RegionFlag {
      RegionFlag() { t_in_region = true; }
      ~RegionFlag() { t_in_region = false; }
      RegionFlag(const RegionFlag&) = delete;
      RegionFlag& operator=(const RegionFlag&) = delete;
    } flag;
    if (pool().try_run(chunks, std::min(threads, kMaxThreads), task, context)) return;
  }
  for (Index chunk = 0; chunk < chunks; ++chunk) task(context, chunk);
}

}  // namespace cholsim::fem::detail
