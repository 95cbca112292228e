// Seed 001 §7.2–§7.3: prolongation reproduces affine fields on every fine node, restriction
// is its exact transpose, and every fine element lies in its coarse element.
#include <gtest/gtest.h>

#include <random>

#include "fem/mesh/mesh_io.hpp"
#include "octree_test_helpers.hpp"

namespace cholsim::fem::octree {
namespace {

/// Meshes of one tree at min_level 0, 1, 2.
std::vector<std::vector<OctreeMesh>> test_hierarchies() {
  std::vector<BalancedOctree> trees;
  trees.push_back(build_balanced_octree(read_surface_mesh(test::kArmadillo), {.cells_across = 32, .threads = 2}));
  trees.push_back(build_balanced_octree(test::sphere_surface(1.0, 10), {.cells_across = 20, .threads = 2}));
  for (unsigned seed = 31; seed <= 33; ++seed) trees.push_back(test::random_balanced_octree(5, 4, 0.6, seed));
  std::vector<std::vector<OctreeMesh>> hierarchies;
  for (const BalancedOctree& tree : trees) {
    hierarchies.push_back({});
    for (int level = 0; level <= 2; ++level) hierarchies.back().push_back(make_octree_mesh(tree, level, 2));
  }
  return hierarchies;
}

const std::vector<std::vector<OctreeMesh>>& hierarchies() {
  static const std::vector<std::vector<OctreeMesh>> all = test_hierarchies();
  return all;
}

Vec3 affine(const Vec3& x) { return {2.0 * x.x - x.y + 0.5 * x.z + 1.0, 0.25 * x.x + 3.0 * x.y - 2.0, -x.x + x.y + x.z}; }

std::vector<double> affine_nodal(const OctreeMesh& mesh) {
  std::vector<double> v(3 * std::size_t(mesh.node_count()));
  for (Index n = 0; n < mesh.node_count(); ++n) {
    const Vec3 a = affine(mesh.node_position(n));
    for (int i = 0; i < 3; ++i) v[3 * std::size_t(n) + std::size_t(i)] = a[i];
  }
  return v;
}

/// (fine, coarse) pairs: 0←1, 0←2, 1←2.
template <typename Check>
void for_each_level_pair(Check&& check) {
  for (const auto& levels : hierarchies()) {
    for (std::size_t fine = 0; fine < levels.size(); ++fine) {
      for (std::size_t coarse = fine + 1; coarse < levels.size(); ++coarse) check(levels[fine], levels[coarse]);
    }
  }
}

TEST(OctreeTransfer, ProlongationReproducesAffineFieldsOnEveryFineNode) {
  for_each_level_pair([](const OctreeMesh& fine, const OctreeMesh& coarse) {
    const OctreeTransfer transfer = make_transfer(fine, coarse, 2);
    std::vector<double> fine_values(3 * std::size_t(fine.node_count()), -7.0);
    transfer.prolong(coarse, affine_nodal(coarse), fine_values, 2);
    for (Index n = 0; n < fine.node_count(); ++n) {
      const Vec3 expected = affine(fine.node_position(n));
      for (int i = 0; i < 3; ++i) ASSERT_NEAR(fine_values[3 * std::size_t(n) + std::size_t(i)], expected[i], 1e-12 * (1 + std::abs(expected[i])));
    }
    for (const auto& w : transfer.weights) {
      double sum = 0.0;
      for (double x : w) sum += x;
      EXPECT_NEAR(sum, 1.0, 1e-15);
    }
  });
}

TEST(OctreeTransfer, RestrictionIsTheTransposeOfProlongation) {
  std::mt19937 random(41);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for_each_level_pair([&](const OctreeMesh& fine, const OctreeMesh& coarse) {
    const OctreeTransfer transfer = make_transfer(fine, coarse, 1);
    std::vector<double> u(3 * std::size_t(coarse.node_count())), v(3 * std::size_t(fine.node_count()));
    for (double& x : u) x = value(random);
    for (double& x : v) x = value(random);
    std::vector<double> pu(v.size()), rv(u.size(), 99.0), rv_threads(u.size());
    transfer.prolong(coarse, u, pu, 1);
    transfer.restrict_to(coarse, v, rv, 1);
    transfer.restrict_to(coarse, v, rv_threads, 2);
    EXPECT_EQ(rv, rv_threads) << "restriction does not depend on the thread count";
    double pu_v = 0.0, u_rv = 0.0;
    for (std::size_t k = 0; k < v.size(); ++k) pu_v += pu[k] * v[k];
    for (std::size_t k = 0; k < u.size(); ++k) u_rv += u[k] * rv[k];
    EXPECT_NEAR(pu_v, u_rv, 1e-12 * (1.0 + std::abs(pu_v)));
    EXPECT_GT(transfer.memory_bytes(), transfer.weights.size() * sizeof(transfer.weights[0]));
  });
}

TEST(OctreeTransfer, EveryFineElementLiesInItsCoarseElement) {
  for_each_level_pair([](const OctreeMesh& fine, const OctreeMesh& coarse) {
    const std::vector<Index> parent = coarse_elements_of(fine, coarse, 2);
    ASSERT_EQ(parent.size(), std::size_t(fine.element_count()));
    for (Index e = 0; e < fine.element_count(); ++e) {
      const Octant& f = fine.elements[std::size_t(e)];
      const Octant& c = coarse.elements[std::size_t(parent[std::size_t(e)])];
      EXPECT_GE(c.level, f.level);
      EXPECT_EQ(ancestor_at(f, c.level), (Octant{c.x, c.y, c.z, c.level, 0}));
    }
  });
}

TEST(OctreeTransfer, MismatchedMeshesAndSizesThrow) {
  const auto& a = hierarchies()[0];
  const auto& b = hierarchies()[1];
  EXPECT_THROW(make_transfer(a[0], b[1]), std::invalid_argument);
  EXPECT_THROW(make_transfer(a[1], a[0]), std::invalid_argument);
  const OctreeTransfer transfer = make_transfer(a[0], a[1]);
  std::vector<double> too_short(5), coarse(3 * std::size_t(a[1].node_count()));
  EXPECT_THROW(transfer.prolong(a[1], coarse, too_short, 1), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::fem::octree
