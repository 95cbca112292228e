#include "factor/numeric/update_block_arena.hpp"

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

#include "linalg/huge_page_allocator.hpp"

namespace cholsim::factor {
namespace {

constexpr std::int64_t kHugePageBytes = std::int64_t{2} << 20;

std::int64_t round_up(std::int64_t bytes, std::int64_t unit) { return (bytes + unit - 1) / unit * unit; }

}  // namespace

UpdateBlockArena::UpdateBlockArena(std::int64_t capacity_bytes) : placement_(0) {
  if (capacity_bytes <= 0) return;
  // One huge page more than asked, so that the range can start on a huge-page boundary.
  const std::int64_t capacity = round_up(capacity_bytes, kHugePageBytes);
  const std::int64_t reserved = capacity + kHugePageBytes;
  void* mapping = ::mmap(nullptr, static_cast<std::size_t>(reserved), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) return;
  mapping_ = static_cast<char*>(mapping);
  mapped_bytes_ = reserved;
  const auto address = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(mapping_));
  start_ = mapping_ + (round_up(address, kHugePageBytes) - address);
  // A hint, and only on request (linalg/huge_page_allocator.hpp says why); 4 KiB pages otherwise.
  if (linalg::huge_pages_requested()) ::madvise(start_, static_cast<std::size_t>(capacity), MADV_HUGEPAGE);
  placement_ = FirstFitPlacement(capacity);
}

UpdateBlockArena::~UpdateBlockArena() {
  if (mapping_ != nullptr) ::munmap(mapping_, static_cast<std::size_t>(mapped_bytes_));
}

double* UpdateBlockArena::allocate(std::int64_t entries) {
  const std::lock_guard lock(mutex_);
  const auto offset = placement_.place(entries * static_cast<std::int64_t>(sizeof(double)));
  if (!offset) return nullptr;
  return reinterpret_cast<double*>(start_ + *offset);
}

void UpdateBlockArena::release(const double* block, std::int64_t entries) {
  const std::lock_guard lock(mutex_);
  const std::int64_t offset = reinterpret_cast<const char*>(block) - start_;
  placement_.remove(offset, entries * static_cast<std::int64_t>(sizeof(double)));
}

std::int64_t UpdateBlockArena::high_water_bytes() const {
  const std::lock_guard lock(mutex_);
  return placement_.high_water();
}

}  // namespace cholsim::factor
