#include "fem/cloth/cloth_inertia.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace cholsim::fem::cloth {

namespace {

void require_non_negative(double density, double area, const char* caller) {
  if (!(density >= 0.0) || !(area >= 0.0)) {
    throw std::invalid_argument(std::string(caller) + ": density " + std::to_string(density) + " and area " +
                                std::to_string(area) + ", expected both >= 0");
  }
}

}  // namespace

double inertia_weight(MassModel model, int i, int j) {
  if (model == MassModel::lumped) return i == j ? 1.0 / 3.0 : 0.0;
  return i == j ? 2.0 / 12.0 : 1.0 / 12.0;  // ∫N_i N_j dA = A/6 on the diagonal, A/12 off it
}

TriangleInertia triangle_generalized_inertia(double density, double area, const Mat32& f, MassModel model) {
  require_non_negative(density, area, "triangle_generalized_inertia");
  TriangleInertia inertia{};
  // The rows (and columns) of vertex k's generalized DOFs in the 15×15: ẋ_k then Ẋ_k.
  const auto dof = [](int vertex, int local) { return local < 3 ? 3 * vertex + local : 9 + 2 * vertex + (local - 3); };
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const double mass = density * area * inertia_weight(model, i, j);
      const GeneralizedBlock block = map_stiffness_block(mass * Mat3::identity(), f, f);
      for (int c = 0; c < 5; ++c) {
        for (int r = 0; r < 5; ++r) {
          inertia[static_cast<std::size_t>(15 * dof(j, c) + dof(i, r))] = block[static_cast<std::size_t>(5 * c + r)];
        }
      }
    }
  }
  return inertia;
}

TriangleMass triangle_mass(double density, double area, MassModel model) {
  require_non_negative(density, area, "triangle_mass");
  TriangleMass mass{};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 3; ++k) {
        mass[static_cast<std::size_t>(9 * (3 * j + k) + 3 * i + k)] = density * area * inertia_weight(model, i, j);
      }
    }
  }
  return mass;
}

std::vector<double> vertex_masses(const ClothMesh& cloth, double density) {
  std::vector<double> masses(static_cast<std::size_t>(cloth.vertex_count()), 0.0);
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    const double third = density * std::abs(material_area(cloth, t)) / 3.0;
    for (int k = 0; k < 3; ++k) masses[static_cast<std::size_t>(cloth.triangles[3 * static_cast<std::size_t>(t) + k])] += third;
  }
  return masses;
}

}  // namespace cholsim::fem::cloth
