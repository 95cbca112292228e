#pragma once
// An allocator for the few very large arrays of a factorization (the factor's values).
//
// Two things make a fresh multi-hundred-megabyte std::vector<double> slow on Linux, and both
// are paid on every factorization into new storage:
//  * value-initialization: resize() zero-fills memory the factorization overwrites anyway;
//  * first touch: every 4 KiB page faults once; on virtual machines a fault costs
//    microseconds, so touching 1 GB costs seconds (measured: a cold 32³-box factorization,
//    890 MB of L, took 9.7 s against 6.2 s warm).
// So elements are default-initialized (no zero fill), and allocations of at least
// `huge_page_threshold` bytes are 2 MiB-aligned. With the environment variable
// CHOLSIM_HUGE_PAGES=1 they are also marked MADV_HUGEPAGE, which lets transparent huge pages
// back them ("madvise" mode, Debian's default) — 512 times fewer faults.
//
// Why huge pages are not the default: what a first touch costs depends on the machine. On a
// Zen 4 VM they made a cold 32³ factorization 20 % faster (9.7 → 7.8 s). On the Intel VM of
// issue 23's measurements a huge page took 0.16 s/GB to fault when the kernel had one free
// and 1.4–1.9 s/GB when it had to compact memory for it (Debian's THP defrag setting makes
// MADV_HUGEPAGE regions wait for compaction), against a steady 0.41 s/GB for 4 KiB pages;
// after other libraries had fragmented the memory, the cold 32³ factorization took 3.0–3.3 s
// with huge pages and 2.2–2.3 s without, the 46³ 18.7 s and 17.8 s (bench_factor_vs_cholmod,
// docs/benchmarks.md). A warm refactorization into the same storage gains up to 8 % from them.
// Without THP support the hint is simply ignored.
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace cholsim::linalg {

/// True when CHOLSIM_HUGE_PAGES=1 was set at the first call: large arrays (and the update-block
/// arena, factor/numeric/update_block_arena.hpp) then ask for transparent huge pages.
bool huge_pages_requested();

/// Faults in the pages of `bytes` bytes at `data` now, on `threads` threads
/// (resolve_thread_count), instead of one at a time when the computation first writes them:
/// the kernel fills a range of pages in one call (Linux ≥ 5.14, MADV_POPULATE_WRITE; 0.24
/// s/GB here against 0.41 for page-by-page faults) and the threads fill their halves in
/// parallel. Cold 46³ factorization: 16.4 → 14.9 s (docs/benchmarks.md, issue 23). On older
/// kernels every page is written once instead. The contents are unspecified afterwards.
void populate_pages(void* data, std::size_t bytes, int threads);

namespace detail {
void* allocate_large(std::size_t bytes);
void release_large(void* pointer) noexcept;
}  // namespace detail

/// Owner of an uninitialized array from allocate_large (for buffers that are not vectors).
struct LargeArrayDeleter {
  void operator()(double* pointer) const noexcept { detail::release_large(pointer); }
};
using LargeArray = std::unique_ptr<double[], LargeArrayDeleter>;

inline LargeArray make_large_array(std::size_t count) {
  return LargeArray(static_cast<double*>(detail::allocate_large(count * sizeof(double))));
}

template <class T>
class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit

  T* allocate(std::size_t count) { return static_cast<T*>(detail::allocate_large(count * sizeof(T))); }
  void deallocate(T* pointer, std::size_t) noexcept { detail::release_large(pointer); }

  /// Default-initialization: for doubles, no zero fill.
  template <class U>
  void construct(U* pointer) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(pointer)) U;
  }
  template <class U, class... Args>
  void construct(U* pointer, Args&&... args) {
    ::new (static_cast<void*>(pointer)) U(std::forward<Args>(args)...);
  }

  friend bool operator==(const HugePageAllocator&, const HugePageAllocator&) { return true; }
};

}  // namespace cholsim::linalg
