#include "fem/mesh/tet_mesh.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "test_mesh_io_helpers.hpp"

namespace cholsim::fem {
namespace {

using test::enclosed_volume;
using test::is_closed_and_oriented;

/// The unit corner tet (positive orientation, volume 1/6) plus whatever nodes a test adds.
TetMesh corner_tet() {
  TetMesh mesh;
  mesh.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  mesh.tets = {0, 1, 2, 3};
  return mesh;
}

/// Expects validate_tet_mesh to throw InvalidMeshError whose message holds every fragment.
void expect_invalid(const TetMesh& mesh, const std::vector<std::string>& fragments) {
  try {
    (void)validate_tet_mesh(mesh, "test mesh");
    ADD_FAILURE() << "validate_tet_mesh accepted an invalid mesh";
  } catch (const InvalidMeshError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("test mesh: ", 0), 0u) << message;
    for (const std::string& fragment : fragments) EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

TEST(ValidateTetMesh, AcceptsAPositiveTetAndReportsItsStatistics) {
  const MeshCheck check = validate_tet_mesh(corner_tet(), "corner");
  EXPECT_EQ(check.node_count, 4);
  EXPECT_EQ(check.tet_count, 1);
  EXPECT_EQ(check.unused_nodes, 0);
  EXPECT_EQ(check.boundary_triangles, 4);
  EXPECT_DOUBLE_EQ(check.min_volume, 1.0 / 6.0);
  EXPECT_DOUBLE_EQ(check.total_volume, 1.0 / 6.0);
  EXPECT_TRUE(check.warnings.empty());
}

TEST(ValidateTetMesh, RejectsAnInvertedTetNamingIt) {
  TetMesh mesh = corner_tet();
  mesh.positions.insert(mesh.positions.end(), {1, 1, 1});
  // (1, 2, 3, 4) would be the positive neighbour across face (1, 2, 3); two swapped vertices invert it.
  mesh.tets.insert(mesh.tets.end(), {1, 3, 2, 4});
  expect_invalid(mesh, {"tet 1", "inverted"});
}

TEST(ValidateTetMesh, RejectsAZeroVolumeTet) {
  TetMesh mesh = corner_tet();
  mesh.positions.insert(mesh.positions.end(), {0.5, 0.5, 0.0});  // in the plane of nodes 0, 1, 2
  mesh.tets.insert(mesh.tets.end(), {0, 2, 1, 4});
  expect_invalid(mesh, {"tet 1", "zero volume"});
}

TEST(ValidateTetMesh, RejectsOutOfRangeAndNegativeIndices) {
  TetMesh mesh = corner_tet();
  mesh.tets[2] = 7;
  expect_invalid(mesh, {"tet 0 vertex 2", "node 7", "0..3"});
  mesh.tets[2] = -1;
  expect_invalid(mesh, {"tet 0 vertex 2", "node -1"});
}

TEST(ValidateTetMesh, RejectsARepeatedNodeWithinATet) {
  TetMesh mesh = corner_tet();
  mesh.tets[3] = 1;
  expect_invalid(mesh, {"tet 0", "node 1 twice"});
}

TEST(ValidateTetMesh, RejectsAFaceSharedByThreeTets) {
  TetMesh mesh = corner_tet();
  mesh.positions.insert(mesh.positions.end(), {0.2, 0.2, -1.0, 0.3, 0.1, -2.0});
  // Both extra tets sit below face (0, 1, 2), each positively oriented on its own.
  mesh.tets.insert(mesh.tets.end(), {0, 2, 1, 4, 0, 2, 1, 5});
  ASSERT_GT(linalg::linear_tet::signed_volume(mesh.tet_points(1)), 0.0);
  ASSERT_GT(linalg::linear_tet::signed_volume(mesh.tet_points(2)), 0.0);
  expect_invalid(mesh, {"face (0, 1, 2)", "shared by 3 tets", "non-manifold"});
}

TEST(ValidateTetMesh, RejectsTwoTetsOnTheSameSideOfAFace) {
  TetMesh mesh = corner_tet();
  mesh.positions.insert(mesh.positions.end(), {0.2, 0.2, 2.0});
  mesh.tets.insert(mesh.tets.end(), {0, 1, 2, 4});  // overlaps tet 0 above face (0, 1, 2)
  expect_invalid(mesh, {"face (0, 1, 2)", "same side"});
}

TEST(ValidateTetMesh, RejectsNonFiniteCoordinates) {
  TetMesh mesh = corner_tet();
  mesh.positions[7] = std::numeric_limits<double>::quiet_NaN();
  expect_invalid(mesh, {"node 2 coordinate y", "finite"});
  mesh.positions[7] = std::numeric_limits<double>::infinity();
  expect_invalid(mesh, {"node 2 coordinate y"});
}

TEST(ValidateTetMesh, RejectsMalformedArraysAndEmptyMeshes) {
  TetMesh mesh = corner_tet();
  mesh.tets.push_back(0);
  expect_invalid(mesh, {"5 tet indices"});
  mesh = corner_tet();
  mesh.positions.push_back(0.0);
  expect_invalid(mesh, {"13 position values"});
  mesh = corner_tet();
  mesh.tets.clear();
  expect_invalid(mesh, {"no tetrahedra"});
}

TEST(ValidateTetMesh, WarnsAboutUnusedNodesAndRemovesThem) {
  TetMesh mesh = corner_tet();
  // Two stray nodes, one before the tet's nodes in the numbering.
  mesh.positions.insert(mesh.positions.begin(), {9, 9, 9});
  mesh.positions.insert(mesh.positions.end(), {7, 7, 7});
  mesh.tets = {1, 2, 3, 4};
  const MeshCheck check = validate_tet_mesh(mesh, "stray");
  EXPECT_EQ(check.unused_nodes, 2);
  ASSERT_EQ(check.warnings.size(), 1u);
  EXPECT_NE(check.warnings[0].find("2 nodes are used by no tet (first: node 0)"), std::string::npos) << check.warnings[0];

  std::vector<Index> kept;
  const TetMesh cleaned = remove_unused_nodes(mesh, &kept);
  EXPECT_EQ(kept, (std::vector<Index>{1, 2, 3, 4}));
  EXPECT_EQ(cleaned.tets, (std::vector<Index>{0, 1, 2, 3}));
  EXPECT_EQ(cleaned.positions, corner_tet().positions);
  const MeshCheck clean_check = validate_tet_mesh(cleaned, "cleaned");
  EXPECT_EQ(clean_check.unused_nodes, 0);
  EXPECT_TRUE(clean_check.warnings.empty());
}

TEST(ValidateTetMesh, WarnsAboutSlivers) {
  TetMesh mesh = corner_tet();
  mesh.positions.insert(mesh.positions.end(), {0.3, 0.3, -1e-6});  // nearly in the plane of face (0, 1, 2)
  mesh.tets.insert(mesh.tets.end(), {0, 2, 1, 4});
  const MeshCheck check = validate_tet_mesh(mesh, "sliver");
  ASSERT_EQ(check.warnings.size(), 1u);
  EXPECT_NE(check.warnings[0].find("slivers"), std::string::npos);
}

TEST(BoundarySurface, OfABoxIsClosedOutwardAndEnclosesItsVolume) {
  const Index nx = 3, ny = 2, nz = 4;
  const double h = 0.25;
  const TetMesh box = linalg::structured_tet_box(nx, ny, nz, h);
  const SurfaceMesh surface = boundary_surface(box);
  // Each boundary square of the grid is cut into two triangles.
  EXPECT_EQ(surface.triangle_count(), 4 * (nx * ny + ny * nz + nz * nx));
  EXPECT_EQ(validate_tet_mesh(box, "box").boundary_triangles, surface.triangle_count());
  EXPECT_TRUE(is_closed_and_oriented(surface));
  EXPECT_NEAR(enclosed_volume(surface), nx * ny * nz * h * h * h, 1e-12);
  EXPECT_EQ(test::euler_characteristic(surface), 2);
}

TEST(BoundarySurface, OfOneTetIsItsFourFacesOutward) {
  const SurfaceMesh surface = boundary_surface(corner_tet());
  EXPECT_EQ(surface.triangle_count(), 4);
  EXPECT_TRUE(is_closed_and_oriented(surface));
  EXPECT_NEAR(enclosed_volume(surface), 1.0 / 6.0, 1e-15);
}

TEST(BoundingBox, IsTheCoordinateRange) {
  const auto box = bounding_box({1, -2, 3, -4, 5, 0.5, 2, 0, -6});
  EXPECT_EQ(box, (std::array<double, 6>{-4, -2, -6, 2, 5, 3}));
  EXPECT_THROW((void)bounding_box({}), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::fem
