#include "fem/conjac/dynamic_nodes.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace cholsim::fem {

std::vector<Index> nodes_nearest(const TetMesh& mesh, std::span<const Vec3> points, std::span<const Index> candidates) {
  std::vector<Index> all;
  if (candidates.empty()) {
    for (Index v = 0; v < mesh.node_count(); ++v) all.push_back(v);
    candidates = all;
  }
  std::vector<char> taken(static_cast<std::size_t>(mesh.node_count()), 0);
  std::vector<Index> nodes;
  for (const Vec3& point : points) {
    Index best = -1;
    double best_distance = std::numeric_limits<double>::infinity();
    for (const Index v : candidates) {
      if (taken[v]) continue;
      const Vec3 d = node_position(mesh.positions, v) - point;
      const double distance = dot(d, d);
      if (distance < best_distance) {
        best_distance = distance;
        best = v;
      }
    }
    if (best == -1) throw std::invalid_argument("nodes_nearest: more points than candidate nodes");
    taken[best] = 1;
    nodes.push_back(best);
  }
  return nodes;
}

std::vector<Index> spread_nodes(const TetMesh& mesh, std::span<const Index> candidates, std::span<const Index> anchors,
                                Index count) {
  if (count > static_cast<Index>(candidates.size())) {
    throw std::invalid_argument("spread_nodes: " + std::to_string(count) + " nodes asked of " +
                                std::to_string(candidates.size()) + " candidates");
  }
  // distance[c]: squared distance of candidate c to the nearest anchor or chosen node.
  std::vector<double> distance(candidates.size(), std::numeric_limits<double>::infinity());
  const auto shrink_to = [&](Index node) {
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      const Vec3 d = node_position(mesh.positions, candidates[c]) - node_position(mesh.positions, node);
      distance[c] = std::min(distance[c], dot(d, d));
    }
  };
  for (const Index anchor : anchors) shrink_to(anchor);
  std::vector<Index> chosen;
  while (static_cast<Index>(chosen.size()) < count) {
    std::size_t farthest = 0;
    for (std::size_t c = 1; c < candidates.size(); ++c) {
      if (distance[c] > distance[farthest]) farthest = c;
    }
    chosen.push_back(candidates[farthest]);
    shrink_to(candidates[farthest]);
  }
  return chosen;
}

std::vector<Index> free_dofs_of_nodes(const ElasticSystem& system, std::span<const Index> nodes) {
  const Index node_count = system.body().node_count();
  // Label every full DOF with its own number; the free ones come back in unknown order.
  std::vector<double> labels(3 * static_cast<std::size_t>(node_count));
  for (std::size_t d = 0; d < labels.size(); ++d) labels[d] = static_cast<double>(d);
  const std::vector<double> free = system.free_values(labels);
  std::vector<Index> unknown_of(labels.size(), -1);
  for (std::size_t u = 0; u < free.size(); ++u) unknown_of[static_cast<std::size_t>(free[u])] = static_cast<Index>(u);
  std::vector<Index> dofs;
  for (const Index node : nodes) {
    if (node < 0 || node >= node_count) {
      throw std::invalid_argument("dynamic node " + std::to_string(node) + " is outside the mesh's " +
                                  std::to_string(node_count) + " nodes");
    }
    for (int k = 0; k < 3; ++k) {
      const Index dof = unknown_of[3 * static_cast<std::size_t>(node) + k];
      if (dof < 0) throw std::invalid_argument("dynamic node " + std::to_string(node) + " is prescribed, not free");
      dofs.push_back(dof);
    }
  }
  return dofs;
}

}  // namespace cholsim::fem
