#pragma once
// The rigid-body algebra of REDMAX (seed 002 ch. 3; Wang et al. 2019 §3): rigid transforms
// E = [R p; 0 1], twists φ = [ω; v] and wrenches [τ; f] in a body's own frame, the adjoint
// Ad(E) that carries a twist from frame j to frame i, its time derivative, the Lie bracket
// matrix ad(φ), and Γ(r), which turns a body twist into the velocity of the body point r.
#include <array>

#include "linalg/small_matrix.hpp"

namespace cholsim::fem::articulated {

using linalg::Mat3;
using linalg::Vec3;

/// E = [R p; 0 1]: maps coordinates in the frame it describes to those of its reference frame.
struct RigidTransform {
  Mat3 rotation = Mat3::identity();
  Vec3 translation{};

  static RigidTransform translated(const Vec3& p) { return {Mat3::identity(), p}; }
  static RigidTransform rotated(const Mat3& r) { return {r, Vec3{}}; }
};

RigidTransform operator*(const RigidTransform& a, const RigidTransform& b);
RigidTransform inverse(const RigidTransform& e);
inline Vec3 transform_point(const RigidTransform& e, const Vec3& x) { return e.rotation * x + e.translation; }

/// The rotation by `angle` about `axis` (normalized here; a zero axis gives the identity).
Mat3 axis_angle_rotation(const Vec3& axis, double angle);
/// exp([r]) for an exponential-coordinates rotation vector r.
Mat3 rotation_exponential(const Vec3& r);

/// A twist [ω; v] or a wrench [τ; f].
using Vec6 = std::array<double, 6>;

/// A 6×6 matrix, row-major.
struct Mat6 {
  std::array<double, 36> entries{};
  double operator()(int i, int j) const { return entries[static_cast<std::size_t>(6 * i + j)]; }
  double& operator()(int i, int j) { return entries[static_cast<std::size_t>(6 * i + j)]; }
  static Mat6 identity();
};

Mat6 operator*(const Mat6& a, const Mat6& b);
Mat6 operator-(const Mat6& a, const Mat6& b);
Vec6 operator*(const Mat6& a, const Vec6& x);
/// Aᵀx.
Vec6 transpose_times(const Mat6& a, const Vec6& x);
Mat6 transpose(const Mat6& a);
Vec6 operator+(const Vec6& a, const Vec6& b);
Vec6 operator-(const Vec6& a, const Vec6& b);
Vec6 operator*(double s, const Vec6& a);

/// Ad(E) = [R 0; [p]R R].
Mat6 adjoint(const RigidTransform& e);
/// ad(φ) = [[ω] 0; [v] [ω]]; d/dt Ad(E) = Ad(E)·ad(φ) when Ė = E[φ].
Mat6 lie_bracket(const Vec6& phi);
/// The row nᵀΓ(r) = [(r × n)ᵀ nᵀ]: the normal component of the velocity of the body point r
/// under a body twist is nᵀΓ(r)φ.
Vec6 point_direction_row(const Vec3& r, const Vec3& n);

}  // namespace cholsim::fem::articulated
