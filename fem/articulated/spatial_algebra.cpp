#include "fem/articulated/spatial_algebra.hpp"

#include <cmath>

namespace cholsim::fem::articulated {

RigidTransform operator*(const RigidTransform& a, const RigidTransform& b) {
  return {a.rotation * b.rotation, a.rotation * b.translation + a.translation};
}

RigidTransform inverse(const RigidTransform& e) {
  const Mat3 rt = linalg::transpose(e.rotation);
  return {rt, -(rt * e.translation)};
}

Mat3 axis_angle_rotation(const Vec3& axis, double angle) {
  const double length = linalg::norm(axis);
  if (length < 1e-9) return Mat3::identity();
  const Vec3 k = axis / length;
  const Mat3 kx = linalg::skew(k);
  return Mat3::identity() + std::sin(angle) * kx + (1.0 - std::cos(angle)) * (kx * kx);
}

Mat3 rotation_exponential(const Vec3& r) { return axis_angle_rotation(r, linalg::norm(r)); }

Mat6 Mat6::identity() {
  Mat6 m;
  for (int i = 0; i < 6; ++i) m(i, i) = 1.0;
  return m;
}

Mat6 operator*(const Mat6& a, const Mat6& b) {
  Mat6 c;
  for (int i = 0; i < 6; ++i) {
    for (int k = 0; k < 6; ++k) {
      const double aik = a(i, k);
      if (aik == 0.0) continue;
      for (int j = 0; j < 6; ++j) c(i, j) += aik * b(k, j);
    }
  }
  return c;
}

Mat6 operator-(const Mat6& a, const Mat6& b) {
  Mat6 c;
  for (std::size_t k = 0; k < 36; ++k) c.entries[k] = a.entries[k] - b.entries[k];
  return c;
}

Vec6 operator*(const Mat6& a, const Vec6& x) {
  Vec6 y{};
  for (int i = 0; i < 6; ++i) {
    double s = 0.0;
    for (int j = 0; j < 6; ++j) s += a(i, j) * x[static_cast<std::size_t>(j)];
    y[static_cast<std::size_t>(i)] = s;
  }
  return y;
}

Vec6 transpose_times(const Mat6& a, const Vec6& x) {
  Vec6 y{};
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j) y[static_cast<std::size_t>(j)] += a(i, j) * x[static_cast<std::size_t>(i)];
  }
  return y;
}

Mat6 transpose(const Mat6& a) {
  Mat6 t;
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j) t(j, i) = a(i, j);
  }
  return t;
}

Vec6 operator+(const Vec6& a, const Vec6& b) {
  Vec6 c{};
  for (std::size_t k = 0; k < 6; ++k) c[k] = a[k] + b[k];
  return c;
}

Vec6 operator-(const Vec6& a, const Vec6& b) {
  Vec6 c{};
  for (std::size_t k = 0; k < 6; ++k) c[k] = a[k] - b[k];
  return c;
}

Vec6 operator*(double s, const Vec6& a) {
  Vec6 c{};
  for (std::size_t k = 0; k < 6; ++k) c[k] = s * a[k];
  return c;
}

namespace {
void set_block(Mat6& m, int row, int col, const Mat3& b) {
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) m(row + i, col + j) = b(i, j);
  }
}
}  // namespace

Mat6 adjoint(const RigidTransform& e) {
  Mat6 a;
  set_block(a, 0, 0, e.rotation);
  set_block(a, 3, 3, e.rotation);
  set_block(a, 3, 0, linalg::skew(e.translation) * e.rotation);
  return a;
}

Mat6 lie_bracket(const Vec6& phi) {
  const Mat3 w = linalg::skew({phi[0], phi[1], phi[2]});
  Mat6 a;
  set_block(a, 0, 0, w);
  set_block(a, 3, 3, w);
  set_block(a, 3, 0, linalg::skew({phi[3], phi[4], phi[5]}));
  return a;
}

Vec6 point_direction_row(const Vec3& r, const Vec3& n) {
  const Vec3 moment = linalg::cross(r, n);
  return {moment.x, moment.y, moment.z, n.x, n.y, n.z};
}

}  // namespace cholsim::fem::articulated
