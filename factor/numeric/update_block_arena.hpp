#pragma once
// One reserved address range that the update blocks of a factorization call are placed in
// (first_fit_placement.hpp says why). The range is reserved, not committed: pages exist once
// a block touches them, so the memory used is the placement's high-water mark, however large
// the reservation. Thread-safe: tree tasks place and free blocks concurrently.
#include <cstdint>
#include <mutex>

#include "factor/numeric/first_fit_placement.hpp"

namespace cholsim::factor {

class UpdateBlockArena {
 public:
  /// Reserves `capacity_bytes` of address space (2 MiB-aligned; transparent huge pages with
  /// CHOLSIM_HUGE_PAGES=1, linalg/huge_page_allocator.hpp). If the system refuses the
  /// reservation the arena stays empty and every allocate() returns null, so callers fall
  /// back to allocating blocks one by one.
  explicit UpdateBlockArena(std::int64_t capacity_bytes);
  ~UpdateBlockArena();
  UpdateBlockArena(const UpdateBlockArena&) = delete;
  UpdateBlockArena& operator=(const UpdateBlockArena&) = delete;

  /// Room for `entries` doubles (uninitialized), or null when the range has no room left.
  double* allocate(std::int64_t entries);
  /// Gives back a block allocate() returned for `entries`.
  void release(const double* block, std::int64_t entries);

  /// Bytes of the range ever used: the memory the arena holds at most.
  [[nodiscard]] std::int64_t high_water_bytes() const;

 private:
  mutable std::mutex mutex_;
  FirstFitPlacement placement_;
  char* mapping_ = nullptr;       ///< what mmap returned (null: no reservation)
  std::int64_t mapped_bytes_ = 0;
  char* start_ = nullptr;         ///< the first huge-page boundary in the mapping: offset 0
};

}  // namespace cholsim::factor
