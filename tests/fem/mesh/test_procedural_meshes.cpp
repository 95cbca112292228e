#include "fem/mesh/procedural_meshes.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "test_mesh_io_helpers.hpp"

namespace cholsim::fem {
namespace {

using test::enclosed_volume;
using test::is_closed_and_oriented;

double distance_from_origin(const TetMesh& mesh, Index node) {
  const auto p = test::node_position(mesh.positions, node);
  return std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
}

/// The checks every procedural mesh must pass: valid, closed outward boundary enclosing the
/// tets' total volume. Returns the validation result.
MeshCheck expect_valid_solid(const TetMesh& mesh, const char* name) {
  const MeshCheck check = validate_tet_mesh(mesh, name);
  EXPECT_EQ(check.unused_nodes, 0) << name;
  const SurfaceMesh surface = boundary_surface(mesh);
  EXPECT_TRUE(is_closed_and_oriented(surface)) << name;
  EXPECT_NEAR(enclosed_volume(surface), check.total_volume, 1e-9 * check.total_volume) << name;
  return check;
}

TEST(MakeBoxMesh, FillsTheBoxWithNearCubicCells) {
  const TetMesh box = make_box_mesh(0.4, 0.2, 0.1, 8);
  const MeshCheck check = expect_valid_solid(box, "box");
  EXPECT_EQ(box.tet_count(), 6 * 8 * 4 * 2);
  EXPECT_NEAR(check.total_volume, 0.4 * 0.2 * 0.1, 1e-15);
  EXPECT_EQ(bounding_box(box.positions), (std::array<double, 6>{0, 0, 0, 0.4, 0.2, 0.1}));
  // Kuhn cells of one size: every tet has the same volume.
  EXPECT_NEAR(check.min_volume, check.mean_volume, 1e-15);
}

TEST(MakeBoxMesh, KeepsAtLeastOneCellAlongShortSides) {
  const TetMesh bar = make_box_mesh(1.0, 0.01, 0.01, 5);
  EXPECT_EQ(bar.tet_count(), 6 * 5);
  EXPECT_NEAR(validate_tet_mesh(bar, "bar").total_volume, 1e-4, 1e-15);
}

TEST(MakeSphereMesh, ApproximatesTheBallWithNodesOnTheSphere) {
  const double radius = 0.15;
  const TetMesh ball = make_sphere_mesh(radius, 12);
  const MeshCheck check = expect_valid_solid(ball, "ball");
  const double exact = 4.0 / 3.0 * std::numbers::pi * radius * radius * radius;
  // An inscribed polyhedron: slightly less than the ball, by O(h²).
  EXPECT_LT(check.total_volume, exact);
  EXPECT_GT(check.total_volume, 0.98 * exact);
  const SurfaceMesh surface = boundary_surface(ball);
  EXPECT_EQ(test::euler_characteristic(surface), 2);
  for (const Index node : surface.triangles) EXPECT_NEAR(distance_from_origin(ball, node), radius, 1e-15);
  // Quality: the cube-to-ball map squashes cells by at most 1/√3 per direction.
  EXPECT_GT(check.min_volume, 0.3 * check.mean_volume);
}

TEST(MakeSphereMesh, VolumeConvergesUnderRefinement) {
  const double exact = 4.0 / 3.0 * std::numbers::pi;
  const double coarse = exact - validate_tet_mesh(make_sphere_mesh(1.0, 6), "coarse").total_volume;
  const double fine = exact - validate_tet_mesh(make_sphere_mesh(1.0, 12), "fine").total_volume;
  // Second order: halving h cuts the error by about 4.
  EXPECT_GT(coarse / fine, 3.0);
  EXPECT_LT(coarse / fine, 5.0);
}

TEST(MakeSphereMesh, SmallestResolutionIsStillValid) {
  expect_valid_solid(make_sphere_mesh(1.0, 1), "tiny ball");
}

TEST(MakeTorusMesh, ApproximatesTheTorusWithGenusOneBoundary) {
  const double major = 0.2, minor = 0.07;
  const TetMesh torus = make_torus_mesh(major, minor, 32, 6);
  const MeshCheck check = expect_valid_solid(torus, "torus");
  const double exact = 2.0 * std::numbers::pi * std::numbers::pi * major * minor * minor;
  EXPECT_LT(check.total_volume, exact);
  EXPECT_GT(check.total_volume, 0.97 * exact);
  const SurfaceMesh surface = boundary_surface(torus);
  EXPECT_EQ(test::euler_characteristic(surface), 0);  // genus 1
  for (const Index node : surface.triangles) {
    const auto p = test::node_position(torus.positions, node);
    const double from_tube_centre = std::hypot(std::hypot(p[0], p[1]) - major, p[2]);
    EXPECT_NEAR(from_tube_centre, minor, 1e-14);
  }
  EXPECT_GT(check.min_volume, 0.3 * check.mean_volume);
}

TEST(MakeSheetMesh, IsOneThinLayerOfTheSection51Sheet) {
  const TetMesh sheet = make_sheet_mesh(1.0, 1e-4, 10);
  const MeshCheck check = expect_valid_solid(sheet, "sheet");
  EXPECT_EQ(sheet.tet_count(), 6 * 10 * 10);
  EXPECT_NEAR(check.total_volume, 1e-4, 1e-16);
  for (std::size_t z = 2; z < sheet.positions.size(); z += 3) {
    EXPECT_TRUE(sheet.positions[z] == 0.0 || sheet.positions[z] == 1e-4) << sheet.positions[z];
  }
  EXPECT_EQ(bounding_box(sheet.positions), (std::array<double, 6>{0, 0, 0, 1.0, 1.0, 1e-4}));
}

TEST(ProceduralMeshes, RejectBadParameters) {
  EXPECT_THROW((void)make_box_mesh(0.0, 1.0, 1.0, 4), std::invalid_argument);
  EXPECT_THROW((void)make_box_mesh(1.0, std::nan(""), 1.0, 4), std::invalid_argument);
  EXPECT_THROW((void)make_box_mesh(1.0, 1.0, 1.0, 0), std::invalid_argument);
  EXPECT_THROW((void)make_sphere_mesh(-1.0, 4), std::invalid_argument);
  EXPECT_THROW((void)make_sphere_mesh(1.0, 0), std::invalid_argument);
  EXPECT_THROW((void)make_torus_mesh(0.1, 0.2, 16, 4), std::invalid_argument);  // tube wider than the ring
  EXPECT_THROW((void)make_torus_mesh(0.2, 0.1, 2, 4), std::invalid_argument);
  EXPECT_THROW((void)make_sheet_mesh(1.0, 0.0, 4), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::fem
