#include "fem/cloth/cloth_dofs.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cholsim::fem::cloth {

namespace {

void require_matching(const ClothMesh& cloth, const ClothDofs& dofs, const char* caller) {
  const auto n = static_cast<std::size_t>(cloth.vertex_count());
  if (dofs.vertex_count != cloth.vertex_count() || dofs.eulerian_offset.size() != n ||
      cloth.velocities.size() != 3 * n || cloth.material_velocities.size() != 2 * n) {
    throw std::invalid_argument(std::string(caller) + ": the DOF numbering has " +
                                std::to_string(dofs.vertex_count) + " vertices and the cloth " + std::to_string(n) +
                                " (with 3 velocities and 2 material velocities each expected)");
  }
}

}  // namespace

ClothDofs ClothDofs::of(const ClothMesh& cloth) {
  const Index n = cloth.vertex_count();
  if (cloth.eulerian.size() != static_cast<std::size_t>(n)) {
    throw std::invalid_argument("ClothDofs::of: the cloth has " + std::to_string(cloth.eulerian.size()) +
                                " Eulerian flags, expected one per vertex (" + std::to_string(n) + ")");
  }
  ClothDofs dofs;
  dofs.vertex_count = n;
  dofs.size = 3 * n;
  dofs.eulerian_offset.assign(static_cast<std::size_t>(n), -1);
  for (Index v = 0; v < n; ++v) {
    if (!cloth.is_eulerian(v)) continue;
    dofs.eulerian_offset[static_cast<std::size_t>(v)] = dofs.size;
    dofs.size += 2;
  }
  return dofs;
}

std::vector<double> gather_velocities(const ClothMesh& cloth, const ClothDofs& dofs) {
  require_matching(cloth, dofs, "gather_velocities");
  std::vector<double> qdot(static_cast<std::size_t>(dofs.size), 0.0);
  std::copy(cloth.velocities.begin(), cloth.velocities.end(), qdot.begin());
  for (Index v = 0; v < dofs.vertex_count; ++v) {
    const Index offset = dofs.eulerian_offset[static_cast<std::size_t>(v)];
    if (offset < 0) continue;
    qdot[static_cast<std::size_t>(offset)] = cloth.material_velocities[2 * static_cast<std::size_t>(v)];
    qdot[static_cast<std::size_t>(offset) + 1] = cloth.material_velocities[2 * static_cast<std::size_t>(v) + 1];
  }
  return qdot;
}

void scatter_velocities(std::span<const double> generalized_velocities, const ClothDofs& dofs, ClothMesh& cloth) {
  require_matching(cloth, dofs, "scatter_velocities");
  if (generalized_velocities.size() != static_cast<std::size_t>(dofs.size)) {
    throw std::invalid_argument("scatter_velocities: " + std::to_string(generalized_velocities.size()) +
                                " generalized velocities, expected " + std::to_string(dofs.size));
  }
  const auto lagrangian_end = generalized_velocities.begin() + 3 * static_cast<std::ptrdiff_t>(dofs.vertex_count);
  std::copy(generalized_velocities.begin(), lagrangian_end, cloth.velocities.begin());
  for (Index v = 0; v < dofs.vertex_count; ++v) {
    const Index offset = dofs.eulerian_offset[static_cast<std::size_t>(v)];
    const auto slot = 2 * static_cast<std::size_t>(v);
    cloth.material_velocities[slot] = offset < 0 ? 0.0 : generalized_velocities[static_cast<std::size_t>(offset)];
    cloth.material_velocities[slot + 1] =
        offset < 0 ? 0.0 : generalized_velocities[static_cast<std::size_t>(offset) + 1];
  }
}

}  // namespace cholsim::fem::cloth
