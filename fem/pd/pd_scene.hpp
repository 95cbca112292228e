#pragma once
// What a projective-dynamics scene of seed 004 §5 consists of: a rest tet mesh, rigid bones
// that move by script and pull the flesh through zero-rest-length springs (§5.1), collision
// proxies embedded in the rest tets (§3.3, eq. 7), and what they collide with — analytic
// obstacles and, for self-contact, the body itself through its rest shape.
//
// The scenes themselves (elbow, lips, surgery) are built in fem/pd/pd_scenes; the solver in
// fem/pd/projective_dynamics reads this description only.
#include <array>
#include <string>
#include <vector>

#include "fem/contact/obstacles.hpp"
#include "fem/mesh/tet_mesh.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

/// A point carried by a rest tet: p = Σᵢ weights[i]·x(tets[4·tet + i]) (seed 004 eq. 7).
/// Barycentric: weights are ≥ 0 and sum to one.
struct EmbeddedPoint {
  Index tet = 0;
  std::array<double, 4> weights{0.25, 0.25, 0.25, 0.25};
};

/// A rigid bone moving by script: at frame f it is its rest pose rotated by
/// angle(f) = sign·min(|degrees_per_frame|·f, |max_degrees|) about the line through `pivot`
/// along the unit `axis`. A bone with degrees_per_frame = 0 stays at rest.
struct RigidBone {
  std::string name;
  Vec3 pivot;
  Vec3 axis{0.0, 0.0, 1.0};
  double degrees_per_frame = 0.0;
  double max_degrees = 0.0;

  /// Degrees turned at `frame` (0 at frame 0).
  [[nodiscard]] double angle_degrees(double frame) const;
  /// Where the bone's rest point `rest_point` is at `frame`.
  [[nodiscard]] Vec3 transform(const Vec3& rest_point, double frame) const;
};

/// A zero-rest-length spring between a flesh point and a point fixed on a bone (§5.1): always
/// active, so it sits in the constant matrix and only its target moves with the bone.
struct BoneAttachment {
  Index bone = 0;         ///< index into PdScene::bones
  EmbeddedPoint flesh;    ///< the flesh point, embedded in its rest tet
  Vec3 rest_position;     ///< the bone point at rest (= the flesh point's rest position)
};

/// Biphasic strain limiting (seed 004 §5.3): principal stretches outside
/// [lower_stretch, upper_stretch] are pulled back with the extra stiffness
/// stiffness_ratio·μ. Disabled when stiffness_ratio is 0.
struct StrainLimit {
  double lower_stretch = 0.9;
  double upper_stretch = 1.1;
  double stiffness_ratio = 0.0;
};

/// A stitch pulling two flesh points together (seed 004 §5.3's suturing): a zero-rest-length
/// spring, active from the excision on. Both points must lie in collision-prone tets, so the
/// sutures are springs of the Schur system like the collision springs.
struct Suture {
  EmbeddedPoint first;
  EmbeddedPoint second;
};

/// A surgical excision (§5.3): at `frame` these tets are removed — the mesh's topology
/// changes, so the constant matrix is assembled, analysed and partially factored again — and
/// the sutures become active.
struct Excision {
  int frame = -1;                  ///< −1: none
  std::vector<Index> tets;         ///< removed tets (rest numbering)
  std::vector<Suture> sutures;     ///< in rest numbering; their tets must survive the excision
  double suture_stiffness = 0.0;   ///< N/m per suture
};

struct PdScene {
  std::string name;
  TetMesh mesh;                        ///< rest positions and tets, positively oriented
  double shear_modulus = 1.0e4;        ///< μ in Pa; W_e = μ·V_e (§3.2)
  double density = 1000.0;             ///< kg/m³, for backward Euler's mass matrix
  StrainLimit strain_limit;
  std::vector<RigidBone> bones;
  std::vector<BoneAttachment> attachments;
  double attachment_stiffness = 0.0;   ///< N/m per attachment spring
  std::vector<Index> fixed_nodes;      ///< Dirichlet nodes, kept at rest (eliminated)
  std::vector<EmbeddedPoint> proxies;  ///< collision proxies (§3.3)
  double proxy_stiffness = 0.0;        ///< k of eq. 8, N/m per active proxy
  std::vector<Obstacle> obstacles;     ///< analytic, rigid, at rest
  /// Proxies also collide with the body itself, found with the rest-pose distance field
  /// (McAdams et al. 2011) and answered by bilateral springs (§3.3).
  bool self_contact = false;
  Excision excision;                   ///< none unless excision.frame ≥ 0
  int default_frames = 56;             ///< frames of the scripted motion
};

}  // namespace cholsim::fem
