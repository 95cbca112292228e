#include "fem/octree/balanced_octree.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "fem/octree/balanced_refinement.hpp"
#include "fem/octree/inside_classification.hpp"
#include "fem/octree/triangle_rasterization.hpp"

namespace cholsim::fem::octree {
namespace {

/// Cells of padding kept on every side of the surface's bounding box: the conservative
/// rasterization may mark the cell beside a box face, and leaf 0 must stay outside.
constexpr int kPaddingCells = 2;
constexpr int kMaxCellsAcross = (1 << kMaxOctreeDepth) - 2 * kPaddingCells;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// Depth, origin and cell size: the surface centred in the cube.
void place_grid(const SurfaceMesh& surface, int cells_across, BalancedOctree& tree) {
  const std::array<double, 6> box = bounding_box(surface.positions);
  const double longest = std::max({box[3] - box[0], box[4] - box[1], box[5] - box[2]});
  if (!(longest > 0.0)) throw OctreeInputError("octree: the surface is flat or a point (zero bounding box)");
  tree.depth = 1;
  while ((1 << tree.depth) < cells_across + 2 * kPaddingCells) ++tree.depth;
  tree.cell_size = longest / cells_across;
  const double half_cube = 0.5 * std::ldexp(tree.cell_size, tree.depth);
  const Vec3 centre{0.5 * (box[0] + box[3]), 0.5 * (box[1] + box[4]), 0.5 * (box[2] + box[5])};
  tree.origin = centre - Vec3{half_cube, half_cube, half_cube};
}

/// Morton codes of every finest cell of the inside leaves: an octant's cells are the
/// contiguous code range [code, code + 8^level), so the result comes out sorted.
std::vector<std::uint64_t> inside_cells(const BalancedOctree& tree) {
  std::vector<std::uint64_t> cells;
  for (std::size_t i = 0; i < tree.leaves.size(); ++i) {
    if (!tree.inside[i]) continue;
    const std::uint64_t first = morton_key(tree.leaves[i]);
    const std::uint64_t count = std::uint64_t{1} << (3 * tree.leaves[i].level);
    for (std::uint64_t k = 0; k < count; ++k) cells.push_back(first + k);
  }
  return cells;
}

/// The uniform baseline: the inside region refined to the finest level everywhere, which a
/// tree seeded with every inside cell is; its non-seed leaves are all outside.
void refine_inside_uniformly(BalancedOctree& tree, int threads) {
  const std::vector<std::uint64_t> cells = inside_cells(tree);
  tree.leaves = balanced_octree_from_seeds(tree.depth, cells, threads);
  tree.inside.resize(tree.leaves.size());
  std::transform(tree.leaves.begin(), tree.leaves.end(), tree.inside.begin(),
                 [](const Octant& o) -> std::uint8_t { return (o.flags & kSeedCellFlag) ? 1 : 0; });
}

}  // namespace

BalancedOctree build_balanced_octree(const SurfaceMesh& surface, const OctreeBuildOptions& options) {
  const Clock::time_point start = Clock::now();
  if (options.cells_across < 2 || options.cells_across > kMaxCellsAcross) {
    throw OctreeInputError("octree: cells_across " + std::to_string(options.cells_across) + " outside [2, " +
                           std::to_string(kMaxCellsAcross) + "]");
  }
  check_closed_surface(surface);
  BalancedOctree tree;
  place_grid(surface, options.cells_across, tree);

  Clock::time_point phase = Clock::now();
  const std::vector<std::uint64_t> surface_cells =
      rasterize_surface(surface, tree.depth, tree.origin, tree.cell_size, options.threads);
  tree.stats.surface_cells = static_cast<Index>(surface_cells.size());
  tree.stats.rasterize_seconds = seconds_since(phase);

  phase = Clock::now();
  tree.leaves = balanced_octree_from_seeds(tree.depth, surface_cells, options.threads);
  tree.stats.refine_seconds = seconds_since(phase);

  phase = Clock::now();
  InsideClassificationStats classification;
  tree.inside = classify_leaves(tree.leaves, tree.depth, surface, tree.origin, tree.cell_size, options.threads,
                                &classification);
  tree.stats.open_components = classification.components;
  tree.stats.classify_seconds = seconds_since(phase);

  if (options.uniform) refine_inside_uniformly(tree, options.threads);
  tree.stats.leaves = static_cast<Index>(tree.leaves.size());
  tree.stats.inside_leaves = static_cast<Index>(std::count(tree.inside.begin(), tree.inside.end(), 1));
  tree.stats.total_seconds = seconds_since(start);
  return tree;
}

}  // namespace cholsim::fem::octree
