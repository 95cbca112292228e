#pragma once
// Collision detection for the proxies of seed 004 §3.3, run in the local step with the
// targets frozen for the following global step:
//  * against analytic obstacles: a proxy inside one gets a spring to the nearest point of its
//    surface (eq. 8);
//  * against the body itself (§5.1: "rest-pose levelset representations [McAdams 2011]"):
//    a proxy found inside a deformed tet that shares no vertex with its own tet is mapped to
//    the rest shape through that tet's barycentric coordinates, projected onto
//    the rest boundary along the rest distance field, and the projected rest point is
//    embedded in its own rest tet. When that tet is collision-prone too the spring is
//    bilateral (row w_k − w′_k, target 0) so both sides move; otherwise its deformed position
//    is a frozen target.
// The collision-prone tets are searched first, in a uniform grid rebuilt per detection from the
// collision-prone nodes' positions (TetGrid: a query there took a quarter of the BVH's), so the
// inner loop of Algorithm 1 runs on x_c. A proxy
// that went deeper than that layer — a body bent with collisions off and then untangled
// (Fig. 4) — is found among the collision-safe tets, whose BVH is refit once per outer
// iteration (update_safe_positions), when x_s changes.
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "fem/pd/pd_springs.hpp"

namespace cholsim::fem {

class TetBvh;
class TetGrid;
class RestDistanceField;

struct PdCollisionOptions {
  /// Self-contact ignores a proxy whose projected rest surface point lies within this many
  /// mean edge lengths of the proxy's own rest position: that is its own surface folded onto
  /// itself. Must stay below the narrowest gap between surfaces meant to collide (the lips'
  /// slit is two cells).
  double self_exclusion_edges = 1.0;
  /// Grid spacing of the rest distance field in mean edge lengths.
  double distance_field_spacing_edges = 0.5;
  int threads = 2;
};

struct PdDetectionStats {
  Index obstacle_contacts = 0;
  Index self_contacts = 0;        ///< of which …
  Index bilateral_contacts = 0;   ///< … bilateral
  double deepest_penetration = 0.0;  ///< largest depth found, m
};

/// Which tets a detection searches for self-contact.
enum class PdDetectionScope {
  all,         ///< collision-prone, then collision-safe
  prone_only,  ///< collision-prone; deep contacts of the last full detection kept
};

class PdCollisionDetector {
 public:
  /// `prone_elements`: the collision-prone tets E_c (tets holding a proxy, §4.2).
  PdCollisionDetector(const PdScene& scene, std::span<const Index> prone_elements, double mean_edge_length,
                      PdCollisionOptions options = {});
  ~PdCollisionDetector();
  PdCollisionDetector(PdCollisionDetector&&) noexcept;
  PdCollisionDetector& operator=(PdCollisionDetector&&) noexcept;

  /// Refits the collision-safe tets' BVH to `positions`: call once x_s has changed (after a
  /// backward substitution); detect() reads the collision-safe tets at these positions.
  void update_safe_positions(std::span<const double> positions);

  /// The springs of the proxies that penetrate at `positions` (3 per node), stiffness the
  /// scene's proxy_stiffness. `depths` (size proxies, optional) receives each proxy's depth (0
  /// when free). With `scope` = prone_only the collision-safe tets are not searched: a proxy
  /// found among them by the last full detection keeps that detection's spring. Algorithm 1's
  /// later inner iterations use it, because there x_s is eliminated, not fixed — the positions
  /// the collision-safe BVH holds are those of the outer iteration's start, and contacts found
  /// against them would move with every inner iteration (on the elbow untangling, J = 5 then
  /// needed 79 outer iterations against J = 1's 24).
  std::vector<SpringRow> detect(std::span<const double> positions, PdDetectionStats* stats = nullptr,
                                std::span<double> depths = {}, PdDetectionScope scope = PdDetectionScope::all);

 private:
  std::optional<SpringRow> self_contact_spring(std::size_t proxy, const Vec3& point,
                                               std::span<const double> positions, PdDetectionScope scope,
                                               double* depth, bool* deep) const;

  const PdScene* scene_;
  PdCollisionOptions options_;
  double mean_edge_length_ = 0.0;
  std::vector<char> prone_;                 ///< per tet: in E_c
  std::unique_ptr<TetGrid> deformed_prone_;  ///< E_c at the current positions, rebuilt per detection
  std::unique_ptr<TetBvh> deformed_safe_;   ///< E_s at the positions of the last update_safe_positions
  std::vector<std::optional<SpringRow>> deep_springs_;  ///< per proxy: found among E_s at the last full detection
  std::vector<double> deep_depths_;
  std::unique_ptr<TetBvh> rest_all_;        ///< every tet at rest: embeds projected rest points
  std::unique_ptr<RestDistanceField> rest_field_;
};

}  // namespace cholsim::fem
