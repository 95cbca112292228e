#include "linalg/linear_tetrahedron.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace cholsim::linalg {

LameParameters lame_from_youngs_poisson(double youngs_modulus, double poisson_ratio) {
  if (!(youngs_modulus > 0.0)) {
    throw std::invalid_argument("lame_from_youngs_poisson: Young's modulus must be > 0, got " +
                                std::to_string(youngs_modulus));
  }
  if (!(poisson_ratio > -1.0 && poisson_ratio < 0.5)) {
    throw std::invalid_argument("lame_from_youngs_poisson: Poisson ratio must be in (-1, 0.5), got " +
                                std::to_string(poisson_ratio));
  }
  const double e = youngs_modulus;
  const double nu = poisson_ratio;
  return {e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)), e / (2.0 * (1.0 + nu))};
}

namespace linear_tet {
namespace {

Point difference(const Point& a, const Point& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }

Point cross(const Point& a, const Point& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

double dot(const Point& a, const Point& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

}  // namespace

double signed_volume(const Points& x) {
  const Point e1 = difference(x[1], x[0]);
  const Point e2 = difference(x[2], x[0]);
  const Point e3 = difference(x[3], x[0]);
  return dot(cross(e1, e2), e3) / 6.0;
}

Gradients shape_gradients(const Points& x) {
  const Point e1 = difference(x[1], x[0]);
  const Point e2 = difference(x[2], x[0]);
  const Point e3 = difference(x[3], x[0]);
  const double det = dot(cross(e1, e2), e3);  // det(Dₘ) = 6·signed volume
  if (det == 0.0 || !std::isfinite(det)) {
    throw std::invalid_argument("linear_tet::shape_gradients: degenerate tetrahedron (volume " +
                                std::to_string(det / 6.0) + ")");
  }
  // Rows of Dₘ⁻¹ are the cross products of Dₘ's columns over det(Dₘ): row i is dual to eᵢ.
  Gradients g;
  g[1] = cross(e2, e3);
  g[2] = cross(e3, e1);
  g[3] = cross(e1, e2);
  for (int i = 1; i <= 3; ++i) {
    for (double& component : g[static_cast<std::size_t>(i)]) component /= det;
  }
  for (int c = 0; c < 3; ++c) g[0][c] = -(g[1][c] + g[2][c] + g[3][c]);
  return g;
}

ElasticStiffness elastic_stiffness(const Points& x, LameParameters material) {
  const Gradients g = shape_gradients(x);
  const double volume = std::abs(signed_volume(x));
  ElasticStiffness k{};
  for (std::size_t a = 0; a < 4; ++a) {
    for (std::size_t b = 0; b < 4; ++b) {
      const double shear_diagonal = material.mu * dot(g[a], g[b]);
      for (std::size_t i = 0; i < 3; ++i) {
        for (std::size_t j = 0; j < 3; ++j) {
          double value = material.lambda * g[a][i] * g[b][j] + material.mu * g[b][i] * g[a][j];
          if (i == j) value += shear_diagonal;
          k[(3 * a + i) + 12 * (3 * b + j)] = volume * value;
        }
      }
    }
  }
  return k;
}

ScalarStiffness scalar_stiffness(const Points& x) {
  const Gradients g = shape_gradients(x);
  const double volume = std::abs(signed_volume(x));
  ScalarStiffness k{};
  for (std::size_t a = 0; a < 4; ++a) {
    for (std::size_t b = 0; b < 4; ++b) k[a + 4 * b] = volume * dot(g[a], g[b]);
  }
  return k;
}

double lumped_vertex_mass(const Points& x, double density) {
  return density * std::abs(signed_volume(x)) / 4.0;
}

}  // namespace linear_tet
}  // namespace cholsim::linalg
