#include "fem/mesh/tetgen.hpp"

#include <gtest/gtest.h>

#include "fem/mesh/mesh_io.hpp"
#include "fem/mesh/procedural_meshes.hpp"
#include "test_mesh_io_helpers.hpp"

namespace cholsim::fem {
namespace {

using test::enclosed_volume;
using test::is_closed_and_oriented;

constexpr const char* tetgen_program = "/usr/bin/tetgen";

#define SKIP_WITHOUT_TETGEN() \
  if (!tetgen_available()) GTEST_SKIP() << tetgen_program << " is not installed (Debian package tetgen)"

TEST(Tetgen, AvailabilityFollowsTheExecutable) {
  EXPECT_EQ(tetgen_available(), std::filesystem::exists(tetgen_program));
  EXPECT_FALSE(tetgen_available("/nonexistent/tetgen"));
}

TEST(Tetgen, FillsABoxSurfaceWithValidTetsOfTheSameVolume) {
  SKIP_WITHOUT_TETGEN();
  const SurfaceMesh surface = boundary_surface(make_box_mesh(0.3, 0.2, 0.1, 3));
  TetgenOptions options;
  options.switches = "pq1.414a0.0002";
  const TetgenResult result = tetrahedralize(surface, options);
  EXPECT_EQ(result.command, std::string(tetgen_program) + " -pq1.414a0.0002 surface.off");
  const MeshCheck check = validate_tet_mesh(result.mesh, result.command);
  EXPECT_NEAR(check.total_volume, 0.3 * 0.2 * 0.1, 1e-12);
  // The volume cap 2·10⁻⁴ forces at least 6·10⁻³ / 2·10⁻⁴ = 30 tets.
  EXPECT_GE(check.tet_count, 30);
  const SurfaceMesh boundary = boundary_surface(result.mesh);
  EXPECT_TRUE(is_closed_and_oriented(boundary));
  EXPECT_NEAR(enclosed_volume(boundary), 0.3 * 0.2 * 0.1, 1e-12);
  EXPECT_GT(result.seconds, 0.0);
}

TEST(Tetgen, KeepsTheInputSurfaceWithY) {
  SKIP_WITHOUT_TETGEN();
  const SurfaceMesh surface = boundary_surface(make_sphere_mesh(1.0, 4));
  TetgenOptions options;
  options.switches = "pY";
  const TetgenResult result = tetrahedralize(surface, options);
  const MeshCheck check = validate_tet_mesh(result.mesh, result.command);
  EXPECT_EQ(check.boundary_triangles, surface.triangle_count());
  EXPECT_NEAR(check.total_volume, enclosed_volume(surface), 1e-12);
}

TEST(Tetgen, MeshesTheBundledBunny) {
  SKIP_WITHOUT_TETGEN();
  const SurfaceMesh bunny = read_surface_mesh(test::repo_mesh("bunny.obj"));
  TetgenOptions options;
  options.switches = "pY";
  const TetgenResult result = tetrahedralize(bunny, options);
  const MeshCheck check = validate_tet_mesh(result.mesh, result.command);
  // ../shared/data/meshes/SOURCES.md: `tetgen -pY` on this surface gives 1839 / 5796.
  EXPECT_EQ(check.node_count, 1839);
  EXPECT_EQ(check.tet_count, 5796);
  EXPECT_NEAR(check.total_volume, enclosed_volume(bunny), 1e-9 * check.total_volume);
}

TEST(Tetgen, RejectsSwitchesThatCannotWork) {
  const SurfaceMesh surface = boundary_surface(make_box_mesh(1, 1, 1, 1));
  for (const char* switches : {"q1.414", "-pq", "p q", "pq;", "pN", "pE", "pr"}) {
    TetgenOptions options;
    options.switches = switches;
    EXPECT_THROW((void)tetrahedralize(surface, options), std::invalid_argument) << switches;
  }
  EXPECT_THROW((void)tetrahedralize(SurfaceMesh{}, {}), std::invalid_argument);
}

TEST(Tetgen, ReportsAFailingOrMissingProgram) {
  const SurfaceMesh surface = boundary_surface(make_box_mesh(1, 1, 1, 1));
  TetgenOptions options;
  options.executable = "/nonexistent/tetgen";
  EXPECT_THROW((void)tetrahedralize(surface, options), TetgenError);
  options.executable = "/bin/false";
  try {
    (void)tetrahedralize(surface, options);
    ADD_FAILURE() << "a failing program was accepted";
  } catch (const TetgenError& error) {
    EXPECT_NE(std::string(error.what()).find("exit code 1"), std::string::npos) << error.what();
  }
}

TEST(Tetgen, ReportsTetgensOwnErrorWithItsOutput) {
  SKIP_WITHOUT_TETGEN();
  // Two interpenetrating boxes: tetgen -p refuses self-intersecting input.
  SurfaceMesh first = boundary_surface(make_box_mesh(1, 1, 1, 1));
  const SurfaceMesh second = boundary_surface(make_box_mesh(1, 1, 1, 1));
  const Index offset = first.node_count();
  for (std::size_t v = 0; v < second.positions.size(); ++v) first.positions.push_back(second.positions[v] + 0.5);
  for (const Index node : second.triangles) first.triangles.push_back(node + offset);
  try {
    (void)tetrahedralize(first, {});
    ADD_FAILURE() << "tetgen meshed a self-intersecting surface";
  } catch (const TetgenError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("failed"), std::string::npos) << message;
    EXPECT_NE(message.find("output ends"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace cholsim::fem
