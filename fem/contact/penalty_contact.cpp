#include "fem/contact/penalty_contact.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "fem/corotational/corotational_simulation.hpp"

namespace cholsim::fem {

double default_contact_stiffness(std::span<const double> node_masses, double time_step) {
  double total = 0.0;
  for (const double m : node_masses) total += m;
  if (!(total > 0.0) || !(time_step > 0.0)) {
    throw std::invalid_argument("default_contact_stiffness: needs a positive body mass and time step");
  }
  const double column_mass = total / std::pow(static_cast<double>(node_masses.size()), 2.0 / 3.0);
  return column_mass / (time_step * time_step);
}

void find_contacts(const std::vector<Obstacle>& obstacles, double time, std::span<const double> positions,
                   std::vector<NodeContact>& contacts) {
  contacts.clear();
  if (obstacles.empty()) return;
  for (std::size_t i = 0; i < positions.size() / 3; ++i) {
    const Vec3 x{positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]};
    const ObstacleProximity near = nearest_obstacle(obstacles, x, time);
    if (near.distance < 0.0) contacts.push_back({static_cast<linalg::Index>(i), near});
  }
}

void add_penalty_contact_forces(std::span<const NodeContact> contacts, const PenaltyContact& contact,
                                double stiffness, double time_step, std::span<const double> node_masses,
                                std::span<const double> velocities, std::span<double> forces) {
  for (const NodeContact& touching : contacts) {
    const auto i = static_cast<std::size_t>(touching.node);
    const ObstacleProximity& near = touching.proximity;
    const double mass = node_masses[i];
    const Vec3 relative = Vec3{velocities[3 * i], velocities[3 * i + 1], velocities[3 * i + 2]} - near.velocity;
    const double approach = dot(relative, near.normal);  // < 0 while moving into the obstacle
    const double damping = contact.damping_ratio * 2.0 * std::sqrt(stiffness * mass);
    const double normal_force = std::max(0.0, stiffness * (-near.distance) - damping * std::min(approach, 0.0));
    Vec3 force = normal_force * near.normal;
    const Vec3 sliding = relative - approach * near.normal;
    const double speed = norm(sliding);
    if (speed > 0.0) {
      const double stopping = mass * speed / time_step;
      force -= (std::min(contact.friction * normal_force, stopping) / speed) * sliding;
    }
    forces[3 * i] += force.x;
    forces[3 * i + 1] += force.y;
    forces[3 * i + 2] += force.z;
  }
}

}  // namespace cholsim::fem
