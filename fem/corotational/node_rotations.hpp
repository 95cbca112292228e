#pragma once
// Per-node rotations of stiffness warping and warp-canceling corotation (seed 000 §3.3):
// "We compute the per-node rotations with Horn's algorithm [1987] on the node's one-ring
// neighbors. The algorithm finds the least-squares quaternion that best rotates the
// neighboring nodes from their material space positions to their world space positions."
//
// For node i with one-ring neighbours j, p_j = m_j − m_i (rest offsets) and q_j = x_j − x_i
// (current offsets), the rotation R maximizing Σ_j q_jᵀ·R·p_j is the unit quaternion
// eigenvector of the largest eigenvalue of Horn's symmetric 4×4 matrix N(S), S = Σ_j p_j·q_jᵀ.
#include <array>
#include <span>
#include <vector>

#include "fem/mesh/tet_mesh.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

/// Eigenvalues (ascending) and orthonormal eigenvectors (columns, column-major 4×4) of a
/// symmetric 4×4 matrix given row-major, by cyclic Jacobi rotations.
struct SymmetricEigen4 {
  std::array<double, 4> values{};
  std::array<double, 16> vectors{};  ///< vector k at [4k, 4k+4)
};
SymmetricEigen4 symmetric_eigen4(const std::array<double, 16>& matrix);

/// Horn's quaternion for the covariance S = Σ p_j·q_jᵀ (rest offsets p, current offsets q):
/// the unit quaternion of the rotation that best maps the p_j onto the q_j (w ≥ 0).
linalg::Quaternion horn_rotation(const linalg::Mat3& covariance);

/// The one-ring graph of a tet mesh and the per-node rotation fit on it.
class NodeRotationFitter {
 public:
  explicit NodeRotationFitter(const TetMesh& rest);

  /// The nodes sharing a tet with `node` (sorted, without the node itself).
  [[nodiscard]] std::span<const Index> neighbours(Index node) const {
    return {neighbours_.data() + offsets_[static_cast<std::size_t>(node)],
            neighbours_.data() + offsets_[static_cast<std::size_t>(node) + 1]};
  }
  [[nodiscard]] Index node_count() const { return static_cast<Index>(offsets_.size()) - 1; }

  /// rotations[i] = Horn's rotation of node i's one-ring from `rest` to `current` (3·nodes
  /// each), computed as the analytic polar decomposition of the one-ring covariance warm
  /// started from the rotations[i] passed in (last step's; anything that is not a rotation
  /// starts from the identity). horn_rotation is the eigenvector reference it agrees with.
  void fit(std::span<const double> rest, std::span<const double> current, std::span<linalg::Mat3> rotations,
           int threads) const;

 private:
  std::vector<std::size_t> offsets_;
  std::vector<Index> neighbours_;
};

}  // namespace cholsim::fem
