#include "fem/contact/tet_bvh.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

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
using tet_location_checks::reference_weights;

TEST(TetBvh, LocatesLikeBruteForceOnADeformedBox) {
  const TetMesh mesh = make_box_mesh(1.0, 0.75, 0.5, 8);
  const double cell = 1.0 / 8;
  const std::vector<double> positions = perturbed_positions(mesh, cell, 0.15, 0.2, 1);
  const TetBvh tree(mesh.tets, all_tets(mesh), positions);
  EXPECT_EQ(tree.size(), static_cast<std::size_t>(mesh.tet_count()));
  EXPECT_LT(tree.node_count(), tree.size());  // leaves of up to kLeafSize tets
  const int found = expect_agrees_with_brute_force(tree, mesh, positions, all_tets(mesh),
                                                   random_points(positions, 3000, 2));
  EXPECT_GT(found, 1000);  // most points are inside: the test is not vacuous
  EXPECT_LT(found, 3000);  // and some are outside
}

TEST(TetBvh, RefitFollowsNewPositionsWithoutRebuilding) {
  const TetMesh mesh = make_box_mesh(1.0, 1.0, 1.0, 6);
  const double cell = 1.0 / 6;
  const std::vector<double> first = perturbed_positions(mesh, cell, 0.1, 0.0, 3);
  TetBvh tree(mesh.tets, all_tets(mesh), first);
  // Move the body far and deform it differently: boxes of the old positions would find nothing.
  std::vector<double> moved = perturbed_positions(mesh, cell, 0.2, -0.3, 4);
  for (std::size_t node = 0; node < moved.size() / 3; ++node) moved[3 * node + 1] += 5.0;
  tree.refit(moved);
  const auto bounds = tree.bounds();
  EXPECT_GT(bounds[1], 4.5);
  const int found = expect_agrees_with_brute_force(tree, mesh, moved, all_tets(mesh),
                                                   random_points(moved, 2000, 5));
  EXPECT_GT(found, 500);
}

// The tree answers for the positions of its last refit: it keeps its own copy, so the
// caller's array may change (or go away) between a refit and the queries.
TEST(TetBvh, LocateReadsThePositionsOfTheLastRefit) {
  const TetMesh mesh = make_box_mesh(1.0, 1.0, 1.0, 4);
  std::vector<double> positions = mesh.positions;
  TetBvh tree(mesh.tets, all_tets(mesh), positions);
  for (std::size_t node = 0; node < positions.size() / 3; ++node) positions[3 * node] += 10.0;
  EXPECT_TRUE(tree.locate({0.5, 0.5, 0.5}));   // still where it was built
  EXPECT_FALSE(tree.locate({10.5, 0.5, 0.5}));
  tree.refit(positions);
  std::fill(positions.begin(), positions.end(), 0.0);  // the caller's array changes again
  EXPECT_FALSE(tree.locate({0.5, 0.5, 0.5}));
  const auto moved = tree.locate({10.5, 0.5, 0.5});
  ASSERT_TRUE(moved);
  const auto weights = reference_weights(mesh, mesh.positions, moved->tet, {0.5, 0.5, 0.5});
  for (int c = 0; c < 4; ++c) EXPECT_NEAR(moved->weights[c], weights[c], 1e-12);
}

// The leaves are refit on several threads when the tree is large (here 10,368 tets, over
// parallel_chunks' threshold): the same boxes, hence the same answers, as on one thread.
TEST(TetBvh, RefitOnTwoThreadsEqualsRefitOnOne) {
  const TetMesh mesh = make_box_mesh(1.0, 1.0, 1.0, 12);
  const double cell = 1.0 / 12;
  TetBvh one(mesh.tets, all_tets(mesh), mesh.positions);
  TetBvh two(mesh.tets, all_tets(mesh), mesh.positions);
  ASSERT_GT(two.node_count(), 2048u);
  const std::vector<double> moved = perturbed_positions(mesh, cell, 0.2, -0.3, 6);
  one.refit(moved, 1);
  two.refit(moved, 2);
  EXPECT_EQ(one.bounds(), two.bounds());
  const int found = expect_agrees_with_brute_force(two, mesh, moved, all_tets(mesh), random_points(moved, 2000, 7));
  EXPECT_GT(found, 500);
}

TEST(TetBvh, SubsetAndSkipPredicateAreRespected) {
  const TetMesh mesh = make_sphere_mesh(1.0, 8);
  std::vector<Index> subset;  // the upper half of the ball only
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    if (mesh.positions[3 * mesh.tets[4 * tet] + 2] > 0.0) subset.push_back(tet);
  }
  ASSERT_GT(subset.size(), 100u);
  const TetBvh tree(mesh.tets, subset, mesh.positions);
  const auto skip_multiples_of_three = [](Index tet) { return tet % 3 == 0; };
  const std::vector<Vec3> points = random_points(mesh.positions, 3000, 6);
  const int found = expect_agrees_with_brute_force(tree, mesh, mesh.positions, subset, points, skip_multiples_of_three);
  EXPECT_GT(found, 150);  // ~10% of the box: a quarter of it is ball, half of that kept, 2/3 not skipped
  for (const Vec3& point : points) {
    if (const auto location = tree.locate(point, skip_multiples_of_three)) {
      EXPECT_NE(location->tet % 3, 0);
      EXPECT_TRUE(std::binary_search(subset.begin(), subset.end(), location->tet));
    }
  }
  // Skipping everything finds nothing; an empty subset finds nothing.
  EXPECT_FALSE(tree.locate({0.0, 0.0, 0.5}, [](Index) { return true; }));
  EXPECT_TRUE(tree.locate({0.0, 0.0, 0.5}));
  const TetBvh empty(mesh.tets, {}, mesh.positions);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_FALSE(empty.locate({0.0, 0.0, 0.5}));
}

TEST(TetBvh, PointOnASharedFaceIsFoundInOneOfItsTets) {
  const TetMesh mesh = make_box_mesh(1.0, 1.0, 1.0, 2);
  const TetBvh tree(mesh.tets, all_tets(mesh), mesh.positions);
  // Nodes and cell centres lie on many tets' faces and edges at once.
  for (const Vec3& point : {Vec3{0.5, 0.5, 0.5}, Vec3{0.25, 0.25, 0.25}, Vec3{1.0, 1.0, 1.0}, Vec3{0.0, 0.5, 0.25}}) {
    const auto location = tree.locate(point);
    ASSERT_TRUE(location) << point.x << " " << point.y << " " << point.z;
    const auto weights = reference_weights(mesh, mesh.positions, location->tet, point);
    EXPECT_GE(*std::min_element(weights.begin(), weights.end()), -1e-12);
  }
  EXPECT_FALSE(tree.locate({1.0 + 1e-6, 0.5, 0.5}));
}

TEST(TetBvh, DegenerateTetsAreNeverReturnedAndInvertedOnesAreFound) {
  const auto tets = tet_location_checks::flat_inverted_and_valid_tets();
  tet_location_checks::expect_flat_never_and_inverted_found(TetBvh(tets.connectivity, tets.ids, tets.positions));
}

TEST(TetBvh, RejectsIdsOutsideTheMeshAndAnEmptySubsetFindsNothing) {
  tet_location_checks::expect_bad_ids_refused_and_empty_subsets_find_nothing<TetBvh>();
}

}  // namespace
}  // namespace cholsim::fem
