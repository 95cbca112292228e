#include "linalg/huge_page_allocator.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <string_view>

namespace cholsim::linalg {

bool huge_pages_requested() {
  static const bool requested = [] {
    const char* value = std::getenv("CHOLSIM_HUGE_PAGES");
    return value != nullptr && std::string_view(value) == "1";
  }();
  return requested;
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
