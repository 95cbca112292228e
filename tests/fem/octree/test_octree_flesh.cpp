// The octree elasticity operator, its multigrid hierarchy and the flesh simulation (seed 001
// §4, §7, §8) on small octrees of a sphere: every check against an independent oracle — the
// assembled matrix, force differences, the direct Cholesky solve, affine and rigid motions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "fem/octree/octree_flesh.hpp"
#include "fem/octree/octree_scene.hpp"
#include "linalg/polar_decomposition.hpp"
#include "linalg/vector_norms.hpp"
#include "octree_test_helpers.hpp"

namespace cholsim::fem::octree {
namespace {

using linalg::max_abs;

using linalg::Index;
using linalg::Mat3;
using linalg::Vec3;

/// The test helpers' sphere, centred at `centre`.
SurfaceMesh sphere_surface(const Vec3& centre, double radius, int rings = 12) {
  SurfaceMesh mesh = test::sphere_surface(radius, rings);
  for (std::size_t k = 0; k < mesh.positions.size(); ++k) mesh.positions[k] += centre[static_cast<int>(k % 3)];
  return mesh;
}

BalancedOctree sphere_octree(int cells) {
  OctreeBuildOptions options;
  options.cells_across = cells;
  options.threads = 1;
  return build_balanced_octree(sphere_surface({0.0, 0.5, 0.0}, 0.5), options);
}

std::vector<double> random_vector(std::size_t size, unsigned seed, double scale = 1.0) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-scale, scale);
  std::vector<double> v(size);
  for (double& value : v) value = uniform(generator);
  return v;
}

/// y = A·x for an assembled lower-triangle matrix.
std::vector<double> multiply(const linalg::SymmetricCscMatrix& a, std::span<const double> x) {
  std::vector<double> y(x.size(), 0.0);
  const linalg::CscMatrix& lower = a.lower;
  for (Index col = 0; col < lower.cols; ++col) {
    for (linalg::Offset k = lower.col_ptr[col]; k < lower.col_ptr[col + 1]; ++k) {
      const Index row = lower.row_idx[k];
      y[row] += lower.values[k] * x[col];
      if (row != col) y[col] += lower.values[k] * x[row];
    }
  }
  return y;
}

struct SmallBody {
  explicit SmallBody(int cells = 16) : tree(sphere_octree(cells)) {}
  BalancedOctree tree;
  OctreeMesh mesh = make_octree_mesh(tree, 0);
  OctreeElasticOperator op{mesh, std::vector<Lame>(static_cast<std::size_t>(mesh.element_count()), Lame{1e4, 4e4}),
                           lumped_masses(mesh, 1000.0), 2};
};

/// Springs at a few embedded points, anisotropic like a frictional contact (§8).
void add_test_springs(SmallBody& body) {
  const Vec3 where[] = {{0.0, 0.5, 0.0}, {0.31, 0.62, -0.1}, {-0.2, 0.15, 0.27}, {0.05, 0.93, 0.02}};
  std::vector<EmbeddedPoint> points;
  std::vector<EmbeddedSpring> springs;
  const Vec3 normal = linalg::normalized(Vec3{0.3, 1.0, -0.2});
  const Mat3 stiffness = 5e4 * linalg::outer(normal, normal) + 5e3 * (Mat3::identity() - linalg::outer(normal, normal));
  for (const Vec3& p : where) {
    const std::optional<ElementPoint> located = locate_point(body.mesh, p);
    ASSERT_TRUE(located.has_value());
    points.push_back({located->element, conforming_weights(body.mesh, *located)});
    springs.push_back({static_cast<Index>(springs.size()), stiffness, p});
  }
  body.op.set_springs(springs, points);
}

TEST(OctreeElasticOperator, PatchTestAffineFieldsGiveExactGradientsAndNoInteriorForces) {
  SmallBody body;
  ASSERT_GT(std::count_if(body.mesh.hanging.begin(), body.mesh.hanging.end(), [](std::uint8_t c) { return c != 0; }), 0)
      << "the test needs hanging nodes";
  const Mat3 a = Mat3::from_rows({1.1, 0.2, -0.1}, {0.05, 0.9, 0.3}, {-0.2, 0.1, 1.2});
  std::vector<double> x = body.mesh.node_positions();
  for (Index n = 0; n < body.mesh.node_count(); ++n) {
    const Vec3 p = a * body.mesh.node_position(n) + Vec3{0.3, -0.2, 0.1};
    x[3 * n] = p.x;
    x[3 * n + 1] = p.y;
    x[3 * n + 2] = p.z;
  }
  std::vector<Mat3> f(static_cast<std::size_t>(body.mesh.element_count()));
  body.op.deformation_gradients(x, f);
  for (const Mat3& fe : f) EXPECT_LT(linalg::frobenius_norm(fe - a), 1e-13);
  // A uniform stress is divergence-free: the forces vanish on nodes whose elements all lie
  // inside (boundary nodes carry the traction).
  std::vector<double> forces(x.size(), 0.0);
  body.op.add_elastic_forces(x, forces);
  std::vector<char> boundary(static_cast<std::size_t>(body.mesh.node_count()), 0);
  std::vector<int> incident(static_cast<std::size_t>(body.mesh.node_count()), 0);
  for (Index e = 0; e < body.mesh.element_count(); ++e) {
    for (const Index node : body.mesh.conforming_nodes[e]) ++incident[node];
  }
  double interior = 0.0;
  double scale = 0.0;
  for (Index n = 0; n < body.mesh.node_count(); ++n) {
    const double magnitude = std::abs(forces[3 * n]) + std::abs(forces[3 * n + 1]) + std::abs(forces[3 * n + 2]);
    scale = std::max(scale, magnitude);
    // Nodes surrounded on all sides: the finest level's 8 incident elements with no hanging corner.
    if (incident[n] == 8) interior = std::max(interior, magnitude);
  }
  EXPECT_GT(scale, 0.0);
  EXPECT_LT(interior, 1e-12 * scale);
}

TEST(OctreeElasticOperator, MatrixFreeProductEqualsTheAssembledMatrixAndIsSymmetric) {
  // Enough elements for two threads' blocks, so that the product goes through the ghost
  // elements (§9, Algorithm 2) and is checked against the serial assembly.
  SmallBody body(24);
  ASSERT_EQ(body.op.blocks().block_count(), 2);
  ASSERT_GT(body.op.blocks().ghost_share(), 0.0);
  std::vector<double> x = body.mesh.node_positions();
  for (double& value : x) value += 0.002 * std::sin(37.0 * value);
  body.op.linearize_at(x);
  body.op.set_mass_scale(100.0);
  add_test_springs(body);
  const linalg::SymmetricCscMatrix a = body.op.assemble();
  const std::vector<double> u = random_vector(x.size(), 1);
  const std::vector<double> v = random_vector(x.size(), 2);
  std::vector<double> au(u.size()), av(v.size());
  body.op.apply(u, au);
  body.op.apply(v, av);
  const std::vector<double> assembled = multiply(a, u);
  double difference = 0.0;
  for (std::size_t k = 0; k < u.size(); ++k) difference = std::max(difference, std::abs(au[k] - assembled[k]));
  EXPECT_LT(difference, 1e-12 * max_abs(au));
  double uav = 0.0, vau = 0.0;
  for (std::size_t k = 0; k < u.size(); ++k) {
    uav += u[k] * av[k];
    vau += v[k] * au[k];
  }
  EXPECT_NEAR(uav, vau, 1e-12 * std::abs(uav) + 1e-12);
}

TEST(OctreeElasticOperator, DiagonalEqualsTheAssembledDiagonal) {
  SmallBody body;
  std::vector<double> x = body.mesh.node_positions();
  for (double& value : x) value += 0.05 * std::cos(23.0 * value);
  body.op.linearize_at(x);
  add_test_springs(body);
  const linalg::SymmetricCscMatrix a = body.op.assemble();
  const std::vector<double> d = body.op.diagonal();
  for (Index col = 0; col < a.size(); ++col) {
    const linalg::Offset first = a.lower.col_ptr[col];
    ASSERT_EQ(a.lower.row_idx[first], col);
    EXPECT_NEAR(d[col], a.lower.values[first], 1e-12 * std::abs(a.lower.values[first])) << "unknown " << col;
  }
}

/// λmax(D⁻¹A) by power iteration (D⁻¹A is similar to the SPD D^-½AD^-½).
double largest_jacobi_eigenvalue(const OctreeElasticOperator& op, const std::vector<double>& d) {
  std::vector<double> v = random_vector(d.size(), 9), w(d.size());
  double growth = 0.0;
  for (int iteration = 0; iteration < 300; ++iteration) {
    const double length = linalg::norm2(v);
    for (double& value : v) value /= length;
    op.apply(v, w);
    for (std::size_t k = 0; k < d.size(); ++k) w[k] /= d[k];
    growth = linalg::norm2(w);
    v.swap(w);
  }
  return growth;
}

// A stiff spring at a point inside an element is a rank-one term Ñ Ñᵀ ⊗ S whose D⁻¹-scaled
// eigenvalue is the number of nodes it touches (up to 8): damped Jacobi with diag(A) then
// diverges at the damping the body alone takes (issue 24: 9.6 against 2.0 at the armadillo's
// floor contacts). The smoother's l1 spring rows bound what a spring adds by 1.
/// Nodes below height `y` (the sphere stands on y = 0): a cap of held nodes.
std::vector<Index> nodes_below(const OctreeMesh& mesh, double y) {
  std::vector<Index> nodes;
  for (Index n = 0; n < mesh.node_count(); ++n) {
    if (mesh.node_position(n).y < y) nodes.push_back(n);
  }
  return nodes;
}

// Held nodes are identity rows and columns in the product, the assembly and both diagonals, with
// an element correction (a coarse level's) on top: the same operator every way it is read.
TEST(OctreeElasticOperator, HeldNodesAreIdentityRowsEveryWayTheOperatorIsRead) {
  SmallBody body;
  std::vector<double> x = body.mesh.node_positions();
  for (double& value : x) value += 0.002 * std::sin(37.0 * value);
  body.op.linearize_at(x);
  body.op.set_mass_scale(100.0);
  add_test_springs(body);
  std::vector<std::uint8_t> held(static_cast<std::size_t>(body.mesh.node_count()), 0);
  for (const Index n : nodes_below(body.mesh, 0.2)) held[static_cast<std::size_t>(n)] = 1;
  ASSERT_GT(std::count(held.begin(), held.end(), 1), 10);
  body.op.set_held_nodes(held);
  ElementCorrection correction{body.mesh.element_count() / 2, {}};
  const std::vector<double> r = random_vector(24 * 24, 5, 1e3);
  for (int i = 0; i < 24; ++i) {
    for (int j = 0; j < 24; ++j) correction.matrix[24 * i + j] = r[24 * i + j] + r[24 * j + i];
  }
  body.op.set_corrections({correction});
  const std::vector<double> u = random_vector(x.size(), 1);
  std::vector<double> au(u.size());
  body.op.apply(u, au);
  const linalg::SymmetricCscMatrix& a = body.op.assemble();
  EXPECT_LT(linalg::max_abs_difference(au, multiply(a, u)), 1e-12 * max_abs(au));
  // The held rows return u there; the others do not see u there.
  std::vector<double> moved = u;
  for (std::size_t n = 0; n < held.size(); ++n) {
    for (int i = 0; i < 3; ++i) {
      if (held[n] != 0) {
        EXPECT_EQ(au[3 * n + i], u[3 * n + i]);
        moved[3 * n + i] += 1.0;
      }
    }
  }
  std::vector<double> a_moved(u.size());
  body.op.apply(moved, a_moved);
  for (std::size_t k = 0; k < u.size(); ++k) {
    if (held[k / 3] == 0) {
      EXPECT_EQ(a_moved[k], au[k]);
    }
  }
  // Both diagonals.
  const std::vector<double> diagonal = body.op.diagonal();
  const std::vector<double> blocks = body.op.smoother_block_diagonal();
  for (Index col = 0; col < a.lower.cols; ++col) {
    EXPECT_NEAR(diagonal[col], a.lower.values[a.lower.col_ptr[col]], 1e-12 * std::abs(diagonal[col]));
    if (held[static_cast<std::size_t>(col / 3)] != 0) {
      for (int j = 0; j < 3; ++j) EXPECT_EQ(blocks[9 * (col / 3) + 3 * (col % 3) + j], col % 3 == j ? 1.0 : 0.0);
    }
  }
  EXPECT_THROW(body.op.set_held_nodes(std::vector<std::uint8_t>(3, 1)), std::invalid_argument);
}

TEST(OctreeElasticOperator, SmootherDiagonalKeepsStiffSpringsFromRaisingTheJacobiSpectrum) {
  SmallBody body;
  body.op.linearize_at(body.mesh.node_positions());
  body.op.set_mass_scale(1e3);
  const double body_alone = largest_jacobi_eigenvalue(body.op, body.op.diagonal());
  const Mat3 stiff = 1e9 * Mat3::identity();  // springs far stiffer than the elements
  std::vector<EmbeddedPoint> points;
  std::vector<EmbeddedSpring> springs;
  for (const Vec3& p : {Vec3{0.031, 0.517, -0.022}, Vec3{0.27, 0.43, 0.11}, Vec3{-0.19, 0.71, 0.05}}) {
    const std::optional<ElementPoint> located = locate_point(body.mesh, p);
    ASSERT_TRUE(located.has_value());
    points.push_back({located->element, conforming_weights(body.mesh, *located)});
    springs.push_back({static_cast<Index>(springs.size()), stiff, p});
  }
  body.op.set_springs(springs, points);
  const std::vector<double> exact = body.op.diagonal(), smoother = body.op.smoother_diagonal();
  for (std::size_t k = 0; k < exact.size(); ++k) EXPECT_GE(smoother[k], exact[k]);
  const double with_exact = largest_jacobi_eigenvalue(body.op, exact);
  const double with_l1 = largest_jacobi_eigenvalue(body.op, smoother);
  std::printf("[ measured ] λmax(D⁻¹A): body %.3f; with stiff springs %.3f, with their l1 rows %.3f\n", body_alone,
              with_exact, with_l1);
  EXPECT_GT(with_exact, 4.0);               // the rank-one terms' eigenvalue (points in general position: 8)
  EXPECT_LT(with_l1, body_alone + 1.0 + 1e-6);
}

TEST(OctreeElasticOperator, StiffnessIsTheDerivativeOfTheForcesNearRest) {
  SmallBody body;
  std::vector<double> x = body.mesh.node_positions();
  // Stretched 5 %: Algorithm 1's clamp is inactive there (a compressed element clamps), so the
  // definiteness-fixed stiffness is the exact Hessian.
  for (double& value : x) value = 1.05 * value + 1e-3 * std::sin(11.0 * value);
  body.op.linearize_at(x);
  const std::vector<double> direction = random_vector(x.size(), 3);
  std::vector<double> product(x.size());
  body.op.apply(direction, product);
  const double step = 1e-6;
  std::vector<double> plus = x, minus = x, f_plus(x.size(), 0.0), f_minus(x.size(), 0.0);
  for (std::size_t k = 0; k < x.size(); ++k) {
    plus[k] += step * direction[k];
    minus[k] -= step * direction[k];
  }
  body.op.add_elastic_forces(plus, f_plus);
  body.op.add_elastic_forces(minus, f_minus);
  double difference = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    difference = std::max(difference, std::abs(product[k] + (f_plus[k] - f_minus[k]) / (2.0 * step)));
  }
  EXPECT_LT(difference, 1e-5 * max_abs(product));
}

TEST(OctreeHierarchy, MgpcgEqualsTheDirectCholeskySolve) {
  const BalancedOctree tree = sphere_octree(32);
  OctreeLevelsOptions options;
  options.max_levels = 4;
  options.coarsest_nodes = 200;
  options.threads = 2;
  OctreeHierarchy hierarchy(tree, Lame{1e4, 4e4}, 1000.0, options);
  ASSERT_GE(hierarchy.level_count(), 3);
  const OctreeMesh& mesh = hierarchy.mesh(0);
  std::vector<double> x = mesh.node_positions();
  for (double& value : x) value += 0.01 * std::sin(17.0 * value);
  hierarchy.op(0).linearize_at(x);
  // Stiff springs at points inside, like bone attachments: every level places them (§8).
  hierarchy.embed_points(std::vector<Vec3>{{0.0, 0.5, 0.0}, {0.2, 0.3, -0.1}, {-0.25, 0.6, 0.2}});
  const std::vector<EmbeddedSpring> springs{{0, 1e6 * Mat3::identity(), {}}, {2, 3e5 * Mat3::identity(), {}}};
  hierarchy.prepare(springs, 1e3);
  const std::vector<double> b = random_vector(x.size(), 4);
  std::vector<double> solution(b.size(), 0.0);
  solvers::MultigridSolveOptions solve;
  solve.relative_tolerance = 1e-10;
  solve.max_iterations = 200;
  const solvers::MultigridSolveResult result = solvers::multigrid_pcg(hierarchy.cycle(), b, solution, solve);
  EXPECT_TRUE(result.converged);
  EXPECT_LE(result.iterations, 40);
  solvers::DirectCoarseSolver direct(hierarchy.op(0).assemble(), 2);
  std::vector<double> exact(b.size());
  direct.solve(b, exact);
  double difference = 0.0;
  for (std::size_t k = 0; k < b.size(); ++k) difference = std::max(difference, std::abs(solution[k] - exact[k]));
  EXPECT_LT(difference, 1e-8 * max_abs(exact));
}

/// How far level 1 of a hierarchy is from the Galerkin operator of level 0: the largest
/// |vᵀA₁v − (Pv)ᵀA₀(Pv)| / (Pv)ᵀA₀(Pv) over random coarse v (zero at level 1's held nodes),
/// P the cycle's prolongation.
double worst_galerkin_gap(OctreeHierarchy& hierarchy) {
  const auto energy = [&](int level, std::span<const double> v) {
    std::vector<double> product(v.size());
    hierarchy.op(level).apply(v, product);
    return std::inner_product(v.begin(), v.end(), product.begin(), 0.0);
  };
  double worst = 0.0;
  for (unsigned seed = 1; seed <= 4; ++seed) {
    std::vector<double> coarse = random_vector(static_cast<std::size_t>(hierarchy.op(1).unknowns()), seed);
    hierarchy.op(1).zero_held(coarse);
    std::vector<double> prolonged(static_cast<std::size_t>(hierarchy.op(0).unknowns()));
    hierarchy.cycle().level(0).prolong_from_coarser(coarse, prolonged);
    const double galerkin = energy(0, prolonged);
    worst = std::max(worst, std::abs(energy(1, coarse) - galerkin) / galerkin);
  }
  return worst;
}

// At rest every fine element shares its coarse element's linearization, so the merged coarse
// level is the Galerkin operator PᵀAP exactly — hanging nodes, partly filled coarse elements
// and unchanged ones included — where §7.3's one-point re-discretization is not.
TEST(OctreeHierarchy, MergedCoarseLevelIsTheGalerkinOperatorAtRest) {
  const BalancedOctree tree = sphere_octree(16);
  for (const bool merged : {true, false}) {
    OctreeLevelsOptions options;
    options.max_levels = 2;
    options.coarsest_nodes = 1;
    options.merged_coarse_elements = merged;
    options.direct_coarsest = false;  // without masses or springs A is singular (rigid motions)
    OctreeHierarchy hierarchy(tree, Lame{1e4, 4e4}, 1000.0, options);
    ASSERT_EQ(hierarchy.level_count(), 2);
    hierarchy.op(0).linearize_at(hierarchy.mesh(0).node_positions());
    hierarchy.prepare({}, 0.0);
    const double worst = worst_galerkin_gap(hierarchy);
    if (merged) {
      EXPECT_LT(worst, 1e-12);
    } else {
      EXPECT_GT(worst, 1e-2);
    }
    // The coarse level's assembled matrix (what a Cholesky coarsest level factors) is its
    // matrix-free operator.
    const std::vector<double> v = random_vector(static_cast<std::size_t>(hierarchy.op(1).unknowns()), 9);
    std::vector<double> applied(v.size());
    hierarchy.op(1).apply(v, applied);
    EXPECT_LT(linalg::max_abs_difference(applied, multiply(hierarchy.op(1).assemble(), v)), 1e-12 * max_abs(applied));
  }
}

// Held nodes cut from the coarse functions (P̃ = D·P) with the Galerkin energy of the cut on the
// coarse level: at rest with merged elements the coarse level is P̃ᵀAP̃ exactly, hanging nodes
// included. Holding the covering coarse nodes instead (the plain form) is Galerkin too, on a
// smaller coarse space: it holds more coarse nodes.
TEST(OctreeHierarchy, HeldNodesCutFromTheCoarseLevelKeepItGalerkinAtRest) {
  const BalancedOctree tree = sphere_octree(16);
  std::size_t held_coarse_nodes[2] = {0, 0};
  for (const auto held_coarse : {OctreeLevelsOptions::HeldCoarseNodes::cut, OctreeLevelsOptions::HeldCoarseNodes::covered}) {
    const bool cut = held_coarse == OctreeLevelsOptions::HeldCoarseNodes::cut;
    OctreeLevelsOptions options;
    options.max_levels = 2;
    options.coarsest_nodes = 1;
    options.merged_coarse_elements = true;
    options.held_coarse_nodes = held_coarse;
    options.direct_coarsest = false;
    OctreeHierarchy hierarchy(tree, Lame{1e4, 4e4}, 1000.0, options);
    ASSERT_EQ(hierarchy.level_count(), 2);
    hierarchy.hold_nodes(nodes_below(hierarchy.mesh(0), 0.3));
    hierarchy.op(0).linearize_at(hierarchy.mesh(0).node_positions());
    hierarchy.prepare({}, 0.0);
    const std::span<const std::uint8_t> held = hierarchy.op(1).held_nodes();
    held_coarse_nodes[cut ? 0 : 1] = static_cast<std::size_t>(std::count(held.begin(), held.end(), 1));
    EXPECT_EQ(hierarchy.op(1).corrections().empty(), !cut);
    EXPECT_LT(worst_galerkin_gap(hierarchy), 1e-12);
    const std::vector<double> v = random_vector(static_cast<std::size_t>(hierarchy.op(1).unknowns()), 9);
    std::vector<double> applied(v.size());
    hierarchy.op(1).apply(v, applied);
    EXPECT_LT(linalg::max_abs_difference(applied, multiply(hierarchy.op(1).assemble(), v)), 1e-12 * max_abs(applied));
  }
  EXPECT_GT(held_coarse_nodes[0], 0U);
  EXPECT_LT(held_coarse_nodes[0], held_coarse_nodes[1]);
}

// MGPCG with held nodes (both coarse treatments, springs and masses near them, deformed) solves
// the held system: the direct solve of the assembled matrix with identity rows.
TEST(OctreeHierarchy, MgpcgWithHeldNodesEqualsTheDirectSolve) {
  const BalancedOctree tree = sphere_octree(32);
  for (const auto held_coarse : {OctreeLevelsOptions::HeldCoarseNodes::cut, OctreeLevelsOptions::HeldCoarseNodes::covered}) {
    OctreeLevelsOptions options;
    options.max_levels = 4;
    options.coarsest_nodes = 200;
    options.held_coarse_nodes = held_coarse;
    options.threads = 2;
    OctreeHierarchy hierarchy(tree, Lame{1e4, 4e4}, 1000.0, options);
    ASSERT_GE(hierarchy.level_count(), 3);
    std::vector<double> x = hierarchy.mesh(0).node_positions();
    for (double& value : x) value += 0.01 * std::sin(17.0 * value);
    hierarchy.hold_nodes(nodes_below(hierarchy.mesh(0), 0.1));
    hierarchy.op(0).linearize_at(x);
    hierarchy.embed_points(std::vector<Vec3>{{0.0, 0.08, 0.0}, {0.2, 0.3, -0.1}});
    const std::vector<EmbeddedSpring> springs{{0, 1e5 * Mat3::identity(), {}}, {1, 3e5 * Mat3::identity(), {}}};
    hierarchy.prepare(springs, 1e2);
    std::vector<double> b = random_vector(x.size(), 4);
    hierarchy.op(0).zero_held(b);
    std::vector<double> solution(b.size(), 0.0);
    const solvers::MultigridSolveResult result =
        solvers::multigrid_pcg(hierarchy.cycle(), b, solution, {.relative_tolerance = 1e-10, .max_iterations = 200});
    EXPECT_TRUE(result.converged);
    std::vector<double> exact(b.size());
    solvers::DirectCoarseSolver(hierarchy.op(0).assemble(), 2).solve(b, exact);
    EXPECT_LT(linalg::max_abs_difference(solution, exact), 1e-8 * max_abs(exact));
  }
  OctreeHierarchy hierarchy(tree, Lame{1e4, 4e4}, 1000.0, {});
  EXPECT_THROW(hierarchy.hold_nodes(std::vector<Index>{hierarchy.mesh(0).node_count()}), std::invalid_argument);
}

// More levels asked for than the tree has (a 16-cell tree has levels 0 … 4): the hierarchy stops
// at the whole-grid element instead of throwing (bench_octree --cube 16 did).
TEST(OctreeHierarchy, LevelsStopAtTheTreesDepth) {
  const BalancedOctree tree = sphere_octree(16);
  OctreeLevelsOptions options;
  options.max_levels = 7;
  options.coarsest_nodes = 1;
  options.direct_coarsest = false;
  OctreeHierarchy hierarchy(tree, Lame{1e4, 4e4}, 1000.0, options);
  EXPECT_LE(hierarchy.level_count(), tree.depth + 1);
  EXPECT_GE(hierarchy.level_count(), 3);
}

TEST(OctreeHierarchy, EmbeddedPointsFollowedToCoarserLevelsStayWhereTheyAre) {
  const BalancedOctree tree = sphere_octree(32);
  OctreeLevelsOptions options;
  options.max_levels = 5;
  options.coarsest_nodes = 1;
  OctreeHierarchy hierarchy(tree, Lame{1e4, 4e4}, 1000.0, options);
  ASSERT_EQ(hierarchy.level_count(), 5);
  // Random points in the sphere, and points on grid planes where elements of different sizes meet.
  std::vector<Vec3> points{{0.0, 0.5, 0.0}, {0.125, 0.25, -0.0625}, {0.0, 0.5, 0.4375}};
  std::mt19937 generator(3);
  std::uniform_real_distribution<double> uniform(-0.45, 0.45);
  while (points.size() < 200) {
    const Vec3 p{uniform(generator), uniform(generator), uniform(generator)};
    if (linalg::norm(p) < 0.45) points.push_back(p + Vec3{0.0, 0.5, 0.0});
  }
  hierarchy.embed_points(points);
  for (int level = 0; level < hierarchy.level_count(); ++level) {
    const OctreeMesh& mesh = hierarchy.mesh(level);
    const std::vector<double> rest = mesh.node_positions();
    for (std::size_t p = 0; p < points.size(); ++p) {
      const EmbeddedPoint at = hierarchy.embedded_point(static_cast<Index>(p), level);
      const Vec3 position = hierarchy.op(level).point_position(at, rest);
      EXPECT_LT(linalg::norm(position - points[p]), 1e-12) << "point " << p << " on level " << level;
    }
  }
  EXPECT_LT(linalg::norm(hierarchy.point_position(1, hierarchy.mesh(0).node_positions()) - points[1]), 1e-12);
  EXPECT_THROW((void)hierarchy.embedded_point(200, 0), std::invalid_argument);
  EXPECT_THROW(hierarchy.set_finest_springs(std::vector<EmbeddedSpring>{{-1, Mat3::identity(), {}}}), std::invalid_argument);
  EXPECT_THROW(hierarchy.embed_points(std::vector<Vec3>{{0.0, 2.0, 0.0}}), std::invalid_argument);
}

// What a V-cycle of re-discretized levels loses level by level (issue 24: the armadillo's
// smallest eigenvalue of M⁻¹A falls from 0.08 at two levels to 0.02 at five), W- and K-cycles
// keep: each coarse problem is solved by two cycles of the next. Spectra from MGPCG's
// coefficients (for the K-cycle, which is not linear, an approximation). At damping 0.5,
// where the sphere's V-cycle loses λmin 0.22 → 0.20 over five levels; at the flesh's 0.8 it
// loses less (0.32 → 0.30) and keeps the smaller λmax, so κ no longer separates the shapes.
TEST(OctreeHierarchy, WAndKCyclesKeepTheTwoLevelSpectrumAsLevelsAreAdded) {
  using Shape = solvers::VCycleOptions::Shape;
  const BalancedOctree tree = sphere_octree(32);
  const auto spectrum = [&](int levels, Shape shape) {
    OctreeLevelsOptions options;
    options.cycle.damping = 0.5;
    options.max_levels = levels;
    options.coarsest_nodes = 1;
    options.threads = 2;
    options.cycle.shape = shape;
    OctreeHierarchy hierarchy(tree, Lame{1e4, 4e4}, 1000.0, options);
    EXPECT_EQ(hierarchy.level_count(), levels);
    std::vector<double> x = hierarchy.mesh(0).node_positions();
    for (double& value : x) value += 0.01 * std::sin(17.0 * value);
    hierarchy.op(0).linearize_at(x);
    hierarchy.prepare({}, 576.0);
    const std::vector<double> b = random_vector(x.size(), 4);
    std::vector<double> solution(b.size(), 0.0);
    const solvers::MultigridSolveResult result =
        solvers::multigrid_pcg(hierarchy.cycle(), b, solution, {.relative_tolerance = 1e-8, .max_iterations = 200});
    EXPECT_TRUE(result.converged);
    std::printf("[ measured ] sphere 32 cells, %d levels, %s: %d MGPCG iterations, Ritz %.3f … %.3f\n", levels,
                shape == Shape::v ? "V-cycle" : shape == Shape::w ? "W-cycle" : "K-cycle", result.iterations,
                result.spectrum.smallest,
                result.spectrum.largest);
    return result.spectrum;
  };
  const solvers::SpectrumBounds two_levels = spectrum(2, Shape::v);
  const solvers::SpectrumBounds v_cycle = spectrum(5, Shape::v);
  for (const Shape shape : {Shape::w, Shape::k}) {
    const solvers::SpectrumBounds kept = spectrum(5, shape);
    EXPECT_GE(kept.smallest, 0.95 * two_levels.smallest);
    EXPECT_LE(kept.condition_number(), 1.05 * two_levels.condition_number());
    EXPECT_LT(kept.condition_number(), v_cycle.condition_number());
  }
}

TEST(OctreeFlesh, ARigidBoneMotionMovesTheBodyAndItsSurfaceRigidly) {
  const SurfaceMesh surface = sphere_surface({0.0, 0.5, 0.0}, 0.5, 6);
  OctreeBuildOptions build;
  build.cells_across = 8;
  build.threads = 1;
  const BalancedOctree tree = build_balanced_octree(surface, build);
  std::vector<Vec3> surface_points;
  for (Index v = 0; v < surface.node_count(); ++v) surface_points.push_back(node_position(surface.positions, v));
  std::vector<Vec3> bone = {{0.0, 0.5, 0.0}, {0.2, 0.5, 0.0}, {0.0, 0.7, 0.0}, {0.0, 0.5, 0.2}, {-0.2, 0.3, -0.1}};
  OctreeFleshOptions options;
  options.gravity = {};
  options.solver = OctreeLinearSolver::direct;
  options.max_newton_steps = 20;
  options.newton_tolerance = 1e-10;
  options.time_step = 1e3;  // quasi-static: inertia does not resist a move over 1000 s
  options.threads = 1;
  OctreeFlesh flesh(tree, bone, surface_points, options);
  const Mat3 rotation = linalg::polar_rotation(Mat3::from_rows({0.9, -0.4, 0.1}, {0.4, 0.9, 0.0}, {0.0, 0.1, 1.0}));
  const Vec3 shift{0.1, -0.05, 0.2};
  std::vector<Vec3> targets;
  for (const Vec3& p : bone) targets.push_back(rotation * p + shift);
  for (int k = 0; k < 2; ++k) flesh.step(1e3 * k, targets);
  const std::vector<double> moved = flesh.surface_positions();
  double error = 0.0;
  for (Index v = 0; v < surface.node_count(); ++v) {
    const Vec3 expected = rotation * node_position(surface.positions, v) + shift;
    error = std::max(error, linalg::norm(node_position(moved, v) - expected));
  }
  EXPECT_LT(error, 1e-6);
}

/// The unit sphere at 16 cells hung on the scene's spherical bone.
struct HungSphere {
  SurfaceMesh surface = sphere_surface({0.0, 0.5, 0.0}, 0.5);
  BalancedOctree tree = build_balanced_octree(surface, {.cells_across = 16, .threads = 1});
  OctreeScene scene = make_octree_scene(surface, "sphere");
};

TEST(OctreeFlesh, FleshHangingOnABoneSettlesUnderGravityWithMgpcg) {
  const HungSphere sphere;
  const BalancedOctree& tree = sphere.tree;
  const OctreeScene& scene = sphere.scene;
  OctreeFleshOptions options;
  options.threads = 2;
  options.levels.coarsest_nodes = 100;
  OctreeFlesh flesh(tree, scene.bone_points, {}, options);
  double kinetic = 0.0;
  for (int frame = 0; frame < 12; ++frame) {
    const OctreeFrameStats& stats = flesh.step(frame * options.time_step, scene.bone_points);
    EXPECT_LT(stats.final_residual, stats.initial_residual);
    kinetic = flesh.kinetic_energy();
  }
  // Sagging under gravity stores elastic energy; the body does not fall off its bone.
  EXPECT_GT(flesh.elastic_energy(), 0.0);
  const std::span<const double> x = flesh.positions();
  const std::vector<double> rest = flesh.rest_positions();
  double largest = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) largest = std::max(largest, std::abs(x[k] - rest[k]));
  EXPECT_LT(largest, 0.2);
  EXPECT_TRUE(std::isfinite(kinetic));
}

// A damping far above 2/λmax(D⁻¹A) makes the Jacobi smoothing diverge and the V-cycle
// indefinite — a state whose operator outgrows the damping: MGPCG reports it and the flesh
// halves the damping until the cycle is SPD again, instead of ending the run.
TEST(OctreeFlesh, AnIndefiniteCycleHalvesTheDampingAndTheFrameGoesOn) {
  const HungSphere sphere;
  const BalancedOctree& tree = sphere.tree;
  const OctreeScene& scene = sphere.scene;
  const auto frames = [&](double damping, int& halvings) {
    OctreeFleshOptions options;
    options.threads = 2;
    options.levels.coarsest_nodes = 100;
    options.levels.cycle.shape = solvers::VCycleOptions::Shape::v;
    options.levels.cycle.damping = damping;
    OctreeFlesh flesh(tree, scene.bone_points, {}, options);
    halvings = 0;
    for (int frame = 0; frame < 3; ++frame) {
      const OctreeFrameStats& stats = flesh.step(frame * options.time_step, scene.bone_points);
      halvings += stats.damping_halvings;
      EXPECT_EQ(stats.damping, flesh.hierarchy().cycle().options().damping);
    }
    EXPECT_LE(flesh.hierarchy().cycle().options().damping, damping);
    return std::vector<double>(flesh.positions().begin(), flesh.positions().end());
  };
  int halvings = 0;
  const std::vector<double> safe = frames(0.5, halvings);
  EXPECT_EQ(halvings, 0);
  const std::vector<double> recovered = frames(4.0, halvings);
  EXPECT_GE(halvings, 2);  // 4 → 2 is still indefinite (λmax(D⁻¹A) > 1)
  double difference = 0.0;
  for (std::size_t k = 0; k < safe.size(); ++k) difference = std::max(difference, std::abs(safe[k] - recovered[k]));
  std::printf("[ measured ] damping 4 halved %d times; positions differ by %.2e from damping 0.5's\n", halvings, difference);
  EXPECT_LT(difference, 1e-3);  // both within the Newton tolerance of the same frames
}

}  // namespace
}  // namespace cholsim::fem::octree
