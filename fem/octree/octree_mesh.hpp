#pragma once
// The simulation mesh of one multigrid level on a linear octree (seed 001 §3, §5, §7.1):
// elements, their conforming nodes and hanging-node codes, and the W gather/scatter of §3.2.
//
// Elements are the balanced tree's leaves coarsened to at least 2^min_level finest cells,
// kept where they cover an inside leaf. Coarsening the *complete* balanced tree keeps it
// complete and balanced (a leaf's level becomes max(level, min_level), which keeps neighbour
// levels within one), so the kept subset is balanced and a hanging node's conforming node
// is never itself hanging (no chains): a level-(l+1) element's corners lie on the level-(l+1)
// lattice, and a level-(l+2) element holding one inside an edge or face would touch the
// level-l element that made it a conforming node.
//
// Hanging nodes, for element E of level l, child c of its parent (the corner E shares with it),
// primary corner a, d = a xor c (the axes along which a sits in the middle of the parent):
//  * |d| = 1: a is the midpoint of a parent edge; it hangs iff a kept level-(l+1) element
//    has that edge. Its conforming node is the edge's far end 2·p_a − p_c and
//    x_a = (x̃_c + x̃_a)/2.
//  * |d| = 2: a is a parent face centre; it hangs iff the level-(l+1) octant across that face
//    is kept. Then the face's edge midpoints (corners c^i, c^j of E) hang too, and
//    x_a = (x̃_c + x̃_{c^i} + x̃_{c^j} + x̃_a)/4, x̃_a being the face corner opposite p_c.
//  * |d| = 0 or 3 (the parent's corner or centre): never hangs.
// So W has entries 1, 1/2, 1/4, and the hanging byte with c (from the anchor) is all of it.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "fem/octree/balanced_octree.hpp"

namespace cholsim::fem::octree {

/// An element's conforming nodes. 32-bit: half the bytes of linalg::Index for the array every
/// element loop reads (make_octree_mesh refuses a mesh of 2^31 nodes or more).
using ElementNodes = std::array<std::int32_t, 8>;

struct OctreeMesh {
  int depth = 0;           ///< as the BalancedOctree it was made from
  Vec3 origin;             ///< world position of grid point (0,0,0)
  double cell_size = 0.0;  ///< world edge of a finest cell
  int min_level = 0;       ///< no element is finer than 2^min_level cells
  std::vector<Octant> elements;                               ///< Morton order
  std::vector<std::array<std::uint16_t, 3>> node_grid;        ///< node grid points (finest units), Morton order
  std::vector<ElementNodes> conforming_nodes;                  ///< per element; local corner a = bit0 x | bit1 y | bit2 z (Fig. 7)
  std::vector<std::uint8_t> hanging;                          ///< per element: bit a set iff primary node a hangs (§5)

  [[nodiscard]] linalg::Index element_count() const { return static_cast<linalg::Index>(elements.size()); }
  [[nodiscard]] linalg::Index node_count() const { return static_cast<linalg::Index>(node_grid.size()); }
  [[nodiscard]] Vec3 node_position(linalg::Index node) const;  ///< world
  /// Every node's world position, 3 values per node: the mesh at rest.
  [[nodiscard]] std::vector<double> node_positions() const;
  [[nodiscard]] double element_size(linalg::Index e) const;    ///< world edge h
  [[nodiscard]] Vec3 element_origin(linalg::Index e) const;    ///< world min corner

  /// §3.2: x_a = Σ_b W_ab x̃_b for the 8 primary nodes of `e`, from `nodal` (3 values per node).
  void gather(linalg::Index e, std::span<const double> nodal, std::array<Vec3, 8>& primary) const;
  /// f̃_b += Σ_a W_ab f_a into `nodal` (3 per node): the transpose of gather (§3.2, forces).
  void scatter_add(linalg::Index e, const std::array<Vec3, 8>& primary, std::span<double> nodal) const;
  /// scatter_add onto only the conforming nodes n with owner[n] == block: one Morton block's
  /// share in a parallel element loop (§9, Algorithm 2).
  void scatter_add_owned(linalg::Index e, const std::array<Vec3, 8>& primary, std::span<double> nodal,
                         std::span<const linalg::Index> owner, linalg::Index block) const;
  /// W_ab = Ñ_b(ξ_a): rows a = primary nodes, columns b = conforming nodes of e (local order).
  [[nodiscard]] std::array<std::array<double, 8>, 8> interpolation_matrix(linalg::Index e) const;
  /// Bytes of everything it holds (capacities).
  [[nodiscard]] std::size_t memory_bytes() const;
};

/// §3, §5, §7.1: the mesh of the leaves of `tree` coarsened to at least 2^min_level cells
/// (0 ≤ min_level ≤ tree.depth), kept where they cover an inside leaf; nodes numbered in Morton
/// order of their grid points. Throws std::invalid_argument for min_level out of range.
OctreeMesh make_octree_mesh(const BalancedOctree& tree, int min_level, int threads = 0);

/// The element holding finest cell `cell` (grid units), if one is kept there.
std::optional<linalg::Index> element_containing_cell(const OctreeMesh& mesh, const std::array<std::uint32_t, 3>& cell);

/// A point in an element: trilinear coordinates ξ ∈ [0,1]^3 of its primary nodes.
struct ElementPoint {
  linalg::Index element = 0;
  Vec3 xi;
};
/// The element holding world point `world` and ξ there, by binary search in Morton order
/// (§6); a point on a face shared by two elements gets either. Empty outside every element.
std::optional<ElementPoint> locate_point(const OctreeMesh& mesh, const Vec3& world);
/// locate_point for a point in finest-grid units (exact for grid points: no round trip
/// through world coordinates).
std::optional<ElementPoint> locate_grid_point(const OctreeMesh& mesh, const Vec3& grid);
/// Weights of a point w.r.t. its element's conforming nodes: Ñ_b(ξ) = Σ_a W_ab N_a(ξ) (§3.2).
std::array<double, 8> conforming_weights(const OctreeMesh& mesh, const ElementPoint& p);

}  // namespace cholsim::fem::octree
