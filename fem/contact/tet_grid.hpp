#pragma once
// A uniform grid over a small subset of a tet mesh's tets, rebuilt at every new set of
// positions, for point location: the collision-prone tets of projective dynamics (seed 004
// §3.3, §4.2), against which every collision proxy is located in every inner iteration.
//
// Why a grid and not the TetBvh for that set: the collision-prone tets are a curved shell one
// or two tets thick (the inner elbow: 5,078 tets), whose subtrees' boxes overlap, so a query of
// the tree walked about 60 nodes and took 0.85 µs; the grid answers from the one cell holding
// the point, whose list holds the tets whose boxes reach it (cells about a tet's size: a
// handful). Rebuilding it costs about what refitting the tree did — two passes over the tets'
// boxes, no topology to keep. For a large set queried rarely (the collision-safe tets, once an
// outer iteration) the tree's refit is cheaper than a rebuild and stays the choice.
//
// The answers are the TetBvh's to the bit — the same candidates pass the same tests
// (TetAffineMap, then BestTetLocation) — except where two tets hold the point with exactly
// equal smallest weights (on a shared face): then the first candidate wins, and the grid's order
// (the subset's) is not the tree's.
#include <array>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "fem/contact/tet_bvh.hpp"
#include "linalg/index_types.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

class TetGrid {
 public:
  /// The grid over the tets `tet_ids` of the mesh whose connectivity is `tet_connectivity` (4
  /// node ids per tet) at `positions` (3 per node). The node ids of the chosen tets are copied;
  /// the spans need not outlive the grid. Throws std::invalid_argument for a tet id outside the
  /// connectivity or a node id outside `positions`. An empty subset finds nothing.
  TetGrid(std::span<const linalg::Index> tet_connectivity, std::vector<linalg::Index> tet_ids,
          std::span<const double> positions);

  /// Rebuilds the grid for new `positions` (same node numbering), the tets' vertices, maps and
  /// boxes on `threads` threads; the vertices are copied, so the caller's array may change
  /// afterwards. Tets with a coordinate that is not finite are left out (they contain no
  /// point). Throws std::invalid_argument when `positions` is too short for the grid's node ids.
  void refit(std::span<const double> positions, int threads = 1);

  /// As TetBvh::locate: the tet of the subset, not skipped, containing `point` at the positions
  /// of the last refit, with the largest smallest barycentric weight.
  [[nodiscard]] std::optional<TetLocation> locate(const linalg::Vec3& point,
                                                  const std::function<bool(linalg::Index tet)>& skip = {}) const;

  /// Number of tets in the subset.
  [[nodiscard]] std::size_t size() const { return tet_ids_.size(); }
  /// Cells along x, y and z (zeros when no tet has finite positions).
  [[nodiscard]] std::array<linalg::Index, 3> cell_counts() const { return cells_; }

 private:
  /// The cell holding `point` along each axis, or nothing when it lies outside the grid.
  [[nodiscard]] std::optional<std::array<linalg::Index, 3>> cell_of(const linalg::Vec3& point) const;
  /// Entry `entry`'s vertices from `positions`, and when they are finite its map and box.
  void take_vertices(std::size_t entry, std::span<const double> positions);
  /// The grid's origin, cell size and counts for the finite boxes of the tets.
  void size_cells();
  /// The cells of entry `entry`'s box, along each axis: first and last.
  [[nodiscard]] std::array<linalg::Index, 6> cell_range(std::size_t entry) const;
  [[nodiscard]] std::size_t cell_index(linalg::Index x, linalg::Index y, linalg::Index z) const;

  std::vector<linalg::Index> tet_ids_;                     ///< mesh tet id per entry
  std::vector<std::array<linalg::Index, 4>> tet_corners_;  ///< mesh node ids per entry
  std::size_t required_position_count_ = 0;                ///< 3 · (largest node id + 1)
  std::vector<std::array<linalg::Vec3, 4>> vertices_;      ///< per entry, as of the last refit
  std::vector<TetAffineMap> maps_;                         ///< per entry
  std::vector<linalg::Vec3> lower_, upper_;                ///< per entry: its box, padded
  std::vector<char> finite_;                               ///< per entry: all coordinates finite
  linalg::Vec3 origin_;
  double cell_size_ = 1.0;
  std::array<linalg::Index, 3> cells_{0, 0, 0};
  /// Per cell: where its entries start in cell_entries_ (64-bit: a few huge tets among many
  /// small ones may each reach many cells).
  std::vector<std::size_t> cell_start_;
  std::vector<linalg::Index> cell_entries_;  ///< entries by cell, each cell's in entry order
};

}  // namespace cholsim::fem
