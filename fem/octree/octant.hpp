#pragma once
// One octant of a linear octree (seed 001 §5) and the Morton (Z-curve) order its arrays are
// kept in. An octant is its anchor — the min corner in finest-grid integer coordinates — and
// its level, log2 of its edge in finest cells; 8 bytes, so one array of octants is the whole
// tree. Grid points (nodes) use the same integer coordinates, up to 2^15 inclusive.
#include <array>
#include <cstdint>

namespace cholsim::fem::octree {

/// §5: anchor (x, y, z) in finest cells, level = log2(edge in finest cells), flags free for use.
struct Octant {
  std::uint16_t x = 0;
  std::uint16_t y = 0;
  std::uint16_t z = 0;
  std::uint8_t level = 0;
  std::uint8_t flags = 0;
  friend constexpr bool operator==(const Octant& a, const Octant& b) {
    return a.x == b.x && a.y == b.y && a.z == b.z && a.level == b.level;
  }
};
static_assert(sizeof(Octant) == 8);

/// The deepest tree the 16-bit coordinates hold: grid points run to 2^15 inclusive.
inline constexpr int kMaxOctreeDepth = 15;

/// Morton order of the anchors, compared without interleaving through the xor trick of Chan
/// (2002) (§5); z is the most significant coordinate. Equal anchors: the coarser octant first,
/// so an ancestor precedes its descendants.
bool morton_less(const Octant& a, const Octant& b);

/// The interleaved Morton code z_n y_n x_n … z_0 y_0 x_0 of a grid point (48 bits): sorting
/// these sorts points as morton_less sorts anchors. Used where one integer sorts faster
/// than a comparison (the build's parallel sorts, binary searches).
std::uint64_t morton_key(std::uint32_t x, std::uint32_t y, std::uint32_t z);
inline std::uint64_t morton_key(const Octant& o) { return morton_key(o.x, o.y, o.z); }
/// The grid point of a Morton code (inverse of morton_key).
std::array<std::uint32_t, 3> morton_point(std::uint64_t key);

/// Edge in finest cells.
constexpr std::uint32_t octant_size(const Octant& o) { return std::uint32_t{1} << o.level; }
constexpr std::uint32_t octant_size(int level) { return std::uint32_t{1} << level; }

/// The ancestor of `o` at `level` (≥ o.level): anchor rounded down to that size.
constexpr Octant ancestor_at(const Octant& o, int level) {
  const auto mask = static_cast<std::uint16_t>(~(octant_size(level) - 1));
  return {static_cast<std::uint16_t>(o.x & mask), static_cast<std::uint16_t>(o.y & mask),
          static_cast<std::uint16_t>(o.z & mask), static_cast<std::uint8_t>(level), o.flags};
}

/// Which child of its parent `o` is, numbered like the corners (bit 0 x, bit 1 y, bit 2 z):
/// the corner of `o` it shares with its parent.
constexpr int child_number(const Octant& o) {
  return ((o.x >> o.level) & 1) | (((o.y >> o.level) & 1) << 1) | (((o.z >> o.level) & 1) << 2);
}

/// True iff the finest cell (x, y, z) lies in `o`.
constexpr bool octant_contains_cell(const Octant& o, std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  const std::uint32_t size = octant_size(o);
  return x - o.x < size && y - o.y < size && z - o.z < size;  // unsigned: below the anchor wraps
}

/// Grid point of local corner `corner` (bit 0 x, bit 1 y, bit 2 z; Fig. 7).
constexpr std::array<std::uint32_t, 3> corner_point(const Octant& o, int corner) {
  const std::uint32_t size = octant_size(o);
  return {o.x + ((corner & 1) ? size : 0u), o.y + ((corner & 2) ? size : 0u), o.z + ((corner & 4) ? size : 0u)};
}

}  // namespace cholsim::fem::octree
