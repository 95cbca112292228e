#include "fem/pd/pd_springs.hpp"

namespace cholsim::fem {

Vec3 SpringRow::evaluate(std::span<const double> positions) const {
  Vec3 sum;
  for (int i = 0; i < terms; ++i) sum += weights[static_cast<std::size_t>(i)] * node_position(positions, nodes[static_cast<std::size_t>(i)]);
  return sum;
}

double SpringRow::energy(std::span<const double> positions) const {
  return 0.5 * stiffness * linalg::squared_norm(evaluate(positions) - target);
}

SpringRow spring_to_target(const TetMesh& mesh, const EmbeddedPoint& point, const Vec3& target,
                           double stiffness) {
  SpringRow row;
  for (std::size_t i = 0; i < 4; ++i) {
    row.nodes[i] = mesh.tets[static_cast<std::size_t>(4 * point.tet) + i];
    row.weights[i] = point.weights[i];
  }
  row.terms = 4;
  row.target = target;
  row.stiffness = stiffness;
  return row;
}

SpringRow spring_between(const TetMesh& mesh, const EmbeddedPoint& point, const EmbeddedPoint& other,
                         double stiffness) {
  SpringRow row = spring_to_target(mesh, point, Vec3{}, stiffness);
  for (std::size_t i = 0; i < 4; ++i) {
    row.nodes[4 + i] = mesh.tets[static_cast<std::size_t>(4 * other.tet) + i];
    row.weights[4 + i] = -other.weights[i];
  }
  row.terms = 8;
  return row;
}

Vec3 embedded_position(const TetMesh& mesh, const EmbeddedPoint& point, std::span<const double> positions) {
  Vec3 sum;
  for (std::size_t i = 0; i < 4; ++i) {
    sum += point.weights[i] * node_position(positions, mesh.tets[static_cast<std::size_t>(4 * point.tet) + i]);
  }
  return sum;
}

}  // namespace cholsim::fem
