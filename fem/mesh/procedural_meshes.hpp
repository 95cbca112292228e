#pragma once
// Procedural tetrahedral meshes for default scenes, tests and benchmarks: a box/bar, a ball,
// a torus, the thin sheet of seed 000 §5.1, and any shape given by a signed distance (the
// size-controlled scenes of seed 004 §5). All positively oriented and conforming.
#include <array>
#include <functional>

#include "fem/mesh/tet_mesh.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

/// Box [0, size_x]×[0, size_y]×[0, size_z] with `cells` cube-ish cells along its longest
/// side (others scaled to keep cells near-cubic), 6 Kuhn tets per cell
/// (linalg::structured_tet_box). Throws std::invalid_argument for non-positive sizes.
TetMesh make_box_mesh(double size_x, double size_y, double size_z, Index cells_along_longest);

/// Ball of `radius` centred at the origin, about `cells_across` tet layers across its
/// diameter (rounded up to even): a Kuhn-subdivided cube mapped radially onto the ball, every
/// boundary node on the sphere. The mesh is inscribed, so its volume is a little below
/// 4/3·π·r³ (−0.8% at 12 cells across, −3% at 6; second order in the cell size).
TetMesh make_sphere_mesh(double radius, Index cells_across);

/// Torus around the z axis: tube centre radius `major_radius`, tube radius `minor_radius`,
/// `cells_around` (≥ 3) cells along the ring and about `cells_across` (rounded up to even)
/// across the tube: a periodic Kuhn bar swept around the axis, its square section mapped onto
/// the tube's disk. Throws std::invalid_argument unless 0 < minor_radius < major_radius.
TetMesh make_torus_mesh(double major_radius, double minor_radius, Index cells_around,
                        Index cells_across);

/// The thin sheet of seed 000 §5.1: width × width in x–y, `thickness` in z (default 1 m ×
/// 1 m × 0.1 mm), one cell layer through the thickness, `cells_along_side` cells per side:
/// [0, width]² × [0, thickness], 6·cells² Kuhn tets.
TetMesh make_sheet_mesh(double width, double thickness, Index cells_along_side);

/// A shape given implicitly: negative inside, positive outside. Only the sign is used by the
/// mesher; a true distance makes the shape easy to combine (min = union, max = intersection).
using SignedDistance = std::function<double(const linalg::Vec3&)>;

/// Voxel mesh of the shape {signed_distance < 0} inside `bounding_box` {min x, min y, min z,
/// max x, max y, max z}: a regular grid of cubes of edge `cell_size`, centred on the box and
/// covering it (⌈extent / cell_size⌉ cubes per axis), keeps every cube whose centre is inside
/// and cuts it into the 6 Kuhn tets of linalg::structured_tet_box — the same diagonal in every
/// cube, so neighbouring cubes conform. Only the nodes of kept cubes are numbered (in grid
/// order, x fastest); all tets are positively oriented with volume cell_size³/6. The boundary
/// is a staircase within one cell of the true surface. Throws std::invalid_argument for a
/// non-positive cell size, an empty box, a grid too large for Index, or no cube inside.
TetMesh make_implicit_mesh(const SignedDistance& signed_distance, const std::array<double, 6>& bounding_box,
                           double cell_size);

/// The lowest corner of the cube grid make_implicit_mesh lays over `bounding_box` at
/// `cell_size`: scenes use it to align a feature with the cells (a slit between cell layers).
linalg::Vec3 implicit_grid_origin(const std::array<double, 6>& bounding_box, double cell_size);

/// How many cubes make_implicit_mesh(signed_distance, bounding_box, cell_size) keeps (its tet
/// count / 6), without building them.
Index count_implicit_cells(const SignedDistance& signed_distance, const std::array<double, 6>& bounding_box,
                           double cell_size);

/// A cell size for which make_implicit_mesh gives about `target_tets` tets: starts from the
/// box volume and rescales by ∛(counted / target) from kept-cube counts (at most 4); if that
/// is not within 2 % — the count jumps by whole layers on coarse boxy shapes — bisects the
/// cell size between counts above and below the target. Returns the size of the closest count
/// seen: within 2 % where some size achieves it, else at the nearest jump (a box whose sides
/// are in small whole ratios steps along all axes at once: ±10 % at ~15 cells across). Throws
/// std::invalid_argument for target_tets < 6.
double cell_size_for_tet_count(const SignedDistance& signed_distance, const std::array<double, 6>& bounding_box,
                               Index target_tets);

/// A shape with features sized in cells (a slit two cells wide): the shape to mesh at a cell size.
using CellSizedShape = std::function<SignedDistance(double cell_size)>;

/// cell_size_for_tet_count for a shape that changes with the cell size: each count meshes
/// shape_at(cell size), so the result fits make_implicit_mesh(shape_at(h), bounding_box, h).
double cell_size_for_tet_count(const CellSizedShape& shape_at, const std::array<double, 6>& bounding_box,
                               Index target_tets);

}  // namespace cholsim::fem
