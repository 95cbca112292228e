#pragma once
// Small fixed-size 3D math: Vec3, Mat3 and unit quaternions — the per-element operands of
// the FEM kernels (deformation gradients, rotations). Header-only, value types, no
// allocation, constexpr wherever the operation needs no square root or trigonometry.
//
// Conventions:
//  * Mat3 is stored row-major; A(i, j) is row i, column j; A * v treats v as a column.
//  * Quaternion (w, x, y, z) with w the scalar part; the Hamilton product q ∘ p composes
//    rotations so that to_rotation_matrix(q ∘ p) = to_rotation_matrix(q) · to_rotation_matrix(p).
//  * Rotation quaternions are unit; q and −q are the same rotation.
#include <array>
#include <cmath>
#include <cstddef>

namespace cholsim::linalg {

/// A column vector in R³.
struct Vec3 {
  double x = 0.0;
  double y = 0.0;
  double z = 0.0;

  constexpr double operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
  constexpr double& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }

  constexpr Vec3& operator+=(const Vec3& b) {
    x += b.x;
    y += b.y;
    z += b.z;
    return *this;
  }
  constexpr Vec3& operator-=(const Vec3& b) {
    x -= b.x;
    y -= b.y;
    z -= b.z;
    return *this;
  }
  constexpr Vec3& operator*=(double s) {
    x *= s;
    y *= s;
    z *= s;
    return *this;
  }
  friend constexpr bool operator==(const Vec3&, const Vec3&) = default;
};

constexpr Vec3 operator+(Vec3 a, const Vec3& b) { return a += b; }
constexpr Vec3 operator-(Vec3 a, const Vec3& b) { return a -= b; }
constexpr Vec3 operator-(const Vec3& a) { return {-a.x, -a.y, -a.z}; }
constexpr Vec3 operator*(Vec3 a, double s) { return a *= s; }
constexpr Vec3 operator*(double s, Vec3 a) { return a *= s; }
constexpr Vec3 operator/(const Vec3& a, double s) { return {a.x / s, a.y / s, a.z / s}; }

constexpr double dot(const Vec3& a, const Vec3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
constexpr Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
constexpr double squared_norm(const Vec3& a) { return dot(a, a); }
inline double norm(const Vec3& a) { return std::sqrt(squared_norm(a)); }
/// a / ‖a‖; the zero vector stays zero (callers that care test the norm first).
inline Vec3 normalized(const Vec3& a) {
  const double length = norm(a);
  return length > 0.0 ? a / length : a;
}

/// A 3×3 matrix, row-major.
struct Mat3 {
  std::array<double, 9> entries{};  ///< entries[3 * i + j] = A(i, j)

  constexpr double operator()(int i, int j) const { return entries[static_cast<std::size_t>(3 * i + j)]; }
  constexpr double& operator()(int i, int j) { return entries[static_cast<std::size_t>(3 * i + j)]; }

  static constexpr Mat3 zero() { return {}; }
  static constexpr Mat3 identity() { return diagonal({1.0, 1.0, 1.0}); }
  static constexpr Mat3 diagonal(const Vec3& d) { return {{d.x, 0.0, 0.0, 0.0, d.y, 0.0, 0.0, 0.0, d.z}}; }
  static constexpr Mat3 from_rows(const Vec3& r0, const Vec3& r1, const Vec3& r2) {
    return {{r0.x, r0.y, r0.z, r1.x, r1.y, r1.z, r2.x, r2.y, r2.z}};
  }
  static constexpr Mat3 from_columns(const Vec3& c0, const Vec3& c1, const Vec3& c2) {
    return {{c0.x, c1.x, c2.x, c0.y, c1.y, c2.y, c0.z, c1.z, c2.z}};
  }

  [[nodiscard]] constexpr Vec3 col(int j) const { return {(*this)(0, j), (*this)(1, j), (*this)(2, j)}; }
  [[nodiscard]] constexpr Vec3 row(int i) const { return {(*this)(i, 0), (*this)(i, 1), (*this)(i, 2)}; }
  constexpr void set_col(int j, const Vec3& c) {
    (*this)(0, j) = c.x;
    (*this)(1, j) = c.y;
    (*this)(2, j) = c.z;
  }

  constexpr Mat3& operator+=(const Mat3& b) {
    for (std::size_t k = 0; k < 9; ++k) entries[k] += b.entries[k];
    return *this;
  }
  constexpr Mat3& operator-=(const Mat3& b) {
    for (std::size_t k = 0; k < 9; ++k) entries[k] -= b.entries[k];
    return *this;
  }
  constexpr Mat3& operator*=(double s) {
    for (double& e : entries) e *= s;
    return *this;
  }
  friend constexpr bool operator==(const Mat3&, const Mat3&) = default;
};

constexpr Mat3 operator+(Mat3 a, const Mat3& b) { return a += b; }
constexpr Mat3 operator-(Mat3 a, const Mat3& b) { return a -= b; }
constexpr Mat3 operator-(Mat3 a) { return a *= -1.0; }
constexpr Mat3 operator*(Mat3 a, double s) { return a *= s; }
constexpr Mat3 operator*(double s, Mat3 a) { return a *= s; }

constexpr Vec3 operator*(const Mat3& a, const Vec3& v) {
  return {a(0, 0) * v.x + a(0, 1) * v.y + a(0, 2) * v.z, a(1, 0) * v.x + a(1, 1) * v.y + a(1, 2) * v.z,
          a(2, 0) * v.x + a(2, 1) * v.y + a(2, 2) * v.z};
}

constexpr Mat3 operator*(const Mat3& a, const Mat3& b) {
  Mat3 c;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) c(i, j) = a(i, 0) * b(0, j) + a(i, 1) * b(1, j) + a(i, 2) * b(2, j);
  }
  return c;
}

constexpr Mat3 transpose(const Mat3& a) { return Mat3::from_columns(a.row(0), a.row(1), a.row(2)); }
/// Aᵀ·B without forming Aᵀ (the B = Rᵀ·F of the polar-decomposition kernels).
constexpr Mat3 transpose_times(const Mat3& a, const Mat3& b) {
  Mat3 c;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) c(i, j) = a(0, i) * b(0, j) + a(1, i) * b(1, j) + a(2, i) * b(2, j);
  }
  return c;
}
constexpr double trace(const Mat3& a) { return a(0, 0) + a(1, 1) + a(2, 2); }
constexpr double determinant(const Mat3& a) { return dot(a.col(0), cross(a.col(1), a.col(2))); }
constexpr double squared_frobenius_norm(const Mat3& a) {
  double sum = 0.0;
  for (double e : a.entries) sum += e * e;
  return sum;
}
inline double frobenius_norm(const Mat3& a) { return std::sqrt(squared_frobenius_norm(a)); }
/// A⁻¹ by the adjugate. Singular A gives non-finite entries; callers that may pass one test
/// determinant(A) first.
constexpr Mat3 inverse(const Mat3& a) {
  const Vec3 c0 = a.col(0), c1 = a.col(1), c2 = a.col(2);
  // Rows of the inverse are the cross products of column pairs over det A.
  const Mat3 adjugate = Mat3::from_rows(cross(c1, c2), cross(c2, c0), cross(c0, c1));
  return adjugate * (1.0 / dot(c0, cross(c1, c2)));
}
/// A symmetric 3×3 matrix by its 6 distinct entries: two thirds of a Mat3's bytes where one
/// is stored per element of a million-element mesh.
struct SymmetricMat3 {
  double xx = 0.0, yy = 0.0, zz = 0.0, xy = 0.0, xz = 0.0, yz = 0.0;
  /// ½(A + Aᵀ): exact for a symmetric A, and rounding's asymmetry averaged away otherwise.
  static constexpr SymmetricMat3 symmetric_part(const Mat3& a) {
    return {a(0, 0), a(1, 1), a(2, 2), 0.5 * (a(0, 1) + a(1, 0)), 0.5 * (a(0, 2) + a(2, 0)), 0.5 * (a(1, 2) + a(2, 1))};
  }
};
constexpr Vec3 operator*(const SymmetricMat3& a, const Vec3& v) {
  return {a.xx * v.x + a.xy * v.y + a.xz * v.z, a.xy * v.x + a.yy * v.y + a.yz * v.z,
          a.xz * v.x + a.yz * v.y + a.zz * v.z};
}

/// a·bᵀ
constexpr Mat3 outer(const Vec3& a, const Vec3& b) {
  return Mat3::from_rows(a.x * b, a.y * b, a.z * b);
}
/// [v]×, the matrix with [v]×·u = v × u.
constexpr Mat3 skew(const Vec3& v) { return {{0.0, -v.z, v.y, v.z, 0.0, -v.x, -v.y, v.x, 0.0}}; }
/// The inverse of skew on the skew part: axial_vector([v]×) = v, axial_vector(symmetric) = 0.
constexpr Vec3 axial_vector(const Mat3& a) {
  return {0.5 * (a(2, 1) - a(1, 2)), 0.5 * (a(0, 2) - a(2, 0)), 0.5 * (a(1, 0) - a(0, 1))};
}
/// ½(A + Aᵀ)
constexpr Mat3 symmetric_part(const Mat3& a) { return 0.5 * (a + transpose(a)); }

/// The angle θ ∈ [0, π] of a rotation matrix. atan2(2 sin θ, 2 cos θ) from the skew part and
/// the trace stays accurate near 0 and near π, where acos((tr R − 1)/2) loses half the digits.
inline double rotation_angle(const Mat3& rotation) {
  const Vec3 twice_sin_axis = 2.0 * axial_vector(rotation);
  return std::atan2(norm(twice_sin_axis), trace(rotation) - 1.0);
}

/// The angular distance d(R1, R2) = ∠(R1ᵀ·R2) — the error metric of seed 003 §4.
inline double rotation_distance(const Mat3& r1, const Mat3& r2) { return rotation_angle(transpose_times(r1, r2)); }

/// A quaternion w + x·i + y·j + z·k; the default is the identity rotation.
struct Quaternion {
  double w = 1.0;
  double x = 0.0;
  double y = 0.0;
  double z = 0.0;

  [[nodiscard]] constexpr Vec3 vector_part() const { return {x, y, z}; }
  friend constexpr bool operator==(const Quaternion&, const Quaternion&) = default;
};

/// Hamilton product q ∘ p (apply p first, then q, when both act as rotations).
constexpr Quaternion operator*(const Quaternion& q, const Quaternion& p) {
  return {q.w * p.w - q.x * p.x - q.y * p.y - q.z * p.z, q.w * p.x + q.x * p.w + q.y * p.z - q.z * p.y,
          q.w * p.y - q.x * p.z + q.y * p.w + q.z * p.x, q.w * p.z + q.x * p.y - q.y * p.x + q.z * p.w};
}
constexpr Quaternion conjugate(const Quaternion& q) { return {q.w, -q.x, -q.y, -q.z}; }
constexpr double squared_norm(const Quaternion& q) { return q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z; }
inline double norm(const Quaternion& q) { return std::sqrt(squared_norm(q)); }
/// q / ‖q‖; the zero quaternion becomes the identity.
inline Quaternion normalized(const Quaternion& q) {
  const double length = norm(q);
  if (!(length > 0.0)) return {};
  return {q.w / length, q.x / length, q.y / length, q.z / length};
}

/// The rotation matrix of a unit quaternion (no normalization: the caller keeps ‖q‖ = 1).
constexpr Mat3 to_rotation_matrix(const Quaternion& q) {
  const double xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
  const double xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  const double wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  return {{1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy),  //
           2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx),  //
           2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy)}};
}

/// The unit quaternion of a rotation matrix, with w ≥ 0. Shepperd's method: the square root
/// is taken of the largest of (1 + tr R, 1 + 2R_ii − tr R), so it never cancels.
inline Quaternion quaternion_from_rotation_matrix(const Mat3& r) {
  const double tr = trace(r);
  Quaternion q;
  if (tr >= r(0, 0) && tr >= r(1, 1) && tr >= r(2, 2)) {
    const double s = 2.0 * std::sqrt(1.0 + tr);  // s = 4w
    q = {0.25 * s, (r(2, 1) - r(1, 2)) / s, (r(0, 2) - r(2, 0)) / s, (r(1, 0) - r(0, 1)) / s};
  } else if (r(0, 0) >= r(1, 1) && r(0, 0) >= r(2, 2)) {
    const double s = 2.0 * std::sqrt(1.0 + 2.0 * r(0, 0) - tr);  // s = 4x
    q = {(r(2, 1) - r(1, 2)) / s, 0.25 * s, (r(0, 1) + r(1, 0)) / s, (r(0, 2) + r(2, 0)) / s};
  } else if (r(1, 1) >= r(2, 2)) {
    const double s = 2.0 * std::sqrt(1.0 + 2.0 * r(1, 1) - tr);  // s = 4y
    q = {(r(0, 2) - r(2, 0)) / s, (r(0, 1) + r(1, 0)) / s, 0.25 * s, (r(1, 2) + r(2, 1)) / s};
  } else {
    const double s = 2.0 * std::sqrt(1.0 + 2.0 * r(2, 2) - tr);  // s = 4z
    q = {(r(1, 0) - r(0, 1)) / s, (r(0, 2) + r(2, 0)) / s, (r(1, 2) + r(2, 1)) / s, 0.25 * s};
  }
  if (q.w < 0.0) q = {-q.w, -q.x, -q.y, -q.z};
  return normalized(q);
}

/// Rotation by `angle` radians about `axis` (any non-zero length; zero gives the identity).
inline Quaternion quaternion_from_axis_angle(const Vec3& axis, double angle) {
  const Vec3 unit_axis = normalized(axis);
  const double s = std::sin(0.5 * angle);
  return {std::cos(0.5 * angle), s * unit_axis.x, s * unit_axis.y, s * unit_axis.z};
}

struct AxisAngle {
  Vec3 axis{1.0, 0.0, 0.0};  ///< unit; (1, 0, 0) for the identity, where any axis is right
  double angle = 0.0;        ///< radians, in [0, π]
};

/// Axis and angle of a unit quaternion (the sign of q is irrelevant).
inline AxisAngle to_axis_angle(const Quaternion& q) {
  const double sin_half = norm(q.vector_part());
  if (!(sin_half > 0.0)) return {};
  const double sign = q.w < 0.0 ? -1.0 : 1.0;  // pick the representative with w ≥ 0: angle ≤ π
  return {(sign / sin_half) * q.vector_part(), 2.0 * std::atan2(sin_half, std::abs(q.w))};
}

/// q·v·q*, i.e. to_rotation_matrix(q) * v for a unit q.
constexpr Vec3 rotate(const Quaternion& q, const Vec3& v) {
  const Vec3 u = q.vector_part();
  const Vec3 t = 2.0 * cross(u, v);
  return v + q.w * t + cross(u, t);
}

}  // namespace cholsim::linalg
