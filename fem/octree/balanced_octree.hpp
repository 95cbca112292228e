#pragma once
// Seed 001 §6: the octree of an elastic object, built from its closed triangle surface —
// rasterize the triangles at the finest level, refine to a complete 2:1 balanced octree,
// classify every leaf inside or outside. Kept only during set-up; the simulation meshes of
// every multigrid level are made from it (octree_mesh.hpp).
#include <cstdint>
#include <vector>

#include "fem/mesh/tet_mesh.hpp"
#include "fem/octree/octant.hpp"
#include "fem/octree/surface_checks.hpp"

namespace cholsim::fem::octree {

/// What build_balanced_octree did, for the user studying it.
struct OctreeBuildStats {
  linalg::Index surface_cells = 0;     ///< finest cells the triangles overlap
  linalg::Index leaves = 0;
  linalg::Index inside_leaves = 0;
  linalg::Index open_components = 0;   ///< face-connected groups of leaves off the surface
  double rasterize_seconds = 0.0;
  double refine_seconds = 0.0;         ///< complete + 2:1 balance
  double classify_seconds = 0.0;
  double total_seconds = 0.0;
};

/// A complete, 2:1 balanced (across faces, edges and corners) linear octree over a cube of
/// 2^depth finest cells, each leaf classified.
struct BalancedOctree {
  int depth = 0;                     ///< the cube is 2^depth finest cells across (depth ≤ 15)
  Vec3 origin;                       ///< world position of grid point (0,0,0)
  double cell_size = 0.0;            ///< world edge of a finest cell
  std::vector<Octant> leaves;        ///< Morton order, complete, balanced
  std::vector<std::uint8_t> inside;  ///< per leaf: 1 = overlaps the solid
  OctreeBuildStats stats;
};

struct OctreeBuildOptions {
  /// Finest cells across the surface's longest bounding-box side, in [2, 32764]. The cube
  /// adds at least two cells of padding on every side and rounds up to a power of two.
  int cells_across = 256;
  /// Every inside leaf at the finest level: the paper's uniform-grid baseline (§8), same code.
  bool uniform = false;
  /// Threads for the parallel loops and sorts; ≤ 0: all the hardware has.
  int threads = 0;
};

/// §6: rasterizes the triangles at the finest level (conservative triangle–box overlap),
/// refines to the coarsest complete 2:1 balanced octree holding those cells as leaves, and
/// classifies: a leaf the surface touches is inside, any other is inside iff its centre is
/// inside the surface. Throws OctreeInputError for a surface that is empty, open,
/// non-manifold, inconsistently oriented, flat (zero bounding box), or has NaN/Inf
/// coordinates, and for cells_across out of range.
BalancedOctree build_balanced_octree(const SurfaceMesh& surface, const OctreeBuildOptions& options = {});

}  // namespace cholsim::fem::octree
