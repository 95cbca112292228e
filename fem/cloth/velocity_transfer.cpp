#include "fem/cloth/velocity_transfer.hpp"

#include <cmath>
#include <stdexcept>

namespace cholsim::fem::cloth {

namespace {

void set_velocity(ClothMesh& cloth, Index v, const GeneralizedVelocity& velocity) {
  const auto i = static_cast<std::size_t>(v);
  cloth.velocities[3 * i] = velocity.lagrangian.x;
  cloth.velocities[3 * i + 1] = velocity.lagrangian.y;
  cloth.velocities[3 * i + 2] = velocity.lagrangian.z;
  cloth.material_velocities[2 * i] = velocity.eulerian.u;
  cloth.material_velocities[2 * i + 1] = velocity.eulerian.v;
}

/// ẋ − F Ẋ of vertex v whatever its flag says (a created vertex holds interpolated Ẋ until its
/// rule sets it).
Vec3 node_world_velocity(const ClothMesh& cloth, Index v, const Mat32& gradient) {
  return world_velocity(cloth.velocity(v), material_velocity(cloth, v), gradient);
}

}  // namespace

bool has_full_rank(const Mat32& gradient) {
  const double uu = dot(gradient.col_u, gradient.col_u);
  const double vv = dot(gradient.col_v, gradient.col_v);
  const double uv = dot(gradient.col_u, gradient.col_v);
  return uu * vv - uv * uv > 1e-14 * uu * vv;
}

bool moves_along_free_direction(const Mat32& gradient, const Vec2& row) {
  const Vec3 image = gradient * Vec2{-row.v, row.u};  // F a⊥
  return dot(image, image) >
         1e-14 * dot(row, row) * (dot(gradient.col_u, gradient.col_u) + dot(gradient.col_v, gradient.col_v));
}

Mat32 average_deformation_gradient(const ClothMesh& cloth, std::span<const Index> triangles) {
  if (triangles.empty()) throw std::invalid_argument("average_deformation_gradient: no triangles to average");
  Mat32 sum;
  for (const Index t : triangles) sum = sum + triangle_deformation_gradient(cloth, t);
  return (1.0 / static_cast<double>(triangles.size())) * sum;
}

Mat32 vertex_deformation_gradient(const TriangleTopology& topology, Index v) {
  return average_deformation_gradient(topology.cloth(), topology.incident_triangles(v));
}

Vec3 interpolated_world_velocity(const ClothMesh& cloth, const VertexOrigin& origin, const Mat32& gradient) {
  Vec3 sum;
  for (int i = 0; i < origin.parent_count(); ++i) {
    sum += origin.weights[i] * node_world_velocity(cloth, origin.parents[i], gradient);
  }
  return sum;
}

void transfer_to_lagrangian_vertex(ClothMesh& cloth, const VertexOrigin& origin, const Mat32& gradient) {
  set_velocity(cloth, origin.vertex, {interpolated_world_velocity(cloth, origin, gradient), {}});
}

void transfer_to_split_eulerian_vertex(ClothMesh& cloth, const VertexOrigin& origin) {
  GeneralizedVelocity mean;
  for (int i = 0; i < origin.parent_count(); ++i) {
    mean.lagrangian += origin.weights[i] * cloth.velocity(origin.parents[i]);
    mean.eulerian = mean.eulerian + origin.weights[i] * material_velocity(cloth, origin.parents[i]);
  }
  set_velocity(cloth, origin.vertex, mean);
}

GeneralizedVelocity split_world_velocity(const Vec3& world, const Mat32& gradient,
                                         const std::optional<Vec2>& equality_row) {
  // Eq. 2.13: [FᵀF aᵀ; a 0] (Ẋ, λ) = (−Fᵀẋʷ, 0); without a row, FᵀF Ẋ = −Fᵀẋʷ.
  const double uu = dot(gradient.col_u, gradient.col_u);
  const double uv = dot(gradient.col_u, gradient.col_v);
  const double vv = dot(gradient.col_v, gradient.col_v);
  const Vec2 rhs = -1.0 * transpose_times(gradient, world);
  Vec2 eulerian;
  if (equality_row) {
    const Vec2 a = *equality_row;
    if (!moves_along_free_direction(gradient, a)) {
      throw std::invalid_argument("split_world_velocity: the eq. 2.13 system is singular (F a-perp = 0)");
    }
    const linalg::Mat3 kkt{{uu, uv, a.u, uv, vv, a.v, a.u, a.v, 0.0}};  // determinant −‖F a⊥‖²
    const Vec3 solution = linalg::inverse(kkt) * Vec3{rhs.u, rhs.v, 0.0};
    eulerian = {solution.x, solution.y};
  } else {
    if (!has_full_rank(gradient)) throw std::invalid_argument("split_world_velocity: F has rank < 2");
    const double det = uu * vv - uv * uv;
    eulerian = {(vv * rhs.u - uv * rhs.v) / det, (uu * rhs.v - uv * rhs.u) / det};
  }
  return {world + gradient * eulerian, eulerian};
}

void transfer_to_collision_eulerian_vertex(ClothMesh& cloth, Index v, const Vec3& world, const Mat32& gradient,
                                           const std::optional<Vec2>& equality_row) {
  set_velocity(cloth, v, split_world_velocity(world, gradient, equality_row));
}

void lift_off(ClothMesh& cloth, Index v, const Mat32& gradient) {
  set_velocity(cloth, v, {node_world_velocity(cloth, v, gradient), {}});
  cloth.eulerian[v] = 0;
}

}  // namespace cholsim::fem::cloth
