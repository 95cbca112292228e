#pragma once
// Seed 001 §6, first step of the octree build: "for each triangle, we generate a list of
// octants at the finest level of the octree that overlap the triangle". The overlap test is
// the separating-axis test of a triangle against a box (13 axes: 3 box faces, the triangle's
// plane, 9 edge–edge cross products), run on a box grown by a relative 1e-9 so that a
// triangle touching a cell's boundary, or passing exactly through a grid line, marks every
// cell it touches (conservative: the surface then never crosses a cell left unmarked, which
// the inside/outside classification relies on).
#include <cstdint>
#include <vector>

#include "fem/mesh/tet_mesh.hpp"

namespace cholsim::fem::octree {

/// True iff the triangle (v0, v1, v2) meets the closed axis-aligned box of centre `centre`
/// and half-edge `half_size`.
bool triangle_overlaps_box(const Vec3& v0, const Vec3& v1, const Vec3& v2, const Vec3& centre, double half_size);

/// The finest cells of the grid (2^depth cells across, cell (0,0,0) at `origin`, edge
/// `cell_size`) that some triangle of `surface` overlaps, as Morton codes of their anchors,
/// sorted, each once. Cells outside the grid are not reported.
std::vector<std::uint64_t> rasterize_surface(const SurfaceMesh& surface, int depth, const Vec3& origin,
                                             double cell_size, int threads);

}  // namespace cholsim::fem::octree
