#include "fem/contact/position_projection.hpp"

#include <stdexcept>
#include <string>

namespace cholsim::fem {

linalg::Index project_out_of_obstacles(const std::vector<Obstacle>& obstacles, double time,
                                       std::span<const unsigned char> movable, std::span<double> positions) {
  if (positions.size() != 3 * movable.size()) {
    throw std::invalid_argument("project_out_of_obstacles: " + std::to_string(positions.size()) +
                                " coordinates for " + std::to_string(movable.size()) + " nodes");
  }
  if (obstacles.empty()) return 0;
  linalg::Index projected = 0;
  for (std::size_t v = 0; v < movable.size(); ++v) {
    if (movable[v] == 0) continue;
    const Vec3 point{positions[3 * v], positions[3 * v + 1], positions[3 * v + 2]};
    const ObstacleProximity nearest = nearest_obstacle(obstacles, point, time);
    if (!(nearest.distance < 0.0)) continue;
    const Vec3 surface = point - nearest.distance * nearest.normal;
    positions[3 * v] = surface.x;
    positions[3 * v + 1] = surface.y;
    positions[3 * v + 2] = surface.z;
    ++projected;
  }
  return projected;
}

}  // namespace cholsim::fem
