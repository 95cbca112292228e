#pragma once
// Where the update blocks of one factorization call sit inside one address range.
//
// Why one range and not one allocation per block: a 32³ elasticity box allocates 2.0 GB of
// update blocks over a factorization whose live blocks never exceed 165 MB. Allocated one by
// one, every block arrives as fresh pages that the kernel zero-fills on first touch — 17 % of
// a one-thread factorization's samples were in the kernel's clear_page (docs/benchmarks.md,
// issue 23 item 2). Placed in one range, a block reuses the pages of the blocks already
// consumed, and only the range's high-water mark is ever touched fresh.
//
// Why first fit: the multifrontal order almost makes the live blocks a stack (a parent's
// block is placed while its children's are still held, then theirs are freed), and placing
// each block at the lowest offset where it fits refills the holes a finished subtree leaves
// with its sibling's blocks. On the elasticity boxes the high-water mark stays within
// 1.33–1.39× the live peak (best fit: 1.26–1.46×, not better across shapes). The placement is
// pure bookkeeping on offsets, so the memory estimate replays it exactly (memory_estimate.cpp).
#include <cstdint>
#include <map>
#include <optional>

namespace cholsim::factor {

class FirstFitPlacement {
 public:
  /// Offsets and lengths are multiples of this many bytes (a cache line: no two blocks share one).
  static constexpr std::int64_t alignment = 64;

  /// A range of `capacity` bytes, empty.
  explicit FirstFitPlacement(std::int64_t capacity) : capacity_(capacity) {}

  /// The lowest offset where `bytes` (rounded up to the alignment) fit, now taken; nothing when
  /// no gap and not the end of the range can hold them.
  std::optional<std::int64_t> place(std::int64_t bytes);
  /// Gives back the block of `bytes` placed at `offset` (both as place saw them).
  void remove(std::int64_t offset, std::int64_t bytes);

  /// The highest end of a block so far: the bytes of the range ever touched.
  [[nodiscard]] std::int64_t high_water() const { return high_water_; }
  [[nodiscard]] std::int64_t capacity() const { return capacity_; }

  [[nodiscard]] static std::int64_t rounded(std::int64_t bytes) {
    return (bytes + alignment - 1) / alignment * alignment;
  }

 private:
  std::int64_t capacity_;
  std::int64_t end_ = 0;         ///< one past the highest block still placed
  std::int64_t high_water_ = 0;  ///< the largest end_ so far
  std::map<std::int64_t, std::int64_t> gaps_;  ///< offset → length of each free gap below end_
};

}  // namespace cholsim::factor
