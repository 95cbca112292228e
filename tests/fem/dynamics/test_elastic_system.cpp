// fem/dynamics: the hyperelastic MechanicalSystem (gradient and Hessian against central
// differences, prescribed motion, damping matrices) and the scenes of seed 002 Table 5.2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "fem/dynamics/dynamics_scenes.hpp"
#include "fem/dynamics/elastic_system.hpp"
#include "fem/mesh/procedural_meshes.hpp"
#include "fem/mesh/tetgen.hpp"
#include "linalg/vector_norms.hpp"

namespace cholsim::fem {
namespace {

using linalg::max_abs;

constexpr double kLength = 0.1;

std::vector<Index> nodes_at_x(const TetMesh& mesh, double x) {
  std::vector<Index> nodes;
  for (Index v = 0; v < mesh.node_count(); ++v) {
    if (std::abs(mesh.positions[3 * static_cast<std::size_t>(v)] - x) < 1e-12) nodes.push_back(v);
  }
  return nodes;
}

ElasticSystem small_bar(HyperelasticModel model, DampingOptions damping = {}) {
  TetMesh mesh = make_box_mesh(kLength, 0.04, 0.04, 5);
  DynamicsMaterial material;
  material.elastic = {1e5, 0.45, 1000.0};
  material.model = model;
  ElasticSystemOptions options;
  options.damping = damping;
  options.prescribed.push_back({nodes_at_x(mesh, 0.0), [](const Vec3& rest, double) { return rest; }});
  options.prescribed.push_back({nodes_at_x(mesh, kLength), [](const Vec3& rest, double time) {
                                  return rest + Vec3{-0.01 * time, 0.005 * time, 0.0};
                                }});
  std::vector<Index> element_material(static_cast<std::size_t>(mesh.tet_count()), 0);
  return ElasticSystem(std::move(mesh), {material}, std::move(element_material), std::move(options), "test bar");
}

// The free positions of the rest state, perturbed by `amplitude`.
std::vector<double> perturbed_state(const ElasticSystem& system, double amplitude, unsigned seed) {
  std::vector<double> x = system.free_values(system.body().rest.positions);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(-amplitude, amplitude);
  for (double& value : x) value += noise(rng);
  return x;
}

// y = H·v for a symmetric matrix stored as its lower triangle.
std::vector<double> multiply(const linalg::SymmetricCscMatrix& h, const std::vector<double>& v) {
  std::vector<double> y(v.size(), 0.0);
  const linalg::CscMatrix& lower = h.lower;
  for (Index col = 0; col < lower.cols; ++col) {
    for (auto p = lower.col_ptr[static_cast<std::size_t>(col)]; p < lower.col_ptr[static_cast<std::size_t>(col) + 1]; ++p) {
      const auto row = static_cast<std::size_t>(lower.row_idx[static_cast<std::size_t>(p)]);
      const double value = lower.values[static_cast<std::size_t>(p)];
      y[row] += value * v[static_cast<std::size_t>(col)];
      if (row != static_cast<std::size_t>(col)) y[static_cast<std::size_t>(col)] += value * v[row];
    }
  }
  return y;
}

TEST(ElasticSystem, GradientMatchesCentralDifferencesOfThePotential) {
  for (HyperelasticModel model : {HyperelasticModel::stable_neo_hookean, HyperelasticModel::stvk,
                                  HyperelasticModel::corotated, HyperelasticModel::fixed_corotated}) {
    ElasticSystem system = small_bar(model);
    system.set_time(0.5);
    std::vector<double> x = perturbed_state(system, 2e-3, 3);
    std::vector<double> gradient(x.size());
    system.potential_gradient(x, gradient);
    constexpr double kStep = 1e-7;
    double worst = 0.0;
    for (std::size_t i = 0; i < x.size(); i += 7) {
      const double saved = x[i];
      x[i] = saved + kStep;
      const double plus = system.potential(x);
      x[i] = saved - kStep;
      const double minus = system.potential(x);
      x[i] = saved;
      worst = std::max(worst, std::abs((plus - minus) / (2.0 * kStep) - gradient[i]));
    }
    EXPECT_LT(worst, 1e-5 * max_abs(gradient)) << model_name(model);
  }
}

TEST(ElasticSystem, HessianMatchesDifferencesOfTheGradientUnderExpansion) {
  // Every rotation-invariant energy has zero-eigenvalue rotation modes at rest, which the
  // projection clamps at the slightest perturbation; under a uniform 2 % expansion SNH's twist
  // eigenvalues μ(1 − σ) + λ(J − 1)σ are clearly positive, so the projection changes nothing.
  TetMesh mesh = make_box_mesh(kLength, 0.04, 0.04, 5);
  DynamicsMaterial material;
  material.elastic = {1e5, 0.45, 1000.0};
  std::vector<Index> element_material(static_cast<std::size_t>(mesh.tet_count()), 0);
  ElasticSystem system(mesh, {material}, element_material, {}, "free box");
  std::vector<double> x = mesh.positions;
  std::mt19937 noise_rng(5);
  std::uniform_real_distribution<double> noise(-1e-5, 1e-5);
  for (double& value : x) value = 1.02 * value + noise(noise_rng);
  linalg::SymmetricCscMatrix hessian = system.pattern();
  system.potential_hessian(x, hessian);
  ASSERT_EQ(system.statistics().clamped_elements, 0);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> direction(-1.0, 1.0);
  std::vector<double> v(x.size());
  for (double& e : v) e = direction(rng);
  constexpr double kStep = 1e-7;
  std::vector<double> plus(x.size()), minus(x.size()), shifted(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) shifted[i] = x[i] + kStep * v[i];
  system.potential_gradient(shifted, plus);
  for (std::size_t i = 0; i < x.size(); ++i) shifted[i] = x[i] - kStep * v[i];
  system.potential_gradient(shifted, minus);
  std::vector<double> difference(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) difference[i] = (plus[i] - minus[i]) / (2.0 * kStep);
  const std::vector<double> product = multiply(hessian, v);
  std::vector<double> error(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) error[i] = product[i] - difference[i];
  EXPECT_LT(max_abs(error), 1e-6 * max_abs(product));
}

TEST(ElasticSystem, AnalyticHessianRateMatchesTheForwardDifference) {
  // Seed 002 eq. 5.5–5.7 take K̇ by a forward difference along the velocity; the analytic rate
  // (d/dt ∂P/∂F contracted like the Hessian) must agree where the projection clamps nothing:
  // a 2 % expanded box (see the Hessian test), for SNH, StVK and a fibre-reinforced SNH.
  TetMesh mesh = make_box_mesh(kLength, 0.04, 0.04, 4);
  std::vector<double> x = mesh.positions;
  for (double& value : x) value *= 1.02;
  std::vector<double> v(x.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.3 * std::sin(1.7 * static_cast<double>(i)) * x[i];
  std::vector<Index> element_material(static_cast<std::size_t>(mesh.tet_count()), 0);
  for (HyperelasticModel model : {HyperelasticModel::stable_neo_hookean, HyperelasticModel::stvk}) {
    for (double fibre : {0.0, 5e4}) {
      DynamicsMaterial material;
      material.elastic = {1e5, 0.45, 1000.0};
      material.model = model;
      material.fibre_stiffness = fibre;
      ElasticSystemOptions options;
      ElasticSystem differenced(mesh, {material}, element_material, options, "box");
      options.analytic_hessian_rate = true;
      ElasticSystem analytic(mesh, {material}, element_material, options, "box");
      linalg::SymmetricCscMatrix hessian = differenced.pattern();
      differenced.potential_hessian(x, hessian);
      ASSERT_EQ(differenced.statistics().clamped_elements, 0) << model_name(model);
      linalg::SymmetricCscMatrix by_difference = differenced.pattern(), exact = analytic.pattern();
      differenced.potential_hessian_rate(x, v, by_difference);
      analytic.potential_hessian_rate(x, v, exact);
      std::vector<double> error(exact.lower.values.size());
      for (std::size_t k = 0; k < error.size(); ++k) error[k] = by_difference.lower.values[k] - exact.lower.values[k];
      // Forward differences are accurate to about √u relative.
      EXPECT_LT(max_abs(error), 1e-5 * max_abs(exact.lower.values)) << model_name(model) << " fibre " << fibre;
      EXPECT_GT(max_abs(exact.lower.values), 0.0);
    }
  }
}

TEST(ElasticSystem, PrescribedNodesFollowTheirMotionAndAreNotUnknowns) {
  ElasticSystem system = small_bar(HyperelasticModel::stable_neo_hookean);
  const TetMesh& rest = system.body().rest;
  const Index prescribed = static_cast<Index>(nodes_at_x(rest, 0.0).size() + nodes_at_x(rest, kLength).size());
  EXPECT_EQ(system.size(), 3 * (rest.node_count() - prescribed));
  EXPECT_EQ(system.pattern().size(), system.size());
  system.set_time(2.0);
  std::vector<double> full(rest.positions.size());
  system.full_positions(system.free_values(rest.positions), full);
  for (Index v : nodes_at_x(rest, kLength)) {
    EXPECT_NEAR(full[3 * static_cast<std::size_t>(v)], kLength - 0.02, 1e-15);
    EXPECT_NEAR(full[3 * static_cast<std::size_t>(v) + 1], rest.positions[3 * static_cast<std::size_t>(v) + 1] + 0.01, 1e-15);
  }
  std::vector<double> velocity(static_cast<std::size_t>(system.size()), 0.0), full_velocity(full.size());
  system.full_velocities(velocity, full_velocity);
  const Index driven = nodes_at_x(rest, kLength).front();
  EXPECT_NEAR(full_velocity[3 * static_cast<std::size_t>(driven)], -0.01, 1e-8);
}

TEST(ElasticSystem, RayleighDampingIsMassPlusStiffnessProportional) {
  DampingOptions rayleigh{DampingModel::rayleigh, 0.3, 0.02};
  ElasticSystem damped = small_bar(HyperelasticModel::stable_neo_hookean, rayleigh);
  ElasticSystem plain = small_bar(HyperelasticModel::stable_neo_hookean);
  const std::vector<double> x = perturbed_state(damped, 1e-3, 11);
  std::vector<double> v(x.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37 * static_cast<double>(i));
  linalg::SymmetricCscMatrix d = damped.pattern(), h = plain.pattern();
  ASSERT_TRUE(damped.damping_matrix(x, v, d));
  EXPECT_FALSE(plain.damping_matrix(x, v, h));
  plain.potential_hessian(x, h);
  const std::vector<double> dv = multiply(d, v), hv = multiply(h, v);
  std::vector<double> error(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) error[i] = dv[i] - (0.3 * plain.masses()[i] * v[i] + 0.02 * hv[i]);
  EXPECT_LT(max_abs(error), 1e-12 * max_abs(dv));
}

TEST(ElasticSystem, GreenDampingIsPositiveAndIgnoresRigidRotations) {
  DampingOptions green{DampingModel::green, 0.0, 0.05};
  TetMesh mesh = make_box_mesh(0.1, 0.05, 0.05, 4);
  DynamicsMaterial material;
  material.elastic = {1e5, 0.4, 1000.0};
  ElasticSystemOptions options;
  options.damping = green;
  std::vector<Index> element_material(static_cast<std::size_t>(mesh.tet_count()), 0);
  ElasticSystem system(mesh, {material}, element_material, options, "free box");
  // Rotate the box by 30° about z: F = R everywhere, and a rigid angular velocity about x
  // leaves the Green strain unchanged (Ė = sym(Rᵀ[ω]×R) = 0).
  const double c = std::cos(0.5), s = std::sin(0.5);
  std::vector<double> x = mesh.positions;
  std::vector<double> rigid(x.size()), deforming(x.size());
  for (Index v = 0; v < mesh.node_count(); ++v) {
    const auto i = 3 * static_cast<std::size_t>(v);
    const double px = mesh.positions[i], py = mesh.positions[i + 1], pz = mesh.positions[i + 2];
    x[i] = c * px - s * py;
    x[i + 1] = s * px + c * py;
    x[i + 2] = pz;
    const Vec3 omega{0.7, -0.2, 0.4};
    const Vec3 velocity = linalg::cross(omega, Vec3{x[i], x[i + 1], x[i + 2]}) + Vec3{0.1, 0.0, 0.0};
    rigid[i] = velocity.x, rigid[i + 1] = velocity.y, rigid[i + 2] = velocity.z;
    deforming[i] = px, deforming[i + 1] = 0.0, deforming[i + 2] = 0.0;  // a stretch rate
  }
  linalg::SymmetricCscMatrix d = system.pattern();
  ASSERT_TRUE(system.damping_matrix(x, rigid, d));
  const std::vector<double> stretch_force = multiply(d, deforming);
  EXPECT_LT(max_abs(multiply(d, rigid)), 1e-10 * max_abs(stretch_force) * max_abs(rigid) / max_abs(deforming));
  double work = 0.0;
  for (std::size_t i = 0; i < deforming.size(); ++i) work += deforming[i] * stretch_force[i];
  EXPECT_GT(work, 0.0);
}

TEST(ElasticSystem, RejectsBadInput) {
  TetMesh mesh = make_box_mesh(0.1, 0.05, 0.05, 3);
  std::vector<Index> element_material(static_cast<std::size_t>(mesh.tet_count()), 0);
  DynamicsMaterial material;
  material.elastic = {-1.0, 0.3, 1000.0};
  EXPECT_THROW(ElasticSystem(mesh, {material}, element_material, {}, "m"), std::invalid_argument);
  material.elastic = {1e5, 0.5, 1000.0};
  EXPECT_THROW(ElasticSystem(mesh, {material}, element_material, {}, "m"), std::invalid_argument);
  material.elastic = {1e5, 0.3, 1000.0};
  ElasticSystemOptions options;
  options.damping = {DampingModel::rayleigh, -1.0, 0.0};
  EXPECT_THROW(ElasticSystem(mesh, {material}, element_material, options, "m"), std::invalid_argument);
  options.damping = {};
  options.prescribed.push_back({{mesh.node_count()}, [](const Vec3& p, double) { return p; }});
  EXPECT_THROW(ElasticSystem(mesh, {material}, element_material, options, "m"), std::invalid_argument);
}

TEST(DynamicsScenes, BarMatchesTheThesisCountsAndMovesItsEnd) {
  DynamicsSceneOptions options;
  options.kind = DynamicsSceneKind::bar;
  const DynamicsScene full = make_dynamics_scene(options);
  EXPECT_EQ(full.mesh.node_count(), 10125);  // Table 5.1
  EXPECT_EQ(full.mesh.tet_count(), 51744);
  options.resolution = 0.1;
  options.heterogeneous = true;
  const DynamicsScene scene = make_dynamics_scene(options);
  ASSERT_EQ(scene.system.prescribed.size(), 2u);
  EXPECT_EQ(scene.materials.size(), 2u);
  EXPECT_EQ(scene.integrator, solvers::IntegratorKind::quasistatic);
  // Loaded by gravity: held by prescribed displacements alone, its equilibria would not depend
  // on E, and §5.5.1's times do (Fig. 5.5a).
  EXPECT_NEAR(scene.system.gravity.y, -9.81, 1e-12);
  const PrescribedMotion& driven = scene.system.prescribed[1];
  const Vec3 rest = node_position(scene.mesh.positions, driven.nodes.front());
  EXPECT_NEAR(linalg::norm(driven.position(rest, 0.0) - rest), 0.0, 1e-15);
  EXPECT_NEAR(driven.position(rest, 1.25).x, rest.x - 0.2 * 0.44, 1e-12);  // compressed by 20 %
  EXPECT_NEAR(driven.position(rest, 2.5).x, rest.x + 0.2 * 0.44, 1e-12);   // stretched by 20 %
  const auto system = make_scene_system(scene);
  double mass = 0.0;
  for (double m : system->body().node_masses) mass += m;
  EXPECT_NEAR(mass, 3.0, 1e-9);  // Table 5.1
}

TEST(DynamicsScenes, BodiesAreSeparateBallsAboveABowl) {
  DynamicsSceneOptions options;
  options.kind = DynamicsSceneKind::bodies;
  options.body_count = 5;
  const DynamicsScene scene = make_dynamics_scene(options);
  ASSERT_TRUE(scene.contact.has_value());
  EXPECT_TRUE(scene.contact->body_contact);
  ASSERT_EQ(scene.contact->obstacles.size(), 1u);
  const Bowl* bowl = std::get_if<Bowl>(&scene.contact->obstacles.front());
  ASSERT_NE(bowl, nullptr);
  EXPECT_EQ(scene.mesh.tet_count() % 5, 0);
  const auto system = make_scene_system(scene);
  double mass = 0.0;
  for (double m : system->body().node_masses) mass += m;
  EXPECT_NEAR(mass, 5 * 1.31 / 50, 0.05 * 5 * 1.31 / 50);  // Table 5.1: 26 g a body (inscribed ball: a little less)
  for (Index v = 0; v < scene.mesh.node_count(); ++v) {
    // Every node starts in the bowl's free space.
    EXPECT_GT(proximity(scene.contact->obstacles.front(), node_position(scene.mesh.positions, v), 0.0).distance, 0.0);
  }
  options.body_count = 0;
  EXPECT_THROW(make_dynamics_scene(options), std::invalid_argument);
}

TEST(DynamicsScenes, RejectsBadOptions) {
  DynamicsSceneOptions options;
  options.resolution = 0.1;
  options.youngs_modulus = -5.0;
  EXPECT_THROW(make_dynamics_scene(options), std::invalid_argument);
  options.youngs_modulus.reset();
  options.poisson_ratio = 0.5;
  EXPECT_THROW(make_dynamics_scene(options), std::invalid_argument);
  options.poisson_ratio.reset();
  options.time_step = 0.0;
  EXPECT_THROW(make_dynamics_scene(options), std::invalid_argument);
  EXPECT_THROW(parse_scene("ducks"), std::invalid_argument);
  EXPECT_EQ(parse_scene("bunny"), DynamicsSceneKind::bunny);
}

TEST(DynamicsScenes, TetgenModelsHaveTheirMassAndConstraints) {
  if (!tetgen_available()) GTEST_SKIP() << "Debian's tetgen is not installed";
  DynamicsSceneOptions options;
  options.mesh_directory = std::filesystem::path(CHOLSIM_SOURCE_DIR) / "data" / "meshes";
  options.resolution = 0.05;
  options.kind = DynamicsSceneKind::armadillo;
  const DynamicsScene armadillo = make_dynamics_scene(options);
  EXPECT_FALSE(armadillo.system.prescribed.front().nodes.empty());
  const auto system = make_scene_system(armadillo);
  double mass = 0.0;
  for (double m : system->body().node_masses) mass += m;
  EXPECT_NEAR(mass, 1.37, 0.02 * 1.37);  // Table 5.1; tetgen's mesh fills the surface's volume
  options.kind = DynamicsSceneKind::bunny;
  const DynamicsScene bunny = make_dynamics_scene(options);
  ASSERT_TRUE(bunny.contact.has_value());
  EXPECT_TRUE(bunny.contact->body_contact);
  EXPECT_EQ(bunny.integrator, solvers::IntegratorKind::sdirk2);
  double lowest = 1.0;
  for (Index v = 0; v < bunny.mesh.node_count(); ++v) lowest = std::min(lowest, node_position(bunny.mesh.positions, v).y);
  EXPECT_NEAR(lowest, 0.05, 1e-9);  // dropped from 5 cm
}

}  // namespace
}  // namespace cholsim::fem
