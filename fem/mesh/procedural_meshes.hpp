#pragma once
// Procedural tetrahedral meshes for default scenes, tests and benchmarks: a box/bar, a ball,
// a torus, and the thin sheet of seed 000 §5.1. All positively oriented and conforming.
#include "fem/mesh/tet_mesh.hpp"

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

}  // namespace cholsim::fem
