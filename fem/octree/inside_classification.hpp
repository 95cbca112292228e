#pragma once
// Seed 001 §6, classification: "All fine octants generated during rasterization are marked as
// inside. We mark the remaining octants as inside if their center is inside the triangle mesh."
//
// Evaluating a point-in-mesh test per leaf costs a pass over all triangles each; instead the
// leaves the surface does not touch are grouped into face-connected components (union–find
// over face neighbours found by galloping search in Morton order). The rasterization is
// conservative, so the surface crosses no such component and one test decides all its leaves:
// the component holding the cube's corner leaf (padding) is outside, every other one is
// decided by the generalized winding number of its first leaf's centre — a cavity inside the
// solid comes out outside, a pocket cut off by surface cells inside.
#include <cstdint>
#include <span>
#include <vector>

#include "fem/mesh/tet_mesh.hpp"
#include "fem/octree/octant.hpp"

namespace cholsim::fem::octree {

/// What classify_leaves found.
struct InsideClassificationStats {
  linalg::Index components = 0;  ///< face-connected groups of leaves the surface does not touch
  linalg::Index inside_components = 0;
};

/// Per leaf 1 iff it overlaps the solid bounded by `surface`: leaves flagged kSeedCellFlag
/// (touched by the surface) and leaves whose centre has winding number ≥ 1/2 in magnitude.
/// `leaves`: complete, Morton-sorted, over a cube of 2^depth cells whose cell (0,0,0) starts at
/// `origin`, edges `cell_size`; leaf 0 must not be a seed (the cube has padding).
std::vector<std::uint8_t> classify_leaves(std::span<const Octant> leaves, int depth, const SurfaceMesh& surface,
                                          const Vec3& origin, double cell_size, int threads,
                                          InsideClassificationStats* stats = nullptr);

/// Generalized winding number of the closed surface around `point` (Van Oosterom–Strackee
/// solid angles / 4π): ±1 inside, 0 outside.
double winding_number(const SurfaceMesh& surface, const Vec3& point);

}  // namespace cholsim::fem::octree
