#pragma once
// Procedural tetrahedral meshes for default scenes, tests and benchmarks: a box/bar, a ball,
// a torus, and the thin sheet of seed 000 §5.1. All positively oriented and conforming.
#include "fem/tet_mesh.hpp"

namespace cholsim::fem {

/// Box [0, size_x]×[0, size_y]×[0, size_z] with `cells` cube-ish cells along its longest
/// side (others scaled to keep cells near-cubic), 6 Kuhn tets per cell
/// (linalg::structured_tet_box). Throws std::invalid_argument for non-positive sizes.
TetMesh make_box_mesh(double size_x, double size_y, double size_z, Index cells_along_longest);

/// Ball of `radius` centred at the origin, about `cells_across` tet layers across its
/// diameter.
TetMesh make_sphere_mesh(double radius, Index cells_across);

/// Torus around the z axis: tube centre radius `major_radius`, tube radius `minor_radius`,
/// `cells_around` cells along the ring and about `cells_across` across the tube.
TetMesh make_torus_mesh(double major_radius, double minor_radius, Index cells_around,
                        Index cells_across);

/// The thin sheet of seed 000 §5.1: width × width in x–y, `thickness` in z (default 1 m ×
/// 1 m × 0.1 mm), one cell layer through the thickness, `cells_along_side` cells per side.
TetMesh make_sheet_mesh(double width, double thickness, Index cells_along_side);

}  // namespace cholsim::fem
