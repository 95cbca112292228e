#include "fem/contact/contact_potential.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "fem/mesh/procedural_meshes.hpp"

namespace cholsim::fem {
namespace {

using linalg::Mat3;

using Blocks = std::vector<std::pair<Index, std::array<double, 9>>>;

ContactOptions options_with(double stiffness, double activation_distance, double friction_coefficient = 0.0) {
  ContactOptions options;
  options.stiffness = stiffness;
  options.activation_distance = activation_distance;
  options.friction_coefficient = friction_coefficient;
  return options;
}

/// One tet a0..a3: its four vertices are all contact vertices, and each can be placed anywhere.
TetMesh single_tet(const Vec3& a0, const Vec3& a1, const Vec3& a2, const Vec3& a3) {
  return {{a0.x, a0.y, a0.z, a1.x, a1.y, a1.z, a2.x, a2.y, a2.z, a3.x, a3.y, a3.z}, {0, 1, 2, 3}};
}

/// A tet with vertex 0 at `tip` and the others 1 m above it and at least 2 m aside, far from
/// anything the tip touches.
TetMesh tet_with_tip_at(const Vec3& tip) {
  return single_tet(tip, tip + Vec3{3.0, 1.0, 0.0}, tip + Vec3{2.0, 1.0, 1.0}, tip + Vec3{2.0, 1.0, 0.0});
}

std::vector<double> full_gradient(const ContactPotential& contact, std::span<const double> positions) {
  std::vector<double> gradient(positions.size(), 0.0);
  contact.add_gradient(positions, gradient);
  return gradient;
}

Vec3 gradient_at(const ContactPotential& contact, std::span<const double> positions, Index node) {
  return node_position(full_gradient(contact, positions), node);
}

std::vector<double> zeros_like(std::span<const double> values) { return std::vector<double>(values.size(), 0.0); }

void set_node(std::vector<double>& positions, Index node, const Vec3& point) {
  for (int c = 0; c < 3; ++c) positions[3 * static_cast<std::size_t>(node) + static_cast<std::size_t>(c)] = point[c];
}

/// All principal minors of the symmetric block ≥ −tolerance·scale: positive semi-definite.
void expect_positive_semidefinite(const std::array<double, 9>& h, double scale) {
  const double tolerance = 1e-10 * scale;
  for (int i = 0; i < 3; ++i) {
    EXPECT_GE(h[4 * i], -tolerance);
    for (int j = i + 1; j < 3; ++j) {
      EXPECT_NEAR(h[3 * i + j], h[3 * j + i], tolerance);
      EXPECT_GE(h[4 * i] * h[4 * j] - h[3 * i + j] * h[3 * j + i], -tolerance * scale);
    }
  }
  Mat3 block;
  block.entries = h;
  EXPECT_GE(linalg::determinant(block), -tolerance * scale * scale);
}

TEST(ContactPotential, PenaltyIsTwiceContinuouslyDifferentiableAtZeroAndAtActivation) {
  constexpr double k = 2e3, delta = 0.01, tiny = 1e-12;
  for (const double joint : {0.0, delta}) {
    const PenaltyValue below = smooth_penalty(joint - tiny, k, delta);
    const PenaltyValue above = smooth_penalty(joint + tiny, k, delta);
    EXPECT_NEAR(below.value, above.value, 1e-9 * k * delta * delta) << "at d = " << joint;
    EXPECT_NEAR(below.first, above.first, 1e-8 * k * delta) << "at d = " << joint;
    EXPECT_NEAR(below.second, above.second, 1e-6 * k) << "at d = " << joint;
  }
  // The values the formula promises: k·δ²/6, −k·δ/2, k at contact; nothing from δ on.
  EXPECT_DOUBLE_EQ(smooth_penalty(0.0, k, delta).value, k * delta * delta / 6.0);
  EXPECT_DOUBLE_EQ(smooth_penalty(0.0, k, delta).first, -k * delta / 2.0);
  EXPECT_DOUBLE_EQ(smooth_penalty(-0.3, k, delta).second, k);
  const PenaltyValue outside = smooth_penalty(delta, k, delta);
  EXPECT_EQ(outside.value, 0.0);
  EXPECT_EQ(outside.first, 0.0);
  EXPECT_EQ(outside.second, 0.0);
  // The derivatives are those of the value (central differences) on both pieces.
  for (const double d : {-0.02, -0.004, 0.003, 0.008}) {
    constexpr double step = 1e-7;
    const PenaltyValue at = smooth_penalty(d, k, delta);
    const PenaltyValue ahead = smooth_penalty(d + step, k, delta);
    const PenaltyValue behind = smooth_penalty(d - step, k, delta);
    EXPECT_NEAR(at.first, (ahead.value - behind.value) / (2 * step), 1e-6 * k * delta) << "d = " << d;
    EXPECT_NEAR(at.second, (ahead.first - behind.first) / (2 * step), 1e-6 * k) << "d = " << d;
  }
}

/// A 2×2×2-cell box (26 boundary vertices) sunk into the ground, touching a sphere and a moving
/// box, with random displacements so that distances, sticking and sliding all vary.
struct MixedScene {
  TetMesh mesh = make_box_mesh(0.1, 0.1, 0.1, 2);
  std::vector<Obstacle> obstacles{
      HalfSpace{{0.0, 1.0, 0.0}, 0.0},
      Sphere{{0.12, 0.05, 0.05}, 0.03},
      MovingBox{{0.05, 0.05, 0.13}, {0.2, 0.2, 0.035}, {0.1, 0.0, 0.0}, 0.0, 1.0}};
  std::vector<double> start;
  std::vector<double> positions;

  MixedScene() {
    std::mt19937 random(7);
    std::uniform_real_distribution<double> jitter(-0.003, 0.003);
    std::uniform_real_distribution<double> motion(-0.001, 0.001);
    start = mesh.positions;
    for (std::size_t i = 0; i < start.size(); ++i) start[i] += jitter(random) - (i % 3 == 1 ? 0.004 : 0.0);
    positions = start;
    for (double& x : positions) x += motion(random);
  }

  ContactPotential potential() const {
    ContactOptions options = options_with(1e3, 0.01, 0.3);
    options.friction_velocity = 0.05;  // ε_u = 5·10⁻⁴ m at h = 0.01: the motions above stick and slide
    ContactPotential contact(mesh, obstacles, options);
    contact.begin_solve(start, zeros_like(start), 0.5, 0.01);
    return contact;
  }
};

TEST(ContactPotential, GradientIsTheCentralDifferenceOfTheEnergy) {
  const MixedScene scene;
  const ContactPotential contact = scene.potential();
  const auto statistics = contact.statistics(scene.positions);
  ASSERT_GT(statistics.active_obstacle_contacts, 10);  // the test exercises all three obstacles
  ASSERT_GT(statistics.friction_contacts, 10);
  const std::vector<double> gradient = full_gradient(contact, scene.positions);
  std::vector<double> probe = scene.positions;
  constexpr double step = 1e-7;
  for (std::size_t i = 0; i < probe.size(); ++i) {
    probe[i] = scene.positions[i] + step;
    const double forward = contact.energy(probe);
    probe[i] = scene.positions[i] - step;
    const double backward = contact.energy(probe);
    probe[i] = scene.positions[i];
    EXPECT_NEAR(gradient[i], (forward - backward) / (2 * step), 1e-5 * (1.0 + std::abs(gradient[i])))
        << "coordinate " << i;
  }
}

TEST(ContactPotential, HessianBlocksAreTheGradientsDifferencesAndPositiveSemidefinite) {
  const MixedScene scene;
  const ContactPotential contact = scene.potential();
  Blocks blocks;
  contact.hessian_blocks(scene.positions, blocks);
  ASSERT_GT(blocks.size(), 10u);
  const auto by_node = [](const auto& a, const auto& b) { return a.first < b.first; };
  ASSERT_TRUE(std::is_sorted(blocks.begin(), blocks.end(), by_node));
  const Sphere& sphere = std::get<Sphere>(scene.obstacles[1]);
  std::vector<double> probe = scene.positions;
  constexpr double step = 1e-7;
  for (const auto& [node, block] : blocks) {
    double scale = 0.0;
    for (const double h : block) scale = std::max(scale, std::abs(h));
    expect_positive_semidefinite(block, scale);
    std::array<double, 9> difference{};
    for (int c = 0; c < 3; ++c) {
      const std::size_t i = 3 * static_cast<std::size_t>(node) + static_cast<std::size_t>(c);
      probe[i] = scene.positions[i] + step;
      const Vec3 forward = gradient_at(contact, probe, node);
      probe[i] = scene.positions[i] - step;
      const Vec3 backward = gradient_at(contact, probe, node);
      probe[i] = scene.positions[i];
      for (int r = 0; r < 3; ++r) {
        difference[static_cast<std::size_t>(3 * r + c)] = (forward[r] - backward[r]) / (2 * step);
      }
    }
    const Vec3 point = node_position(scene.positions, node);
    const Vec3 offset = point - sphere.center;
    if (linalg::norm(offset) < sphere.radius + 0.01) {
      // Against the sphere the curvature term is dropped: only the normal–normal part is exact.
      const Vec3 normal = linalg::normalized(offset);
      Mat3 exact, dropped;
      exact.entries = difference;
      dropped.entries = block;
      EXPECT_NEAR(linalg::dot(normal, exact * normal), linalg::dot(normal, dropped * normal), 1e-4 * (1.0 + scale))
          << "node " << node;
      continue;
    }
    for (std::size_t e = 0; e < 9; ++e) EXPECT_NEAR(block[e], difference[e], 1e-4 * (1.0 + scale)) << "node " << node;
  }
}

TEST(ContactPotential, VertexFarFromEverythingContributesNothing) {
  const TetMesh tet = tet_with_tip_at({0.0, 5.0, 0.0});
  ContactPotential contact(tet, {HalfSpace{}, Sphere{{10.0, 0.0, 0.0}, 1.0}}, options_with(1e4, 0.05, 0.5));
  contact.begin_solve(tet.positions, zeros_like(tet.positions), 0.0, 0.01);
  EXPECT_EQ(contact.energy(tet.positions), 0.0);
  for (const double g : full_gradient(contact, tet.positions)) EXPECT_EQ(g, 0.0);
  Blocks blocks{{7, {}}};
  contact.hessian_blocks(tet.positions, blocks);
  EXPECT_TRUE(blocks.empty());
  const auto statistics = contact.statistics(tet.positions);
  EXPECT_EQ(statistics.active_obstacle_contacts, 0);
  EXPECT_EQ(statistics.friction_contacts, 0);
  EXPECT_EQ(statistics.deepest_penetration, 0.0);
}

TEST(ContactPotential, PenetrationPushesAlongTheOutwardNormal) {
  constexpr double k = 1e4, delta = 0.01;
  // A piston 1 m wide moving down at 1 m/s from t = 0: at t = 0.5 its bottom face is at y = 0.5.
  const MovingBox piston{{0.0, 1.5, 0.0}, {0.5, 0.5, 0.5}, {0.0, -1.0, 0.0}, 0.0, 1.0};
  const TetMesh tet = tet_with_tip_at({0.1, -0.3, 0.2});
  std::vector<double> positions = tet.positions;
  positions[1] = 0.503;  // the tip 3 mm inside the piston at t = 0.5, not at t = 0
  ContactPotential contact(tet, {piston, HalfSpace{}}, options_with(k, delta));
  contact.begin_solve(positions, zeros_like(positions), 0.0, 0.01);
  EXPECT_EQ(gradient_at(contact, positions, 0).y, 0.0) << "the piston is still 50 cm above at t = 0";
  contact.begin_solve(positions, zeros_like(positions), 0.5, 0.01);
  const Vec3 force = -1.0 * gradient_at(contact, positions, 0);
  EXPECT_NEAR(force.y, smooth_penalty(-0.003, k, delta).first, 1e-9 * k);  // −ψ'(d)·(−ŷ)
  EXPECT_LT(force.y, 0.0);
  EXPECT_NEAR(force.x, 0.0, 1e-12);
  EXPECT_NEAR(force.z, 0.0, 1e-12);
  EXPECT_NEAR(contact.statistics(positions).deepest_penetration, 0.003, 1e-12);

  // Below the ground the push is up, with ψ' of the depth.
  positions[1] = -0.02;
  const Vec3 up = -1.0 * gradient_at(contact, positions, 0);
  EXPECT_NEAR(up.y, -smooth_penalty(-0.02, k, delta).first, 1e-9 * k);
  EXPECT_GT(up.y, 0.0);
}

TEST(ContactPotential, FrictionOpposesSlidingAndIsBoundedByCoulomb) {
  constexpr double k = 1e4, delta = 0.01, mu = 0.4, h = 0.01;
  const TetMesh tet = tet_with_tip_at({0.0, -0.002, 0.0});
  ContactOptions options = options_with(k, delta, mu);
  ContactPotential contact(tet, {HalfSpace{}}, options);
  contact.begin_solve(tet.positions, zeros_like(tet.positions), 0.0, h);
  const double normal_force = -smooth_penalty(-0.002, k, delta).first;
  const double coulomb = mu * normal_force;
  const double epsilon = options.friction_velocity * h;
  const Vec3 direction = linalg::normalized(Vec3{1.0, 0.0, -2.0});
  for (const double slide : {1e-8, 1e-6, 0.5 * epsilon, 0.99 * epsilon, epsilon, 3 * epsilon, 1e-2}) {
    std::vector<double> positions = tet.positions;
    for (int c = 0; c < 3; ++c) positions[static_cast<std::size_t>(c)] += slide * direction[c];
    const Vec3 force = -1.0 * gradient_at(contact, positions, 0);
    const Vec3 tangential{force.x, 0.0, force.z};
    const double magnitude = linalg::norm(tangential);
    EXPECT_NEAR(linalg::dot(tangential, direction), -magnitude, 1e-9 * coulomb) << "slide " << slide;
    EXPECT_LE(magnitude, coulomb * (1.0 + 1e-12)) << "slide " << slide;
    const double y = slide / epsilon;
    const double expected = slide >= epsilon ? coulomb : coulomb * (2.0 * y - y * y);  // μ·λ·f₁(‖u‖)
    EXPECT_NEAR(magnitude, expected, 1e-9 * coulomb) << "slide " << slide;
    EXPECT_NEAR(force.y, normal_force, 1e-9 * k) << "friction must not change the normal force";
  }
}

TEST(ContactPotential, FrictionDragsAVertexAlongASlidingObstacle) {
  constexpr double k = 1e4, delta = 0.01, mu = 0.5;
  // A conveyor slab moving along +x; its top face is y = 0.
  const MovingBox belt{{0.0, -0.5, 0.0}, {5.0, 0.5, 5.0}, {0.2, 0.0, 0.0}, 0.0, 10.0};
  const TetMesh tet = tet_with_tip_at({0.0, -0.001, 0.0});
  ContactPotential contact(tet, {belt}, options_with(k, delta, mu));
  contact.begin_solve(tet.positions, zeros_like(tet.positions), 1.0, 0.01);
  // The vertex has not moved while the belt slid 2 mm under it: full Coulomb drag along +x.
  const Vec3 force = -1.0 * gradient_at(contact, tet.positions, 0);
  const double normal_force = -smooth_penalty(-0.001, k, delta).first;
  EXPECT_NEAR(force.x, mu * normal_force, 1e-9 * k);
  EXPECT_NEAR(force.y, normal_force, 1e-9 * k);
  EXPECT_NEAR(force.z, 0.0, 1e-9 * k);
}

/// Two 1 m boxes of 4³ cells, B 3 m to the right of A at rest.
TetMesh two_boxes() {
  TetMesh mesh = make_box_mesh(1.0, 1.0, 1.0, 4);
  const TetMesh second = make_box_mesh(1.0, 1.0, 1.0, 4);
  const Index offset = mesh.node_count();
  mesh.positions.resize(2 * mesh.positions.size());
  for (Index node = 0; node < second.node_count(); ++node) {
    set_node(mesh.positions, offset + node, node_position(second.positions, node) + Vec3{3.0, 0.0, 0.0});
  }
  for (const Index node : second.tets) mesh.tets.push_back(node + offset);
  return mesh;
}

TEST(ContactPotential, OverlappingBoxesGetPlanesThatPushThemApart) {
  constexpr double k = 1e3, delta = 0.01;
  const TetMesh mesh = two_boxes();
  const Index first_of_b = mesh.node_count() / 2;
  // B moved to overlap A by 6 cm along x (and offset in y, z so that no faces coincide): every
  // penetrating vertex's nearest exit is through the x faces, 6 cm away.
  const Vec3 b_shift{0.94 - 3.0, 0.3, 0.15};
  std::vector<double> positions = mesh.positions;
  for (Index node = first_of_b; node < mesh.node_count(); ++node) {
    set_node(positions, node, node_position(positions, node) + b_shift);
  }
  ContactOptions options = options_with(k, delta);
  options.body_contact = true;
  ContactPotential contact(mesh, {}, options);
  contact.begin_solve(positions, zeros_like(positions), 0.0, 0.01);
  const std::vector<double> gradient = full_gradient(contact, positions);
  const auto strictly_inside = [](const Vec3& p, const Vec3& lower) {
    constexpr double margin = 1e-9;
    return p.x > lower.x + margin && p.x < lower.x + 1.0 - margin && p.y > lower.y + margin &&
           p.y < lower.y + 1.0 - margin && p.z > lower.z + margin && p.z < lower.z + 1.0 - margin;
  };
  Index penetrating = 0;
  for (const Index node : contact.contact_nodes()) {
    const Vec3 p = node_position(positions, node);
    const bool in_b = node >= first_of_b;
    const Vec3 other_lower = in_b ? Vec3{} : Vec3{0.94, 0.3, 0.15};
    const Vec3 force = -1.0 * node_position(gradient, node);
    if (!strictly_inside(p, other_lower)) {
      EXPECT_EQ(linalg::norm(force), 0.0) << "node " << node << " is outside the other box";
      continue;
    }
    ++penetrating;
    // The push leaves the other box through its nearest face: +x out of A, −x out of B.
    const Vec3 outward{in_b ? 1.0 : -1.0, 0.0, 0.0};
    ASSERT_GT(linalg::norm(force), 0.0) << "node " << node << " penetrates but has no plane";
    EXPECT_GT(linalg::dot(linalg::normalized(force), outward), 0.99) << "node " << node;
    // |∇ψ| = k·δ/2 − k·d below the surface: the plane's depth.
    const double plane_distance = 0.5 * delta - linalg::norm(force) / k;
    EXPECT_NEAR(plane_distance, -0.06, 0.01) << "node " << node;
  }
  EXPECT_EQ(penetrating, 24);
  const auto statistics = contact.statistics(positions);
  EXPECT_EQ(statistics.frozen_planes, 24);
  EXPECT_EQ(statistics.active_body_contacts, 24);
  EXPECT_NEAR(statistics.deepest_penetration, 0.06, 0.01);
  // The rest configuration touches nowhere.
  contact.begin_solve(mesh.positions, zeros_like(positions), 0.0, 0.01);
  EXPECT_EQ(contact.statistics(mesh.positions).frozen_planes, 0);
}

/// The two boxes with B placed by `place_b` (a map of its rest points, x ∈ [3, 4]).
template <typename Map>
std::vector<double> with_b_placed(const TetMesh& mesh, const Map& place_b) {
  std::vector<double> positions = mesh.positions;
  for (Index node = mesh.node_count() / 2; node < mesh.node_count(); ++node) {
    set_node(positions, node, place_b(node_position(mesh.positions, node)));
  }
  return positions;
}

ContactPotential body_contact_potential(const TetMesh& mesh, double stiffness, double activation_distance,
                                        double friction_coefficient = 0.0) {
  ContactOptions options = options_with(stiffness, activation_distance, friction_coefficient);
  options.body_contact = true;
  return ContactPotential(mesh, {}, options);
}

TEST(ContactPotential, PlaneNormalFollowsTheDeformedPartner) {
  constexpr double k = 1e3, delta = 0.01, shear = 0.4;
  const TetMesh mesh = two_boxes();
  // B sheared (x += 0.4·y): its left face, the one A's right face sinks into, tilts to the
  // outward normal (−1, 0.4, 0)/|·| — F⁻ᵀ of the rest normal (−1, 0, 0).
  const std::vector<double> positions = with_b_placed(mesh, [&](const Vec3& rest) {
    return Vec3{rest.x - 3.0 + 0.94 + shear * (rest.y - 0.5), rest.y + 0.3, rest.z + 0.15};
  });
  ContactPotential contact = body_contact_potential(mesh, k, delta);
  contact.begin_solve(positions, zeros_like(positions), 0.0, 0.01);
  const std::vector<double> gradient = full_gradient(contact, positions);
  const Vec3 tilted_normal = linalg::normalized(Vec3{-1.0, shear, 0.0});
  Index checked = 0;
  for (const Index node : contact.contact_nodes()) {
    const Vec3 p = node_position(positions, node);
    // A's vertices on x = 1 at y = 0.75, well inside B and nearest to its left face: the face
    // passes x = 0.92 there, 8 cm to the left, 8/√1.16 cm across.
    if (node >= mesh.node_count() / 2 || p.x != 1.0 || std::abs(p.y - 0.75) > 1e-12 || p.z < 0.4 || p.z > 0.8) {
      continue;
    }
    ++checked;
    const Vec3 force = -1.0 * node_position(gradient, node);
    EXPECT_GT(linalg::dot(linalg::normalized(force), tilted_normal), 0.99) << "node " << node;
    const double plane_distance = 0.5 * delta - linalg::norm(force) / k;
    EXPECT_NEAR(plane_distance, -0.08 / std::sqrt(1.0 + shear * shear), 0.005) << "node " << node;
  }
  EXPECT_EQ(checked, 2);
}

TEST(ContactPotential, PlanesMoveWithTheirPartnerAndItsVelocityDragsByFriction) {
  constexpr double k = 1e3, delta = 0.01, mu = 0.5, h = 0.01;
  const TetMesh mesh = two_boxes();
  const std::vector<double> positions =
      with_b_placed(mesh, [](const Vec3& rest) { return rest + Vec3{0.94 - 3.0, 0.3, 0.15}; });
  std::vector<double> velocities = zeros_like(positions);
  const Vec3 b_velocity{-0.5, 0.0, 2.0};
  for (Index node = mesh.node_count() / 2; node < mesh.node_count(); ++node) set_node(velocities, node, b_velocity);
  ContactPotential at_rest = body_contact_potential(mesh, k, delta);
  at_rest.begin_solve(positions, zeros_like(positions), 0.0, h);
  ContactPotential moving = body_contact_potential(mesh, k, delta);
  moving.begin_solve(positions, velocities, 0.0, h);
  ContactPotential with_friction = body_contact_potential(mesh, k, delta, mu);
  with_friction.begin_solve(positions, velocities, 0.0, h);
  const std::vector<double> static_gradient = full_gradient(at_rest, positions);
  const std::vector<double> moving_gradient = full_gradient(moving, positions);
  const std::vector<double> friction_gradient = full_gradient(with_friction, positions);
  Index checked = 0;
  for (Index node = 0; node < mesh.node_count() / 2; ++node) {  // A's vertices: their partner is B
    const Vec3 still = -1.0 * node_position(static_gradient, node);
    if (linalg::norm(still) == 0.0) continue;
    ++checked;
    const Vec3 normal = linalg::normalized(still);
    // The plane moved by h·v: n·(p − q) dropped by h·n·v, and |ψ'| = k·(δ/2 − d) grew by k·h·n·v.
    const Vec3 pushed = -1.0 * node_position(moving_gradient, node);
    EXPECT_NEAR(linalg::norm(pushed) - linalg::norm(still), k * h * linalg::dot(normal, b_velocity), 1e-9 * k)
        << "node " << node;
    // B slid 2 cm along the plane during the step (≫ ε_v·h): full Coulomb drag along its motion.
    const Vec3 friction = -1.0 * node_position(friction_gradient, node) - pushed;
    const Vec3 sliding = linalg::normalized(b_velocity - linalg::dot(b_velocity, normal) * normal);
    EXPECT_NEAR(linalg::dot(friction, sliding), mu * linalg::norm(pushed), 1e-9 * k) << "node " << node;
    EXPECT_NEAR(linalg::norm(friction), mu * linalg::norm(pushed), 1e-9 * k) << "node " << node;
  }
  EXPECT_EQ(checked, 12);
}

/// A U of 10 cm cells: prongs x ∈ [0, 0.2] and [0.5, 0.7], y up to 1, joined by a base y < 0.2.
TetMesh u_shape() {
  const SignedDistance inside_u = [](const Vec3& p) { return (p.y < 0.2 || p.x < 0.2 || p.x > 0.5) ? -1.0 : 1.0; };
  return make_implicit_mesh(inside_u, {0.0, 0.0, 0.0, 0.7, 1.0, 0.2}, 0.1);
}

/// The right prong above y = 0.3 moved by (−0.33, −0.05, +0.05) into the left one, sheared in
/// the layer 0.2 < y < 0.3 (no tet inverted): the prongs overlap by 3 cm.
Vec3 fold_right_prong(const Vec3& rest) {
  if (rest.x < 0.35) return rest;
  const double share = std::clamp((rest.y - 0.2) / 0.1, 0.0, 1.0);
  return rest + share * Vec3{-0.33, -0.05, 0.05};
}

TEST(ContactPotential, SelfContactFindsOverlappingProngsButNotNeighbours) {
  constexpr double k = 1e3, delta = 0.005;
  const TetMesh mesh = u_shape();
  ContactOptions options = options_with(k, delta);
  options.body_contact = true;
  ContactPotential contact(mesh, {}, options);
  // At rest, and bent without overlap, every vertex lies only in its own neighbourhood's tets.
  contact.begin_solve(mesh.positions, zeros_like(mesh.positions), 0.0, 0.01);
  EXPECT_EQ(contact.statistics(mesh.positions).frozen_planes, 0);
  std::vector<double> bent = mesh.positions;
  for (std::size_t i = 0; i < bent.size(); i += 3) bent[i] += 0.05 * std::sin(3.0 * bent[i + 1]);
  contact.begin_solve(bent, zeros_like(bent), 0.0, 0.01);
  EXPECT_EQ(contact.statistics(bent).frozen_planes, 0);

  std::vector<double> folded(mesh.positions.size());
  for (Index node = 0; node < mesh.node_count(); ++node) {
    set_node(folded, node, fold_right_prong(node_position(mesh.positions, node)));
  }
  contact.begin_solve(folded, zeros_like(folded), 0.0, 0.01);
  const std::vector<double> gradient = full_gradient(contact, folded);
  const auto strictly_inside = [](const Vec3& p, const Vec3& lower, const Vec3& upper) {
    constexpr double margin = 1e-9;
    return p.x > lower.x + margin && p.x < upper.x - margin && p.y > lower.y + margin && p.y < upper.y - margin &&
           p.z > lower.z + margin && p.z < upper.z - margin;
  };
  Index penetrating = 0;
  for (const Index node : contact.contact_nodes()) {
    const Vec3 rest = node_position(mesh.positions, node);
    const Vec3 p = node_position(folded, node);
    const Vec3 force = -1.0 * node_position(gradient, node);
    // Right-prong vertices inside the left prong, left-prong vertices inside the moved right one.
    const bool right_in_left = rest.x > 0.45 && rest.y > 0.25 && strictly_inside(p, {0.0, 0.0, 0.0}, {0.2, 1.0, 0.2});
    const bool left_in_right = rest.x < 0.25 && rest.y > 0.25 &&
                               strictly_inside(p + Vec3{0.33, 0.05, -0.05}, {0.5, 0.3, 0.0}, {0.7, 1.0, 0.2});
    if (!right_in_left && !left_in_right) {
      EXPECT_EQ(linalg::norm(force), 0.0) << "node " << node << " is not inside the other prong";
      continue;
    }
    ++penetrating;
    ASSERT_GT(linalg::norm(force), 0.0) << "node " << node << " penetrates but has no plane";
    const Vec3 outward{right_in_left ? 1.0 : -1.0, 0.0, 0.0};
    EXPECT_GT(linalg::dot(linalg::normalized(force), outward), 0.99) << "node " << node;
    EXPECT_NEAR(0.5 * delta - linalg::norm(force) / k, -0.03, 0.005) << "node " << node;
  }
  EXPECT_EQ(penetrating, 30);
  EXPECT_EQ(contact.statistics(folded).frozen_planes, 30);

  // The same fold with self-contact off (contact between different bodies only): no plane.
  options.self_contact = false;
  ContactPotential between_bodies(mesh, {}, options);
  between_bodies.begin_solve(folded, zeros_like(folded), 0.0, 0.01);
  EXPECT_EQ(between_bodies.statistics(folded).frozen_planes, 0);
}

TEST(ContactPotential, VertexPushedIntoItsOwnBodyIsNotASelfContact) {
  const TetMesh mesh = make_box_mesh(1.0, 1.0, 1.0, 8);
  Index top_centre = -1;
  for (Index node = 0; node < mesh.node_count(); ++node) {
    if (linalg::norm(node_position(mesh.positions, node) - Vec3{0.5, 1.0, 0.5}) < 1e-12) top_centre = node;
  }
  ASSERT_GE(top_centre, 0);
  // 30 cm (2.4 cells) down, past its own neighbourhood: the rest surface nearest to where it
  // is now is its own spot on the top face — squashed flesh, which elasticity handles.
  std::vector<double> positions = mesh.positions;
  set_node(positions, top_centre, Vec3{0.5, 0.7, 0.5});
  ContactPotential contact = body_contact_potential(mesh, 1e3, 0.01);
  contact.begin_solve(positions, zeros_like(positions), 0.0, 0.01);
  EXPECT_EQ(contact.statistics(positions).frozen_planes, 0);
}

TEST(ContactPotential, ResultsDoNotDependOnTheThreadCount) {
  const TetMesh mesh = make_box_mesh(1.0, 1.0, 1.0, 16);  // 1538 contact vertices: the parallel path
  std::vector<double> start = mesh.positions;
  for (std::size_t i = 1; i < start.size(); i += 3) start[i] += -0.01 + 0.001 * std::sin(static_cast<double>(i));
  std::vector<double> positions = start;
  for (std::size_t i = 0; i < positions.size(); i += 3) positions[i] += 1e-4 * std::cos(static_cast<double>(i));
  const auto evaluate = [&](int threads) {
    ContactOptions options = options_with(1e4, 0.02, 0.3);
    options.threads = threads;
    ContactPotential contact(mesh, {HalfSpace{}, Sphere{{0.5, 1.2, 0.5}, 0.25}}, options);
    contact.begin_solve(start, zeros_like(start), 0.0, 0.01);
    Blocks blocks;
    contact.hessian_blocks(positions, blocks);
    return std::make_tuple(contact.energy(positions), full_gradient(contact, positions), blocks);
  };
  const auto serial = evaluate(1);
  const auto parallel = evaluate(2);
  EXPECT_GT(std::get<0>(serial), 0.0);
  EXPECT_EQ(std::get<0>(serial), std::get<0>(parallel));
  EXPECT_EQ(std::get<1>(serial), std::get<1>(parallel));
  EXPECT_EQ(std::get<2>(serial), std::get<2>(parallel));
}

void expect_rejected(const ContactOptions& options, const std::string& field) {
  const TetMesh tet = tet_with_tip_at({});
  try {
    ContactPotential contact(tet, {}, options);
    ADD_FAILURE() << field << " was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find(field), std::string::npos) << error.what();
  }
}

TEST(ContactPotential, RejectsBadOptionsNamingTheField) {
  expect_rejected(options_with(0.0, 0.01), "stiffness");
  expect_rejected(options_with(-5.0, 0.01), "stiffness");
  expect_rejected(options_with(1e3, 0.0), "activation_distance");
  expect_rejected(options_with(1e3, -0.01), "activation_distance");
  expect_rejected(options_with(1e3, std::nan("")), "activation_distance");
  expect_rejected(options_with(1e3, 0.01, -0.1), "friction_coefficient");
  ContactOptions no_smoothing = options_with(1e3, 0.01, 0.5);
  no_smoothing.friction_velocity = 0.0;
  expect_rejected(no_smoothing, "friction_velocity");
  expect_rejected(ContactOptions{}, "stiffness");  // the defaults force a choice
}

TEST(ContactPotential, RejectsWrongSizesAndStepsNamingTheCall) {
  const TetMesh tet = tet_with_tip_at({});
  ContactPotential contact(tet, {HalfSpace{}}, options_with(1e3, 0.01));
  const std::vector<double> short_positions(6, 0.0);
  EXPECT_THROW((void)contact.energy(short_positions), std::invalid_argument);
  EXPECT_THROW(contact.begin_solve(tet.positions, short_positions, 0.0, 0.01), std::invalid_argument);
  EXPECT_THROW(contact.begin_solve(tet.positions, zeros_like(tet.positions), 0.0, 0.0), std::invalid_argument);
  try {
    std::vector<double> gradient(3, 0.0);
    contact.add_gradient(tet.positions, gradient);
    ADD_FAILURE() << "a short gradient was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("add_gradient"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace cholsim::fem
