// Penalty contact forces and the selective damping of stale elements (seed 000 §4.4, §5).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "fem/contact/penalty_contact.hpp"
#include "fem/corotational/corotational_simulation.hpp"
#include "fem/corotational/selective_damping.hpp"
#include "test_corotational_scenes.hpp"

namespace cholsim::fem {
namespace {

using linalg::Vec3;

/// Finds the contacts of `x` against `obstacles` at t = 0 and adds their penalty forces to `f`;
/// returns the number of nodes in contact.
std::size_t add_contact_forces(const std::vector<Obstacle>& obstacles, const PenaltyContact& contact, double k,
                               double dt, std::span<const double> masses, std::span<const double> x,
                               std::span<const double> v, std::span<double> f) {
  std::vector<NodeContact> contacts;
  find_contacts(obstacles, 0.0, x, contacts);
  add_penalty_contact_forces(contacts, contact, k, dt, masses, v, f);
  return contacts.size();
}

TEST(PenaltyContact, PushesOutAlongTheNormalAndFrictionOpposesSliding) {
  const std::vector<Obstacle> ground{HalfSpace{}};
  PenaltyContact contact;
  contact.friction = 0.5;
  contact.damping_ratio = 0.0;
  const std::vector<double> masses{2.0, 2.0};
  const std::vector<double> x{0.0, -0.01, 0.0, 0.0, 0.5, 0.0};  // node 1 is in the air
  const std::vector<double> v{3.0, 0.0, 0.0, 1.0, -1.0, 0.0};
  std::vector<double> f(6, 0.0);
  const double k = 1000.0;
  EXPECT_EQ(add_contact_forces(ground, contact, k, 1.0 / 60.0, masses, x, v, f), 1u);
  EXPECT_NEAR(f[1], k * 0.01, 1e-12);
  EXPECT_NEAR(f[0], -0.5 * k * 0.01, 1e-12);  // Coulomb bound μ·f_n
  EXPECT_EQ(f[3], 0.0);
  EXPECT_EQ(f[4], 0.0);
  // A slow slide is stopped, not reversed: friction is capped at m·|v_t|/Δt.
  std::vector<double> slow{1e-4, 0.0, 0.0, 0.0, 0.0, 0.0};
  std::fill(f.begin(), f.end(), 0.0);
  add_contact_forces(ground, contact, k, 1.0 / 60.0, masses, x, slow, f);
  EXPECT_NEAR(f[0], -2.0 * 1e-4 * 60.0, 1e-12);
}

TEST(PenaltyContact, DampingActsOnlyWhileApproaching) {
  const std::vector<Obstacle> ground{HalfSpace{}};
  PenaltyContact contact;
  contact.friction = 0.0;
  const std::vector<double> masses{1.0};
  const std::vector<double> x{0.0, -0.01, 0.0};
  const double k = 100.0;
  std::vector<double> down(3, 0.0), up(3, 0.0);
  add_contact_forces(ground, contact, k, 0.01, masses, x, std::vector<double>{0.0, -1.0, 0.0}, down);
  add_contact_forces(ground, contact, k, 0.01, masses, x, std::vector<double>{0.0, 1.0, 0.0}, up);
  EXPECT_NEAR(down[1], k * 0.01 + contact.damping_ratio * 2.0 * std::sqrt(k), 1e-12);
  EXPECT_NEAR(up[1], k * 0.01, 1e-12);
}

TEST(PenaltyContact, DefaultStiffnessSinksAColumnByGravityTimesStepSquared) {
  // 27 nodes of 1 kg: a column of 3 nodes carries 3 kg; k·d = 3g ⇒ d = g·Δt².
  const std::vector<double> masses(27, 1.0);
  const double dt = 0.01;
  EXPECT_NEAR(9.81 * 3.0 / default_contact_stiffness(masses, dt), 9.81 * dt * dt, 1e-15);
  EXPECT_THROW(default_contact_stiffness(masses, 0.0), std::invalid_argument);
}

TEST(SelectiveDamping, RigidMotionDampingKeepsMomentaAndRemovesDeformation) {
  const ElasticBody body = test::box_body(1, 1.0, 1e6);
  const std::vector<Index> nodes{0, 1, 2, 3, 4, 5, 6, 7};
  const Vec3 center{0.5, 0.5, 0.5};
  const auto x = body.rest.positions;
  std::vector<double> v = test::rigid_velocities(x, {1.0, 0.0, 2.0}, {0.3, -0.2, 1.0}, center);
  const std::vector<double> rigid = v;
  v[0] += 0.7;  // a deformation velocity
  v[13] -= 0.4;
  auto momenta = [&](std::span<const double> vel) {
    Vec3 p, l;
    for (std::size_t i = 0; i < 8; ++i) {
      const double m = body.node_masses[i];
      p += m * test::node(vel, i);
      l += m * cross(test::node(x, i) - center, test::node(vel, i));
    }
    return std::pair{p, l};
  };
  const auto [p0, l0] = momenta(v);
  std::vector<double> full = v;
  damp_toward_rigid_motion(nodes, 1.0, body.node_masses, x, full);
  const auto [p1, l1] = momenta(full);
  EXPECT_LT(norm(p1 - p0), 1e-12);
  EXPECT_LT(norm(l1 - l0), 1e-12);
  // Fully damped: a rigid field, whose strain rate (here: distance to a rigid field fitted by
  // the undamped part) is gone — pairwise distances do not change to first order.
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = i + 1; j < 8; ++j) {
      const Vec3 dx = test::node(x, i) - test::node(x, j);
      EXPECT_NEAR(dot(dx, test::node(full, i) - test::node(full, j)), 0.0, 1e-12);
    }
  }
  // An already rigid field is left alone.
  std::vector<double> untouched = rigid;
  damp_toward_rigid_motion(nodes, 0.8, body.node_masses, x, untouched);
  EXPECT_LT(test::max_abs_difference(untouched, rigid), 1e-12);
}

TEST(SelectiveDamping, VelocityScalingScalesEachNodeByItsFactor) {
  std::vector<double> v{1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
  const std::vector<double> factors{1.0, 0.5};
  scale_node_velocities(factors, v);
  EXPECT_EQ(v, (std::vector<double>{1.0, 2.0, 3.0, 2.0, 2.5, 3.0}));
}

// A budget too small for the errors of a hard landing: stale elements get damped and the
// simulation stays bounded, for both kinds of selective damping.
TEST(SelectiveDamping, TightBudgetLandingStaysStable) {
  for (const SelectiveDamping damping : {SelectiveDamping::velocity_scaling, SelectiveDamping::shape_matching}) {
    const ElasticBody body = test::box_body(4, 0.05, 2e6);
    CorotationalOptions options;
    options.obstacles.push_back(HalfSpace{});
    options.warp_canceling.tau = 0.0;  // every stale element competes for the tiny budget
    options.warp_canceling.budget_fraction = 0.05;
    options.warp_canceling.damping = damping;
    options.warp_canceling.damping_threshold = 1e-3;
    CorotationalSimulation simulation(body, options);
    const auto lifted = test::rigidly_moved(body.rest.positions, linalg::Mat3::identity(), {}, {0.0, 0.05, 0.0});
    simulation.set_state(lifted, test::rigid_velocities(lifted, {0.5, -2.0, 0.0}, {0.0, 0.0, 3.0}, {0.1, 0.15, 0.1}));
    Index damped = 0;
    for (int step = 0; step < 60; ++step) damped += simulation.step().damped_elements;
    EXPECT_GT(damped, 0);
    for (const double v : simulation.velocities()) ASSERT_LT(std::abs(v), 10.0);
    double lowest = 1.0;
    for (std::size_t i = 1; i < simulation.positions().size(); i += 3) lowest = std::min(lowest, simulation.positions()[i]);
    EXPECT_GT(lowest, -0.05);
  }
}

}  // namespace
}  // namespace cholsim::fem
