#pragma once
// A bounding-volume hierarchy over a subset of a tet mesh's tets, for point location in the
// deformed configuration: the collision detection of projective dynamics with self-contact
// (seed 004 §3.3) asks, for every surface vertex, which tet of the (locally) colliding region
// contains it, and maps it to rest space with that tet's barycentric coordinates, where the
// rest-pose levelset answers depth and direction (seed 004 §5.1, [McAdams 2011]).
//
// Why the topology is built once and only the boxes follow the mesh: between time steps the
// tets move a little, so a tree split on the build-time centroids stays good while refit()
// recomputes every box bottom-up in one O(tets) pass.
//
// Layout: axis-aligned boxes in a flat array in depth-first order (a node's left child is the
// next node, its right child is stored), leaves holding up to kLeafSize consecutive entries of
// the tets reordered by the build. The tree keeps its own copy of its tets' vertex positions,
// numbered by first use in that order, so that a leaf's tets and their vertices are
// contiguous in memory: refit() gathers each vertex from the mesh once, and neither refit()
// nor locate() then reads the mesh's positions at random (both were bound by that latency —
// the 625K collision-safe tets of the 650K elbow took 7.7 ms a refit on two threads, 4.7 ms
// with the copy).
#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "linalg/cache_aligned_allocator.hpp"
#include "linalg/index_types.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

/// A point found inside a tet: the tet's id (as in the mesh) and the point's barycentric
/// coordinates, one per vertex in the tet's vertex order; they sum to 1 and Σ wᵢ·xᵢ = point.
struct TetLocation {
  linalg::Index tet = -1;
  std::array<double, 4> weights{};
};

/// The barycentric coordinates of `point` in the tet x₀..x₃ (either orientation), or nothing
/// when the tet is degenerate (|det[x₁−x₀, x₂−x₀, x₃−x₀]| ≤ 10⁻¹² × its longest box edge³).
std::optional<std::array<double, 4>> barycentric_weights(const std::array<linalg::Vec3, 4>& vertices,
                                                         const linalg::Vec3& point);

/// A point is inside a tet when all its weights are ≥ −kTetWeightTolerance, so that points on a
/// shared face are found in one of the two tets despite rounding.
inline constexpr double kTetWeightTolerance = 1e-10;

/// A tet's barycentric coordinates as an affine function of the point: w₁, w₂, w₃ =
/// rows·(point − origin), w₀ = 1 − w₁ − w₂ − w₃ (the inverse of the tet's edge matrix); NaN
/// rows for a degenerate tet. A first test for point location, a 3 × 3 product instead of
/// Cramer's rule: it rejects most candidates, and the weights of the rest still come from
/// barycentric_weights, so a locator that keeps maps (TetGrid) answers as one that does not
/// (TetBvh, whose large trees are refit more often than queried).
struct TetAffineMap {
  std::array<linalg::Vec3, 3> rows;
  linalg::Vec3 origin;
  [[nodiscard]] static TetAffineMap of(const std::array<linalg::Vec3, 4>& vertices);
  /// False when the map puts `point` clearly outside the tet (and for a degenerate tet).
  [[nodiscard]] bool may_contain(const linalg::Vec3& point) const;
};

/// The rule of every locator here, applied to its candidates one at a time: among the tets
/// that contain the point (weights ≥ −kTetWeightTolerance, degenerate tets never), the one
/// with the largest smallest weight — the point deepest inside; the first such of equals.
class BestTetLocation {
 public:
  void consider(linalg::Index tet, const std::array<linalg::Vec3, 4>& vertices, const linalg::Vec3& point);
  [[nodiscard]] const std::optional<TetLocation>& result() const { return best_; }

 private:
  std::optional<TetLocation> best_;
  double best_smallest_weight_ = -1.0;  ///< below every accepted weight
};

/// The node ids of the tets `tet_ids` of `tet_connectivity` (4 per tet), in that order. Throws
/// std::invalid_argument, naming `who`, for a tet id outside the connectivity or a node id
/// outside the nodes of `positions` (3 coordinates each).
std::vector<std::array<linalg::Index, 4>> checked_tet_corners(std::span<const linalg::Index> tet_connectivity,
                                                              std::span<const linalg::Index> tet_ids,
                                                              std::span<const double> positions, const char* who);

/// An AABB tree over a subset of the tets of a mesh, split at the median centroid along the
/// longest axis. Queries are const and thread-safe; refit() is not (call it between queries).
class TetBvh {
 public:
  /// Tets per leaf at most: small enough that a query tests few tets, large enough that the
  /// tree has 4× fewer nodes than tets.
  static constexpr std::size_t kLeafSize = 4;
  static constexpr double kWeightTolerance = kTetWeightTolerance;

  /// Builds the tree over the tets `tet_ids` of the mesh whose connectivity is
  /// `tet_connectivity` (4 node ids per tet) at `positions` (3 per node). The node ids of the
  /// chosen tets are copied; the spans need not outlive the tree. Throws
  /// std::invalid_argument for a tet id outside the connectivity or a node id outside
  /// `positions`. An empty subset gives a tree that finds nothing.
  TetBvh(std::span<const linalg::Index> tet_connectivity, std::vector<linalg::Index> tet_ids,
         std::span<const double> positions);

  /// Takes the new `positions` (same node numbering) and recomputes every box without
  /// changing the tree: O(tets), on `threads` threads (the boxes do not depend on their
  /// number), allocating only the list of the subtrees the threads share. Throws std::invalid_argument when `positions` is too short for the node
  /// ids the tree holds.
  void refit(std::span<const double> positions, int threads = 1);

  /// The tet of the subset, not skipped, that contains `point` at the positions of the last
  /// build or refit, with its barycentric coordinates. When several contain it (a shared face, or overlapping tets of a
  /// self-intersecting mesh) the one with the largest smallest weight — the point deepest
  /// inside — is returned. `skip(tet)`, when given, excludes a tet (e.g. the tets incident to
  /// the vertex being tested). Degenerate tets are never returned; inverted ones can be.
  [[nodiscard]] std::optional<TetLocation> locate(const linalg::Vec3& point,
                                                  const std::function<bool(linalg::Index tet)>& skip = {}) const;

  /// Number of tets in the tree.
  [[nodiscard]] std::size_t size() const { return tet_ids_.size(); }
  /// Number of tree nodes (leaves included).
  [[nodiscard]] std::size_t node_count() const { return nodes_.size(); }
  /// The box {min x, min y, min z, max x, max y, max z} of all the tets (zeros when empty).
  [[nodiscard]] std::array<double, 6> bounds() const;

 private:
  struct Node {
    linalg::Vec3 lower;
    linalg::Vec3 upper;
    /// A leaf when leaf_count > 0: its tets are entries [first, first + leaf_count) of the
    /// reordered arrays. An inner node: its left child is the next node, its right child
    /// is node `first`.
    linalg::Index first = 0;
    linalg::Index leaf_count = 0;
  };

  linalg::Index build_subtree(std::vector<linalg::Vec3>& centroids, linalg::Index begin, linalg::Index end);
  void check_positions(std::span<const double> positions, const char* caller) const;
  /// Subtrees per thread that refit() hands out: several, so that a late thread's share is
  /// taken by the other.
  static constexpr int kSubtreesPerThread = 8;
  /// The roots of the subtrees `depth` levels below `node` (leaves above that depth included).
  void collect_subtrees(linalg::Index node, int depth, std::vector<linalg::Index>& roots) const;
  /// One past the last node of `node`'s subtree in the depth-first array.
  [[nodiscard]] linalg::Index subtree_end(linalg::Index node) const;
  /// The boxes of the inner nodes fewer than `depth` levels below `node`, from their children.
  void fit_above_subtrees(linalg::Index node, int depth);
  /// A node's box: a leaf's from its tets' vertex_positions_, an inner node's from its children.
  void fit_node(linalg::Index index);
  /// vertex_nodes_, and tet_corners_ turned from mesh node ids into local ids, in leaf order.
  void number_vertices_in_leaf_order();
  /// An entry's vertices at the positions of the last refit.
  [[nodiscard]] std::array<linalg::Vec3, 4> tet_vertices(std::size_t entry) const;

  std::vector<Node> nodes_;
  std::vector<linalg::Index> tet_ids_;                     ///< mesh tet id of each entry, in leaf order
  std::vector<std::array<linalg::Index, 4>> tet_corners_;  ///< local vertex ids of each entry
  std::vector<linalg::Index> vertex_nodes_;                ///< mesh node of each local vertex
  /// By local id, as of the last refit: x, y, z and a zero, so that a leaf's box is fit a
  /// vertex at a time in vector registers.
  linalg::CacheAlignedVector<std::array<double, 4>> vertex_positions_;
  std::size_t required_position_count_ = 0;                ///< 3 · (largest node id + 1)
};

}  // namespace cholsim::fem
