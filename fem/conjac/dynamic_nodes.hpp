#pragma once
// Choosing CONJAC's dynamic nodes (seed 002 §4.5: a few nodes placed where motion is wanted,
// e.g. at equal intervals along a bar's axis) and turning them into free-DOF indices.
#include <span>
#include <vector>

#include "fem/dynamics/elastic_system.hpp"
#include "fem/mesh/tet_mesh.hpp"

namespace cholsim::fem {

/// For each point, the mesh node nearest to it among `candidates` (all nodes when empty),
/// without repeats: a point whose nearest node is taken gets the next nearest.
std::vector<Index> nodes_nearest(const TetMesh& mesh, std::span<const Vec3> points, std::span<const Index> candidates = {});

/// `count` nodes among `candidates` spread by farthest-point sampling: the first is the
/// candidate farthest from `anchors` (the held nodes: a limb's tip before its root), each next
/// one the candidate farthest from the anchors and the nodes already chosen — the thesis places
/// dynamic nodes at extremities and keeps them apart (seed 002 §4.6.1).
std::vector<Index> spread_nodes(const TetMesh& mesh, std::span<const Index> candidates, std::span<const Index> anchors,
                                Index count);

/// The free DOFs (3 per node, x y z) of `nodes` in `system`'s unknown numbering, in order.
/// Throws std::invalid_argument for a node out of range or prescribed (not free).
std::vector<Index> free_dofs_of_nodes(const ElasticSystem& system, std::span<const Index> nodes);

}  // namespace cholsim::fem
