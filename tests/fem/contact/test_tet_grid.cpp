#include "fem/contact/tet_grid.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "fem/contact/tet_bvh.hpp"
#include "fem/contact/tet_location_checks.hpp"
#include "fem/mesh/procedural_meshes.hpp"

namespace cholsim::fem {
namespace {

using linalg::Vec3;
using tet_location_checks::all_tets;
using tet_location_checks::expect_agrees_with_brute_force;
using tet_location_checks::node_at;
using tet_location_checks::perturbed_positions;
using tet_location_checks::random_points;

TEST(TetGrid, LocatesLikeBruteForceOnADeformedBox) {
  const TetMesh mesh = make_box_mesh(1.0, 0.75, 0.5, 8);
  const std::vector<double> positions = perturbed_positions(mesh, 1.0 / 8, 0.15, 0.2, 1);
  const TetGrid grid(mesh.tets, all_tets(mesh), positions);
  EXPECT_EQ(grid.size(), static_cast<std::size_t>(mesh.tet_count()));
  const auto cells = grid.cell_counts();
  EXPECT_GT(cells[0] * cells[1] * cells[2], 8);  // a grid, not one cell holding everything
  const int found = expect_agrees_with_brute_force(grid, mesh, positions, all_tets(mesh),
                                                   random_points(positions, 3000, 2));
  EXPECT_GT(found, 1000);
  EXPECT_LT(found, 3000);
}

// A shell of tets (the collision-prone layer's shape: the outer layer of a ball), a subset and
// a skip predicate; the grid agrees with brute force and, on random points, with the tree to
// the bit.
TEST(TetGrid, AgreesWithTheTreeOnAShellThroughASubsetAndASkipPredicate) {
  const TetMesh mesh = make_sphere_mesh(1.0, 10);
  std::vector<Index> shell;
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    const Index node = mesh.tets[static_cast<std::size_t>(4 * tet)];
    const double r = std::hypot(mesh.positions[3 * node], mesh.positions[3 * node + 1], mesh.positions[3 * node + 2]);
    if (r > 0.7) shell.push_back(tet);
  }
  ASSERT_GT(shell.size(), 200u);
  const std::vector<double> positions = perturbed_positions(mesh, 0.2, 0.1, 0.1, 3);
  const TetGrid grid(mesh.tets, shell, positions);
  const TetBvh tree(mesh.tets, shell, positions);
  const auto skip_multiples_of_three = [](Index tet) { return tet % 3 == 0; };
  const std::vector<Vec3> points = random_points(positions, 4000, 4);
  const int found = expect_agrees_with_brute_force(grid, mesh, positions, shell, points, skip_multiples_of_three);
  EXPECT_GT(found, 200);
  for (const Vec3& point : points) {
    const auto from_grid = grid.locate(point, skip_multiples_of_three);
    const auto from_tree = tree.locate(point, skip_multiples_of_three);
    ASSERT_EQ(from_grid.has_value(), from_tree.has_value());
    if (!from_grid) continue;
    EXPECT_EQ(from_grid->tet, from_tree->tet);
    EXPECT_EQ(from_grid->weights, from_tree->weights);
  }
}

// The grid rejects most candidates by their affine maps and takes Cramer's rule for the rest;
// the tree takes Cramer's rule for every tet whose box holds the point. The answers (tet and
// weights, to the bit) are the same for points inside, outside and at nodes (on many faces at
// once), through a skip predicate, after a refit that moves and deforms the mesh, and with a
// flat tet among them.
TEST(TetGrid, AffineMapsGiveTheTreesAnswers) {
  const TetMesh mesh = make_box_mesh(1.0, 0.75, 0.5, 6);
  const double cell = 1.0 / 6;
  std::vector<double> positions = perturbed_positions(mesh, cell, 0.15, 0.2, 8);
  // Flatten one tet: its last node onto the middle of an edge.
  for (int c = 0; c < 3; ++c) {
    positions[3 * mesh.tets[3] + c] = 0.5 * (positions[3 * mesh.tets[1] + c] + positions[3 * mesh.tets[2] + c]);
  }
  TetBvh tree(mesh.tets, all_tets(mesh), positions);
  TetGrid grid(mesh.tets, all_tets(mesh), positions);
  std::vector<Vec3> points = random_points(positions, 2000, 9);
  for (Index node = 0; node < 40; ++node) points.push_back(node_at(positions, node));
  const auto skip_odd = [](Index tet) { return tet % 2 == 1; };
  const auto expect_same = [&](const char* when) {
    int found = 0;
    for (const Vec3& point : points) {
      for (const bool skipping : {false, true}) {
        const auto expected = skipping ? tree.locate(point, skip_odd) : tree.locate(point);
        const auto actual = skipping ? grid.locate(point, skip_odd) : grid.locate(point);
        ASSERT_EQ(expected.has_value(), actual.has_value()) << when;
        if (!expected) continue;
        ++found;
        // At a node several tets hold the point with the same smallest weight (0): the first
        // candidate wins, and the two locators meet them in different orders.
        const double smallest = *std::min_element(expected->weights.begin(), expected->weights.end());
        if (smallest == 0.0) continue;
        EXPECT_EQ(actual->tet, expected->tet) << when;
        EXPECT_EQ(actual->weights, expected->weights) << when;
      }
    }
    EXPECT_GT(found, 1000) << when;
  };
  expect_same("as built");
  std::vector<double> moved = perturbed_positions(mesh, cell, 0.2, -0.3, 10);
  for (std::size_t node = 0; node < moved.size() / 3; ++node) moved[3 * node + 2] -= 3.0;
  tree.refit(moved);
  grid.refit(moved, 2);
  points = random_points(moved, 2000, 11);
  expect_same("after a refit");
}

// A refit moves and deforms the body; the grid answers for the positions of its last refit
// only (it keeps its own copy), and points outside its box find nothing.
TEST(TetGrid, RefitFollowsNewPositionsAndKeepsItsOwnCopy) {
  const TetMesh mesh = make_box_mesh(1.0, 1.0, 1.0, 6);
  TetGrid grid(mesh.tets, all_tets(mesh), perturbed_positions(mesh, 1.0 / 6, 0.1, 0.0, 5));
  std::vector<double> moved = perturbed_positions(mesh, 1.0 / 6, 0.2, -0.3, 6);
  for (std::size_t node = 0; node < moved.size() / 3; ++node) moved[3 * node + 1] += 5.0;
  grid.refit(moved);
  const int found = expect_agrees_with_brute_force(grid, mesh, moved, all_tets(mesh), random_points(moved, 2000, 7));
  EXPECT_GT(found, 500);
  EXPECT_FALSE(grid.locate({0.5, 0.5, 0.5}));  // where the body was
  const std::vector<double> kept = moved;
  std::fill(moved.begin(), moved.end(), 0.0);  // the caller's array changes after the refit
  EXPECT_GT(expect_agrees_with_brute_force(grid, mesh, kept, all_tets(mesh), random_points(kept, 500, 8)), 100);
}

// Above 1,024 tets the vertices, maps and boxes are taken on several threads: the same grid,
// hence the same answers, as on one.
TEST(TetGrid, RefitOnTwoThreadsEqualsRefitOnOne) {
  const TetMesh mesh = make_box_mesh(1.0, 1.0, 1.0, 8);
  ASSERT_GT(mesh.tet_count(), 1024);
  const std::vector<double> moved = perturbed_positions(mesh, 1.0 / 8, 0.2, -0.3, 12);
  TetGrid one(mesh.tets, all_tets(mesh), mesh.positions);
  TetGrid two(mesh.tets, all_tets(mesh), mesh.positions);
  one.refit(moved, 1);
  two.refit(moved, 2);
  EXPECT_EQ(one.cell_counts(), two.cell_counts());
  int found = 0;
  for (const Vec3& point : random_points(moved, 2000, 13)) {
    const auto a = one.locate(point);
    const auto b = two.locate(point);
    ASSERT_EQ(a.has_value(), b.has_value());
    if (!a) continue;
    ++found;
    EXPECT_EQ(a->tet, b->tet);
    EXPECT_EQ(a->weights, b->weights);
  }
  EXPECT_GT(found, 500);
}

// A tet far from the others must not blow the grid up (the cells grow coarser instead); a
// flat tet is never returned, an inverted one is found.
TEST(TetGrid, AFarTetMakesCoarserCellsAndFlatAndInvertedTetsAreHandled) {
  const auto tets = tet_location_checks::flat_inverted_and_valid_tets(/*far=*/true);
  const TetGrid grid(tets.connectivity, tets.ids, tets.positions);
  const auto cells = grid.cell_counts();
  EXPECT_LE(cells[0] * cells[1] * cells[2], 32);
  tet_location_checks::expect_flat_never_and_inverted_found(grid);
  const auto far = grid.locate({1e8 + 0.1, 0.1, 0.1});
  ASSERT_TRUE(far);
  EXPECT_EQ(far->tet, 3);
  EXPECT_FALSE(grid.locate({5e7, 0.1, 0.1}));
}

// A tet with a coordinate that is not finite holds nothing; the others are found as before.
TEST(TetGrid, TetsWithNonFiniteCoordinatesAreLeftOut) {
  const TetMesh mesh = make_box_mesh(1.0, 1.0, 1.0, 4);
  std::vector<double> positions = mesh.positions;
  const Index bad_node = mesh.tets[0];
  positions[3 * bad_node + 1] = std::numeric_limits<double>::quiet_NaN();
  const TetGrid grid(mesh.tets, all_tets(mesh), positions);
  std::vector<Index> finite_tets;
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    bool touches = false;
    for (int c = 0; c < 4; ++c) touches = touches || mesh.tets[static_cast<std::size_t>(4 * tet + c)] == bad_node;
    if (!touches) finite_tets.push_back(tet);
  }
  ASSERT_LT(finite_tets.size(), static_cast<std::size_t>(mesh.tet_count()));
  const int found = expect_agrees_with_brute_force(grid, mesh, positions, finite_tets, random_points(mesh.positions, 1000, 10));
  EXPECT_GT(found, 400);
  EXPECT_FALSE(grid.locate({std::numeric_limits<double>::quiet_NaN(), 0.5, 0.5}));
}

TEST(TetGrid, EmptySubsetsAndIdsOutsideTheMesh) {
  tet_location_checks::expect_bad_ids_refused_and_empty_subsets_find_nothing<TetGrid>();
}

}  // namespace
}  // namespace cholsim::fem
