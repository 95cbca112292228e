#pragma once
// The test scenes of seed 004 §5, built procedurally at a requested size so that solver
// behaviour can be studied from tens of thousands to the paper's ~650K tets:
//  * "elbow" (§5.1): a bent two-capsule arm, flexed by a scripted forearm bone until the
//    inner side of the elbow folds onto itself; N_c ≈ 3.5 % of the nodes.
//  * "lips" (§5.2): a block of flesh with a mouth slit, closed by a hinged jaw bone so that
//    the lower lip presses on the upper one; N_c ≈ 1.5 % of the nodes.
//  * "surgery" (§5.3): a cleft upper lip pressed on a rigid teeth arch, partly excised at
//    frame 10 and sutured closed; N_c ≈ 1.5 % of the nodes.
// All are voxel meshes (make_implicit_mesh) whose cell size is chosen for the target tet
// count, with collision proxies placed a priori on the surface that will collide (§4.2).
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fem/pd/pd_scene.hpp"

namespace cholsim::fem {

/// Names accepted by make_pd_scene, in a stable order: {"elbow", "lips", "surgery"}.
std::vector<std::string> pd_scene_names();

/// The scene called `name` (see pd_scene_names) with about `target_tets` tets (±10 %).
/// Throws std::invalid_argument for an unknown name (the message lists the known ones) or a
/// target below 1000 tets (too coarse to hold the bones inside the flesh).
PdScene make_pd_scene(std::string_view name, Index target_tets);

/// Seed 004 §5.1, arm flexing at the elbow: an upper-arm capsule from the shoulder to the
/// elbow and a forearm capsule from the elbow to the hand (radius 5 cm, 30 cm each), bent by
/// 20° in the x–y plane at rest. Bone 0 "upper_arm" is fixed; bone 1 "forearm" turns about
/// the elbow (axis +z, flexing towards +y) by 2.5° a frame until the segments' directions are
/// 140° apart. Proxies cover the inner side of the elbow on both segments; self_contact is on.
PdScene make_elbow_scene(Index target_tets);

/// Seed 004 §5.2, lips closing: a 12.1 × 7.9 × 6.1 cm block (x wide, y high, front face at +z)
/// with a mouth slit at mid height (two cell layers, 75 % of the width, 2.5 cm deep) and its
/// back face fixed. Bone 0 "maxilla" holds the upper half still; bone 1 "jaw" in the lower
/// half turns about a hinge along x near the back until the lower lip's front edge has risen
/// by twice the slit's width, i.e. closes the slit and presses on the upper lip. Proxies cover
/// the slit's upper and lower faces near the front; self_contact is on.
PdScene make_lips_scene(Index target_tets);

/// Seed 004 §5.3, cleft lip surgery: an upper lip, a half-cylindrical shell 1.35 cm thick and
/// 3.05 cm high about the y axis (front at +z), wrapped around a rigid teeth arch (a HalfTorus
/// obstacle: tube radius 0.8 cm around a half circle of radius 3 cm) with its inner surface
/// 1.5 mm inside the arch, so that the lip presses on the teeth from the first frame. A cleft
/// two cells wide runs up the middle (at the grid plane nearest x = 0) from the free edge to
/// 2/3 of the height. The top edge and the two lateral ends (z = 0) are fixed; no bones, no
/// self-contact; strain limits {0.9, 1.1, 10} (the biphasic material). At frame 10 of 40 the
/// excision removes the whole cells within ≈ 6 mm of either cleft face over the cleft's height
/// (5.5–7 % of the tets), and 10 sutures (5 heights × 2 depths) pull the widened cleft's sides
/// together. Proxies: first one at each suture point (sutures[i].first, sutures[i].second for
/// i = 0, 1, …: a suture's tets must be collision-prone), then boundary-face centroids on the
/// inner surface within two cells of the teeth and outside the excision, nearest the widened
/// cleft and the teeth first, until N_c ≈ 1.5 % of the nodes (at least 0.75 % besides the
/// suture tets' share, so ≈ 2.3 % at 20K tets).
PdScene make_surgery_scene(Index target_tets);

/// N_c of seed 004 §4.2: the vertices of the tets holding a collision proxy, sorted, unique.
std::vector<Index> collision_prone_nodes(const PdScene& scene);

/// Finds the rest tet that contains a point, for embedding points (eq. 7) in a rest mesh: a
/// uniform grid of buckets (about one tet across) listing the tets whose bounding box meets
/// it. Keeps a pointer to `mesh`, which must outlive the locator.
class RestTetLocator {
 public:
  explicit RestTetLocator(const TetMesh& mesh);

  /// The tet containing `point` and its barycentric weights (≥ 0, summing to 1): of the tets
  /// whose weights are all ≥ −10⁻⁹ the one most inside; the weights are then clamped to ≥ 0
  /// and renormalised (a point on a shared face may sit in either tet). nullopt outside.
  [[nodiscard]] std::optional<EmbeddedPoint> embed(const Vec3& point) const;

 private:
  [[nodiscard]] Index bucket_index(const std::array<Index, 3>& cell) const;
  [[nodiscard]] Index clamped_cell(double coordinate, int axis) const;

  const TetMesh* mesh_;
  Vec3 origin_;
  double bucket_size_ = 1.0;
  std::array<Index, 3> buckets_{1, 1, 1};
  std::vector<Index> bucket_start_;  ///< CSR offsets into bucket_tets_, one per bucket + 1
  std::vector<Index> bucket_tets_;
};

}  // namespace cholsim::fem
