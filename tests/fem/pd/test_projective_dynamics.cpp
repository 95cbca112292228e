// Projective dynamics with collisions through the Schur complement (seed 004 §3–4): the Schur
// path against a whole sparse solve, J = 1 against one whole-mesh PD iteration, energy
// descent, penetration after convergence, momentum, errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/schur/schur_complement.hpp"
#include "fem/mesh/procedural_meshes.hpp"
#include "fem/pd/pd_global_solvers.hpp"
#include "fem/pd/projective_dynamics.hpp"
#include "linalg/vector_norms.hpp"

namespace cholsim::fem {
namespace {

using linalg::max_abs_difference;

constexpr double kDepth = 0.005;  // the ground overlaps the block's bottom by 5 mm at rest

// A 10 × 10 × 5 cm block, top face fixed, proxies on the bottom face's triangles, and the
// ground raised into it: every bottom proxy starts inside the obstacle.
PdScene block_on_ground(Index cells) {
  PdScene scene;
  scene.name = "block";
  scene.mesh = make_box_mesh(0.1, 0.1, 0.05, cells);
  scene.shear_modulus = 1e4;
  scene.proxy_stiffness = 1e4;
  const TetMesh& mesh = scene.mesh;
  for (Index node = 0; node < mesh.node_count(); ++node) {
    if (mesh.positions[static_cast<std::size_t>(3 * node + 2)] > 0.05 - 1e-9) scene.fixed_nodes.push_back(node);
  }
  // Each bottom triangle's centroid, embedded in the tet that owns the face.
  std::map<std::array<Index, 3>, Index> face_tet;
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    for (int skip = 0; skip < 4; ++skip) {
      std::array<Index, 3> face{};
      int k = 0;
      for (int i = 0; i < 4; ++i) {
        if (i != skip) face[static_cast<std::size_t>(k++)] = mesh.tets[static_cast<std::size_t>(4 * tet + i)];
      }
      std::sort(face.begin(), face.end());
      face_tet[face] = tet;
    }
  }
  const SurfaceMesh surface = boundary_surface(mesh);
  for (Index t = 0; t < surface.triangle_count(); ++t) {
    std::array<Index, 3> face{};
    bool bottom = true;
    for (int i = 0; i < 3; ++i) {
      face[static_cast<std::size_t>(i)] = surface.triangles[static_cast<std::size_t>(3 * t + i)];
      bottom = bottom && mesh.positions[static_cast<std::size_t>(3 * face[static_cast<std::size_t>(i)] + 2)] < 1e-9;
    }
    if (!bottom) continue;
    std::sort(face.begin(), face.end());
    const Index tet = face_tet.at(face);
    EmbeddedPoint proxy{tet, {0.0, 0.0, 0.0, 0.0}};
    for (std::size_t i = 0; i < 4; ++i) {
      const Index node = mesh.tets[static_cast<std::size_t>(4 * tet) + i];
      if (std::find(face.begin(), face.end(), node) != face.end()) proxy.weights[i] = 1.0 / 3.0;
    }
    scene.proxies.push_back(proxy);
  }
  scene.obstacles.push_back(HalfSpace{{0.0, 0.0, 1.0}, kDepth});
  return scene;
}

// The reference global step: K + Σ k·wwᵀ assembled whole, factored and solved with every
// element's current projection on the right (free × 3).
linalg::DenseMatrix whole_mesh_global_step(const PdModel& model, std::span<const SpringRow> springs) {
  linalg::Triplets triplets;
  const linalg::CscMatrix& k = model.matrix().lower;
  for (Index col = 0; col < k.cols; ++col) {
    for (auto p = k.col_ptr[static_cast<std::size_t>(col)]; p < k.col_ptr[static_cast<std::size_t>(col) + 1]; ++p) {
      triplets.add(k.row_idx[static_cast<std::size_t>(p)], col, k.values[static_cast<std::size_t>(p)]);
    }
  }
  model.add_spring_triplets(springs, triplets);
  const auto polluted = linalg::symmetric_from_triplets(model.free_count(), triplets);
  const auto all = model.all_elements();
  linalg::DenseMatrix b(model.free_count(), 3);
  model.add_element_forces(model.incidence(all), b.view());
  model.add_constant_forces({}, b.view());
  model.add_spring_forces(springs, b.view());
  factor::Factor factor(factor::analyze(polluted));
  if (!factor.factorize(polluted).ok()) throw std::runtime_error("the polluted reference matrix is not positive definite");
  factor.solve(b.view());
  return b;
}

TEST(ProjectiveDynamics, SchurPathEqualsFullSolveForRandomSpringsAndBilateralRows) {
  const PdScene scene = block_on_ground(6);
  PdOptions options;
  options.model.threads = 1;
  const PdModel model(scene, options.model);
  std::vector<Index> prone_nodes;
  for (const EmbeddedPoint& proxy : scene.proxies) {
    for (Index node : model.element_nodes(proxy.tet)) {
      if (model.free_index(node) >= 0) prone_nodes.push_back(node);
    }
  }
  std::sort(prone_nodes.begin(), prone_nodes.end());
  prone_nodes.erase(std::unique(prone_nodes.begin(), prone_nodes.end()), prone_nodes.end());

  std::mt19937 random(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const Index n = model.free_count();
  linalg::DenseMatrix b_outer(n, 3);
  linalg::DenseMatrix b_inner(n, 3);
  for (Index c = 0; c < 3; ++c) {
    for (Index i = 0; i < n; ++i) b_outer(i, c) = uniform(random);
    for (Index node : prone_nodes) b_inner(model.free_index(node), c) = uniform(random);
  }
  for (int trial = 0; trial < 5; ++trial) {
    // A random active set: some proxies against random targets, some pairs bilateral.
    std::vector<SpringRow> springs;
    for (std::size_t p = 0; p < scene.proxies.size(); ++p) {
      const double pick = uniform(random);
      if (pick < -0.3) {
        springs.push_back(spring_to_target(scene.mesh, scene.proxies[p], {uniform(random), uniform(random), 0.0},
                                           1e4 * (1.5 + uniform(random))));
      } else if (pick > 0.7) {
        const std::size_t other = random() % scene.proxies.size();
        springs.push_back(spring_between(scene.mesh, scene.proxies[p], scene.proxies[other], 1e4));
      }
    }
    ASSERT_FALSE(springs.empty());
    // The dense refactorization of seed 004 §4.4, the Woodbury route, and the reference last.
    std::vector<std::vector<double>> results;
    for (int variant = 0; variant < 3; ++variant) {
      PdOptions solver_options = options;
      solver_options.solver = variant < 2 ? PdSolver::schur : PdSolver::full;
      solver_options.schur_update = variant == 0 ? PdSchurUpdate::dense : PdSchurUpdate::low_rank;
      PdSetupStats setup;
      PdFrameStats stats;
      auto solver = make_pd_global_solver(model, prone_nodes, solver_options, setup);
      linalg::DenseMatrix x(n, 3);
      solver->begin_outer(b_outer.view(), stats.times);
      solver->solve_inner(b_inner.view(), springs, x.view(), stats);
      solver->end_outer(x.view(), stats.times);
      results.emplace_back(x.data(), x.data() + 3 * n);
    }
    double scale = 0.0;
    for (double v : results[2]) scale = std::max(scale, std::abs(v));
    EXPECT_LE(max_abs_difference(results[0], results[2]), 1e-10 * scale) << "dense Schur update, trial " << trial;
    EXPECT_LE(max_abs_difference(results[1], results[2]), 1e-10 * scale) << "low-rank Schur update, trial " << trial;
  }
}

TEST(ProjectiveDynamics, SchurComplementOfTheConstantMatrixMatchesDenseReference) {
  const PdScene scene = block_on_ground(4);
  const PdModel model(scene, {});
  const Index n = model.free_count();
  factor::AnalyzeOptions analyze_options;
  for (Index i = n - 12; i < n; ++i) analyze_options.schur_set.push_back(i);
  factor::SchurComplementFactor partial(factor::analyze(model.matrix(), analyze_options));
  ASSERT_TRUE(partial.factorize(model.matrix()).ok());
  const linalg::DenseMatrix s = partial.schur_complement_symmetric();
  // Dense reference: S = K_cc − K_cs·K_ss⁻¹·K_sc by solving with the safe block column by column.
  const Index m = 12;
  const Index safe = n - m;
  linalg::DenseMatrix k(n, n);
  const linalg::CscMatrix& lower = model.matrix().lower;
  for (Index col = 0; col < n; ++col) {
    for (auto p = lower.col_ptr[static_cast<std::size_t>(col)]; p < lower.col_ptr[static_cast<std::size_t>(col) + 1]; ++p) {
      const Index row = lower.row_idx[static_cast<std::size_t>(p)];
      k(row, col) = k(col, row) = lower.values[static_cast<std::size_t>(p)];
    }
  }
  linalg::Triplets safe_block;
  for (Index col = 0; col < safe; ++col) {
    for (Index row = col; row < safe; ++row) {
      if (k(row, col) != 0.0) safe_block.add(row, col, k(row, col));
    }
  }
  const auto k_ss = linalg::symmetric_from_triplets(safe, safe_block);
  factor::Factor l_ss(factor::analyze(k_ss));
  ASSERT_TRUE(l_ss.factorize(k_ss).ok());
  double worst = 0.0;
  double scale = 0.0;
  for (Index j = 0; j < m; ++j) {
    std::vector<double> column(static_cast<std::size_t>(safe));
    for (Index i = 0; i < safe; ++i) column[static_cast<std::size_t>(i)] = k(i, safe + j);
    l_ss.solve(column);
    for (Index i = 0; i < m; ++i) {
      double reference = k(safe + i, safe + j);
      for (Index r = 0; r < safe; ++r) reference -= k(safe + i, r) * column[static_cast<std::size_t>(r)];
      worst = std::max(worst, std::abs(reference - s(i, j)));
      scale = std::max(scale, std::abs(reference));
    }
  }
  EXPECT_LE(worst, 1e-12 * scale);
}

TEST(ProjectiveDynamics, OneInnerIterationIsOneWholeMeshIteration) {
  const PdScene scene = block_on_ground(6);
  PdOptions options;
  options.inner_iterations = 1;
  options.model.threads = 1;
  PdSimulation simulation(scene, options);
  // The reference: a local step on every element, detection, and one sparse solve of the
  // polluted whole system, all at the rest positions.
  PdModel model(scene, options.model);
  const auto all = model.all_elements();
  model.local_step(scene.mesh.positions, all);
  std::vector<Index> prone;
  for (const EmbeddedPoint& proxy : scene.proxies) prone.push_back(proxy.tet);
  std::sort(prone.begin(), prone.end());
  prone.erase(std::unique(prone.begin(), prone.end()), prone.end());
  PdCollisionDetector detector(scene, prone, model.mean_edge_length());
  const std::vector<SpringRow> springs = detector.detect(scene.mesh.positions);
  ASSERT_FALSE(springs.empty());
  const linalg::DenseMatrix b = whole_mesh_global_step(model, springs);

  simulation.step();
  double worst = 0.0;
  for (Index i = 0; i < model.free_count(); ++i) {
    const Index node = model.free_nodes()[static_cast<std::size_t>(i)];
    for (Index c = 0; c < 3; ++c) {
      worst = std::max(worst, std::abs(simulation.positions()[static_cast<std::size_t>(3 * node + c)] - b(i, c)));
    }
  }
  EXPECT_LE(worst, 1e-10 * 0.1);  // positions are ~0.1 m
}

// The whole-mesh iteration spelled out, with E measured after each step: the local step
// minimizes over the rotations, detection over the targets (projection onto the obstacle's
// surface), the global step over x. With every proxy already inside the ground after the
// first detection, the active set only loses members, so E never increases (eq. 8's
// indicator jumps upward only when a free proxy enters an obstacle).
TEST(ProjectiveDynamics, EnergyNeverIncreasesAcrossLocalDetectionAndGlobalSteps) {
  const PdScene scene = block_on_ground(6);
  PdModel model(scene, {});
  const auto all = model.all_elements();
  std::vector<Index> prone;
  for (const EmbeddedPoint& proxy : scene.proxies) prone.push_back(proxy.tet);
  std::sort(prone.begin(), prone.end());
  prone.erase(std::unique(prone.begin(), prone.end()), prone.end());
  PdCollisionDetector detector(scene, prone, model.mean_edge_length());
  std::vector<double> x = scene.mesh.positions;
  std::vector<SpringRow> springs = detector.detect(x);
  const std::size_t initially_active = springs.size();
  ASSERT_EQ(initially_active, scene.proxies.size());
  double previous = model.energy(x, springs, {});
  for (int iteration = 0; iteration < 15; ++iteration) {
    model.local_step(x, all);
    const double after_local = model.energy(x, springs, {});
    EXPECT_LE(after_local, previous * (1.0 + 1e-12)) << "local step, iteration " << iteration;
    springs = detector.detect(x);
    const double after_detection = model.energy(x, springs, {});
    EXPECT_LE(after_detection, after_local * (1.0 + 1e-12)) << "detection, iteration " << iteration;
    const linalg::DenseMatrix b = whole_mesh_global_step(model, springs);
    for (Index i = 0; i < model.free_count(); ++i) {
      const Index node = model.free_nodes()[static_cast<std::size_t>(i)];
      for (Index c = 0; c < 3; ++c) x[static_cast<std::size_t>(3 * node + c)] = b(i, c);
    }
    const double after_global = model.energy(x, springs, {});
    EXPECT_LE(after_global, after_detection * (1.0 + 1e-12)) << "global step, iteration " << iteration;
    previous = after_global;
  }
  EXPECT_LT(previous, model.energy(scene.mesh.positions, detector.detect(scene.mesh.positions), {}));
}

TEST(ProjectiveDynamics, ConvergedProxiesPenetrateOnlyByThePenaltyDepth) {
  const PdScene scene = block_on_ground(6);
  PdOptions options;
  options.inner_iterations = 3;
  PdSimulation simulation(scene, options);
  for (int frame = 0; frame < 20; ++frame) simulation.step();
  const double edge = simulation.model().mean_edge_length();
  ASSERT_FALSE(simulation.collision_springs().empty());
  for (const SpringRow& spring : simulation.collision_springs()) {
    const Vec3 p = spring.evaluate(simulation.positions());
    const double depth = kDepth - p.z;
    // The spring force k·depth carries the elastic force f on the proxy, so depth = |f|/k.
    const double force = spring.stiffness * std::max(depth, 0.0);
    EXPECT_LE(depth, 2.0 * force / spring.stiffness + 1e-15);
    EXPECT_LE(depth, 0.01 * edge);
  }
  // Pushed up by the ground: the bottom proxies sit at the ground, not at rest height.
  double lowest = 1.0;
  for (const EmbeddedPoint& proxy : scene.proxies) {
    lowest = std::min(lowest, embedded_position(scene.mesh, proxy, simulation.positions()).z);
  }
  EXPECT_GT(lowest, kDepth - 0.01 * edge);
}

// §5.3's biphasic material: a bar held at x = 0 and pulled by a bone 2 cm away through soft
// springs (together about as stiff as the bar, so the material decides the stretch) stretches
// less once the strain limit's stiff phase starts at 5 %.
TEST(ProjectiveDynamics, BiphasicStrainLimitsResistStretchingBeyondTheUpperLimit) {
  const auto largest_stretch = [](double stiffness_ratio) {
    PdScene scene;
    scene.mesh = make_box_mesh(0.1, 0.02, 0.02, 10);
    scene.shear_modulus = 1e4;
    scene.strain_limit = {0.95, 1.05, stiffness_ratio};
    // A pivot 100 m below: turning by 2e-4 rad moves the bar's end 2 cm along +x.
    scene.bones.push_back({"puller", {0.05, -100.0, 0.0}, {0.0, 0.0, 1.0}, -0.2 * 180.0 / 3.14159265358979 * 1e-3 / 20.0,
                           0.2 * 180.0 / 3.14159265358979 * 1e-3});
    scene.attachment_stiffness = 5.0;
    for (Index tet = 0; tet < scene.mesh.tet_count(); ++tet) {
      const auto points = scene.mesh.tet_points(tet);
      bool far_end = true;
      for (const auto& point : points) far_end = far_end && point[0] > 0.1 - 1e-9 - 0.01;
      if (!far_end) continue;
      Vec3 centroid;
      for (const auto& point : points) centroid += 0.25 * Vec3{point[0], point[1], point[2]};
      scene.attachments.push_back({0, {tet, {0.25, 0.25, 0.25, 0.25}}, centroid});
    }
    for (Index node = 0; node < scene.mesh.node_count(); ++node) {
      if (scene.mesh.positions[static_cast<std::size_t>(3 * node)] < 1e-9) scene.fixed_nodes.push_back(node);
    }
    PdOptions options;
    options.outer_iterations = 5;
    PdSimulation simulation(scene, options);
    for (int frame = 0; frame < 30; ++frame) simulation.step();
    double largest = 0.0;
    for (Index e = 0; e < simulation.model().element_count(); ++e) {
      largest = std::max(largest, simulation.model().strain_measure(simulation.positions(), e));
    }
    return largest;
  };
  const double free_stretch = largest_stretch(0.0);
  const double limited_stretch = largest_stretch(20.0);
  EXPECT_GT(free_stretch, 0.07);
  EXPECT_LT(limited_stretch, 0.6 * free_stretch);
  EXPECT_GT(limited_stretch, 0.04);  // the soft phase still stretches up to the limit
}

// §5.3's excision: a slab of tets cut out of the block at frame 2 (topology changes, K is
// analysed and factored again), sutures across the gap pulling its sides together; the Schur
// path and a full sparse solve still follow the same trajectory afterwards.
TEST(ProjectiveDynamics, ExcisionRenumbersTheStateAndSuturesCloseTheGap) {
  PdScene scene = block_on_ground(8);
  scene.excision.frame = 2;
  scene.excision.suture_stiffness = 1e5;
  std::vector<std::pair<Index, Vec3>> left, right;
  for (Index tet = 0; tet < scene.mesh.tet_count(); ++tet) {
    Vec3 centroid;
    for (const auto& point : scene.mesh.tet_points(tet)) centroid += 0.25 * Vec3{point[0], point[1], point[2]};
    if (centroid.x > 0.0375 && centroid.x < 0.0625) scene.excision.tets.push_back(tet);
    else if (centroid.x > 0.025 && centroid.x < 0.0375 && centroid.z < 0.025) left.emplace_back(tet, centroid);
    else if (centroid.x > 0.0625 && centroid.x < 0.075 && centroid.z < 0.025) right.emplace_back(tet, centroid);
  }
  ASSERT_FALSE(left.empty());
  for (std::size_t i = 0; i < left.size(); i += 7) {
    const auto partner = std::min_element(right.begin(), right.end(), [&](const auto& a, const auto& b) {
      return std::hypot(a.second.y - left[i].second.y, a.second.z - left[i].second.z) <
             std::hypot(b.second.y - left[i].second.y, b.second.z - left[i].second.z);
    });
    scene.excision.sutures.push_back({{left[i].first, {0.25, 0.25, 0.25, 0.25}}, {partner->first, {0.25, 0.25, 0.25, 0.25}}});
  }
  PdOptions options;
  options.model.threads = 1;
  PdSimulation schur(scene, options);
  options.solver = PdSolver::full;
  PdSimulation full(scene, options);
  const Index nodes_before = scene.mesh.node_count();
  schur.step();
  full.step();
  const PdFrameStats cut = schur.step();
  full.step();
  EXPECT_TRUE(cut.excised);
  EXPECT_GT(cut.excision_seconds, 0.0);
  const PdScene& after = schur.scene();
  EXPECT_EQ(after.mesh.tet_count(), scene.mesh.tet_count() - static_cast<Index>(scene.excision.tets.size()));
  EXPECT_LT(after.mesh.node_count(), nodes_before);
  EXPECT_EQ(schur.positions().size(), 3 * static_cast<std::size_t>(after.mesh.node_count()));
  const auto gap = [&](const PdSimulation& simulation) {
    double widest = 0.0;
    for (const SpringRow& spring : simulation.collision_springs()) {
      if (spring.terms == 8) widest = std::max(widest, linalg::norm(spring.evaluate(simulation.positions())));
    }
    return widest;
  };
  const double first_gap = gap(schur);
  for (int frame = 0; frame < 6; ++frame) {
    schur.step();
    full.step();
  }
  EXPECT_GT(first_gap, 0.0);
  EXPECT_LT(gap(schur), 0.5 * 0.025);  // the rest gap between suture ends is about 2.5 cm
  EXPECT_LE(max_abs_difference(schur.positions(), full.positions()), 1e-10 * 0.1);
  // An excision that would cut a suture is refused.
  PdScene bad = scene;
  bad.excision.tets.push_back(bad.excision.sutures.front().first.tet);
  PdSimulation refused(bad, {});
  refused.step();
  EXPECT_THROW(refused.step(), std::invalid_argument);
}

TEST(ProjectiveDynamics, RotationsAreProperForInvertedElements) {
  PdScene scene = block_on_ground(2);
  PdModel model(scene, {});
  std::vector<double> inverted = scene.mesh.positions;
  for (std::size_t i = 2; i < inverted.size(); i += 3) inverted[i] = -inverted[i];  // mirror z
  model.local_step(inverted);
  for (Index e = 0; e < model.element_count(); ++e) {
    ASSERT_LT(model.deformation_determinant(inverted, e), 0.0);
    EXPECT_NEAR(linalg::determinant(model.rotation(e)), 1.0, 1e-12) << "element " << e;
  }
}

TEST(ProjectiveDynamics, BackwardEulerConservesLinearMomentumOfAFreeBody) {
  PdScene scene;
  scene.mesh = make_box_mesh(0.1, 0.06, 0.04, 5);
  scene.shear_modulus = 1e4;
  PdOptions options;
  options.model.integrator = PdIntegrator::backward_euler;
  options.model.time_step = 0.01;
  options.collisions = false;
  PdSimulation simulation(scene, options);
  std::mt19937 random(3);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> velocities(scene.mesh.positions.size());
  for (double& v : velocities) v = uniform(random);
  simulation.set_state(scene.mesh.positions, velocities);
  const auto momentum = [&] {
    Vec3 sum;
    for (Index node = 0; node < scene.mesh.node_count(); ++node) {
      for (int c = 0; c < 3; ++c) {
        sum[c] += simulation.model().node_mass(node) * simulation.velocities()[static_cast<std::size_t>(3 * node + c)];
      }
    }
    return sum;
  };
  const Vec3 before = momentum();
  for (int frame = 0; frame < 10; ++frame) simulation.step();
  const Vec3 after = momentum();
  EXPECT_LE(linalg::norm(after - before), 1e-10 * linalg::norm(before));
  // … and the body did deform (the random velocities are not a rigid motion).
  EXPECT_GT(simulation.energy(), 0.0);
}

TEST(ProjectiveDynamics, GpuSchurPathEqualsCpuPath) {
  const PdScene scene = block_on_ground(6);
  PdOptions options;
  options.device = factor::SchurDevice::gpu;
  PdSimulation gpu(scene, options);
  if (!gpu.setup().device_note.empty()) GTEST_SKIP() << gpu.setup().device_note;
  options.device = factor::SchurDevice::cpu;
  PdSimulation cpu(scene, options);
  for (int frame = 0; frame < 3; ++frame) {
    gpu.step();
    cpu.step();
  }
  EXPECT_LE(max_abs_difference(gpu.positions(), cpu.positions()), 1e-10 * 0.1);
}

TEST(ProjectiveDynamics, BadStiffnessAndProxiesOutsideTheMeshAreClearErrors) {
  const PdScene good = block_on_ground(3);
  const auto expect_error = [](const PdScene& scene, const std::string& fragment) {
    try {
      PdSimulation simulation(scene, {});
      ADD_FAILURE() << "accepted a scene that should fail with: " << fragment;
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    }
  };
  PdScene scene = good;
  scene.proxy_stiffness = -1.0;
  expect_error(scene, "proxy stiffness");
  scene = good;
  scene.proxy_stiffness = std::nan("");
  expect_error(scene, "proxy stiffness");
  scene = good;
  scene.shear_modulus = 0.0;
  expect_error(scene, "shear modulus");
  scene = good;
  scene.proxies[2].tet = scene.mesh.tet_count() + 5;
  expect_error(scene, "proxy 2");
  scene = good;
  scene.proxies[1].weights = {0.5, 0.5, 0.5, 0.0};
  expect_error(scene, "proxy 1");
  // A quasistatic body held by nothing has a singular K.
  scene = good;
  scene.fixed_nodes.clear();
  expect_error(scene, "held");
}

}  // namespace
}  // namespace cholsim::fem
