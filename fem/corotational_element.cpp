#include "fem/corotational_element.hpp"

#include "linalg/polar_decomposition.hpp"

namespace cholsim::fem {

namespace {

using linalg::Vec3;

Vec3 vertex(const ElementVector& v, int a) {
  const auto i = static_cast<std::size_t>(3 * a);
  return {v[i], v[i + 1], v[i + 2]};
}

void set_vertex(ElementVector& v, int a, const Vec3& value) {
  const auto i = static_cast<std::size_t>(3 * a);
  v[i] = value.x;
  v[i + 1] = value.y;
  v[i + 2] = value.z;
}

// Block (a, b) of a column-major 12×12 matrix: rows 3a.., columns 3b...
Mat3 block(const ElementMatrix& m, int a, int b) {
  Mat3 out;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) out(i, j) = m[static_cast<std::size_t>((3 * b + j) * 12 + 3 * a + i)];
  }
  return out;
}

void set_block(ElementMatrix& m, int a, int b, const Mat3& value) {
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) m[static_cast<std::size_t>((3 * b + j) * 12 + 3 * a + i)] = value(i, j);
  }
}

ElementVector multiply(const ElementMatrix& m, const ElementVector& v) {
  ElementVector y{};
  for (std::size_t col = 0; col < 12; ++col) {
    const double vj = v[col];
    for (std::size_t row = 0; row < 12; ++row) y[row] += m[col * 12 + row] * vj;
  }
  return y;
}

}  // namespace

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

Mat3 element_rotation(const ElasticBody& body, Index element, std::span<const double> x) {
  return linalg::polar_rotation(deformation_gradient(body, element, x));
}

ElementMatrix rest_stiffness(const ElasticBody& body, Index element) {
  return linalg::linear_tet::elastic_stiffness(body.rest.tet_points(element),
                                               body.lame[static_cast<std::size_t>(element)]);
}

ElementVector corotated_elastic_force(const ElementMatrix& stiffness, const Mat3& rotation,
                                      const ElementVector& current, const ElementVector& rest) {
  ElementVector displacement{};  // Rₑᵀ·xₑ − mₑ in the rest frame
  const Mat3 rotation_transpose = transpose(rotation);
  for (int a = 0; a < 4; ++a) set_vertex(displacement, a, rotation_transpose * vertex(current, a) - vertex(rest, a));
  const ElementVector rest_frame_force = multiply(stiffness, displacement);
  ElementVector force{};
  for (int a = 0; a < 4; ++a) set_vertex(force, a, -(rotation * vertex(rest_frame_force, a)));
  return force;
}

ElementMatrix rotate_element_matrix(const ElementMatrix& stiffness, const ElementFrame& frame, double scale) {
  ElementMatrix out{};
  for (int b = 0; b < 4; ++b) {
    for (int a = b; a < 4; ++a) {
      const Mat3 rotated = scale * (frame[static_cast<std::size_t>(a)] * block(stiffness, a, b) *
                                    transpose(frame[static_cast<std::size_t>(b)]));
      set_block(out, a, b, rotated);
      if (a != b) set_block(out, b, a, transpose(rotated));
    }
  }
  return out;
}

ElementVector rotated_matrix_times(const ElementMatrix& stiffness, const ElementFrame& frame, double scale,
                                   const ElementVector& v) {
  ElementVector rest_frame{};
  for (int a = 0; a < 4; ++a) set_vertex(rest_frame, a, transpose(frame[static_cast<std::size_t>(a)]) * vertex(v, a));
  const ElementVector product = multiply(stiffness, rest_frame);
  ElementVector out{};
  for (int a = 0; a < 4; ++a) set_vertex(out, a, scale * (frame[static_cast<std::size_t>(a)] * vertex(product, a)));
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
