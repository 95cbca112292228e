// The procedural scenes of seed 004 §5 and the implicit mesher they are built on: valid,
// size-controlled meshes, N_c fractions near the paper's, exact embeddings, and bones that
// start at rest and reach the scripted pose.
#include "fem/pd/pd_scenes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numbers>
#include <set>
#include <utility>
#include <variant>

#include "fem/mesh/procedural_meshes.hpp"
#include "fem/mesh/test_mesh_io_helpers.hpp"

namespace cholsim::fem {
namespace {

Vec3 position(const TetMesh& mesh, Index node) {
  const auto p = test::node_position(mesh.positions, node);
  return {p[0], p[1], p[2]};
}

/// Σ wᵢ·x(tet vertex i): where an embedded point sits in the rest mesh.
Vec3 embedded_position(const TetMesh& mesh, const EmbeddedPoint& point) {
  Vec3 sum;
  for (std::size_t c = 0; c < 4; ++c) sum += point.weights[c] * position(mesh, mesh.tets[4 * std::size_t(point.tet) + c]);
  return sum;
}

/// The cube edge of a Kuhn voxel mesh: every tet has volume h³/6.
double cell_size_of(const TetMesh& mesh) { return std::cbrt(6.0 * validate_tet_mesh(mesh, "cell").min_volume); }

double angle_degrees(const Vec3& a, const Vec3& b) {
  const double cosine = linalg::dot(a, b) / (linalg::norm(a) * linalg::norm(b));
  return std::acos(std::clamp(cosine, -1.0, 1.0)) * 180.0 / std::numbers::pi;
}

// ---------------------------------------------------------------------------------------------
// make_implicit_mesh

double unit_ball(const Vec3& p) { return linalg::norm(p) - 1.0; }

TEST(ImplicitMesh, BallIsValidConformingAndOfKeptCubes) {
  const double h = 0.15;
  const std::array<double, 6> box{-1, -1, -1, 1, 1, 1};
  const TetMesh ball = make_implicit_mesh(unit_ball, box, h);
  // validate_tet_mesh throws on inverted tets and on faces not shared conformingly.
  const MeshCheck check = validate_tet_mesh(ball, "implicit ball");
  EXPECT_EQ(check.unused_nodes, 0);
  EXPECT_EQ(ball.tet_count(), 6 * count_implicit_cells(unit_ball, box, h));
  EXPECT_NEAR(check.min_volume, h * h * h / 6.0, 1e-12);  // all Kuhn tets, positively oriented
  EXPECT_NEAR(check.total_volume, ball.tet_count() * h * h * h / 6.0, 1e-9);
  EXPECT_NEAR(check.total_volume, 4.0 / 3.0 * std::numbers::pi, 0.05 * 4.0 / 3.0 * std::numbers::pi);
  const SurfaceMesh surface = boundary_surface(ball);
  EXPECT_TRUE(test::is_closed_and_oriented(surface));
  for (Index node = 0; node < ball.node_count(); ++node) {
    ASSERT_LT(unit_ball(position(ball, node)), h * std::sqrt(3.0)) << "node " << node << " far outside the shape";
  }
}

TEST(ImplicitMesh, FullBoxReproducesStructuredTetBox) {
  // A shape filling its box keeps every cube: the same nodes, numbering and Kuhn diagonal as
  // linalg::structured_tet_box, which is what makes neighbouring cubes conform.
  const auto slab = [](const Vec3& p) {
    return std::max({std::abs(p.x - 1.5) - 1.5, std::abs(p.y - 1.0) - 1.0, std::abs(p.z - 0.5) - 0.5});
  };
  const TetMesh mesh = make_implicit_mesh(slab, {0, 0, 0, 3, 2, 1}, 1.0);
  const TetMesh reference = linalg::structured_tet_box(3, 2, 1, 1.0);
  EXPECT_EQ(mesh.tets, reference.tets);
  ASSERT_EQ(mesh.positions.size(), reference.positions.size());
  for (std::size_t v = 0; v < mesh.positions.size(); ++v) EXPECT_NEAR(mesh.positions[v], reference.positions[v], 1e-12);
}

TEST(ImplicitMesh, NumbersOnlyUsedNodesOfAnLShape) {
  // Two bars meeting at a corner: the grid's unused corner must not leave orphan nodes.
  const auto l_shape = [](const Vec3& p) {
    const bool inside = p.z > 0 && p.z < 1 && ((p.x > 0 && p.x < 4 && p.y > 0 && p.y < 1) ||
                                               (p.x > 0 && p.x < 1 && p.y > 0 && p.y < 4));
    return inside ? -1.0 : 1.0;
  };
  const TetMesh mesh = make_implicit_mesh(l_shape, {0, 0, 0, 4, 4, 1}, 1.0);
  const MeshCheck check = validate_tet_mesh(mesh, "L");
  EXPECT_EQ(mesh.tet_count(), 6 * 7);
  EXPECT_EQ(check.unused_nodes, 0);
  EXPECT_EQ(mesh.node_count(), 2 * 16);  // per layer: 5·2 + 2·5 − 2·2 shared
}

TEST(ImplicitMesh, RejectsBadInput) {
  const std::array<double, 6> box{-1, -1, -1, 1, 1, 1};
  EXPECT_THROW(make_implicit_mesh(unit_ball, box, 0.0), std::invalid_argument);
  EXPECT_THROW(make_implicit_mesh(unit_ball, {0, 0, 0, 0, 1, 1}, 0.1), std::invalid_argument);
  EXPECT_THROW(make_implicit_mesh([](const Vec3&) { return 1.0; }, box, 0.1), std::invalid_argument);
  EXPECT_THROW(make_implicit_mesh(unit_ball, box, 1e-7), std::invalid_argument);  // grid overflow
  EXPECT_THROW(cell_size_for_tet_count(unit_ball, box, 5), std::invalid_argument);
}

TEST(ImplicitMesh, CellSizeForTetCountHitsTheTarget) {
  // A thin torus fills little of its box, so the first box-volume guess is far off.
  const auto torus = [](const Vec3& p) {
    return std::hypot(std::hypot(p.x, p.y) - 0.8, p.z) - 0.15;
  };
  const std::array<double, 6> box{-1, -1, -0.2, 1, 1, 0.2};
  for (const Index target : {3'000, 40'000}) {
    const double h = cell_size_for_tet_count(torus, box, target);
    const double tets = 6.0 * count_implicit_cells(torus, box, h);
    EXPECT_NEAR(tets / target, 1.0, 0.05) << "target " << target;
  }
}

TEST(ImplicitMesh, CellSizeForACellSizedShapeHitsTheTarget) {
  // A slab with a groove one cell deep on top: the shape changes with the cell size, and the
  // count must follow it.
  const CellSizedShape grooved = [](double h) -> SignedDistance {
    return [h](const Vec3& p) {
      const double slab = std::max({std::abs(p.x) - 1.0, std::abs(p.y) - 1.0, std::abs(p.z) - 0.1});
      const double groove = std::max(std::abs(p.x) - 0.9, p.z < 0.1 - h ? 1.0 : -1.0);
      return std::max(slab, -groove);
    };
  };
  const std::array<double, 6> box{-1, -1, -0.1, 1, 1, 0.1};
  const double h = cell_size_for_tet_count(grooved, box, 30'000);
  EXPECT_NEAR(6.0 * count_implicit_cells(grooved(h), box, h) / 30'000.0, 1.0, 0.05);
  const linalg::Vec3 origin = implicit_grid_origin(box, h);
  const TetMesh mesh = make_implicit_mesh(grooved(h), box, h);
  EXPECT_NEAR(bounding_box(mesh.positions)[0], origin.x, 1e-12);  // the slab fills x from the grid's start
}

// ---------------------------------------------------------------------------------------------
// The scenes: properties every scene must have

struct SceneCase {
  const char* name;
  Index target_tets;
  double min_prone_fraction;  ///< band around seed 004's N_c / nodes
  double max_prone_fraction;
  std::size_t bones;          ///< elbow and lips are driven by two bones, the surgery by none
  /// §5.1–5.2 collide only with themselves, §5.3 only with the rigid teeth.
  bool self_contact;
};

void PrintTo(const SceneCase& scene, std::ostream* out) { *out << scene.name << "@" << scene.target_tets; }

/// Scenes are built once per (name, size) and shared by the tests.
const PdScene& cached_scene(const std::string& name, Index target_tets) {
  static std::map<std::pair<std::string, Index>, PdScene> scenes;
  const auto key = std::make_pair(name, target_tets);
  auto found = scenes.find(key);
  if (found == scenes.end()) found = scenes.emplace(key, make_pd_scene(name, target_tets)).first;
  return found->second;
}

/// The surgery's first 2·sutures proxies mark its suture points' tets collision-prone (checked
/// by SurgeryPdSceneTest); the rest, in every scene, sit on the surface.
std::size_t suture_proxy_count(const PdScene& scene) { return 2 * scene.excision.sutures.size(); }

class PdSceneTest : public ::testing::TestWithParam<SceneCase> {
 protected:
  const PdScene& scene() const { return cached_scene(GetParam().name, GetParam().target_tets); }
};

TEST_P(PdSceneTest, MeshIsValidAndOfTheTargetSize) {
  const MeshCheck check = validate_tet_mesh(scene().mesh, scene().name);
  EXPECT_EQ(check.unused_nodes, 0);
  EXPECT_NEAR(double(scene().mesh.tet_count()) / GetParam().target_tets, 1.0, 0.10);
  EXPECT_TRUE(test::is_closed_and_oriented(boundary_surface(scene().mesh)));
}

TEST_P(PdSceneTest, CollisionProneFractionIsNearThePapers) {
  // Seed 004 §4.2: N_c, the vertices of tets holding a proxy, a small known fraction.
  const std::vector<Index> prone = collision_prone_nodes(scene());
  ASSERT_TRUE(std::is_sorted(prone.begin(), prone.end()));
  ASSERT_EQ(std::adjacent_find(prone.begin(), prone.end()), prone.end());
  const double fraction = double(prone.size()) / scene().mesh.node_count();
  EXPECT_GE(fraction, GetParam().min_prone_fraction);
  EXPECT_LE(fraction, GetParam().max_prone_fraction);
}

void expect_barycentric(const EmbeddedPoint& point, Index tet_count, const char* what, std::size_t index) {
  ASSERT_GE(point.tet, 0) << what << " " << index;
  ASSERT_LT(point.tet, tet_count) << what << " " << index;
  double sum = 0.0;
  for (const double weight : point.weights) {
    EXPECT_GE(weight, 0.0) << what << " " << index;
    sum += weight;
  }
  EXPECT_NEAR(sum, 1.0, 1e-12) << what << " " << index;
}

TEST_P(PdSceneTest, AttachmentsEmbedTheirBonePointsExactly) {
  const PdScene& s = scene();
  const double tolerance = 1e-9 * cell_size_of(s.mesh);
  for (std::size_t a = 0; a < s.attachments.size(); ++a) {
    const BoneAttachment& attachment = s.attachments[a];
    expect_barycentric(attachment.flesh, s.mesh.tet_count(), "attachment", a);
    const Vec3 embedded = embedded_position(s.mesh, attachment.flesh);
    ASSERT_LT(linalg::norm(embedded - attachment.rest_position), tolerance) << "attachment " << a;
  }
}

TEST_P(PdSceneTest, ProxiesSitOnBoundaryFaceCentroids) {
  const PdScene& s = scene();
  ASSERT_FALSE(s.proxies.empty());
  std::set<std::array<Index, 3>> boundary;
  const SurfaceMesh surface = boundary_surface(s.mesh);
  for (Index t = 0; t < surface.triangle_count(); ++t) {
    std::array<Index, 3> face{surface.triangles[3 * std::size_t(t)], surface.triangles[3 * std::size_t(t) + 1],
                              surface.triangles[3 * std::size_t(t) + 2]};
    std::sort(face.begin(), face.end());
    boundary.insert(face);
  }
  ASSERT_GT(s.proxies.size(), suture_proxy_count(s));
  for (std::size_t p = suture_proxy_count(s); p < s.proxies.size(); ++p) {
    const EmbeddedPoint& proxy = s.proxies[p];
    expect_barycentric(proxy, s.mesh.tet_count(), "proxy", p);
    std::vector<Index> face;
    Vec3 centroid;
    for (std::size_t c = 0; c < 4; ++c) {
      if (proxy.weights[c] == 0.0) continue;
      EXPECT_NEAR(proxy.weights[c], 1.0 / 3.0, 1e-15) << "proxy " << p;
      face.push_back(s.mesh.tets[4 * std::size_t(proxy.tet) + c]);
      centroid += position(s.mesh, face.back()) / 3.0;
    }
    ASSERT_EQ(face.size(), 3u) << "proxy " << p;
    std::sort(face.begin(), face.end());
    EXPECT_TRUE(boundary.count({face[0], face[1], face[2]})) << "proxy " << p << " is not on the boundary";
    EXPECT_LT(linalg::norm(embedded_position(s.mesh, proxy) - centroid), 1e-12);
  }
}

TEST_P(PdSceneTest, BonesStartAtRestAndAllHoldTheFlesh) {
  const PdScene& s = scene();
  ASSERT_EQ(s.bones.size(), GetParam().bones);
  std::vector<int> attachments_per_bone(s.bones.size(), 0);
  for (const BoneAttachment& attachment : s.attachments) {
    ASSERT_GE(attachment.bone, 0);
    ASSERT_LT(std::size_t(attachment.bone), s.bones.size());
    ++attachments_per_bone[std::size_t(attachment.bone)];
    EXPECT_EQ(s.bones[std::size_t(attachment.bone)].transform(attachment.rest_position, 0.0), attachment.rest_position);
  }
  for (std::size_t b = 0; b < s.bones.size(); ++b) {
    EXPECT_GT(attachments_per_bone[b], 20) << s.bones[b].name;
    EXPECT_NEAR(linalg::norm(s.bones[b].axis), 1.0, 1e-12) << s.bones[b].name;
  }
  EXPECT_GT(s.attachment_stiffness, 0.0);
  EXPECT_GT(s.proxy_stiffness, s.attachment_stiffness);
  EXPECT_EQ(s.self_contact, GetParam().self_contact);
  EXPECT_EQ(s.obstacles.empty(), GetParam().self_contact);
}

INSTANTIATE_TEST_SUITE_P(Scenes, PdSceneTest,
                         ::testing::Values(SceneCase{"elbow", 20'000, 0.025, 0.05, 2, true},
                                           SceneCase{"lips", 20'000, 0.01, 0.025, 2, true},
                                           SceneCase{"elbow", 100'000, 0.025, 0.05, 2, true},
                                           SceneCase{"surgery", 20'000, 0.01, 0.025, 0, false},
                                           SceneCase{"surgery", 100'000, 0.01, 0.025, 0, false}),
                         [](const auto& info) {
                           return std::string(info.param.name) + "_" + std::to_string(info.param.target_tets);
                         });

// ---------------------------------------------------------------------------------------------
// Scene-specific script and placement

/// Mean rest position of a bone's attachments: on its axis (rings are symmetric about it).
Vec3 attachment_centroid(const PdScene& scene, Index bone, double frame) {
  Vec3 sum;
  int count = 0;
  for (const BoneAttachment& attachment : scene.attachments) {
    if (attachment.bone != bone) continue;
    sum += scene.bones[std::size_t(bone)].transform(attachment.rest_position, frame);
    ++count;
  }
  return sum / double(count);
}

TEST(ElbowPdScene, ForearmFlexesFrom20To140Degrees) {
  const PdScene& scene = cached_scene("elbow", 20'000);
  ASSERT_EQ(scene.bones.size(), 2u);
  EXPECT_EQ(scene.bones[0].degrees_per_frame, 0.0);
  EXPECT_EQ(scene.bones[1].degrees_per_frame, 2.5);
  const Vec3 elbow = scene.bones[1].pivot;
  const Vec3 upper = elbow - attachment_centroid(scene, 0, 0.0);  // shoulder → elbow
  auto flexion = [&](double frame) { return angle_degrees(upper, attachment_centroid(scene, 1, frame) - elbow); };
  EXPECT_NEAR(flexion(0.0), 20.0, 0.5);
  EXPECT_NEAR(flexion(scene.default_frames), 140.0, 0.5);
  // The last few frames hold the pose rather than stop at the first flexed frame.
  EXPECT_NEAR(flexion(scene.default_frames - 4), 140.0, 0.5);
  // The upper arm stays put.
  EXPECT_EQ(attachment_centroid(scene, 0, scene.default_frames), attachment_centroid(scene, 0, 0.0));
}

TEST(ElbowPdScene, ProxiesCoverTheInnerFoldOfBothSegments) {
  const PdScene& scene = cached_scene("elbow", 20'000);
  const double h = cell_size_of(scene.mesh);
  const Vec3 forearm{std::cos(20.0 * std::numbers::pi / 180.0), std::sin(20.0 * std::numbers::pi / 180.0), 0.0};
  int on_upper = 0;
  int on_forearm = 0;
  for (const EmbeddedPoint& proxy : scene.proxies) {
    const Vec3 p = embedded_position(scene.mesh, proxy);
    // Both inner sides face +y (the flexion turns the forearm towards +y); the outer side and
    // the far ends of the arm hold no proxies.
    EXPECT_GT(p.y, 0.0);
    EXPECT_LT(linalg::norm(p), 0.2);
    on_upper += p.x < -h;
    on_forearm += linalg::dot(p, forearm) > h;
  }
  EXPECT_GT(on_upper, 10);
  EXPECT_GT(on_forearm, 10);
}

TEST(LipsPdScene, JawClosesTheSlitAndPressesTheLips) {
  const PdScene& scene = cached_scene("lips", 20'000);
  const double h = cell_size_of(scene.mesh);
  // The slit's width from the proxies on its two faces.
  double upper_lip = std::numeric_limits<double>::infinity();
  double lower_lip = -upper_lip;
  double front = -upper_lip;
  for (const EmbeddedPoint& proxy : scene.proxies) {
    const Vec3 p = embedded_position(scene.mesh, proxy);
    if (p.y > 0.0) upper_lip = std::min(upper_lip, p.y);
    if (p.y < 0.0) lower_lip = std::max(lower_lip, p.y);
    front = std::max(front, p.z);
  }
  const double slit = upper_lip - lower_lip;
  EXPECT_NEAR(slit, 2.0 * h, 1e-9);  // two cell layers
  ASSERT_EQ(scene.bones.size(), 2u);
  const RigidBone& jaw = scene.bones[1];
  EXPECT_EQ(scene.bones[0].degrees_per_frame, 0.0);
  const Vec3 lower_lip_front{0.0, lower_lip, front};
  const double travel = jaw.transform(lower_lip_front, scene.default_frames).y - lower_lip;
  EXPECT_GT(travel, 1.5 * slit);  // closes the slit and presses on
  EXPECT_LT(travel, 2.5 * slit);
  EXPECT_EQ(jaw.transform(lower_lip_front, 0.0), lower_lip_front);
}

TEST(LipsPdScene, BackFaceIsFixedAndOnlyIt) {
  const PdScene& scene = cached_scene("lips", 20'000);
  const double back = bounding_box(scene.mesh.positions)[2];
  ASSERT_FALSE(scene.fixed_nodes.empty());
  std::size_t on_back = 0;
  for (Index node = 0; node < scene.mesh.node_count(); ++node) on_back += position(scene.mesh, node).z == back;
  EXPECT_EQ(scene.fixed_nodes.size(), on_back);
  for (const Index node : scene.fixed_nodes) EXPECT_EQ(position(scene.mesh, node).z, back);
}

// ---------------------------------------------------------------------------------------------
// Surgery (seed 004 §5.3): a cleft upper lip on the teeth, excised and sutured

class SurgeryPdSceneTest : public ::testing::TestWithParam<Index> {
 protected:
  const PdScene& scene() const { return cached_scene("surgery", GetParam()); }
  double cell() const { return cell_size_of(scene().mesh); }

  /// Per rest tet: whether the excision removes it.
  std::vector<bool> excised() const {
    std::vector<bool> flags(std::size_t(scene().mesh.tet_count()), false);
    for (const Index tet : scene().excision.tets) flags[std::size_t(tet)] = true;
    return flags;
  }
};

Vec3 tet_centroid(const TetMesh& mesh, Index tet) {
  Vec3 sum;
  for (std::size_t c = 0; c < 4; ++c) sum += position(mesh, mesh.tets[4 * std::size_t(tet) + c]) / 4.0;
  return sum;
}

TEST_P(SurgeryPdSceneTest, IsASoftStrainLimitedLipOnRigidTeeth) {
  const PdScene& s = scene();
  EXPECT_EQ(s.shear_modulus, 1.0e4);
  EXPECT_EQ(s.strain_limit.lower_stretch, 0.9);
  EXPECT_EQ(s.strain_limit.upper_stretch, 1.1);
  EXPECT_EQ(s.strain_limit.stiffness_ratio, 10.0);
  EXPECT_TRUE(s.bones.empty());
  EXPECT_TRUE(s.attachments.empty());
  EXPECT_FALSE(s.self_contact);
  ASSERT_EQ(s.obstacles.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<HalfTorus>(s.obstacles[0]));
  const auto& teeth = std::get<HalfTorus>(s.obstacles[0]);
  EXPECT_NEAR(teeth.tube_radius, 0.008, 1e-12);
  EXPECT_NEAR(teeth.arch_radius, 0.03, 1e-12);
  EXPECT_EQ(s.excision.frame, 10);
  EXPECT_EQ(s.default_frames, 40);
  const double mu_h = s.shear_modulus * cell();
  EXPECT_NEAR(s.proxy_stiffness, 200.0 * mu_h, 1e-9 * mu_h);
  EXPECT_NEAR(s.excision.suture_stiffness, 500.0 * mu_h, 1e-9 * mu_h);
  // The lip's middle lies in front of the arch's middle (+z), wrapped around it.
  const std::array<double, 6> box = bounding_box(s.mesh.positions);
  EXPECT_GT(box[5], teeth.arch_radius + teeth.tube_radius);
  EXPECT_LT(box[3] - box[0], 0.11);
  EXPECT_GT(box[3] - box[0], 2.0 * (teeth.arch_radius + teeth.tube_radius));
}

TEST_P(SurgeryPdSceneTest, FaceProxiesRestOnTheTeethAndSomePressIntoThem) {
  // Suture proxies (the first 2·sutures) lie deep in the lip and are checked below; the others
  // are on the lip's inner surface next to the teeth, overlapping them where the lip presses.
  const PdScene& s = scene();
  const double h = cell();
  int penetrating = 0;
  int left = 0;
  int right = 0;
  const std::size_t first = suture_proxy_count(s);
  ASSERT_GT(s.proxies.size(), first + 10);
  for (std::size_t p = first; p < s.proxies.size(); ++p) {
    const Vec3 x = embedded_position(s.mesh, s.proxies[p]);
    const double distance = nearest_obstacle(s.obstacles, x, 0.0).distance;
    EXPECT_LT(distance, 2.0 * h) << "proxy " << p << " is far from the teeth";
    EXPECT_GT(distance, -2.0 * h) << "proxy " << p << " is deep inside the teeth";
    penetrating += distance < 0.0;
    left += x.x < 0.0;
    right += x.x > 0.0;
  }
  EXPECT_GT(penetrating, 5);
  // Beside the cleft: on both of its sides, near the middle of the lip.
  const double face_proxies = double(s.proxies.size() - first);
  EXPECT_GT(left, 0.3 * face_proxies);
  EXPECT_GT(right, 0.3 * face_proxies);
}

TEST_P(SurgeryPdSceneTest, ExcisionIsAThinBandBesideTheCleftAndLeavesAValidMesh) {
  const PdScene& s = scene();
  const std::vector<Index>& tets = s.excision.tets;
  ASSERT_FALSE(tets.empty());
  EXPECT_GE(tets.front(), 0);
  EXPECT_LT(tets.back(), s.mesh.tet_count());
  EXPECT_TRUE(std::adjacent_find(tets.begin(), tets.end(), std::greater_equal<>()) == tets.end())
      << "excised tets must be strictly increasing";
  const double fraction = double(tets.size()) / double(s.mesh.tet_count());
  EXPECT_GE(fraction, 0.03);
  EXPECT_LE(fraction, 0.10);
  // Both sides of the cleft, in its lower part, within a couple of cm of the middle.
  const std::array<double, 6> box = bounding_box(s.mesh.positions);
  std::size_t left = 0;
  for (const Index tet : tets) {
    const Vec3 c = tet_centroid(s.mesh, tet);
    left += c.x < 0.0;
    EXPECT_LT(std::abs(c.x), 0.015);
    EXPECT_LT(c.y, box[1] + 0.75 * (box[4] - box[1]));
  }
  EXPECT_GT(left, 0.4 * double(tets.size()));
  EXPECT_LT(left, 0.6 * double(tets.size()));
  // What remains is still a valid, closed mesh: the excision cuts whole cells.
  const std::vector<bool> gone = excised();
  TetMesh cut;
  cut.positions = s.mesh.positions;
  for (Index tet = 0; tet < s.mesh.tet_count(); ++tet) {
    if (gone[std::size_t(tet)]) continue;
    for (std::size_t c = 0; c < 4; ++c) cut.tets.push_back(s.mesh.tets[4 * std::size_t(tet) + c]);
  }
  cut = remove_unused_nodes(cut);
  EXPECT_EQ(validate_tet_mesh(cut, "surgery after excision").unused_nodes, 0);
  EXPECT_TRUE(test::is_closed_and_oriented(boundary_surface(cut)));
}

TEST_P(SurgeryPdSceneTest, SutureAndProxyTetsSurviveAndSutureTetsAreCollisionProne) {
  const PdScene& s = scene();
  const std::vector<bool> gone = excised();
  std::set<Index> proxy_tets;
  for (std::size_t p = 0; p < s.proxies.size(); ++p) {
    EXPECT_FALSE(gone[std::size_t(s.proxies[p].tet)]) << "proxy " << p << " is excised";
    proxy_tets.insert(s.proxies[p].tet);
  }
  const std::vector<Suture>& sutures = s.excision.sutures;
  ASSERT_LE(2 * sutures.size(), s.proxies.size());
  for (std::size_t i = 0; i < sutures.size(); ++i) {
    for (const EmbeddedPoint* end : {&sutures[i].first, &sutures[i].second}) {
      expect_barycentric(*end, s.mesh.tet_count(), "suture", i);
      EXPECT_FALSE(gone[std::size_t(end->tet)]) << "suture " << i << " is excised";
      EXPECT_TRUE(proxy_tets.count(end->tet)) << "suture " << i << " is not in a collision-prone tet";
    }
    // The documented order: the suture points are proxies 2i and 2i + 1.
    EXPECT_EQ(s.proxies[2 * i].tet, sutures[i].first.tet);
    EXPECT_EQ(s.proxies[2 * i].weights, sutures[i].first.weights);
    EXPECT_EQ(s.proxies[2 * i + 1].tet, sutures[i].second.tet);
    EXPECT_EQ(s.proxies[2 * i + 1].weights, sutures[i].second.weights);
  }
}

TEST_P(SurgeryPdSceneTest, SuturesFaceEachOtherAcrossTheWidenedCleft) {
  const PdScene& s = scene();
  const std::vector<Suture>& sutures = s.excision.sutures;
  ASSERT_GE(sutures.size(), 10u);
  ASSERT_LE(sutures.size(), 30u);
  double excised_low = std::numeric_limits<double>::infinity();
  double excised_high = -excised_low;
  double excised_top = -excised_low;
  for (const Index tet : s.excision.tets) {
    const Vec3 c = tet_centroid(s.mesh, tet);
    excised_low = std::min(excised_low, c.x);
    excised_high = std::max(excised_high, c.x);
    excised_top = std::max(excised_top, c.y);
  }
  std::set<double> heights;  // distinct levels, in tenths of a millimetre
  std::set<double> depths;
  for (std::size_t i = 0; i < sutures.size(); ++i) {
    const Vec3 a = embedded_position(s.mesh, sutures[i].first);
    const Vec3 b = embedded_position(s.mesh, sutures[i].second);
    // Opposite sides, beyond the excised band, level with each other.
    EXPECT_LT(a.x, excised_low) << "suture " << i;
    EXPECT_GT(b.x, excised_high) << "suture " << i;
    EXPECT_NEAR(a.y, b.y, 1e-12) << "suture " << i;
    EXPECT_NEAR(a.z, b.z, 1e-12) << "suture " << i;
    EXPECT_LT(a.y, excised_top) << "suture " << i << " is above the cleft";
    // Rounded to 0.1 mm so that rounding in the embedding cannot make up extra levels.
    heights.insert(std::round(a.y * 1e4));
    depths.insert(std::round(std::hypot(a.x, a.z) * 1e4));
  }
  EXPECT_GE(heights.size(), 3u);
  EXPECT_GE(depths.size(), 2u);
}

TEST_P(SurgeryPdSceneTest, TopEdgeAndBothEndsAreFixedAndOnlyThem) {
  const PdScene& s = scene();
  const std::array<double, 6> box = bounding_box(s.mesh.positions);
  const double top = box[4];
  const double ends = box[2];
  std::set<Index> fixed(s.fixed_nodes.begin(), s.fixed_nodes.end());
  EXPECT_EQ(fixed.size(), s.fixed_nodes.size()) << "fixed nodes repeat";
  int left_end = 0;
  int right_end = 0;
  for (Index node = 0; node < s.mesh.node_count(); ++node) {
    const Vec3 x = position(s.mesh, node);
    const bool boundary = x.y == top || x.z == ends;
    EXPECT_EQ(fixed.count(node) == 1, boundary) << "node " << node << " at (" << x.x << ", " << x.y << ", " << x.z << ")";
    left_end += x.z == ends && x.x < 0.0;
    right_end += x.z == ends && x.x > 0.0;
  }
  EXPECT_GT(left_end, 10);
  EXPECT_GT(right_end, 10);
}

INSTANTIATE_TEST_SUITE_P(Sizes, SurgeryPdSceneTest, ::testing::Values(Index{20'000}, Index{100'000}),
                         [](const auto& info) { return std::to_string(info.param); });

TEST(PdSceneRegistry, NamesBuildAndUnknownNamesAreListed) {
  EXPECT_EQ(pd_scene_names(), (std::vector<std::string>{"elbow", "lips", "surgery"}));
  EXPECT_EQ(make_pd_scene("lips", 20'000).mesh.tets, cached_scene("lips", 20'000).mesh.tets);
  const PdScene surgery = make_pd_scene("surgery", 20'000);
  EXPECT_EQ(surgery.name, "surgery");
  EXPECT_EQ(surgery.mesh.tets, make_surgery_scene(20'000).mesh.tets);
  try {
    (void)make_pd_scene("knee", 20'000);
    FAIL() << "an unknown scene must throw";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("elbow, lips, surgery"), std::string::npos) << error.what();
  }
  EXPECT_THROW((void)make_pd_scene("elbow", 100), std::invalid_argument);
  EXPECT_THROW((void)make_pd_scene("surgery", 100), std::invalid_argument);
}

TEST(RestTetLocatorPdScene, FindsContainingTetOrNothing) {
  const TetMesh box = linalg::structured_tet_box(3, 3, 3, 1.0);
  const RestTetLocator locator(box);
  for (const Vec3 point : {Vec3{0.3, 1.7, 2.2}, Vec3{1.0, 1.0, 1.0}, Vec3{3.0, 0.0, 1.5}}) {
    const std::optional<EmbeddedPoint> found = locator.embed(point);
    ASSERT_TRUE(found.has_value());
    expect_barycentric(*found, box.tet_count(), "point", 0);
    EXPECT_LT(linalg::norm(embedded_position(box, *found) - point), 1e-12);
  }
  EXPECT_FALSE(locator.embed({3.1, 1.0, 1.0}).has_value());
  EXPECT_FALSE(locator.embed({-5.0, 1.0, 1.0}).has_value());
}

}  // namespace
}  // namespace cholsim::fem
