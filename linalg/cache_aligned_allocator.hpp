#pragma once
// An allocator whose arrays start on a 64-byte cache line. For arrays read and written in
// 32-byte rows (the lane layout of factor::TiledSolveFactor::solve_lanes, which the
// operator-splitting step's element pass scatters into): with malloc's 16-byte alignment every
// other row straddles two cache lines, and a split load or store costs two accesses.
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
