// Warp-canceling corotation (seed 000 §4): element homes, scheduling on hand-made errors, and
// τ = 0 reproducing the exact corotational method.
#include "fem/corotational/warp_canceling.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <set>

#include "factor/analysis/symbolic.hpp"
#include "fem/corotational/corotational_simulation.hpp"
#include "linalg/assembly_pattern.hpp"
#include "test_corotational_scenes.hpp"

namespace cholsim::fem {
namespace {

struct SmallScene {
  ElasticBody body = test::box_body(4, 0.1, 1e6);
  std::shared_ptr<const factor::Symbolic> symbolic;
  std::vector<Index> parent;
  std::unique_ptr<factor::ElementSupernodeMap> map;
  std::vector<Index> home;

  SmallScene() {
    const linalg::AssemblyPattern pattern(body.node_count(), 3, 4, body.rest.tets);
    factor::AnalyzeOptions options;
    options.dofs_per_node = 3;
    options.amalgamation.enabled = false;
    symbolic = factor::analyze(pattern.pattern(), options);
    parent = factor::supernode_parents(*symbolic);
    std::vector<Index> dofs;
    for (const Index node : body.rest.tets) {
      for (Index c = 0; c < 3; ++c) dofs.push_back(3 * node + c);
    }
    map = std::make_unique<factor::ElementSupernodeMap>(*symbolic, dofs, 12);
    home = element_home_supernodes(*map);
  }

  std::set<Index> path_to_root(Index s) const {
    std::set<Index> path;
    for (; s >= 0; s = parent[static_cast<std::size_t>(s)]) path.insert(s);
    return path;
  }

  static std::set<Index> marked_set(const factor::UpdateSchedule& schedule) {
    std::set<Index> out;
    for (std::size_t s = 0; s < schedule.marked.size(); ++s) {
      if (schedule.marked[s]) out.insert(static_cast<Index>(s));
    }
    return out;
  }

  Index supernodes() const { return symbolic->supernode_count(); }
};

TEST(WarpCanceling, EveryEntryOfAnElementLandsInItsHomeOrAnAncestor) {
  const SmallScene scene;
  ASSERT_GT(scene.supernodes(), 4);
  for (Index e = 0; e < scene.body.element_count(); ++e) {
    const auto path = scene.path_to_root(scene.home[static_cast<std::size_t>(e)]);
    for (const Index s : scene.map->supernodes(e)) EXPECT_TRUE(path.count(s)) << "element " << e << " supernode " << s;
  }
}

TEST(WarpCanceling, TargetQualityMarksTheBadHomesAndTheirAncestors) {
  const SmallScene scene;
  std::vector<double> errors(static_cast<std::size_t>(scene.body.element_count()), 1e-4);
  const std::size_t bad = errors.size() / 3;
  errors[bad] = 0.5;
  const std::vector<double> badness =
      home_supernode_badness(scene.home, errors, scene.supernodes());
  const std::vector<double> cost(static_cast<std::size_t>(scene.supernodes()), 1.0);
  WarpCancelingOptions options;
  options.tau = 0.1;
  const auto schedule = schedule_updates(scene.parent, badness, cost, options);
  EXPECT_EQ(SmallScene::marked_set(schedule), scene.path_to_root(scene.home[bad]));
  options.tau = 1.0;  // nothing above the threshold
  EXPECT_TRUE(SmallScene::marked_set(schedule_updates(scene.parent, badness, cost, options)).empty());
}

TEST(WarpCanceling, TargetTimeTakesTheWorstSupernodesThatFitTheBudget) {
  const SmallScene scene;
  // Two elements homed in disjoint branches (neither home is an ancestor of the other).
  std::size_t first = 0, second = 0;
  for (std::size_t e = 1; e < scene.home.size() && second == 0; ++e) {
    const auto a = scene.path_to_root(scene.home[first]);
    const auto b = scene.path_to_root(scene.home[e]);
    if (!a.count(scene.home[e]) && !b.count(scene.home[first])) second = e;
  }
  ASSERT_GT(second, 0u);
  std::vector<double> errors(scene.home.size(), 0.0);
  errors[first] = 0.9;
  errors[second] = 0.5;
  const std::vector<double> badness = home_supernode_badness(scene.home, errors, scene.supernodes());
  const std::vector<double> cost(static_cast<std::size_t>(scene.supernodes()), 1.0);
  const auto worst_path = scene.path_to_root(scene.home[first]);
  auto both = worst_path;
  for (const Index s : scene.path_to_root(scene.home[second])) both.insert(s);

  WarpCancelingOptions options;
  options.tau = 0.0;  // pure target-time: every supernode with an error is a candidate
  options.budget_seconds = static_cast<double>(worst_path.size());
  EXPECT_EQ(SmallScene::marked_set(schedule_updates(scene.parent, badness, cost, options)), worst_path);
  options.budget_seconds = static_cast<double>(both.size());
  EXPECT_EQ(SmallScene::marked_set(schedule_updates(scene.parent, badness, cost, options)), both);
  options.budget_seconds = static_cast<double>(worst_path.size()) - 0.5;  // the worst no longer fits
  EXPECT_FALSE(SmallScene::marked_set(schedule_updates(scene.parent, badness, cost, options)).count(scene.home[first]));
  // τ caps the candidates: with room for both paths, only the element above τ is updated.
  options.tau = 0.7;
  options.budget_seconds = static_cast<double>(both.size());
  EXPECT_EQ(SmallScene::marked_set(schedule_updates(scene.parent, badness, cost, options)), worst_path);
  // Hybrid: the must-update threshold wins over a zero budget.
  options.tau = 0.0;
  options.must_update_tau = 0.7;
  options.budget_seconds = 0.0;
  EXPECT_EQ(SmallScene::marked_set(schedule_updates(scene.parent, badness, cost, options)), worst_path);
}

TEST(WarpCanceling, StaleErrorVanishesForAFreshFrameAndGrowsWithTheRotationGap) {
  const ElasticBody body = test::box_body(1, 1.0, 1e6);
  const IsotropicTet k = isotropic_tet(body, 0);
  const Mat3 element = linalg::to_rotation_matrix(linalg::quaternion_from_axis_angle({0.0, 1.0, 1.0}, 0.8));
  std::array<Mat3, 4> nodes;
  for (std::size_t a = 0; a < 4; ++a) {
    nodes[a] = linalg::to_rotation_matrix(linalg::quaternion_from_axis_angle({1.0, 0.0, 0.3 * static_cast<double>(a)}, 0.5));
  }
  ElementVector velocity{};
  for (std::size_t i = 0; i < 12; ++i) velocity[i] = std::cos(static_cast<double>(i));
  EXPECT_NEAR(stale_element_error(k, 1e-3, element, warp_canceling_frame(element, nodes), nodes, velocity), 0.0,
              1e-12 * 1e-3 * k.volume_mu * linalg::squared_norm(k.gradients[0]));
  double previous = 0.0;
  for (const double gap : {0.01, 0.05, 0.2}) {
    const Mat3 old = linalg::to_rotation_matrix(linalg::quaternion_from_axis_angle({1.0, -1.0, 0.0}, gap)) * element;
    const double error = stale_element_error(k, 1e-3, element, warp_canceling_frame(old, nodes), nodes, velocity);
    EXPECT_GT(error, previous);
    previous = error;
  }
}

// A deformed box tumbling freely: with τ = 0 every supernode with a moving element is
// updated each step, so warp-canceling corotation is the exact corotational method.
TEST(WarpCanceling, TauZeroReproducesTheExactCorotationalStep) {
  const ElasticBody body = test::box_body(3, 0.1, 2e5);
  std::vector<double> start = body.rest.positions;
  for (std::size_t i = 0; i < start.size(); i += 3) start[i] *= 1.15;  // stretched along x
  const Mat3 tilt = linalg::to_rotation_matrix(linalg::quaternion_from_axis_angle({1.0, 1.0, 0.0}, 0.7));
  start = test::rigidly_moved(start, tilt, {0.15, 0.15, 0.15}, {0.0, 1.0, 0.0});
  const auto velocity = test::rigid_velocities(start, {0.2, 0.0, -0.1}, {3.0, -1.0, 2.0}, {0.15, 1.15, 0.15});

  auto run = [&](CorotationalMethod method, bool identity_node_rotations = false) {
    CorotationalOptions options;
    options.method = method;
    options.gravity = {};
    options.warp_canceling.tau = 0.0;
    options.warp_canceling.identity_node_rotations = identity_node_rotations;
    CorotationalSimulation simulation(body, options);
    simulation.set_state(start, velocity);
    for (int step = 0; step < 8; ++step) {
      const StepStatistics stats = simulation.step();
      // The first step starts from the pose set_state assembled: nothing is stale yet.
      if (method == CorotationalMethod::warp_canceling && step > 0) {
        EXPECT_GT(stats.updated_elements, 0);
      }
    }
    return std::vector<double>(simulation.positions().begin(), simulation.positions().end());
  };
  const auto exact = run(CorotationalMethod::exact);
  const auto canceling = run(CorotationalMethod::warp_canceling);
  EXPECT_LT(test::max_abs_difference(exact, canceling), 1e-8 * 0.3);
  // §4.1's thin-sheet variant (no per-node rotations) is exact too when nothing is stale.
  const auto unwarped = run(CorotationalMethod::warp_canceling, true);
  EXPECT_LT(test::max_abs_difference(exact, unwarped), 1e-8 * 0.3);
  EXPECT_GT(test::max_abs_difference(exact, start), 0.05);  // it did move
}

// With implicit contact, A also holds Δt²·k·RᵢᵀnnᵀRᵢ at the contact nodes, in the frame that
// R·A·Rᵀ undoes: with τ = 0 and every contact block kept current, warp-canceling still takes the
// exact method's steps through a tumbling landing on the ground.
TEST(WarpCanceling, TauZeroWithImplicitContactReproducesTheExactStep) {
  const ElasticBody body = test::box_body(3, 0.1, 2e5);
  const Mat3 tilt = linalg::to_rotation_matrix(linalg::quaternion_from_axis_angle({1.0, 0.0, 1.0}, 0.4));
  const auto start = test::rigidly_moved(body.rest.positions, tilt, {0.15, 0.15, 0.15}, {0.0, 0.02, 0.0});
  const auto velocity = test::rigid_velocities(start, {0.3, -1.0, 0.0}, {0.0, 2.0, 1.0}, {0.15, 0.17, 0.15});
  Index most_in_contact = 0;
  auto run = [&](CorotationalMethod method) {
    CorotationalOptions options;
    options.method = method;
    options.warp_canceling.tau = 0.0;
    options.obstacles.push_back(HalfSpace{});
    options.contact.implicit = true;
    options.contact.implicit_block_tolerance = 0.0;
    options.contact.stiffness = 1e5;  // far beyond what an explicit spring survives at 60 Hz
    CorotationalSimulation simulation(body, options);
    simulation.set_state(start, velocity);
    for (int step = 0; step < 12; ++step) most_in_contact = std::max(most_in_contact, simulation.step().contact_nodes);
    return std::vector<double>(simulation.positions().begin(), simulation.positions().end());
  };
  const auto exact = run(CorotationalMethod::exact);
  const auto canceling = run(CorotationalMethod::warp_canceling);
  EXPECT_GT(most_in_contact, 3);
  EXPECT_LT(test::max_abs_difference(exact, canceling), 1e-8 * 0.3);
  double lowest = 1.0;
  for (std::size_t i = 1; i < exact.size(); i += 3) lowest = std::min(lowest, exact[i]);
  EXPECT_GT(lowest, -2e-3);  // the stiff spring holds the landing within millimetres
}

}  // namespace
}  // namespace cholsim::fem
