#pragma once
// Zero-rest-length springs on weighted sums of node positions: the bone attachments of seed
// 004 §5.1 (always active) and the short-lived collision springs of §3.3 (eq. 8–10), whose
// energy ½k‖Σᵢ wᵢxᵢ − t‖² is a row w of the embedding matrix W against a target t. A
// bilateral self-contact spring pulls one embedded point onto another, w = w_k − w′_k with
// t = 0, so both sides move (§3.3, "both sides collision-prone").
#include <array>
#include <span>

#include "fem/pd/pd_scene.hpp"

namespace cholsim::fem {

struct SpringRow {
  static constexpr int kMaxTerms = 8;
  std::array<Index, kMaxTerms> nodes{};
  std::array<double, kMaxTerms> weights{};
  int terms = 0;
  Vec3 target;            ///< t
  double stiffness = 0.0; ///< k
  Index proxy = -1;       ///< the collision proxy it answers, −1 for an attachment

  /// Σᵢ wᵢxᵢ at `positions` (3 per node).
  [[nodiscard]] Vec3 evaluate(std::span<const double> positions) const;
  /// ½k‖Σᵢ wᵢxᵢ − t‖².
  [[nodiscard]] double energy(std::span<const double> positions) const;
};

/// The spring of an embedded point against a target: its tet's four nodes and weights.
SpringRow spring_to_target(const TetMesh& mesh, const EmbeddedPoint& point, const Vec3& target,
                           double stiffness);
/// The bilateral spring pulling `point` onto `other` (weights of `other` negated, t = 0).
SpringRow spring_between(const TetMesh& mesh, const EmbeddedPoint& point, const EmbeddedPoint& other,
                         double stiffness);
/// Σᵢ wᵢ·x(node i) of an embedded point at `positions`.
Vec3 embedded_position(const TetMesh& mesh, const EmbeddedPoint& point, std::span<const double> positions);

}  // namespace cholsim::fem
