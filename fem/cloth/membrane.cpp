#include "fem/cloth/membrane.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace cholsim::fem::cloth {

namespace {

// A unit vector orthogonal to the unit vector u: u crossed with the axis it is least aligned with.
Vec3 any_perpendicular(const Vec3& u) {
  const Vec3 ax = std::abs(u.x) <= std::abs(u.y) && std::abs(u.x) <= std::abs(u.z) ? Vec3{1.0, 0.0, 0.0}
                  : std::abs(u.y) <= std::abs(u.z)                                 ? Vec3{0.0, 1.0, 0.0}
                                                                                   : Vec3{0.0, 0.0, 1.0};
  return normalized(cross(u, ax));
}

// The unit eigenvector of the larger eigenvalue of the symmetric [[a, b], [b, c]]; of the two
// closed forms (b, λ₁ − a) and (λ₁ − c, b) the longer one, which never cancels.
Vec2 leading_eigenvector(double a, double b, double c) {
  const double half_gap = 0.5 * (a - c);
  const double spread = std::hypot(half_gap, b);  // (λ₁ − λ₂)/2
  const Vec2 first{b, spread - half_gap};
  const Vec2 second{spread + half_gap, b};
  const Vec2 v = dot(first, first) >= dot(second, second) ? first : second;
  const double length = std::sqrt(dot(v, v));
  return length > 0.0 ? (1.0 / length) * v : Vec2{1.0, 0.0};  // isotropic C: any direction
}

}  // namespace

MembraneLame plane_stress_lame(double youngs, double poisson) {
  if (!(youngs >= 0.0) || !(poisson > -1.0 && poisson <= 0.5)) {
    throw std::invalid_argument("plane_stress_lame: Young's modulus " + std::to_string(youngs) + " and Poisson ratio " +
                                std::to_string(poisson) + ", expected E >= 0 and -1 < nu <= 0.5");
  }
  return {youngs / (2.0 * (1.0 + poisson)), youngs * poisson / (1.0 - poisson * poisson)};
}

Mat32 membrane_rotation(const Mat32& f) {
  const double a = dot(f.col_u, f.col_u);
  const double b = dot(f.col_u, f.col_v);
  const double c = dot(f.col_v, f.col_v);
  if (!(a + c > 0.0)) return {{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}};  // F = 0: every frame is a polar factor
  // F = U Σ Vᵀ with V the eigenvectors of FᵀF and U's columns F v_k/σ_k; R = U Vᵀ. The second
  // column is orthogonalized against the first, which exact arithmetic leaves unchanged and
  // which completes U when F has rank one.
  const Vec2 v1 = leading_eigenvector(a, b, c);
  const Vec2 v2{-v1.v, v1.u};
  const Vec3 u1 = normalized(f * v1);
  Vec3 w = f * v2;
  w -= dot(u1, w) * u1;
  const double w_length = norm(w);
  const Vec3 u2 = w_length > 1e-12 * std::sqrt(a + c) ? w / w_length : any_perpendicular(u1);
  return {v1.u * u1 + v2.u * u2, v1.v * u1 + v2.v * u2};
}

MembraneElement membrane_element(const TriangleShape& shape, const std::array<Vec3, 3>& x, const MembraneLame& lame,
                                 const Mat32& rotation) {
  const Mat32 f = triangle_deformation_gradient(shape, x);
  // RᵀF and the corotated strain ε = sym(RᵀF) − I.
  const double s00 = dot(rotation.col_u, f.col_u), s01 = dot(rotation.col_u, f.col_v);
  const double s10 = dot(rotation.col_v, f.col_u), s11 = dot(rotation.col_v, f.col_v);
  const double e00 = s00 - 1.0, e11 = s11 - 1.0, e01 = 0.5 * (s01 + s10);
  const double strain_trace = e00 + e11;
  const double area = shape.area;

  MembraneElement element;
  element.energy = area * (lame.mu * (e00 * e00 + 2.0 * e01 * e01 + e11 * e11) +
                           0.5 * lame.lambda * strain_trace * strain_trace);
  // σ = 2μ ε + λ tr(ε) I, f_i = −A R σ g_i.
  const double sigma00 = 2.0 * lame.mu * e00 + lame.lambda * strain_trace;
  const double sigma11 = 2.0 * lame.mu * e11 + lame.lambda * strain_trace;
  const double sigma01 = 2.0 * lame.mu * e01;
  std::array<Vec3, 3> rotated_gradients;
  for (std::size_t i = 0; i < 3; ++i) {
    const Vec2& g = shape.gradients[i];
    const Vec2 stress_g{sigma00 * g.u + sigma01 * g.v, sigma01 * g.u + sigma11 * g.v};
    element.forces[i] = -area * (rotation * stress_g);
    rotated_gradients[i] = rotation * g;
  }
  const Mat3 in_plane_projector = outer(rotation.col_u, rotation.col_u) + outer(rotation.col_v, rotation.col_v);
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t j = 0; j < 3; ++j) {
      const double gradient_dot = dot(shape.gradients[i], shape.gradients[j]);
      element.stiffness[3 * i + j] =
          -area * (lame.mu * gradient_dot * in_plane_projector +
                   lame.mu * outer(rotated_gradients[j], rotated_gradients[i]) +
                   lame.lambda * outer(rotated_gradients[i], rotated_gradients[j]));
    }
  }
  return element;
}

MembraneElement membrane_element(const std::array<Vec3, 3>& x, const std::array<Vec2, 3>& material,
                                 const MembraneLame& lame) {
  const TriangleShape shape = triangle_shape(material);
  return membrane_element(shape, x, lame, membrane_rotation(triangle_deformation_gradient(shape, x)));
}

}  // namespace cholsim::fem::cloth
