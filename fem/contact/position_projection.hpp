#pragma once
// Collisions of seed 003 (§4 "Complex Scenarios": "the position-based approach [BMM17]") by
// position projection: after the stretching solve and the volume constraints, every free node
// found inside an obstacle is moved to the obstacle's surface along its normal. Velocities are
// then formed from positions (Algorithm 2, line 16), so a projected node loses its normal
// approach speed — an inelastic, frictionless contact.
#include <span>
#include <vector>

#include "fem/contact/obstacles.hpp"
#include "linalg/index_types.hpp"

namespace cholsim::fem {

/// Projects every node v with movable[v] != 0 that lies inside an obstacle (signed distance
/// < 0 at `time`) onto the nearest obstacle surface. Returns how many nodes moved. Throws
/// std::invalid_argument when positions.size() != 3·movable.size().
linalg::Index project_out_of_obstacles(const std::vector<Obstacle>& obstacles, double time,
                                       std::span<const unsigned char> movable, std::span<double> positions);

}  // namespace cholsim::fem
