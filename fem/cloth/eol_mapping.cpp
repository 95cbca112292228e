#include "fem/cloth/eol_mapping.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace cholsim::fem::cloth {

namespace {

// Column-major 3×n entry (i, j).
constexpr std::size_t at3(int i, int j) { return static_cast<std::size_t>(3 * j + i); }

// Writes s·I (3×3) and −s·F (3×2) into a column-major 3×n Jacobian at the given columns.
template <std::size_t size>
void set_jacobian_columns(std::array<double, size>& jacobian, int lagrangian_column, int eulerian_column, double s,
                          const Mat32& f) {
  for (int i = 0; i < 3; ++i) {
    jacobian[at3(i, lagrangian_column + i)] = s;
    for (int k = 0; k < 2; ++k) jacobian[at3(i, eulerian_column + k)] = -s * f(i, k);
  }
}

}  // namespace

TriangleShape triangle_shape(const std::array<Vec2, 3>& material) {
  const Vec2 edge_b = material[1] - material[0];
  const Vec2 edge_c = material[2] - material[0];
  const double det = cross(edge_b, edge_c);
  if (!(std::abs(det) > 0.0) || !std::isfinite(det)) {
    throw std::invalid_argument("triangle_shape: the material triangle is degenerate (det D_X = " +
                                std::to_string(det) + "), expected a non-zero finite area");
  }
  // D_X⁻¹ = adj(D_X)/det: its rows are g_b = (c_v, −c_u)/det and g_c = (−b_v, b_u)/det.
  TriangleShape shape;
  shape.area = 0.5 * std::abs(det);
  shape.gradients[1] = {edge_c.v / det, -edge_c.u / det};
  shape.gradients[2] = {-edge_b.v / det, edge_b.u / det};
  shape.gradients[0] = Vec2{} - (shape.gradients[1] + shape.gradients[2]);
  return shape;
}

Mat32 triangle_deformation_gradient(const TriangleShape& shape, const std::array<Vec3, 3>& x) {
  Mat32 f;
  for (std::size_t i = 0; i < 3; ++i) {
    f.col_u += shape.gradients[i].u * x[i];
    f.col_v += shape.gradients[i].v * x[i];
  }
  return f;
}

std::array<Vec3, 3> triangle_positions(const ClothMesh& cloth, Index t) {
  const Index* v = &cloth.triangles[3 * static_cast<std::size_t>(t)];
  return {cloth.position(v[0]), cloth.position(v[1]), cloth.position(v[2])};
}

Vec2 material_point(const ClothMesh& cloth, Index v) {
  return {cloth.material[2 * static_cast<std::size_t>(v)], cloth.material[2 * static_cast<std::size_t>(v) + 1]};
}

Vec2 material_velocity(const ClothMesh& cloth, Index v) {
  return {cloth.material_velocities[2 * static_cast<std::size_t>(v)],
          cloth.material_velocities[2 * static_cast<std::size_t>(v) + 1]};
}

std::array<Vec2, 3> triangle_material(const ClothMesh& cloth, Index t) {
  const Index* v = &cloth.triangles[3 * static_cast<std::size_t>(t)];
  return {material_point(cloth, v[0]), material_point(cloth, v[1]), material_point(cloth, v[2])};
}

Mat32 triangle_deformation_gradient(const ClothMesh& cloth, Index t) {
  return triangle_deformation_gradient(triangle_shape(triangle_material(cloth, t)), triangle_positions(cloth, t));
}

std::vector<Mat32> vertex_deformation_gradients(const ClothMesh& cloth) {
  const auto n = static_cast<std::size_t>(cloth.vertex_count());
  std::vector<Mat32> sums(n);
  std::vector<int> counts(n, 0);
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    const Mat32 f = triangle_deformation_gradient(cloth, t);
    for (int k = 0; k < 3; ++k) {
      const auto v = static_cast<std::size_t>(cloth.triangles[3 * static_cast<std::size_t>(t) + k]);
      sums[v] = sums[v] + f;
      ++counts[v];
    }
  }
  for (std::size_t v = 0; v < n; ++v) {
    if (counts[v] > 0) sums[v] = (1.0 / counts[v]) * sums[v];
  }
  return sums;
}

std::array<double, 3> barycentric_coordinates(const std::array<Vec2, 3>& material, const Vec2& point) {
  const Vec2 edge_b = material[1] - material[0];
  const Vec2 edge_c = material[2] - material[0];
  const Vec2 offset = point - material[0];
  const double det = cross(edge_b, edge_c);
  // Cramer's rule on D_X (β, γ)ᵀ = X − X_a.
  const double beta = cross(offset, edge_c) / det;
  const double gamma = cross(edge_b, offset) / det;
  return {1.0 - beta - gamma, beta, gamma};
}

Vec3 world_position(const std::array<Vec3, 3>& x, const std::array<double, 3>& barycentric) {
  return barycentric[0] * x[0] + barycentric[1] * x[1] + barycentric[2] * x[2];
}

VertexJacobian vertex_jacobian(const Mat32& f) {
  VertexJacobian jacobian{};
  set_jacobian_columns(jacobian, 0, 3, 1.0, f);
  return jacobian;
}

PointJacobian point_jacobian(const std::array<double, 3>& barycentric, const Mat32& f) {
  PointJacobian jacobian{};
  for (int k = 0; k < 3; ++k) set_jacobian_columns(jacobian, 3 * k, 9 + 2 * k, barycentric[static_cast<std::size_t>(k)], f);
  return jacobian;
}

Vec3 vertex_world_velocity(const ClothMesh& cloth, Index v, const Mat32& f) {
  if (!cloth.is_eulerian(v)) return cloth.velocity(v);
  return world_velocity(cloth.velocity(v), material_velocity(cloth, v), f);
}

GeneralizedForce map_force(const Vec3& force, const Mat32& f) {
  return {force, Vec2{} - transpose_times(f, force)};
}

GeneralizedBlock map_stiffness_block(const Mat3& block, const Mat32& f_i, const Mat32& f_j) {
  GeneralizedBlock mapped{};
  const auto at = [](int row, int col) { return static_cast<std::size_t>(5 * col + row); };
  const Mat32 block_f_j = block * f_j;  // K_ij F_j
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) mapped[at(r, c)] = block(r, c);
    for (int k = 0; k < 2; ++k) mapped[at(r, 3 + k)] = -block_f_j(r, k);
  }
  for (int k = 0; k < 2; ++k) {
    const Vec3 f_i_column = f_i.col(k);
    // Row k of −F_iᵀ K_ij, and of F_iᵀ K_ij F_j.
    for (int c = 0; c < 3; ++c) mapped[at(3 + k, c)] = -dot(f_i_column, block.col(c));
    for (int l = 0; l < 2; ++l) mapped[at(3 + k, 3 + l)] = dot(f_i_column, block_f_j.col(l));
  }
  return mapped;
}

}  // namespace cholsim::fem::cloth
