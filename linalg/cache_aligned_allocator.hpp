#pragma once
// An allocator whose arrays start on a 64-byte cache line. For arrays read and written in
// 32-byte rows (fem/node_blocks, the lane layout of factor::TiledSolveFactor::solve_lanes):
// malloc's 16-byte alignment splits every other row across two cache lines, and a split store
// costs two and is not forwarded to the next load of the row (measured on the 3.7K-tet
// armadillo: its volume-constraint sweep took 35% longer with unaligned rows).
#include <cstddef>
#include <new>
#include <vector>

namespace cholsim::linalg {

inline constexpr std::size_t kCacheLineBytes = 64;

template <class T>
class CacheAlignedAllocator {
 public:
  using value_type = T;

  CacheAlignedAllocator() = default;
  template <class U>
  CacheAlignedAllocator(const CacheAlignedAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit

  T* allocate(std::size_t count) {
    return static_cast<T*>(::operator new(count * sizeof(T), std::align_val_t{kCacheLineBytes}));
  }
  void deallocate(T* pointer, std::size_t) noexcept { ::operator delete(pointer, std::align_val_t{kCacheLineBytes}); }

  friend bool operator==(const CacheAlignedAllocator&, const CacheAlignedAllocator&) { return true; }
};

template <class T>
using CacheAlignedVector = std::vector<T, CacheAlignedAllocator<T>>;

}  // namespace cholsim::linalg
