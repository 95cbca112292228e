#include "fem/elements/corotational_element.hpp"

namespace cholsim::fem {

namespace {

using linalg::Vec3;

Vec3 vertex(const ElementVector& v, std::size_t a) { return {v[3 * a], v[3 * a + 1], v[3 * a + 2]}; }

void set_vertex(ElementVector& v, std::size_t a, const Vec3& value) {
  v[3 * a] = value.x;
  v[3 * a + 1] = value.y;
  v[3 * a + 2] = value.z;
}

// Writes block (a, b) (rows 3a.., columns 3b..) of a column-major 12×12 matrix.
void set_block(ElementMatrix& m, std::size_t a, std::size_t b, const Mat3& value) {
  for (std::size_t j = 0; j < 3; ++j) {
    for (std::size_t i = 0; i < 3; ++i) m[(3 * b + j) * 12 + 3 * a + i] = value(static_cast<int>(i), static_cast<int>(j));
  }
}

// Qᵀ·v without forming Qᵀ.
Vec3 transpose_times(const Mat3& q, const Vec3& v) { return {dot(q.col(0), v), dot(q.col(1), v), dot(q.col(2), v)}; }

// A·Bᵀ without forming Bᵀ.
Mat3 times_transpose(const Mat3& a, const Mat3& b) {
  Mat3 c;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) c(i, j) = a(i, 0) * b(j, 0) + a(i, 1) * b(j, 1) + a(i, 2) * b(j, 2);
  }
  return c;
}

// V·σ(H) = Vλ tr(H) I + Vμ (H + Hᵀ): the volume-weighted linear stress of the displacement
// gradient H, times `scale`.
Mat3 scaled_stress(const IsotropicTet& tet, const Mat3& h, double scale) {
  const double lambda_trace = scale * tet.volume_lambda * trace(h);
  const double mu = scale * tet.volume_mu;
  Mat3 stress;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) stress(i, j) = mu * (h(i, j) + h(j, i)) + (i == j ? lambda_trace : 0.0);
  }
  return stress;
}

}  // namespace

IsotropicTet isotropic_tet(const ElasticBody& body, Index element) {
  const auto e = static_cast<std::size_t>(element);
  const Mat3& shape_inverse = body.rest_shape_inverse[e];
  IsotropicTet tet;
  for (int a = 1; a < 4; ++a) tet.gradients[static_cast<std::size_t>(a)] = shape_inverse.row(a - 1);
  tet.gradients[0] = -(tet.gradients[1] + tet.gradients[2] + tet.gradients[3]);
  tet.volume_lambda = body.rest_volumes[e] * body.lame[e].lambda;
  tet.volume_mu = body.rest_volumes[e] * body.lame[e].mu;
  return tet;
}

ElementVector gather_element(const ElasticBody& body, Index element, std::span<const double> node_values) {
  ElementVector out{};
  const auto nodes = body.element_nodes(element);
  for (std::size_t a = 0; a < 4; ++a) {
    for (std::size_t c = 0; c < 3; ++c) out[3 * a + c] = node_values[3 * static_cast<std::size_t>(nodes[a]) + c];
  }
  return out;
}

Mat3 deformation_gradient(const ElasticBody& body, Index element, std::span<const double> x) {
  const ElementVector xe = gather_element(body, element, x);
  const Vec3 x0 = vertex(xe, 0);
  const Mat3 shape = Mat3::from_columns(vertex(xe, 1) - x0, vertex(xe, 2) - x0, vertex(xe, 3) - x0);
  return shape * body.rest_shape_inverse[static_cast<std::size_t>(element)];
}

ElementVector corotated_elastic_force(const IsotropicTet& tet, const Mat3& rotation, const Mat3& deformation_gradient) {
  const Mat3 stress = scaled_stress(tet, transpose_times(rotation, deformation_gradient) - Mat3::identity(), 1.0);
  ElementVector force{};
  for (std::size_t a = 0; a < 4; ++a) set_vertex(force, a, -(rotation * (stress * tet.gradients[a])));
  return force;
}

ElementMatrix rotate_element_matrix(const IsotropicTet& tet, const ElementFrame& frame, double scale) {
  std::array<std::array<Vec3, 4>, 4> rotated;  // rotated[a][c] = Q_a·g_c
  for (std::size_t a = 0; a < 4; ++a) {
    for (std::size_t c = 0; c < 4; ++c) rotated[a][c] = frame[a] * tet.gradients[c];
  }
  const double lambda = scale * tet.volume_lambda;
  const double mu = scale * tet.volume_mu;
  ElementMatrix out;
  for (std::size_t b = 0; b < 4; ++b) {
    for (std::size_t a = b; a < 4; ++a) {
      const Mat3 block = lambda * outer(rotated[a][a], rotated[b][b]) + mu * outer(rotated[a][b], rotated[b][a]) +
                         (mu * dot(tet.gradients[a], tet.gradients[b])) * times_transpose(frame[a], frame[b]);
      set_block(out, a, b, block);
      if (a != b) set_block(out, b, a, transpose(block));
    }
  }
  return out;
}

ElementVector rotated_matrix_times(const IsotropicTet& tet, const ElementFrame& frame, double scale,
                                   const ElementVector& v) {
  Mat3 displacement_gradient = Mat3::zero();  // Σ_b (Q_bᵀ v_b) g_bᵀ
  for (std::size_t b = 0; b < 4; ++b) {
    displacement_gradient += outer(transpose_times(frame[b], vertex(v, b)), tet.gradients[b]);
  }
  const Mat3 stress = scaled_stress(tet, displacement_gradient, scale);
  ElementVector out{};
  for (std::size_t a = 0; a < 4; ++a) set_vertex(out, a, frame[a] * (stress * tet.gradients[a]));
  return out;
}

ElementFrame corotational_frame(const Mat3& element_rotation) {
  return {element_rotation, element_rotation, element_rotation, element_rotation};
}

ElementFrame warp_canceling_frame(const Mat3& element_rotation, const std::array<Mat3, 4>& node_rotations) {
  ElementFrame frame;
  for (std::size_t a = 0; a < 4; ++a) frame[a] = linalg::transpose_times(node_rotations[a], element_rotation);
  return frame;
}

}  // namespace cholsim::fem
