#include "fem/pd/pd_scenes.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

#include "fem/mesh/procedural_meshes.hpp"

namespace cholsim::fem {
namespace {

using linalg::cross;
using linalg::dot;
using linalg::norm;
using linalg::normalized;

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

double radians(double degrees) { return degrees * std::numbers::pi / 180.0; }
double degrees(double radians) { return radians * 180.0 / std::numbers::pi; }

/// The scenes need a few cells across every limb so the bones sit inside the flesh.
constexpr Index minimum_target_tets = 10'000;

// ---------------------------------------------------------------------------------------------
// Shapes

Vec3 closest_on_segment(const Vec3& point, const Vec3& a, const Vec3& b) {
  const Vec3 ab = b - a;
  const double t = std::clamp(dot(point - a, ab) / dot(ab, ab), 0.0, 1.0);
  return a + t * ab;
}

// Limbs and bones are fem::Capsule (fem/contact/obstacles.hpp): the flesh shapes use its
// signed distance, the bones its surface.
double signed_distance(const Capsule& capsule, const Vec3& point) {
  return proximity(Obstacle{capsule}, point, 0.0).distance;
}

std::array<double, 6> bounds_of(const Capsule& capsule) {
  const Vec3& a = capsule.end_a;
  const Vec3& b = capsule.end_b;
  const double r = capsule.radius;
  return {std::min(a.x, b.x) - r, std::min(a.y, b.y) - r, std::min(a.z, b.z) - r,
          std::max(a.x, b.x) + r, std::max(a.y, b.y) + r, std::max(a.z, b.z) + r};
}

std::array<double, 6> union_of(const std::array<double, 6>& first, const std::array<double, 6>& second) {
  std::array<double, 6> box{};
  for (std::size_t a = 0; a < 3; ++a) {
    box[a] = std::min(first[a], second[a]);
    box[a + 3] = std::max(first[a + 3], second[a + 3]);
  }
  return box;
}

/// Signed distance to the axis-aligned box [low, high] (exact outside and inside).
double box_signed_distance(const Vec3& point, const Vec3& low, const Vec3& high) {
  double outside = 0.0;
  double inside = -std::numeric_limits<double>::infinity();
  for (int a = 0; a < 3; ++a) {
    const double excess = std::max(low[a] - point[a], point[a] - high[a]);
    outside += std::max(excess, 0.0) * std::max(excess, 0.0);
    inside = std::max(inside, excess);
  }
  return std::sqrt(outside) + std::min(inside, 0.0);
}

/// The plane of a cube grid (origin `grid_origin`, spacing `cell_size`, along one axis) nearest
/// `value`: scenes put their slits there so they lie between whole cells at every size.
double nearest_grid_plane(double value, double grid_origin, double cell_size) {
  return grid_origin + std::round((value - grid_origin) / cell_size) * cell_size;
}

/// A unit vector orthogonal to the unit `direction`.
Vec3 any_orthogonal(const Vec3& direction) {
  const Vec3 helper = std::abs(direction.x) < 0.9 ? Vec3{1.0, 0.0, 0.0} : Vec3{0.0, 1.0, 0.0};
  return normalized(cross(direction, helper));
}

/// Points spread over the capsule's surface about `spacing` apart (seed 004 §5.1: attachment
/// springs "uniformly sampled over the bone surface"): rings along the cylinder, latitude
/// rings on the two hemispherical caps, each ring with ≈ circumference/spacing points.
std::vector<Vec3> capsule_surface_samples(const Capsule& capsule, double spacing) {
  const Vec3 axis = capsule.end_b - capsule.end_a;
  const double length = norm(axis);
  const Vec3 along = normalized(axis);
  const Vec3 across = any_orthogonal(along);
  const Vec3 across_too = cross(along, across);
  std::vector<Vec3> samples;
  auto ring = [&](const Vec3& centre, double ring_radius) {
    const long count = std::max(1L, std::lround(2.0 * std::numbers::pi * ring_radius / spacing));
    for (long m = 0; m < count; ++m) {
      const double angle = 2.0 * std::numbers::pi * double(m) / double(count);
      samples.push_back(centre + ring_radius * (std::cos(angle) * across + std::sin(angle) * across_too));
    }
  };
  const long rings_along = std::max(1L, std::lround(length / spacing));
  for (long m = 0; m <= rings_along; ++m) ring(capsule.end_a + (length * double(m) / double(rings_along)) * along, capsule.radius);
  const long latitudes = std::max(1L, std::lround(0.5 * std::numbers::pi * capsule.radius / spacing));
  for (long k = 1; k <= latitudes; ++k) {
    const double latitude = 0.5 * std::numbers::pi * double(k) / double(latitudes);
    const double height = capsule.radius * std::sin(latitude);
    // cos(π/2) is 6e-17, not 0: the pole is one point either way (ring() rounds to one).
    const double ring_radius = capsule.radius * std::cos(latitude);
    ring(capsule.end_b + height * along, ring_radius);
    ring(capsule.end_a - height * along, ring_radius);
  }
  return samples;
}

// ---------------------------------------------------------------------------------------------
// What every scene shares: bone attachments, boundary faces, proxies, stiffnesses

/// Zero-rest-length springs from bone `bone` to the flesh at points sampled one cell apart over
/// its surface (seed 004 §5.1); a sample outside the flesh is a bug in the scene's geometry.
void attach_bone(PdScene& scene, Index bone, const Capsule& capsule, double spacing, const RestTetLocator& locator) {
  for (const Vec3& point : capsule_surface_samples(capsule, spacing)) {
    const std::optional<EmbeddedPoint> flesh = locator.embed(point);
    if (!flesh) {
      throw std::logic_error(scene.name + " scene: bone '" + scene.bones[at(bone)].name + "' sample (" +
                             std::to_string(point.x) + ", " + std::to_string(point.y) + ", " +
                             std::to_string(point.z) + ") lies outside the flesh mesh");
    }
    scene.attachments.push_back({bone, *flesh, point});
  }
}

/// A boundary triangle (outward, as boundary_surface gives it) and the one tet it belongs to.
struct BoundaryFace {
  std::array<Index, 3> nodes{};
  Index tet = 0;
  Vec3 centroid;
  Vec3 normal;  ///< unit, outward
};

std::vector<BoundaryFace> boundary_faces(const TetMesh& mesh) {
  const SurfaceMesh surface = boundary_surface(mesh);
  // Node → incident tets (CSR), to find the one tet of each boundary triangle.
  std::vector<Index> start(at(mesh.node_count()) + 1, 0);
  for (const Index node : mesh.tets) ++start[at(node) + 1];
  for (std::size_t n = 1; n < start.size(); ++n) start[n] += start[n - 1];
  std::vector<Index> incident(mesh.tets.size());
  std::vector<Index> fill(start.begin(), start.end() - 1);
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    for (std::size_t c = 0; c < 4; ++c) incident[at(fill[at(mesh.tets[4 * at(tet) + c])]++)] = tet;
  }
  auto holds = [&](Index tet, Index node) {
    const auto first = mesh.tets.begin() + 4 * std::ptrdiff_t{tet};
    return std::find(first, first + 4, node) != first + 4;
  };
  std::vector<BoundaryFace> faces(at(surface.triangle_count()));
  for (Index t = 0; t < surface.triangle_count(); ++t) {
    BoundaryFace& face = faces[at(t)];
    for (std::size_t s = 0; s < 3; ++s) face.nodes[s] = surface.triangles[3 * at(t) + s];
    const auto owner = std::find_if(incident.begin() + start[at(face.nodes[0])],
                                    incident.begin() + start[at(face.nodes[0]) + 1],
                                    [&](Index tet) { return holds(tet, face.nodes[1]) && holds(tet, face.nodes[2]); });
    face.tet = *owner;  // a boundary triangle is a face of exactly one tet
    const Vec3 x0 = node_position(mesh.positions, face.nodes[0]);
    const Vec3 x1 = node_position(mesh.positions, face.nodes[1]);
    const Vec3 x2 = node_position(mesh.positions, face.nodes[2]);
    face.centroid = (x0 + x1 + x2) / 3.0;
    face.normal = normalized(cross(x1 - x0, x2 - x0));
  }
  return faces;
}

/// A proxy at the face's centroid, embedded in the face's tet: weight 1/3 on the face's three
/// vertices, 0 on the fourth (seed 004 eq. 7).
EmbeddedPoint centroid_proxy(const TetMesh& mesh, const BoundaryFace& face) {
  EmbeddedPoint proxy{face.tet, {0.0, 0.0, 0.0, 0.0}};
  for (std::size_t c = 0; c < 4; ++c) {
    const Index node = mesh.tets[4 * at(face.tet) + c];
    if (std::find(face.nodes.begin(), face.nodes.end(), node) != face.nodes.end()) proxy.weights[c] = 1.0 / 3.0;
  }
  return proxy;
}

/// The vertices of the tets holding these proxies, sorted, unique (N_c of §4.2).
std::vector<Index> prone_nodes_of(const TetMesh& mesh, const std::vector<EmbeddedPoint>& proxies) {
  std::vector<Index> nodes;
  nodes.reserve(4 * proxies.size());
  for (const EmbeddedPoint& proxy : proxies) {
    const auto first = mesh.tets.begin() + 4 * std::ptrdiff_t{proxy.tet};
    nodes.insert(nodes.end(), first, first + 4);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

/// A boundary face that may collide and how far it is from where the collisions start.
struct ProxyCandidate {
  double distance = 0.0;
  Index face = 0;
};

/// Seed 004 §4.2 wants the collision-prone region known a priori and small: proxies go on the
/// candidate faces nearest first until N_c (the vertices of the tets holding them) reaches
/// `fraction` of the nodes — the region's extent is chosen by the node budget, as in §5.1–5.3.
/// `placed` are proxies the scene needs anyway (the surgery's suture points): they come first
/// and their tets' nodes count towards the same budget.
std::vector<EmbeddedPoint> proxies_nearest_first(const TetMesh& mesh, const std::vector<BoundaryFace>& faces,
                                                 std::vector<ProxyCandidate> candidates, double fraction,
                                                 std::vector<EmbeddedPoint> placed = {}) {
  std::sort(candidates.begin(), candidates.end(), [](const ProxyCandidate& a, const ProxyCandidate& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.face < b.face;
  });
  const auto budget = static_cast<std::size_t>(std::lround(fraction * mesh.node_count()));
  std::vector<bool> prone(at(mesh.node_count()), false);
  std::size_t prone_count = 0;
  auto mark_prone = [&](Index tet) {
    for (std::size_t c = 0; c < 4; ++c) {
      const Index node = mesh.tets[4 * at(tet) + c];
      if (!prone[at(node)]) ++prone_count;
      prone[at(node)] = true;
    }
  };
  std::vector<EmbeddedPoint> proxies = std::move(placed);
  for (const EmbeddedPoint& proxy : proxies) mark_prone(proxy.tet);
  for (const ProxyCandidate& candidate : candidates) {
    if (prone_count >= budget) break;
    const BoundaryFace& face = faces[at(candidate.face)];
    proxies.push_back(centroid_proxy(mesh, face));
    mark_prone(face.tet);
  }
  return proxies;
}

/// A flesh vertex pulled by a spring of stiffness k against a tet of edge h resists with
/// ≈ μ·h, so springs scaled by μ·h keep the same balance at every resolution. 50× lets the
/// bones drive the flesh and 200× holds contacts to a small fraction of a cell, while staying
/// small enough not to dominate the conditioning of the global matrix (seed 004 eq. 8).
/// Sutures (§5.3) get 500×: a handful of stitches must pull the cut faces of a cleft together
/// against the flesh around them, stiffened by the strain limits once stretched past them.
void set_spring_stiffness(PdScene& scene, double cell_size) {
  constexpr double attachment_factor = 50.0;
  constexpr double proxy_factor = 200.0;
  constexpr double suture_factor = 500.0;
  scene.attachment_stiffness = attachment_factor * scene.shear_modulus * cell_size;
  scene.proxy_stiffness = proxy_factor * scene.shear_modulus * cell_size;
  if (!scene.excision.sutures.empty()) scene.excision.suture_stiffness = suture_factor * scene.shear_modulus * cell_size;
}

void require_target(const char* scene, Index target_tets) {
  if (target_tets < minimum_target_tets) {
    throw std::invalid_argument(std::string(scene) + " scene: target of " + std::to_string(target_tets) +
                                " tets is below the minimum " + std::to_string(minimum_target_tets));
  }
}

// ---------------------------------------------------------------------------------------------
// Elbow (seed 004 §5.1)

/// The arm at rest: shoulder → elbow along +x, elbow → hand bent towards +y.
struct Arm {
  static constexpr double flesh_radius = 0.05;     // m, a slim adult arm
  static constexpr double segment_length = 0.3;    // m, shoulder–elbow and elbow–hand
  static constexpr double rest_bend = 20.0;        // degrees between the segments at rest
  static constexpr double final_flexion = 140.0;   // degrees: deep enough to fold the inner side
  static constexpr double degrees_per_frame = 2.5; // §5.1
  static constexpr int frames_at_rest = 8;         // hold the final pose to let contact settle
  static constexpr double bone_radius = 0.3 * flesh_radius;
  // Bones stop this far from the elbow so the flesh around the joint is free to fold, and
  // a little short of the arm's ends.
  static constexpr double joint_gap = 1.2 * flesh_radius;
  static constexpr double end_gap = 0.02;
  static constexpr double collision_prone_fraction = 0.035;  // §5.1: 3,933 of 111,666 nodes
  // The inner side is the part of the surface whose radial direction lies within 60° of the
  // direction the segment folds towards.
  static constexpr double inner_side_cosine = 0.5;

  Vec3 shoulder{-segment_length, 0.0, 0.0};
  Vec3 elbow{0.0, 0.0, 0.0};
  Vec3 upper_direction{1.0, 0.0, 0.0};
  Vec3 fore_direction{std::cos(radians(rest_bend)), std::sin(radians(rest_bend)), 0.0};
  Vec3 hand = elbow + segment_length * fore_direction;

  [[nodiscard]] Capsule upper_flesh() const { return {shoulder, elbow, flesh_radius}; }
  [[nodiscard]] Capsule fore_flesh() const { return {elbow, hand, flesh_radius}; }
  [[nodiscard]] Capsule upper_bone() const {
    return {shoulder + end_gap * upper_direction, elbow - joint_gap * upper_direction, bone_radius};
  }
  [[nodiscard]] Capsule fore_bone() const {
    return {elbow + joint_gap * fore_direction, hand - end_gap * fore_direction, bone_radius};
  }
  /// The unit direction each segment's inner surface faces: the upper arm's is +y, towards
  /// which the forearm turns; the forearm's is its direction turned +90° about z, the side
  /// leading the flexion.
  [[nodiscard]] Vec3 inner_side(bool forearm) const {
    return forearm ? cross(Vec3{0.0, 0.0, 1.0}, fore_direction) : Vec3{0.0, 1.0, 0.0};
  }
};

/// Candidates on the inner side of the elbow, on either segment, ordered by distance from the
/// elbow (§5.1: "self collisions only occur on the flesh surface on the interior side").
std::vector<ProxyCandidate> elbow_inner_side(const Arm& arm, const std::vector<BoundaryFace>& faces) {
  std::vector<ProxyCandidate> candidates;
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const Vec3& centroid = faces[f].centroid;
    const Vec3 on_upper = closest_on_segment(centroid, arm.shoulder, arm.elbow);
    const Vec3 on_fore = closest_on_segment(centroid, arm.elbow, arm.hand);
    const bool forearm = norm(centroid - on_fore) < norm(centroid - on_upper);
    const Vec3 radial = normalized(centroid - (forearm ? on_fore : on_upper));
    if (dot(radial, arm.inner_side(forearm)) > Arm::inner_side_cosine) {
      candidates.push_back({norm(centroid - arm.elbow), static_cast<Index>(f)});
    }
  }
  return candidates;
}

// ---------------------------------------------------------------------------------------------
// Lips (seed 004 §5.2)

/// The mouth block, centred at the origin, front face at +z, and its slit at a cell size.
struct Mouth {
  // About 12 × 8 × 6 cm, but not in whole ratios: with 12:8:6 the cell counts along all three
  // axes step at the same cell sizes, and the tet count jumps by up to 25 % at 20K tets, too
  // coarse a choice for a size-controlled scene.
  static constexpr double half_width = 0.0605;   // x: 12.1 cm
  static constexpr double half_height = 0.0395;  // y: 7.9 cm
  static constexpr double half_depth = 0.0305;   // z: 6.1 cm
  static constexpr double slit_half_width = 0.75 * half_width;
  static constexpr double slit_depth = 0.025;  // from the front face inwards
  static constexpr double bone_radius = 0.01;
  static constexpr double bone_height = 0.022;  // |y| of each bone's axis, inside its half
  static constexpr double bone_half_length = 0.04;
  static constexpr double hinge_depth = -0.02;  // z of the jaw hinge, near the back
  // The jaw turns until the lower lip's front edge has risen by this many slit gaps: one
  // closes the slit, the rest presses the lips together.
  static constexpr double lip_travel_in_slits = 2.0;
  static constexpr int closing_frames = 30;
  static constexpr int frames_at_rest = 10;
  static constexpr double collision_prone_fraction = 0.015;  // §5.2: 1,846 of 123,784 nodes
  static constexpr double slit_face_cosine = 0.9;            // |n·y| of the slit's faces

  // The slit is the two cell layers either side of the grid plane nearest mid height: the lips
  // start exactly two cells apart, so a jaw turn of a few cells closes them at every size and
  // the slit is never lost between cube centres.
  double slit_centre = 0.0;    // y of that grid plane
  double slit_half_gap = 0.0;  // one cell: centres h/2 from the plane are cut, 3h/2 kept

  [[nodiscard]] static Mouth at_cell_size(double cell_size) {
    return {nearest_grid_plane(0.0, implicit_grid_origin(bounds(), cell_size).y, cell_size), cell_size};
  }
  [[nodiscard]] double slit_gap() const { return 2.0 * slit_half_gap; }
  [[nodiscard]] double signed_distance(const Vec3& point) const {
    const double block = box_signed_distance(point, {-half_width, -half_height, -half_depth},
                                             {half_width, half_height, half_depth});
    // The slit reaches past the front face so that it opens to the outside.
    const double slit = box_signed_distance(
        point, {-slit_half_width, slit_centre - slit_half_gap, half_depth - slit_depth},
        {slit_half_width, slit_centre + slit_half_gap, 2.0 * half_depth});
    return std::max(block, -slit);
  }
  [[nodiscard]] static std::array<double, 6> bounds() {
    return {-half_width, -half_height, -half_depth, half_width, half_height, half_depth};
  }
  [[nodiscard]] static Capsule bone(double height) {
    return {{-bone_half_length, height, 0.0}, {bone_half_length, height, 0.0}, bone_radius};
  }
  [[nodiscard]] RigidBone jaw() const {
    const Vec3 pivot{0.0, 0.0, hinge_depth};
    // About −x a positive turn lifts what lies in front of the hinge (+z), closing the mouth;
    // the lip's front edge, `lever` ahead of the hinge, rises by lever·sin(turn).
    const double lever = half_depth - hinge_depth;
    const double turn = degrees(std::asin(std::min(1.0, lip_travel_in_slits * slit_gap() / lever)));
    return {"jaw", pivot, {-1.0, 0.0, 0.0}, turn / closing_frames, turn};
  }
};

SignedDistance mouth_shape(double cell_size) {
  return [mouth = Mouth::at_cell_size(cell_size)](const Vec3& p) { return mouth.signed_distance(p); };
}

/// Candidates on the slit's upper and lower faces, ordered by depth from the front face.
std::vector<ProxyCandidate> slit_faces(const Mouth& mouth, double cell_size, const std::vector<BoundaryFace>& faces) {
  std::vector<ProxyCandidate> candidates;
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const Vec3& centroid = faces[f].centroid;
    const bool in_slit = std::abs(centroid.x) < Mouth::slit_half_width + cell_size &&
                         std::abs(centroid.y - mouth.slit_centre) < mouth.slit_half_gap + 0.5 * cell_size &&
                         centroid.z > Mouth::half_depth - Mouth::slit_depth - cell_size;
    if (in_slit && std::abs(faces[f].normal.y) > Mouth::slit_face_cosine) {
      candidates.push_back({Mouth::half_depth - centroid.z, static_cast<Index>(f)});
    }
  }
  return candidates;
}

std::vector<Index> back_face_nodes(const TetMesh& mesh, double cell_size) {
  const double back = bounding_box(mesh.positions)[2];
  std::vector<Index> nodes;
  for (Index node = 0; node < mesh.node_count(); ++node) {
    if (node_position(mesh.positions, node).z < back + 0.25 * cell_size) nodes.push_back(node);
  }
  return nodes;
}

// ---------------------------------------------------------------------------------------------
// Surgery (seed 004 §5.3)

/// A cleft upper lip wrapped around the teeth, at a cell size. The teeth arch is a HalfTorus
/// about the y axis (up), its front at +z; the lip is the half-cylindrical shell in front of it
/// (z ≥ 0), from its free edge at `bottom` up to the nose and cheeks at `top`. §5.3 processes
/// only the flesh–teeth collisions and the scene has neither gravity nor moving bones, so the
/// lip's inner surface starts `overlap` inside the arch: that is what presses it on the teeth.
struct CleftLip {
  static constexpr double arch_radius = 0.03;    // m, centre of the arch → centre of the teeth
  static constexpr double tooth_radius = 0.008;  // the arch's tube
  static constexpr double overlap = 0.0015;
  static constexpr double inner_radius = arch_radius + tooth_radius - overlap;
  static constexpr double thickness = 0.0135;
  static constexpr double outer_radius = inner_radius + thickness;
  // The free edge hangs below the teeth's centre line, as an upper lip covers the incisors.
  static constexpr double bottom = -0.0125;
  static constexpr double height = 0.0305;
  static constexpr double top = bottom + height;
  static constexpr double cleft_height = 2.0 * height / 3.0;  // from the free edge up
  // Cut from each side of the cleft over its height, in whole cells: 5.5–7 % of the tets from
  // 20K to 650K, like §5.3's 503,910 → 467K (2·width·cleft_height over the shell's
  // π·mid-radius·height section).
  static constexpr double excision_width = 0.006;
  static constexpr int excision_frame = 10;
  static constexpr int frames = 40;
  static constexpr double collision_prone_fraction = 0.015;  // §5.3: 1,434 of 97,249 nodes
  // The suture points' tets count towards that N_c, but a fixed number of sutures takes most
  // of it at coarse sizes (1.55 % of the nodes at 20K tets): the teeth contact keeps at least
  // this fraction for its own proxies.
  static constexpr double teeth_prone_fraction = 0.0075;
  // Proxies go on the inner surface (its normal within 60° of the direction to the axis)
  // where it is at most this many cells from the teeth: the part that touches them at rest or
  // will when the sutures pull the lip sideways over the arch.
  static constexpr double inner_side_cosine = 0.5;
  static constexpr double proxy_reach_cells = 2.0;
  // Stitches at these many heights over the cleft times depths through the lip (a two-layer
  // closure: the mucosa side and the skin side), spaced evenly between the cleft's ends and the
  // lip's surfaces — at least 3.4 mm inside, deep enough for any cell size above the 10K-tet
  // minimum to embed them. Ten sutures: more would, at 20K tets, make N_c mostly sutures.
  static constexpr int suture_heights = 5;
  static constexpr int suture_depths = 2;

  // The cleft is the two cell layers either side of the grid plane nearest x = 0, cut from the
  // free edge up to the grid plane nearest cleft_height (a slot between whole cells, as the
  // lips scene's slit); the excision takes whole cells beside it.
  double cell_size = 0.0;
  double cleft_centre = 0.0;  // x of that grid plane
  double cleft_top = 0.0;     // y of the cleft's upper end
  double excision_cells = 1.0;

  [[nodiscard]] static CleftLip at_cell_size(double h) {
    const Vec3 origin = implicit_grid_origin(bounds(), h);
    return {h, nearest_grid_plane(0.0, origin.x, h), nearest_grid_plane(bottom + cleft_height, origin.y, h),
            std::max(1.0, std::round(excision_width / h))};
  }
  [[nodiscard]] static std::array<double, 6> bounds() {
    return {-outer_radius, bottom, 0.0, outer_radius, top, outer_radius};
  }
  [[nodiscard]] static HalfTorus teeth() {
    // Turning from −x about +y passes through +z: the arch's front is behind the lip's middle.
    return {{0.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {-1.0, 0.0, 0.0}, arch_radius, tooth_radius};
  }
  /// Signed distance to the cleft's slot (open below the free edge and through the lip),
  /// `half_width_cells` wide on either side of its centre plane: 1 at rest, 1 + excision_cells
  /// once the excision has widened it.
  [[nodiscard]] double cleft_distance(const Vec3& point, double half_width_cells = 1.0) const {
    const double half_width = half_width_cells * cell_size;
    return box_signed_distance(point, {cleft_centre - half_width, bottom - cell_size, 0.0},
                               {cleft_centre + half_width, cleft_top, 2.0 * outer_radius});
  }
  [[nodiscard]] double signed_distance(const Vec3& point) const {
    const double radial = std::hypot(point.x, point.z);
    const double shell = std::max({inner_radius - radial, radial - outer_radius, -point.z, bottom - point.y,
                                   point.y - top});
    return std::max(shell, -cleft_distance(point));
  }
  /// Whether a tet with this centroid is excised: the excision_cells columns of cells on either
  /// side of the cleft, over its height.
  [[nodiscard]] bool excises(const Vec3& centroid) const {
    const double from_cleft = std::abs(centroid.x - cleft_centre);
    return centroid.y < cleft_top && from_cleft > cell_size && from_cleft < (1.0 + excision_cells) * cell_size;
  }
};

SignedDistance lip_shape(double cell_size) {
  return [lip = CleftLip::at_cell_size(cell_size)](const Vec3& p) { return lip.signed_distance(p); };
}

Vec3 tet_centroid(const TetMesh& mesh, Index tet) {
  Vec3 sum;
  for (std::size_t c = 0; c < 4; ++c) sum += node_position(mesh.positions, mesh.tets[4 * at(tet) + c]);
  return sum / 4.0;
}

std::vector<Index> excised_tets(const CleftLip& lip, const TetMesh& mesh) {
  std::vector<Index> tets;  // ascending, as the loop runs
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    if (lip.excises(tet_centroid(mesh, tet))) tets.push_back(tet);
  }
  return tets;
}

/// Stitches across the widened cleft (§5.3's closure by sutures): a point pair per height and
/// depth (CleftLip::suture_heights × suture_depths), facing each other along x a quarter cell
/// beyond the excision's cut faces — so each lies inside a cell that survives it, never on a
/// face it shares with an excised one.
std::vector<Suture> sutures_across_cleft(const CleftLip& lip, const RestTetLocator& locator) {
  const double reach = (1.25 + lip.excision_cells) * lip.cell_size;  // from the cleft's centre plane
  auto embed = [&](const Vec3& point) {
    const std::optional<EmbeddedPoint> flesh = locator.embed(point);
    if (!flesh) {
      throw std::logic_error("surgery scene: suture point (" + std::to_string(point.x) + ", " +
                             std::to_string(point.y) + ", " + std::to_string(point.z) + ") lies outside the lip");
    }
    return *flesh;
  };
  std::vector<Suture> sutures;
  for (int j = 1; j <= CleftLip::suture_heights; ++j) {
    const double y = CleftLip::bottom + CleftLip::cleft_height * j / (CleftLip::suture_heights + 1);
    for (int d = 1; d <= CleftLip::suture_depths; ++d) {
      const double radius = CleftLip::inner_radius + CleftLip::thickness * d / (CleftLip::suture_depths + 1);
      const double z = std::sqrt(radius * radius - reach * reach);
      sutures.push_back({embed({lip.cleft_centre - reach, y, z}), embed({lip.cleft_centre + reach, y, z})});
    }
  }
  return sutures;
}

/// Candidates on the lip's inner surface near the teeth (CleftLip::proxy_reach_cells) in tets
/// that survive the excision. The repair moves the lip where it rests on the teeth beside the
/// widened cleft, so they are ordered by the distance from the widened cleft plus the gap to
/// the teeth (0 where already pressed in): without the gap the region would grow from the
/// cleft's top, above the teeth, rather than along them.
std::vector<ProxyCandidate> lip_inner_side(const CleftLip& lip, const std::vector<BoundaryFace>& faces,
                                           const std::vector<bool>& excised) {
  const Obstacle teeth{CleftLip::teeth()};
  std::vector<ProxyCandidate> candidates;
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const BoundaryFace& face = faces[f];
    if (excised[at(face.tet)]) continue;
    const Vec3 inward = normalized(Vec3{-face.centroid.x, 0.0, -face.centroid.z});
    const bool facing_teeth = dot(face.normal, inward) > CleftLip::inner_side_cosine;
    const double gap = proximity(teeth, face.centroid, 0.0).distance;
    if (facing_teeth && gap < CleftLip::proxy_reach_cells * lip.cell_size) {
      const double from_repair = std::max(lip.cleft_distance(face.centroid, 1.0 + lip.excision_cells), 0.0);
      candidates.push_back({from_repair + std::max(gap, 0.0), static_cast<Index>(f)});
    }
  }
  return candidates;
}

/// The surgery's proxies. A suture is a spring of the Schur system, so its tets must be
/// collision-prone: first a proxy at each suture point (sutures[i].first, .second), which never
/// reaches the teeth and only marks its tet; then the inner surface near the teeth
/// (lip_inner_side) until N_c is CleftLip::collision_prone_fraction of the nodes, or the
/// sutures' share plus teeth_prone_fraction where that is more.
std::vector<EmbeddedPoint> surgery_proxies(const PdScene& scene, const CleftLip& lip) {
  const TetMesh& mesh = scene.mesh;
  std::vector<EmbeddedPoint> suture_points;
  suture_points.reserve(2 * scene.excision.sutures.size());
  for (const Suture& suture : scene.excision.sutures) {
    suture_points.push_back(suture.first);
    suture_points.push_back(suture.second);
  }
  const double suture_share = double(prone_nodes_of(mesh, suture_points).size()) / double(mesh.node_count());
  const double fraction = std::max(CleftLip::collision_prone_fraction, suture_share + CleftLip::teeth_prone_fraction);
  std::vector<bool> excised(at(mesh.tet_count()), false);
  for (const Index tet : scene.excision.tets) excised[at(tet)] = true;
  const std::vector<BoundaryFace> faces = boundary_faces(mesh);
  return proxies_nearest_first(mesh, faces, lip_inner_side(lip, faces, excised), fraction, std::move(suture_points));
}

/// The nodes on the lip's top edge (attached to the nose and cheeks) and its two lateral ends
/// (the z = 0 plane, attached to the cheeks), as the mesh's staircase puts them.
std::vector<Index> lip_boundary_nodes(const TetMesh& mesh, double cell_size) {
  const std::array<double, 6> box = bounding_box(mesh.positions);
  std::vector<Index> nodes;
  for (Index node = 0; node < mesh.node_count(); ++node) {
    const Vec3 p = node_position(mesh.positions, node);
    if (p.y > box[4] - 0.25 * cell_size || p.z < box[2] + 0.25 * cell_size) nodes.push_back(node);
  }
  return nodes;
}

using SceneBuilder = PdScene (*)(Index);
struct NamedScene {
  const char* name;
  SceneBuilder build;
};
constexpr std::array<NamedScene, 3> scene_table{
    {{"elbow", &make_elbow_scene}, {"lips", &make_lips_scene}, {"surgery", &make_surgery_scene}}};

}  // namespace

// ---------------------------------------------------------------------------------------------

PdScene make_elbow_scene(Index target_tets) {
  require_target("elbow", target_tets);
  const Arm arm;
  const Capsule upper = arm.upper_flesh();
  const Capsule fore = arm.fore_flesh();
  const SignedDistance shape = [&](const Vec3& p) {
    return std::min(signed_distance(upper, p), signed_distance(fore, p));
  };
  const std::array<double, 6> box = union_of(bounds_of(upper), bounds_of(fore));
  const double cell_size = cell_size_for_tet_count(shape, box, target_tets);

  PdScene scene;
  scene.name = "elbow";
  scene.mesh = make_implicit_mesh(shape, box, cell_size);
  const double turn = Arm::final_flexion - Arm::rest_bend;
  scene.bones = {{"upper_arm", arm.elbow, {0.0, 0.0, 1.0}, 0.0, 0.0},
                 {"forearm", arm.elbow, {0.0, 0.0, 1.0}, Arm::degrees_per_frame, turn}};
  const RestTetLocator locator(scene.mesh);
  attach_bone(scene, 0, arm.upper_bone(), cell_size, locator);
  attach_bone(scene, 1, arm.fore_bone(), cell_size, locator);
  const std::vector<BoundaryFace> faces = boundary_faces(scene.mesh);
  scene.proxies =
      proxies_nearest_first(scene.mesh, faces, elbow_inner_side(arm, faces), Arm::collision_prone_fraction);
  scene.self_contact = true;
  scene.default_frames = static_cast<int>(std::ceil(turn / Arm::degrees_per_frame)) + Arm::frames_at_rest;
  set_spring_stiffness(scene, cell_size);
  return scene;
}

PdScene make_lips_scene(Index target_tets) {
  require_target("lips", target_tets);
  const double cell_size = cell_size_for_tet_count(mouth_shape, Mouth::bounds(), target_tets);
  const Mouth mouth = Mouth::at_cell_size(cell_size);

  PdScene scene;
  scene.name = "lips";
  scene.mesh = make_implicit_mesh(mouth_shape(cell_size), Mouth::bounds(), cell_size);
  scene.fixed_nodes = back_face_nodes(scene.mesh, cell_size);
  // The maxilla stands for the skull holding the upper lip; the jaw closes the mouth.
  scene.bones = {{"maxilla", {0.0, 0.0, Mouth::hinge_depth}, {-1.0, 0.0, 0.0}, 0.0, 0.0}, mouth.jaw()};
  const RestTetLocator locator(scene.mesh);
  attach_bone(scene, 0, Mouth::bone(Mouth::bone_height), cell_size, locator);
  attach_bone(scene, 1, Mouth::bone(-Mouth::bone_height), cell_size, locator);
  const std::vector<BoundaryFace> faces = boundary_faces(scene.mesh);
  scene.proxies = proxies_nearest_first(scene.mesh, faces, slit_faces(mouth, cell_size, faces),
                                        Mouth::collision_prone_fraction);
  scene.self_contact = true;
  scene.default_frames = Mouth::closing_frames + Mouth::frames_at_rest;
  set_spring_stiffness(scene, cell_size);
  return scene;
}

PdScene make_surgery_scene(Index target_tets) {
  require_target("surgery", target_tets);
  const double cell_size = cell_size_for_tet_count(lip_shape, CleftLip::bounds(), target_tets);
  const CleftLip lip = CleftLip::at_cell_size(cell_size);

  PdScene scene;
  scene.name = "surgery";
  scene.mesh = make_implicit_mesh(lip_shape(cell_size), CleftLip::bounds(), cell_size);
  scene.strain_limit = {0.9, 1.1, 10.0};  // §5.3's biphasic skin
  scene.fixed_nodes = lip_boundary_nodes(scene.mesh, cell_size);
  scene.obstacles = {CleftLip::teeth()};
  scene.excision.frame = CleftLip::excision_frame;
  scene.excision.tets = excised_tets(lip, scene.mesh);
  scene.excision.sutures = sutures_across_cleft(lip, RestTetLocator(scene.mesh));
  scene.proxies = surgery_proxies(scene, lip);
  scene.self_contact = false;  // §5.3: the repair closes by sutures, not by self-collision
  scene.default_frames = CleftLip::frames;
  set_spring_stiffness(scene, cell_size);
  return scene;
}

std::vector<std::string> pd_scene_names() {
  std::vector<std::string> names;
  for (const NamedScene& scene : scene_table) names.emplace_back(scene.name);
  return names;
}

PdScene make_pd_scene(std::string_view name, Index target_tets) {
  for (const NamedScene& scene : scene_table) {
    if (name == scene.name) return scene.build(target_tets);
  }
  std::string known;
  for (const NamedScene& scene : scene_table) known += std::string(known.empty() ? "" : ", ") + scene.name;
  throw std::invalid_argument("make_pd_scene: unknown scene '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<Index> collision_prone_nodes(const PdScene& scene) { return prone_nodes_of(scene.mesh, scene.proxies); }

// ---------------------------------------------------------------------------------------------
// RestTetLocator

namespace {

/// Barycentric weights of `point` in tet `tet` (any sign): w₁..₃ = Dₘ⁻¹(p − x₀), w₀ = 1 − Σ.
std::array<double, 4> barycentric(const TetMesh& mesh, Index tet, const Vec3& point) {
  std::array<Vec3, 4> x;
  for (std::size_t c = 0; c < 4; ++c) x[c] = node_position(mesh.positions, mesh.tets[4 * at(tet) + c]);
  const linalg::Mat3 edges = linalg::Mat3::from_columns(x[1] - x[0], x[2] - x[0], x[3] - x[0]);
  const Vec3 w = linalg::inverse(edges) * (point - x[0]);
  return {1.0 - w.x - w.y - w.z, w.x, w.y, w.z};
}

/// Tolerances relative to the bucket (≈ tet) size and to weights: a point on a shared face
/// or a boundary face must still be found.
constexpr double bucket_slack = 1e-9;
constexpr double weight_slack = 1e-9;

}  // namespace

RestTetLocator::RestTetLocator(const TetMesh& mesh) : mesh_(&mesh) {
  if (mesh.tet_count() == 0) throw std::invalid_argument("RestTetLocator: the mesh has no tets");
  const std::array<double, 6> box = bounding_box(mesh.positions);
  origin_ = {box[0], box[1], box[2]};
  double volume = 1.0;
  for (std::size_t a = 0; a < 3; ++a) volume *= std::max(box[a + 3] - box[a], 1e-12);
  // About one tet across a bucket: a few tets per bucket, a few buckets per tet.
  bucket_size_ = 2.0 * std::cbrt(volume / mesh.tet_count());
  for (std::size_t a = 0; a < 3; ++a) {
    buckets_[a] = std::max<Index>(1, static_cast<Index>(std::ceil((box[a + 3] - box[a]) / bucket_size_)));
  }
  // Two passes over the same bucket ranges: count, then fill (CSR).
  auto for_each_bucket_of = [&](Index tet, auto&& visit) {
    std::array<Index, 3> low{};
    std::array<Index, 3> high{};
    for (int a = 0; a < 3; ++a) {
      double lowest = std::numeric_limits<double>::infinity();
      double highest = -lowest;
      for (std::size_t c = 0; c < 4; ++c) {
        const double coordinate = mesh.positions[3 * at(mesh.tets[4 * at(tet) + c]) + at(a)];
        lowest = std::min(lowest, coordinate);
        highest = std::max(highest, coordinate);
      }
      low[at(a)] = clamped_cell(lowest - bucket_slack * bucket_size_, a);
      high[at(a)] = clamped_cell(highest + bucket_slack * bucket_size_, a);
    }
    for (Index k = low[2]; k <= high[2]; ++k) {
      for (Index j = low[1]; j <= high[1]; ++j) {
        for (Index i = low[0]; i <= high[0]; ++i) visit(bucket_index({i, j, k}));
      }
    }
  };
  bucket_start_.assign(at(buckets_[0]) * at(buckets_[1]) * at(buckets_[2]) + 1, 0);
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    for_each_bucket_of(tet, [&](Index bucket) { ++bucket_start_[at(bucket) + 1]; });
  }
  for (std::size_t b = 1; b < bucket_start_.size(); ++b) bucket_start_[b] += bucket_start_[b - 1];
  bucket_tets_.resize(at(bucket_start_.back()));
  std::vector<Index> fill(bucket_start_.begin(), bucket_start_.end() - 1);
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    for_each_bucket_of(tet, [&](Index bucket) { bucket_tets_[at(fill[at(bucket)]++)] = tet; });
  }
}

Index RestTetLocator::clamped_cell(double coordinate, int axis) const {
  const double cell = std::floor((coordinate - origin_[axis]) / bucket_size_);
  return static_cast<Index>(std::clamp(cell, 0.0, double(buckets_[at(axis)] - 1)));
}

Index RestTetLocator::bucket_index(const std::array<Index, 3>& cell) const {
  return cell[0] + buckets_[0] * (cell[1] + buckets_[1] * cell[2]);
}

std::optional<EmbeddedPoint> RestTetLocator::embed(const Vec3& point) const {
  const Index bucket = bucket_index({clamped_cell(point.x, 0), clamped_cell(point.y, 1), clamped_cell(point.z, 2)});
  std::optional<EmbeddedPoint> best;
  double best_inside = -weight_slack;  // the smallest weight of the best tet so far
  for (Index slot = bucket_start_[at(bucket)]; slot < bucket_start_[at(bucket) + 1]; ++slot) {
    const Index tet = bucket_tets_[at(slot)];
    const std::array<double, 4> weights = barycentric(*mesh_, tet, point);
    const double inside = *std::min_element(weights.begin(), weights.end());
    if (inside >= best_inside) {
      best_inside = inside;
      best = EmbeddedPoint{tet, weights};
    }
  }
  if (!best) return std::nullopt;
  double sum = 0.0;
  for (double& weight : best->weights) sum += (weight = std::max(weight, 0.0));
  for (double& weight : best->weights) weight /= sum;
  return best;
}

}  // namespace cholsim::fem
