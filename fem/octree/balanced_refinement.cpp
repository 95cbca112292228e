#include "fem/octree/balanced_refinement.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>

#include <tbb/parallel_sort.h>

#include "linalg/parallel_loops.hpp"

namespace cholsim::fem::octree {
namespace {

using linalg::Index;

/// Marks a candidate that fell outside the cube.
constexpr std::uint64_t kNoOctant = ~std::uint64_t{0};

/// Morton code of the anchor of the level-`level` ancestor of a point: the low 3·level bits
/// cleared, since they interleave the low `level` bits of x, y and z.
std::uint64_t ancestor_key(std::uint64_t key, int level) { return key & ~((std::uint64_t{1} << (3 * level)) - 1); }

void sort_unique(std::vector<std::uint64_t>& keys, int threads) {
  linalg::thread_arena(linalg::resolve_thread_count(threads)).execute([&] { tbb::parallel_sort(keys.begin(), keys.end()); });
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
}

/// The octants of level `level` that some split octant of level `level` − 1 touches: for each,
/// its parent and the parent's neighbours on its side (per axis: the parent's slab and the
/// one beyond the split octant's outer face), 8 in all, minus those outside the cube.
std::vector<std::uint64_t> octants_touching(std::span<const std::uint64_t> split_below, int level, int depth, int threads) {
  const auto parent_size = static_cast<std::int64_t>(octant_size(level));
  const std::int64_t cube = std::int64_t{1} << depth;
  std::vector<std::uint64_t> candidates(8 * split_below.size(), kNoOctant);
  linalg::parallel_chunks(static_cast<Index>(split_below.size()), threads, [&](Index begin, Index end) {
    for (Index i = begin; i < end; ++i) {
      const auto point = morton_point(split_below[static_cast<std::size_t>(i)]);
      std::array<std::array<std::int64_t, 2>, 3> slabs{};
      for (std::size_t axis = 0; axis < 3; ++axis) {
        const std::int64_t parent_anchor = point[axis] & ~(parent_size - 1);
        const bool upper_child = point[axis] != parent_anchor;
        slabs[axis] = {parent_anchor, parent_anchor + (upper_child ? parent_size : -parent_size)};
      }
      for (int k = 0; k < 8; ++k) {
        const std::int64_t x = slabs[0][k & 1], y = slabs[1][(k >> 1) & 1], z = slabs[2][(k >> 2) & 1];
        if (x < 0 || y < 0 || z < 0 || x >= cube || y >= cube || z >= cube) continue;
        candidates[8 * static_cast<std::size_t>(i) + static_cast<std::size_t>(k)] =
            morton_key(static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y), static_cast<std::uint32_t>(z));
      }
    }
  });
  sort_unique(candidates, threads);
  if (!candidates.empty() && candidates.back() == kNoOctant) candidates.pop_back();
  return candidates;
}

/// Leaf packed for one integer sort: Morton code, then level, then the seed flag.
std::uint64_t pack_leaf(std::uint64_t key, int level, bool seed) {
  return (key << 5) | (static_cast<std::uint64_t>(level) << 1) | (seed ? 1u : 0u);
}

Octant unpack_leaf(std::uint64_t packed) {
  const auto point = morton_point(packed >> 5);
  return {static_cast<std::uint16_t>(point[0]), static_cast<std::uint16_t>(point[1]), static_cast<std::uint16_t>(point[2]),
          static_cast<std::uint8_t>((packed >> 1) & 0xF), static_cast<std::uint8_t>((packed & 1) ? kSeedCellFlag : 0)};
}

/// Appends (packed) the children of the split octants of `level` that are not split.
void append_leaf_children(std::span<const std::uint64_t> split, std::span<const std::uint64_t> split_below,
                          std::span<const std::uint64_t> seed_cells, int level, int threads,
                          std::vector<std::uint64_t>& leaves) {
  std::mutex merge;
  linalg::parallel_chunks(static_cast<Index>(split.size()), threads, [&](Index begin, Index end) {
    std::vector<std::uint64_t> found;
    for (Index i = begin; i < end; ++i) {
      for (std::uint64_t k = 0; k < 8; ++k) {
        const std::uint64_t child = split[static_cast<std::size_t>(i)] | (k << (3 * (level - 1)));
        if (std::binary_search(split_below.begin(), split_below.end(), child)) continue;
        const bool seed = level == 1 && std::binary_search(seed_cells.begin(), seed_cells.end(), child);
        found.push_back(pack_leaf(child, level - 1, seed));
      }
    }
    const std::lock_guard lock(merge);
    leaves.insert(leaves.end(), found.begin(), found.end());
  });
}

}  // namespace

std::vector<Octant> balanced_octree_from_seeds(int depth, std::span<const std::uint64_t> seed_cells, int threads) {
  if (depth < 1 || depth > kMaxOctreeDepth) {
    throw std::invalid_argument("balanced_octree_from_seeds: depth " + std::to_string(depth) + " outside [1, 15]");
  }
  if (seed_cells.empty()) return {Octant{0, 0, 0, static_cast<std::uint8_t>(depth), 0}};
  // split[l]: the octants of level l that are split, as sorted Morton codes of their anchors.
  std::vector<std::vector<std::uint64_t>> split(static_cast<std::size_t>(depth) + 1);
  split[1].resize(seed_cells.size());
  std::transform(seed_cells.begin(), seed_cells.end(), split[1].begin(), [](std::uint64_t key) { return ancestor_key(key, 1); });
  split[1].erase(std::unique(split[1].begin(), split[1].end()), split[1].end());
  for (int level = 2; level <= depth; ++level) {
    split[static_cast<std::size_t>(level)] = octants_touching(split[static_cast<std::size_t>(level) - 1], level, depth, threads);
  }
  std::vector<std::uint64_t> packed;
  for (int level = 1; level <= depth; ++level) {
    const std::span<const std::uint64_t> below =
        level > 1 ? std::span<const std::uint64_t>(split[static_cast<std::size_t>(level) - 1]) : std::span<const std::uint64_t>();
    append_leaf_children(split[static_cast<std::size_t>(level)], below, seed_cells, level, threads, packed);
  }
  split.clear();
  linalg::thread_arena(linalg::resolve_thread_count(threads)).execute([&] { tbb::parallel_sort(packed.begin(), packed.end()); });
  std::vector<Octant> leaves(packed.size());
  linalg::parallel_chunks(static_cast<Index>(packed.size()), threads, [&](Index begin, Index end) {
    for (Index i = begin; i < end; ++i) leaves[static_cast<std::size_t>(i)] = unpack_leaf(packed[static_cast<std::size_t>(i)]);
  });
  return leaves;
}

}  // namespace cholsim::fem::octree
