#include "linalg/huge_page_allocator.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "linalg/parallel_loops.hpp"

namespace cholsim::linalg {
namespace {

#ifdef MADV_POPULATE_WRITE
constexpr int kPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kPopulateWrite = 23;  // Linux's value; older kernels answer EINVAL
#endif

}  // namespace

bool huge_pages_requested() {
  static const bool requested = [] {
    const char* value = std::getenv("CHOLSIM_HUGE_PAGES");
    return value != nullptr && std::string_view(value) == "1";
  }();
  return requested;
}

void populate_pages(void* data, std::size_t bytes, int threads) {
  constexpr std::size_t page = 4096;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + page - 1) / page * page;  // whole pages only
  const std::uintptr_t end = (begin + bytes) / page * page;
  if (end <= first) return;
  const auto pages = static_cast<Index>((end - first) / page);
  parallel_chunks(pages, threads, [&](Index from, Index to) {
    char* range = reinterpret_cast<char*>(first + static_cast<std::uintptr_t>(from) * page);
    const std::size_t length = static_cast<std::size_t>(to - from) * page;
    if (::madvise(range, length, kPopulateWrite) == 0) return;
    for (std::size_t offset = 0; offset < length; offset += page) range[offset] = 0;  // older kernels
  });
}

}  // namespace cholsim::linalg

namespace cholsim::linalg::detail {
namespace {
constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;
constexpr std::size_t huge_page_threshold = 8 * huge_page_bytes;
}  // namespace

void* allocate_large(std::size_t bytes) {
  if (bytes < huge_page_threshold) {
    if (void* pointer = std::malloc(bytes == 0 ? 1 : bytes)) return pointer;
    throw std::bad_alloc();
  }
  const std::size_t rounded = (bytes + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
  void* pointer = std::aligned_alloc(huge_page_bytes, rounded);
  if (pointer == nullptr) throw std::bad_alloc();
  if (huge_pages_requested()) ::madvise(pointer, rounded, MADV_HUGEPAGE);  // a hint: failure means 4 KiB pages
  return pointer;
}

void release_large(void* pointer) noexcept { std::free(pointer); }

}  // namespace cholsim::linalg::detail
