#pragma once
// Seed 001 §6, second step: from the finest octants the surface touches to a complete,
// 2:1 balanced linear octree (§3.1: "the ratio of the edge lengths of adjacent elements may
// not exceed 2:1", across faces, edges and corners).
//
// Instead of completing between consecutive octants and then rippling the balance
// (Sundar et al. 2008), the tree is grown level by level from the bottom: an octant of
// level l must be split iff it contains a seed cell, or a split octant of level l−1 touches
// it (else a leaf of level ≤ l−2 would touch a leaf of level l). Those touching octants are
// the parent of each split octant and the parent's 7 neighbours on the split octant's side,
// so each level is one sorted, de-duplicated array computed from the one below. The leaves
// are the children of split octants that are not split themselves; the result is complete
// and the coarsest balanced tree holding the seeds at the finest level.
#include <cstdint>
#include <span>
#include <vector>

#include "fem/octree/octant.hpp"

namespace cholsim::fem::octree {

/// Octant::flags bit set on a finest leaf that is one of the seed cells.
inline constexpr std::uint8_t kSeedCellFlag = 1;

/// The leaves, in Morton order, of the coarsest complete 2:1 balanced octree over a cube of
/// 2^depth finest cells (1 ≤ depth ≤ 15) in which every cell of `seed_cells` (Morton codes
/// of finest cells, sorted, each once, inside the cube) is a leaf; those leaves carry
/// kSeedCellFlag. No seeds: the root alone.
std::vector<Octant> balanced_octree_from_seeds(int depth, std::span<const std::uint64_t> seed_cells, int threads);

}  // namespace cholsim::fem::octree
