#pragma once
// Small scenes shared by the corotational tests: a structured box body and rigid motions.
#include <cmath>
#include <vector>

#include "fem/elements/elastic_body.hpp"
#include "linalg/generators.hpp"
#include "linalg/small_matrix.hpp"
#include "linalg/vector_norms.hpp"

namespace cholsim::fem::test {

inline ElasticBody box_body(Index cells, double cell_size, double youngs_modulus, double poisson_ratio = 0.4) {
  return make_elastic_body(linalg::structured_tet_box(cells, cells, cells, cell_size),
                           Material{youngs_modulus, poisson_ratio, 1000.0}, "test box");
}

inline linalg::Vec3 node(std::span<const double> x, std::size_t i) { return {x[3 * i], x[3 * i + 1], x[3 * i + 2]}; }

inline void set_node(std::vector<double>& x, std::size_t i, const linalg::Vec3& v) {
  x[3 * i] = v.x;
  x[3 * i + 1] = v.y;
  x[3 * i + 2] = v.z;
}

/// Positions R·(x − c) + c + shift for every node.
inline std::vector<double> rigidly_moved(std::span<const double> x, const linalg::Mat3& rotation,
                                         const linalg::Vec3& center, const linalg::Vec3& shift) {
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size() / 3; ++i) set_node(out, i, rotation * (node(x, i) - center) + center + shift);
  return out;
}

/// Velocities v + ω × (x − c).
inline std::vector<double> rigid_velocities(std::span<const double> x, const linalg::Vec3& linear,
                                            const linalg::Vec3& angular, const linalg::Vec3& center) {
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size() / 3; ++i) set_node(out, i, linear + cross(angular, node(x, i) - center));
  return out;
}

using linalg::max_abs_difference;

}  // namespace cholsim::fem::test
