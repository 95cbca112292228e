// The nonlinear dynamics end to end: the selective (element-block) Hessian NEWTON-R refactorizes
// to, every solver reaching the same states, the integrators' energy behaviour on a vibrating
// bar, and contact holding a dropped body above the floor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "fem/contact/contact_potential.hpp"
#include "fem/dynamics/dynamics_scenes.hpp"
#include "fem/dynamics/elastic_system.hpp"
#include "fem/mesh/procedural_meshes.hpp"
#include "linalg/vector_norms.hpp"
#include "solvers/integrators/time_integrator.hpp"

namespace cholsim::fem {
namespace {

using linalg::max_abs_difference;

using solvers::IntegratorKind;
using solvers::NewtonMethod;

DynamicsScene small_bar_scene() {
  DynamicsSceneOptions options;
  options.resolution = 0.15;
  return make_dynamics_scene(options);
}

// Runs `steps` steps of `scene` with `method`; returns the final free positions.
std::vector<double> run(const DynamicsScene& scene, NewtonMethod method, int steps, solvers::NewtonOptions options = {}) {
  auto system = make_scene_system(scene);
  options.dofs_per_node = 3;
  solvers::NewtonSolver solver(method, options);
  solvers::TimeIntegrator integrator(*system, solver, scene.integrator, scene.time_step);
  const std::vector<double> start = system->free_values(scene.mesh.positions);
  integrator.set_state(start, std::vector<double>(start.size(), 0.0));
  for (int step = 0; step < steps; ++step) {
    const solvers::IntegratorStepStatistics s = integrator.step();
    EXPECT_TRUE(s.converged) << solvers::method_name(method) << " step " << step << ": " << s.solves.front().failure;
  }
  return {integrator.positions().begin(), integrator.positions().end()};
}

TEST(SelectiveHessian, TakesChangedBlocksOnlyAndStaysExactAtToleranceZero) {
  const DynamicsScene scene = small_bar_scene();
  auto system = make_scene_system(scene);
  system->set_time(0.3);
  std::vector<double> x = system->free_values(scene.mesh.positions);
  linalg::SymmetricCscMatrix exact = system->pattern(), factored = system->pattern(), reference = system->pattern();
  std::vector<Index> changed;
  ASSERT_TRUE(system->selective_potential_hessian(x, 1.0, 0.0, 0.0, exact, factored, changed));
  EXPECT_EQ(changed.size(), static_cast<std::size_t>(system->size()));  // the first call takes every block
  system->potential_hessian(x, reference);
  EXPECT_EQ(max_abs_difference(exact.lower.values, reference.lower.values), 0.0);
  EXPECT_EQ(max_abs_difference(factored.lower.values, reference.lower.values), 0.0);
  // Nothing moved: nothing changes.
  ASSERT_TRUE(system->selective_potential_hessian(x, 1.0, 0.0, 0.0, exact, factored, changed));
  EXPECT_TRUE(changed.empty());
  // Move one node a little: only the blocks around it change; at a loose tolerance they are
  // kept, and the factored matrix then differs from the exact one there only.
  x[0] += 1e-4;
  ASSERT_TRUE(system->selective_potential_hessian(x, 1.0, 0.0, 0.0, exact, factored, changed));
  EXPECT_FALSE(changed.empty());
  EXPECT_LT(changed.size(), static_cast<std::size_t>(system->size()) / 4);
  // The factored matrix is kept by adding the changed blocks' differences: equal to rounding.
  double largest = 0.0;
  for (double value : exact.lower.values) largest = std::max(largest, std::abs(value));
  EXPECT_LT(max_abs_difference(factored.lower.values, exact.lower.values), 1e-14 * largest);
  x[0] += 1e-4;
  ASSERT_TRUE(system->selective_potential_hessian(x, 1.0, 0.0, 0.5, exact, factored, changed));
  EXPECT_TRUE(changed.empty());
  EXPECT_GT(max_abs_difference(factored.lower.values, exact.lower.values), 0.0);
}

TEST(DynamicsSolvers, RefactoredAtToleranceZeroFollowsNewtonDirect) {
  const DynamicsScene scene = small_bar_scene();
  solvers::NewtonOptions options;
  options.refactor_tolerance = 0.0;
  const std::vector<double> direct = run(scene, NewtonMethod::newton_direct, 4, options);
  const std::vector<double> refactored = run(scene, NewtonMethod::newton_refactored, 4, options);
  EXPECT_LT(max_abs_difference(direct, refactored), 1e-10 * 0.44);
}

TEST(DynamicsSolvers, EverySolverReachesTheSameState) {
  // The target on a small bar: final positions within 1e-6 of the model size of
  // NEWTON-D's (the tolerances are the thesis', 1e-6 relative on the gradient).
  const DynamicsScene scene = small_bar_scene();
  const std::vector<double> reference = run(scene, NewtonMethod::newton_direct, 6);
  for (NewtonMethod method : {NewtonMethod::newton_iterative, NewtonMethod::newton_frozen,
                              NewtonMethod::newton_extrapolated, NewtonMethod::hybrid_frozen,
                              NewtonMethod::hybrid_extrapolated, NewtonMethod::newton_refactored,
                              NewtonMethod::hybrid_refactored}) {
    EXPECT_LT(max_abs_difference(run(scene, method, 6), reference), 1e-6 * 0.44) << solvers::method_name(method);
  }
}

// A bar clamped at one end, started with a bending velocity, no damping: the total energy
// (elastic + kinetic) after a few oscillations.
double energy_kept(IntegratorKind kind) {
  TetMesh mesh = make_box_mesh(0.2, 0.03, 0.03, 10);
  std::vector<Index> clamped;
  for (Index v = 0; v < mesh.node_count(); ++v) {
    if (mesh.positions[3 * static_cast<std::size_t>(v)] < 1e-9) clamped.push_back(v);
  }
  DynamicsMaterial material;
  material.elastic = {5e5, 0.3, 1000.0};
  ElasticSystemOptions options;
  options.gravity = {};
  options.prescribed.push_back({clamped, [](const Vec3& rest, double) { return rest; }});
  std::vector<Index> element_material(static_cast<std::size_t>(mesh.tet_count()), 0);
  ElasticSystem system(mesh, {material}, element_material, options, "vibrating bar");
  solvers::NewtonOptions newton;
  newton.dofs_per_node = 3;
  newton.relative_tolerance = 1e-9;
  solvers::NewtonSolver solver(NewtonMethod::newton_direct, newton);
  solvers::TimeIntegrator integrator(system, solver, kind, 2e-3);
  const std::vector<double> start = system.free_values(mesh.positions);
  std::vector<double> velocity(start.size(), 0.0);
  for (std::size_t i = 1; i < velocity.size(); i += 3) velocity[i] = 2.0 * std::pow((start[i - 1] / 0.2), 2);
  integrator.set_state(start, velocity);
  const auto total = [&] {
    const ElasticSystem::EnergyParts parts = system.energy_parts(integrator.positions(), integrator.velocities());
    return parts.elastic + parts.kinetic;
  };
  const double initial = total();
  for (int step = 0; step < 100; ++step) EXPECT_TRUE(integrator.step().converged);
  return total() / initial;
}

TEST(DynamicsSolvers, SecondOrderIntegratorsKeepTheVibratingBarsEnergy) {
  const double bdf1 = energy_kept(IntegratorKind::bdf1);
  const double bdf2 = energy_kept(IntegratorKind::bdf2);
  const double sdirk2 = energy_kept(IntegratorKind::sdirk2);
  EXPECT_LT(bdf1, 0.8);    // BDF1's numerical damping
  EXPECT_GT(bdf2, 0.95);   // second order: little loss over a few periods
  EXPECT_GT(sdirk2, 0.95);
  for (double kept : {bdf1, bdf2, sdirk2}) EXPECT_LT(kept, 1.0 + 1e-6);  // none gains energy
}

TEST(DynamicsSolvers, ContactKeepsADroppedBodyAboveTheFloor) {
  // A soft ball dropped from 2 cm onto the floor with SDIRK2: it lands and stays out of the
  // floor but for the penalty's depth, and its lowest point ends near the floor.
  TetMesh mesh = make_sphere_mesh(0.03, 6);
  for (std::size_t i = 1; i < mesh.positions.size(); i += 3) mesh.positions[i] += 0.05;
  DynamicsMaterial material;
  material.elastic = {5e4, 0.4, 1000.0};
  ElasticSystemOptions options;
  options.damping = {DampingModel::green, 0.0, 0.02};
  std::vector<Index> element_material(static_cast<std::size_t>(mesh.tet_count()), 0);
  ElasticSystem system(mesh, {material}, element_material, options, "ball");
  ContactOptions contact;
  contact.stiffness = 2e3;
  contact.activation_distance = 1e-3;
  contact.friction_coefficient = 0.3;
  system.set_contact(std::make_unique<ContactPotential>(mesh, std::vector<Obstacle>{HalfSpace{}}, contact));
  solvers::NewtonOptions newton;
  newton.dofs_per_node = 3;
  solvers::NewtonSolver solver(NewtonMethod::hybrid_refactored, newton);
  solvers::TimeIntegrator integrator(system, solver, IntegratorKind::sdirk2, 3e-3);
  const std::vector<double> start = system.free_values(mesh.positions);
  integrator.set_state(start, std::vector<double>(start.size(), 0.0));
  double lowest_ever = 1.0;
  for (int step = 0; step < 90; ++step) {
    EXPECT_TRUE(integrator.step().converged) << "step " << step;
    const std::span<const double> x = integrator.positions();
    for (std::size_t i = 1; i < x.size(); i += 3) lowest_ever = std::min(lowest_ever, x[i]);
  }
  // Weight over the contact nodes against k: a few millimetres at most.
  EXPECT_GT(lowest_ever, -3e-3);
  const std::span<const double> x = integrator.positions();
  double lowest = 1.0;
  for (std::size_t i = 1; i < x.size(); i += 3) lowest = std::min(lowest, x[i]);
  EXPECT_LT(lowest, 2e-3);  // it fell and rests on the floor
}

TEST(DynamicsSolvers, ContactKeepsBodiesApartWithinThePenaltyDepth) {
  // Two coarse balls, one above the other, dropped into a bowl: the lower lands on the bowl,
  // the upper on the lower. No vertex may end deeper than a few millimetres in the bowl or in
  // the other ball, and the pair must come to rest stacked.
  constexpr double kRadius = 0.02;
  const TetMesh ball = make_sphere_mesh(kRadius, 4);
  TetMesh pair;
  for (const double height : {0.03, 0.08}) {
    const Index first = pair.node_count();
    for (Index v = 0; v < ball.node_count(); ++v) {
      const Vec3 p = node_position(ball.positions, v) + Vec3{0.0, height, 0.0};
      pair.positions.insert(pair.positions.end(), {p.x, p.y, p.z});
    }
    for (Index corner : ball.tets) pair.tets.push_back(first + corner);
  }
  DynamicsMaterial material;
  material.elastic = {5e4, 0.4, 1000.0};
  ElasticSystemOptions options;
  options.damping = {DampingModel::green, 0.0, 2e-3};
  std::vector<Index> element_material(static_cast<std::size_t>(pair.tet_count()), 0);
  ElasticSystem system(pair, {material}, element_material, options, "two balls");
  ContactOptions contact;
  contact.stiffness = 5e3;
  contact.activation_distance = 1e-3;
  contact.friction_coefficient = 0.3;
  contact.friction_velocity = 1e-2;
  contact.body_contact = true;
  contact.self_contact = false;
  system.set_contact(std::make_unique<ContactPotential>(pair, std::vector<Obstacle>{Bowl{{0.0, 0.15, 0.0}, 0.15}}, contact));
  solvers::NewtonOptions newton;
  newton.dofs_per_node = 3;
  solvers::NewtonSolver solver(NewtonMethod::hybrid_refactored, newton);
  solvers::TimeIntegrator integrator(system, solver, IntegratorKind::sdirk2, 4e-3);
  const std::vector<double> start = system.free_values(pair.positions);
  integrator.set_state(start, std::vector<double>(start.size(), 0.0));
  double deepest = 0.0;
  std::vector<double> full(pair.positions.size());
  for (int step = 0; step < 60; ++step) {
    EXPECT_TRUE(integrator.step().converged) << "step " << step;
    system.full_positions(integrator.positions(), full);
    deepest = std::max(deepest, system.contact()->statistics(full).deepest_penetration);
  }
  EXPECT_LT(deepest, 3e-3);
  // The lower ball rests on the bottom of the bowl (y = 0), the upper one on it.
  double lowest = 1.0, upper_lowest = 1.0;
  for (Index v = 0; v < pair.node_count(); ++v) {
    const double y = full[3 * static_cast<std::size_t>(v) + 1];
    double& ball_lowest = v < ball.node_count() ? lowest : upper_lowest;
    ball_lowest = std::min(ball_lowest, y);
  }
  EXPECT_GT(lowest, -3e-3);
  EXPECT_LT(lowest, 5e-3);
  EXPECT_GT(upper_lowest, 2.0 * kRadius - 6e-3);  // on the lower ball, not through it
  EXPECT_LT(upper_lowest, 2.0 * kRadius + 5e-3);
}

}  // namespace
}  // namespace cholsim::fem
