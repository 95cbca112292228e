#include "fem/octree/octant.hpp"

namespace cholsim::fem::octree {
namespace {

/// True iff the highest set bit of p is below that of q (Chan 2002): no interleaving needed.
bool most_significant_bit_below(std::uint32_t p, std::uint32_t q) { return p < q && p < (p ^ q); }

/// Spreads the low 16 bits of v so that bit i lands on bit 3i.
std::uint64_t spread_bits(std::uint64_t v) {
  v &= 0xFFFFu;
  v = (v | (v << 16)) & 0x00000000FF0000FFull;
  v = (v | (v << 8)) & 0x000000F00F00F00Full;
  v = (v | (v << 4)) & 0x00000C30C30C30C3ull;
  v = (v | (v << 2)) & 0x0000249249249249ull;
  return v;
}

/// Inverse of spread_bits: gathers bits 3i into bit i.
std::uint32_t gather_bits(std::uint64_t v) {
  v &= 0x0000249249249249ull;
  v = (v | (v >> 2)) & 0x00000C30C30C30C3ull;
  v = (v | (v >> 4)) & 0x000000F00F00F00Full;
  v = (v | (v >> 8)) & 0x00000000FF0000FFull;
  v = (v | (v >> 16)) & 0xFFFFull;
  return static_cast<std::uint32_t>(v);
}

}  // namespace

bool morton_less(const Octant& a, const Octant& b) {
  const std::array<std::uint32_t, 3> differ{static_cast<std::uint32_t>(a.x ^ b.x), static_cast<std::uint32_t>(a.y ^ b.y),
                                            static_cast<std::uint32_t>(a.z ^ b.z)};
  // The coordinate holding the highest differing bit decides; z wins ties (most significant).
  int decisive = 2;
  for (int axis = 1; axis >= 0; --axis) {
    if (most_significant_bit_below(differ[static_cast<std::size_t>(decisive)], differ[static_cast<std::size_t>(axis)])) {
      decisive = axis;
    }
  }
  const std::array<std::uint32_t, 3> pa{a.x, a.y, a.z};
  const std::array<std::uint32_t, 3> pb{b.x, b.y, b.z};
  const auto d = static_cast<std::size_t>(decisive);
  if (pa[d] != pb[d]) return pa[d] < pb[d];
  return a.level > b.level;
}

std::uint64_t morton_key(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  return spread_bits(x) | (spread_bits(y) << 1) | (spread_bits(z) << 2);
}

std::array<std::uint32_t, 3> morton_point(std::uint64_t key) {
  return {gather_bits(key), gather_bits(key >> 1), gather_bits(key >> 2)};
}

}  // namespace cholsim::fem::octree
