#include "fem/corotational/node_rotations.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "linalg/parallel_loops.hpp"
#include "linalg/polar_decomposition.hpp"

namespace cholsim::fem {

using linalg::Mat3;
using linalg::Quaternion;
using linalg::Vec3;

SymmetricEigen4 symmetric_eigen4(const std::array<double, 16>& matrix) {
  std::array<double, 16> a = matrix;  // row-major working copy, driven to diagonal
  std::array<double, 16> v{};          // accumulated rotations, row-major: column k = eigenvector k
  for (int i = 0; i < 4; ++i) v[static_cast<std::size_t>(5 * i)] = 1.0;
  auto at = [](std::array<double, 16>& m, int i, int j) -> double& { return m[static_cast<std::size_t>(4 * i + j)]; };
  double scale = 0.0;
  for (double e : a) scale = std::max(scale, std::abs(e));
  for (int sweep = 0; sweep < 50 && scale > 0.0; ++sweep) {
    double off = 0.0;
    for (int p = 0; p < 4; ++p) {
      for (int q = p + 1; q < 4; ++q) off = std::max(off, std::abs(at(a, p, q)));
    }
    // Rotations leave round-off of order ε·scale off the diagonal; below a few ε·scale the
    // eigenvectors are as accurate as the data.
    if (off <= 4.0 * std::numeric_limits<double>::epsilon() * scale) break;
    for (int p = 0; p < 4; ++p) {
      for (int q = p + 1; q < 4; ++q) {
        const double apq = at(a, p, q);
        if (apq == 0.0) continue;
        // Classical Jacobi rotation zeroing a_pq (Golub & Van Loan §8.5.2), stable tangent.
        const double theta = (at(a, q, q) - at(a, p, p)) / (2.0 * apq);
        const double t = std::copysign(1.0, theta) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0);
        const double s = t * c;
        for (int k = 0; k < 4; ++k) {  // A ← A·J
          const double akp = at(a, k, p), akq = at(a, k, q);
          at(a, k, p) = c * akp - s * akq;
          at(a, k, q) = s * akp + c * akq;
        }
        for (int k = 0; k < 4; ++k) {  // A ← Jᵀ·A
          const double apk = at(a, p, k), aqk = at(a, q, k);
          at(a, p, k) = c * apk - s * aqk;
          at(a, q, k) = s * apk + c * aqk;
        }
        at(a, p, q) = at(a, q, p) = 0.0;  // exactly, by the choice of t
        for (int k = 0; k < 4; ++k) {  // V ← V·J
          const double vkp = at(v, k, p), vkq = at(v, k, q);
          at(v, k, p) = c * vkp - s * vkq;
          at(v, k, q) = s * vkp + c * vkq;
        }
      }
    }
  }
  std::array<int, 4> order{0, 1, 2, 3};
  std::sort(order.begin(), order.end(), [&](int i, int j) { return at(a, i, i) < at(a, j, j); });
  SymmetricEigen4 out;
  for (std::size_t k = 0; k < 4; ++k) {
    out.values[k] = at(a, order[k], order[k]);
    for (int i = 0; i < 4; ++i) out.vectors[4 * k + static_cast<std::size_t>(i)] = at(v, i, order[k]);
  }
  return out;
}

Quaternion horn_rotation(const Mat3& s) {
  // Horn (1987), eq. for N: with S_ab = Σ p_a·q_b the quaternion q maximizing qᵀ·N·q is the
  // rotation maximizing Σ q_jᵀ·R·p_j.
  const double sxx = s(0, 0), sxy = s(0, 1), sxz = s(0, 2);
  const double syx = s(1, 0), syy = s(1, 1), syz = s(1, 2);
  const double szx = s(2, 0), szy = s(2, 1), szz = s(2, 2);
  const std::array<double, 16> n{sxx + syy + szz, syz - szy,        szx - sxz,        sxy - syx,  //
                                 syz - szy,       sxx - syy - szz,  sxy + syx,        szx + sxz,  //
                                 szx - sxz,       sxy + syx,        -sxx + syy - szz, syz + szy,  //
                                 sxy - syx,       szx + sxz,        syz + szy,        -sxx - syy + szz};
  const SymmetricEigen4 eigen = symmetric_eigen4(n);
  Quaternion q{eigen.vectors[12], eigen.vectors[13], eigen.vectors[14], eigen.vectors[15]};
  if (q.w < 0.0) q = {-q.w, -q.x, -q.y, -q.z};
  return linalg::normalized(q);
}

namespace {

bool is_rotation(const Mat3& r) {
  const Mat3 deviation = linalg::transpose(r) * r - Mat3::identity();
  double largest = 0.0;
  for (double e : deviation.entries) largest = std::max(largest, std::abs(e));
  return largest < 1e-6 && linalg::determinant(r) > 0.0;  // also false for NaN entries
}

// Horn's maximizer of Σ q_jᵀ·R·p_j = tr(Rᵀ·Sᵀ) is the rotation maximizing tr(Rᵀ·Sᵀ) over
// SO(3) — what the analytic polar decomposition of Sᵀ converges to (seed 003 §3.3). Warm
// started from the node's previous rotation it takes one to three Newton steps where Horn's
// 4×4 eigenproblem takes several Jacobi sweeps; the answer is the same (to the tolerance,
// whose error is its square: working precision). A `previous` that is not a rotation (a
// fresh array) starts from the identity.
Mat3 fit_one_ring(const Mat3& covariance, const Mat3& previous) {
  const Quaternion warm_start = is_rotation(previous) ? linalg::quaternion_from_rotation_matrix(previous)
                                                      : Quaternion{1.0, 0.0, 0.0, 0.0};
  linalg::ApdOptions options;
  options.tolerance = 1e-9;
  return linalg::to_rotation_matrix(
      linalg::analytic_polar_decomposition(linalg::transpose(covariance), warm_start, options));
}

}  // namespace

NodeRotationFitter::NodeRotationFitter(const TetMesh& rest) {
  const auto nodes = static_cast<std::size_t>(rest.node_count());
  std::vector<std::vector<Index>> rings(nodes);
  for (std::size_t t = 0; t < static_cast<std::size_t>(rest.tet_count()); ++t) {
    for (std::size_t a = 0; a < 4; ++a) {
      const Index node = rest.tets[4 * t + a];
      if (node < 0 || static_cast<std::size_t>(node) >= nodes) {
        throw std::invalid_argument("NodeRotationFitter: tet " + std::to_string(t) + " names node " +
                                    std::to_string(node) + " of " + std::to_string(nodes));
      }
      for (std::size_t b = 0; b < 4; ++b) {
        if (a != b) rings[static_cast<std::size_t>(node)].push_back(rest.tets[4 * t + b]);
      }
    }
  }
  offsets_.assign(nodes + 1, 0);
  for (std::size_t i = 0; i < nodes; ++i) {
    auto& ring = rings[i];
    std::sort(ring.begin(), ring.end());
    ring.erase(std::unique(ring.begin(), ring.end()), ring.end());
    offsets_[i + 1] = offsets_[i] + ring.size();
  }
  neighbours_.reserve(offsets_.back());
  for (const auto& ring : rings) neighbours_.insert(neighbours_.end(), ring.begin(), ring.end());
}

void NodeRotationFitter::fit(std::span<const double> rest, std::span<const double> current,
                             std::span<Mat3> rotations, int threads) const {
  const Index nodes = node_count();
  if (rest.size() != 3 * static_cast<std::size_t>(nodes) || current.size() != rest.size() ||
      rotations.size() != static_cast<std::size_t>(nodes)) {
    throw std::invalid_argument("NodeRotationFitter::fit: expected " + std::to_string(nodes) +
                                " nodes' positions and rotations");
  }
  auto point = [](std::span<const double> x, Index i) {
    const auto k = 3 * static_cast<std::size_t>(i);
    return Vec3{x[k], x[k + 1], x[k + 2]};
  };
  linalg::parallel_chunks(nodes, threads, [&](Index begin, Index end) {
    for (Index i = begin; i < end; ++i) {
      const Vec3 rest_center = point(rest, i), current_center = point(current, i);
      Mat3 covariance = Mat3::zero();
      for (const Index j : neighbours(i)) {
        covariance += linalg::outer(point(rest, j) - rest_center, point(current, j) - current_center);
      }
      // A node without neighbours (unused by every tet) has no frame to follow.
      Mat3& rotation = rotations[static_cast<std::size_t>(i)];
      rotation = neighbours(i).empty() ? Mat3::identity() : fit_one_ring(covariance, rotation);
    }
  });
}

}  // namespace cholsim::fem
