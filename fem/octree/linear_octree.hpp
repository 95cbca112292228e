#pragma once
// Seed 001 (Milne et al. 2016) §5–§7: the linear octree of an elastic object — build from a
// closed triangle surface, the simulation mesh of each multigrid level with its hanging
// nodes and W gather/scatter, and the transfer operators between levels.
#include "fem/octree/balanced_octree.hpp"   // IWYU pragma: export
#include "fem/octree/octant.hpp"            // IWYU pragma: export
#include "fem/octree/octree_mesh.hpp"       // IWYU pragma: export
#include "fem/octree/octree_transfer.hpp"   // IWYU pragma: export
#include "fem/octree/surface_checks.hpp"    // IWYU pragma: export
