#include "fem/mesh/mesh_io.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>

#include "fem/mesh/procedural_meshes.hpp"
#include "test_mesh_io_helpers.hpp"

namespace cholsim::fem {
namespace {

using test::enclosed_volume;
using test::is_closed_and_oriented;
using test::repo_mesh;
using test::ScratchFolder;
using test::shared_mesh;

// ---------------------------------------------------------------------------------------------
// Real files: the bundled ones and the shared collection they come from. Counts from
// data/meshes/SOURCES.md and ../shared/data/meshes/SOURCES.md (checked there by a separate
// script).

struct TetFileFacts {
  std::filesystem::path path;
  Index nodes;
  Index tets;
  Index boundary_triangles;
};

void expect_tet_file(const TetFileFacts& facts) {
  SCOPED_TRACE(facts.path.string());
  const TetMesh mesh = read_tet_mesh(facts.path);
  EXPECT_EQ(mesh.node_count(), facts.nodes);
  EXPECT_EQ(mesh.tet_count(), facts.tets);
  const MeshCheck check = validate_tet_mesh(mesh, facts.path.string());
  EXPECT_EQ(check.boundary_triangles, facts.boundary_triangles);
  const SurfaceMesh boundary = boundary_surface(mesh);
  EXPECT_TRUE(is_closed_and_oriented(boundary));
  EXPECT_NEAR(enclosed_volume(boundary), check.total_volume, 1e-9 * check.total_volume);
}

bool shared_data_present() { return std::filesystem::is_directory(shared_mesh("")); }

TEST(ReadTetMesh, ReadsTheBundledMeshes) {
  expect_tet_file({repo_mesh("armadillo_4k.node"), 1180, 3717, 2102});
  expect_tet_file({repo_mesh("armadillo_4k.ele"), 1180, 3717, 2102});
  expect_tet_file({repo_mesh("bunny.msh"), 4670, 19379, 6266});
  expect_tet_file({repo_mesh("torus.msh"), 200, 491, 400});
  expect_tet_file({repo_mesh("octopus-low.mesh"), 452, 1140, 898});
}

TEST(ReadTetMesh, ReadsTheSharedCollection) {
  if (!shared_data_present()) GTEST_SKIP() << "no shared data at " << shared_mesh("");
  expect_tet_file({shared_mesh("libigl-tutorial-data/hand.mesh"), 7234, 29998, 9556});
  expect_tet_file({shared_mesh("polyfem-data/Armadillo13K.msh"), 13230, 54985, 17296});
  const TetMesh plate = read_tet_mesh(shared_mesh("polyfem-data/mat40x40.msh"));
  EXPECT_EQ(plate.node_count(), 3200);
  EXPECT_EQ(plate.tet_count(), 9126);
}

TEST(ReadTetMesh, BinaryGmshIsAClearError) {
  if (!shared_data_present()) GTEST_SKIP() << "no shared data at " << shared_mesh("");
  const auto path = shared_mesh("libigl-tutorial-data/hand.msh");
  try {
    (void)read_tet_mesh(path);
    ADD_FAILURE() << "binary .msh was accepted";
  } catch (const MeshFormatError& error) {
    EXPECT_EQ(error.line(), 2);
    EXPECT_NE(std::string(error.what()).find(path.string() + ":2: binary .msh is not supported"), std::string::npos)
        << error.what();
  }
}

TEST(ReadTetMesh, TetgensMeditAndNodeEleOutputsAgree) {
  // tests/fem/mesh/data/README.md: one tetgen run, written as .node/.ele (0-based) and .mesh (1-based).
  const std::filesystem::path data = std::filesystem::path(CHOLSIM_SOURCE_DIR) / "tests" / "fem" / "mesh" / "data";
  const TetMesh from_tetgen_files = read_tet_mesh(data / "tetgen_torus.1.node");
  const TetMesh from_medit = read_tet_mesh(data / "tetgen_torus.1.mesh");
  expect_tet_file({data / "tetgen_torus.1.ele", 144, 384, 256});
  EXPECT_EQ(from_medit.positions, from_tetgen_files.positions);
  EXPECT_EQ(from_medit.tets, from_tetgen_files.tets);
  EXPECT_EQ(test::euler_characteristic(boundary_surface(from_medit)), 0);  // a torus
}

struct SurfaceFileFacts {
  std::filesystem::path path;
  Index nodes;
  Index triangles;
  bool closed;
};

void expect_surface_file(const SurfaceFileFacts& facts) {
  SCOPED_TRACE(facts.path.string());
  const SurfaceMesh surface = read_surface_mesh(facts.path);
  EXPECT_EQ(surface.node_count(), facts.nodes);
  EXPECT_EQ(surface.triangle_count(), facts.triangles);
  EXPECT_EQ(is_closed_and_oriented(surface), facts.closed);
  if (facts.closed) {
    EXPECT_GT(enclosed_volume(surface), 0.0);  // outward (SOURCES.md: vol > 0)
  }
}

TEST(ReadSurfaceMesh, ReadsTheBundledSurfaces) {
  expect_surface_file({repo_mesh("bunny.off"), 3485, 6966, true});
  expect_surface_file({repo_mesh("bunny.obj"), 1839, 3674, true});
}

TEST(ReadSurfaceMesh, ReadsTheSharedCollection) {
  if (!shared_data_present()) GTEST_SKIP() << "no shared data at " << shared_mesh("");
  expect_surface_file({shared_mesh("PositionBasedDynamics/bunny_10k.obj"), 5002, 10000, true});
  expect_surface_file({shared_mesh("RAINBOW/dragon.obj"), 750, 1496, true});  // has vt/vn lines
  expect_surface_file({shared_mesh("libigl-tutorial-data/fertility.off"), 4494, 9000, true});
  expect_surface_file({shared_mesh("common-3d-test-models/stanford-bunny.obj"), 35947, 69451, false});
  EXPECT_EQ(test::euler_characteristic(read_surface_mesh(shared_mesh("libigl-tutorial-data/fertility.off"))),
            2 - 2 * 4);  // genus 4
}

// ---------------------------------------------------------------------------------------------
// Round trips: each format written here from a procedural mesh (independently of the readers,
// with 17 significant digits so doubles survive exactly) and read back.

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

std::string point_text(const TetMesh& mesh, Index node) {
  return number(mesh.positions[3 * node]) + " " + number(mesh.positions[3 * node + 1]) + " " +
         number(mesh.positions[3 * node + 2]);
}

TetMesh sample_mesh() { return make_sphere_mesh(1.3, 4); }

void expect_same_mesh(const TetMesh& read, const TetMesh& written) {
  EXPECT_EQ(read.positions, written.positions);
  EXPECT_EQ(read.tets, written.tets);
}

TEST(ReadTetgenMesh, ReadsOneBasedFilesWithAttributesMarkersAndComments) {
  const TetMesh mesh = sample_mesh();
  std::ostringstream node, ele;
  node << "# written by the test\n" << mesh.node_count() << "  3  1  1\n";
  for (Index v = 0; v < mesh.node_count(); ++v) node << v + 1 << "  " << point_text(mesh, v) << "  0.5  " << v % 2 << "  # node\n";
  ele << mesh.tet_count() << " 4 1\n";
  for (Index t = 0; t < mesh.tet_count(); ++t) {
    ele << t + 1;
    for (int s = 0; s < 4; ++s) ele << " " << mesh.tets[4 * t + s] + 1;
    ele << " 7\n";
  }
  const ScratchFolder folder;
  folder.write("ball.node", node.str());
  const auto ele_path = folder.write("ball.ele", ele.str());
  expect_same_mesh(read_tet_mesh(ele_path), mesh);
}

TEST(ReadGmshMesh, ReadsVersion22WithScatteredTagsAndOtherElements) {
  const TetMesh mesh = sample_mesh();
  auto tag = [](Index node) { return 10 * node + 3; };
  std::ostringstream msh;
  msh << "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n1\n3 1 \"ball\"\n$EndPhysicalNames\n";
  msh << "$Nodes\n" << mesh.node_count() << "\n";
  for (Index v = mesh.node_count() - 1; v >= 0; --v) msh << tag(v) << " " << point_text(mesh, v) << "\n";
  msh << "$EndNodes\n$Elements\n" << mesh.tet_count() + 2 << "\n";
  msh << "1 15 2 0 1 " << tag(0) << "\n";                                  // a point
  msh << "2 2 2 0 1 " << tag(0) << " " << tag(1) << " " << tag(2) << "\n";  // a triangle
  for (Index t = 0; t < mesh.tet_count(); ++t) {
    msh << t + 3 << " 4 2 1 1";
    for (int s = 0; s < 4; ++s) msh << " " << tag(mesh.tets[4 * t + s]);
    msh << "\n";
  }
  msh << "$EndElements\n";
  const ScratchFolder folder;
  const TetMesh read = read_tet_mesh(folder.write("ball.msh", msh.str()));
  // Nodes come back in file order (reversed here); map them through their positions.
  ASSERT_EQ(read.node_count(), mesh.node_count());
  ASSERT_EQ(read.tet_count(), mesh.tet_count());
  const Index last = mesh.node_count() - 1;
  for (Index v = 0; v < mesh.node_count(); ++v) {
    for (int a = 0; a < 3; ++a) EXPECT_EQ(read.positions[3 * (last - v) + a], mesh.positions[3 * v + a]);
  }
  for (std::size_t i = 0; i < mesh.tets.size(); ++i) EXPECT_EQ(read.tets[i], last - mesh.tets[i]);
}

std::string gmsh4_text(const TetMesh& mesh, bool version41) {
  std::ostringstream msh;
  msh << "$MeshFormat\n" << (version41 ? "4.1" : "4") << " 0 8\n$EndMeshFormat\n";
  msh << "$Entities\n0 0 0 1\n1 -2 -2 -2 2 2 2 0 0\n$EndEntities\n";
  // Two node blocks, to check block bookkeeping.
  const Index split = mesh.node_count() / 2;
  msh << "$Nodes\n2 " << mesh.node_count();
  if (version41) msh << " 1 " << mesh.node_count();
  msh << "\n";
  for (const auto& [begin, end] : {std::pair{Index{0}, split}, std::pair{split, mesh.node_count()}}) {
    msh << (version41 ? "3 1 0 " : "1 3 0 ") << end - begin << "\n";
    if (version41) {
      for (Index v = begin; v < end; ++v) msh << v + 1 << "\n";
      for (Index v = begin; v < end; ++v) msh << point_text(mesh, v) << "\n";
    } else {
      for (Index v = begin; v < end; ++v) msh << v + 1 << " " << point_text(mesh, v) << "\n";
    }
  }
  msh << "$EndNodes\n$Elements\n2 " << mesh.tet_count() + 1;
  if (version41) msh << " 1 " << mesh.tet_count() + 1;
  msh << "\n" << (version41 ? "2 1 2 1\n" : "1 2 2 1\n") << "1 1 2 3\n";  // one triangle, skipped
  msh << (version41 ? "3 1 4 " : "1 3 4 ") << mesh.tet_count() << "\n";
  for (Index t = 0; t < mesh.tet_count(); ++t) {
    msh << t + 2;
    for (int s = 0; s < 4; ++s) msh << " " << mesh.tets[4 * t + s] + 1;
    msh << "\n";
  }
  msh << "$EndElements\n";
  return msh.str();
}

TEST(ReadGmshMesh, ReadsVersions40And41WithBlocks) {
  const TetMesh mesh = sample_mesh();
  const ScratchFolder folder;
  expect_same_mesh(read_tet_mesh(folder.write("v41.msh", gmsh4_text(mesh, true))), mesh);
  expect_same_mesh(read_tet_mesh(folder.write("v40.msh", gmsh4_text(mesh, false))), mesh);
}

TEST(ReadMeditMesh, ReadsVerticesAndTetrahedraSkippingOtherSections) {
  const TetMesh mesh = sample_mesh();
  std::ostringstream medit;
  medit << "MeshVersionFormatted\n1\n\nDimension 3\n# comment\nVertices\n" << mesh.node_count() << "\n";
  for (Index v = 0; v < mesh.node_count(); ++v) medit << point_text(mesh, v) << " 0\n";
  medit << "Edges 1\n1 2 0\nTriangles\n2\n1 2 3 1\n2 3 4 1\nTetrahedra\n" << mesh.tet_count() << "\n";
  for (Index t = 0; t < mesh.tet_count(); ++t) {
    for (int s = 0; s < 4; ++s) medit << mesh.tets[4 * t + s] + 1 << " ";
    medit << "0\n";
  }
  medit << "End\n";
  const ScratchFolder folder;
  expect_same_mesh(read_tet_mesh(folder.write("ball.mesh", medit.str())), mesh);
}

SurfaceMesh sample_surface() { return boundary_surface(make_box_mesh(0.3, 0.2, 0.1, 3)); }

TEST(WriteOff, RoundTripsExactlyThroughATemporaryFile) {
  const SurfaceMesh surface = sample_surface();
  const ScratchFolder folder;
  const auto path = folder.path() / "box.off";
  write_off(surface, path);
  const SurfaceMesh read = read_surface_mesh(path);
  EXPECT_EQ(read.positions, surface.positions);
  EXPECT_EQ(read.triangles, surface.triangles);
  // Only the finished file is left: the temporary was renamed.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(folder.path()), std::filesystem::directory_iterator()), 1);
}

TEST(WriteOff, RejectsBadSurfacesAndUnwritablePaths) {
  SurfaceMesh surface = sample_surface();
  const ScratchFolder folder;
  EXPECT_THROW(write_off(surface, folder.path() / "missing" / "x.off"), std::runtime_error);
  surface.triangles[4] = surface.node_count();
  EXPECT_THROW(write_off(surface, folder.path() / "x.off"), std::invalid_argument);
}

/// Triangles as STL corner triples, for the STL writers below.
std::vector<std::array<float, 3>> corners_of(const SurfaceMesh& surface) {
  std::vector<std::array<float, 3>> corners;
  for (const Index node : surface.triangles) {
    const auto p = test::node_position(surface.positions, node);
    corners.push_back({static_cast<float>(p[0]), static_cast<float>(p[1]), static_cast<float>(p[2])});
  }
  return corners;
}

void expect_welded_box(const SurfaceMesh& read, const SurfaceMesh& written) {
  const std::set<Index> used_nodes(written.triangles.begin(), written.triangles.end());
  EXPECT_EQ(read.node_count(), static_cast<Index>(used_nodes.size()));  // welded: shared corners merged
  EXPECT_EQ(read.triangle_count(), written.triangle_count());
  EXPECT_TRUE(is_closed_and_oriented(read));
  EXPECT_NEAR(enclosed_volume(read), 0.3 * 0.2 * 0.1, 1e-7);  // float32 coordinates
}

TEST(ReadStl, ReadsAsciiAndWeldsVertices) {
  const SurfaceMesh surface = sample_surface();
  const auto corners = corners_of(surface);
  std::ostringstream stl;
  stl << "solid box\n";
  for (std::size_t c = 0; c < corners.size(); c += 3) {
    // Normals are ignored (recomputed), even unparsable ones some exporters write.
    stl << (c == 0 ? "  facet normal nan nan nan\n" : "  FACET NORMAL 0 0 -1\n") << "    outer loop\n";
    for (std::size_t k = c; k < c + 3; ++k) stl << "      vertex " << number(corners[k][0]) << " " << number(corners[k][1]) << " " << number(corners[k][2]) << "\n";
    stl << "    endloop\n  endfacet\n";
  }
  stl << "endsolid box\n";
  const ScratchFolder folder;
  expect_welded_box(read_surface_mesh(folder.write("box.stl", stl.str())), surface);
}

TEST(ReadStl, ReadsBinaryEvenWhenTheHeaderSaysSolid) {
  const SurfaceMesh surface = sample_surface();
  const auto corners = corners_of(surface);
  std::string bytes = "solid but binary";
  bytes.resize(80, ' ');
  const auto count = static_cast<std::uint32_t>(corners.size() / 3);
  bytes.append(reinterpret_cast<const char*>(&count), 4);
  for (std::size_t c = 0; c < corners.size(); c += 3) {
    const std::array<float, 3> normal{0, 0, 0};
    bytes.append(reinterpret_cast<const char*>(normal.data()), 12);
    for (std::size_t k = c; k < c + 3; ++k) bytes.append(reinterpret_cast<const char*>(corners[k].data()), 12);
    bytes.append(2, '\0');
  }
  const ScratchFolder folder;
  expect_welded_box(read_surface_mesh(folder.write("box.stl", bytes)), surface);
}

TEST(ReadObj, HandlesSlashesNegativeIndicesAndPolygons) {
  const std::string obj =
      "# a unit square pyramid\nmtllib x.mtl\nv 0 0 0\nv 1 0 0 0.5 0.5 0.5\nv 1 1 0\nv 0 1 0\nv 0.5 0.5 1 1.0\nvt 0 0\nvn 0 0 1\n"
      "g pyramid\ns off\nf 1/1/1 4//1 3 2\nf 1 2 5\nf 2/1 3/1 5/1\nf -3 -2 -1\nf 4 1 5\n";
  const ScratchFolder folder;
  const SurfaceMesh surface = read_surface_mesh(folder.write("pyramid.obj", obj));
  EXPECT_EQ(surface.node_count(), 5);
  EXPECT_EQ(surface.triangle_count(), 6);  // the square base fanned into two
  EXPECT_TRUE(is_closed_and_oriented(surface));
  EXPECT_NEAR(enclosed_volume(surface), 1.0 / 3.0, 1e-15);
}

TEST(ReadOff, HandlesCountsOnTheKeywordLineCommentsAndColours) {
  const std::string off = "OFF 4 4 6\n# tet\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1 255 0 0\n3 0 1 3\n3 0 3 2\n3 1 2 3\n";
  const ScratchFolder folder;
  const SurfaceMesh surface = read_surface_mesh(folder.write("tet.off", off));
  EXPECT_EQ(surface.triangle_count(), 4);
  EXPECT_NEAR(enclosed_volume(surface), 1.0 / 6.0, 1e-15);
}

// ---------------------------------------------------------------------------------------------
// Malformed input: every case must name file:line and the problem.

struct MalformedCase {
  const char* name;
  std::vector<std::pair<std::string, std::string>> files;  ///< name, contents; the first is read
  bool surface;                                            ///< read_surface_mesh, else read_tet_mesh
  std::string reported_file;                               ///< the file named in the message
  std::int64_t line;                                       ///< 0: the message names the file only
  std::string fragment;                                    ///< part of the problem text
};

std::ostream& operator<<(std::ostream& out, const MalformedCase& c) { return out << c.name; }

const std::string tet_ele = "1 4 0\n0 0 1 2 3\n";
const std::string tet_node = "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n";
const std::string msh22_head = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n";
const std::string msh22_nodes = "$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n";
const std::string msh41_head = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n";
const std::string medit_head = "MeshVersionFormatted 1\nDimension 3\n";
const std::string medit_vertices = "Vertices\n4\n0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n";
const std::string stl_facet_start = "solid s\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n";

/// A binary STL of one triangle whose first corner has coordinate x = `x`.
std::string one_triangle_binary_stl(float x) {
  std::string bytes(80, ' ');
  const std::uint32_t count = 1;
  bytes.append(reinterpret_cast<const char*>(&count), 4);
  const std::array<float, 12> values{0, 0, 1, x, 0, 0, 1, 0, 0, 0, 1, 0};
  bytes.append(reinterpret_cast<const char*>(values.data()), sizeof values);
  return bytes.append(2, '\0');
}

const std::vector<MalformedCase> malformed_cases = {
    // TetGen
    {"NodeDimension2", {{"a.node", "4 2 0 0\n"}, {"a.ele", tet_ele}}, false, "a.node", 1, "2 is out of range"},
    {"NodeBadCoordinate", {{"a.node", "4 3 0 0\n0 0 0 0\n1 1 abc 0\n"}, {"a.ele", tet_ele}}, false, "a.node", 3, "'abc' is not a number"},
    {"NodeMissingCoordinate", {{"a.node", "4 3 0 0\n0 0 0\n1 1 0 0\n"}, {"a.ele", tet_ele}}, false, "a.node", 2, "line ends early"},
    {"NodeNotConsecutive", {{"a.node", "4 3 0 0\n0 0 0 0\n5 1 0 0\n"}, {"a.ele", tet_ele}}, false, "a.node", 3, "point number 5"},
    {"NodeFirstNumber2", {{"a.node", "4 3 0 0\n2 0 0 0\n"}, {"a.ele", tet_ele}}, false, "a.node", 2, "first point number 2"},
    {"NodeFileEndsEarly", {{"a.node", "5 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n"}, {"a.ele", tet_ele}}, false, "a.node", 5, "the file ends"},
    {"NodeUndeclaredMarker", {{"a.node", "4 3 0 0\n0 0 0 0 1\n"}, {"a.ele", tet_ele}}, false, "a.node", 2, "unexpected '1'"},
    {"NodeNaN", {{"a.node", "4 3 0 0\n0 0 nan 0\n"}, {"a.ele", tet_ele}}, false, "a.node", 2, "'nan' is not finite"},
    {"NodeExtraLine", {{"a.node", tet_node + "4 1 1 1\n"}, {"a.ele", tet_ele}}, false, "a.node", 6, "an extra line"},
    {"EleIndexOutOfRange", {{"a.ele", "1 4 0\n# c\n0 0 1 2 9\n"}, {"a.node", tet_node}}, false, "a.ele", 3, "9 is out of range"},
    {"EleFiveNodesPerTet", {{"a.node", tet_node}, {"a.ele", "1 5 0\n"}}, false, "a.ele", 1, "5 nodes per tet"},
    {"EleMissing", {{"a.node", tet_node}}, false, "a.ele", 0, "cannot open"},
    {"EmptyNode", {{"a.node", "\n# nothing\n"}, {"a.ele", tet_ele}}, false, "a.node", 2, "the file ends"},
    // Gmsh
    {"GmshBinary", {{"a.msh", "$MeshFormat\n2.2 1 8\n\x01\x00\x00\x00\n$EndMeshFormat\n"}}, false, "a.msh", 2, "binary .msh is not supported"},
    {"GmshVersion3", {{"a.msh", "$MeshFormat\n3.0 0 8\n$EndMeshFormat\n"}}, false, "a.msh", 2, "version '3.0'"},
    {"GmshNodesFirst", {{"a.msh", msh22_nodes}}, false, "a.msh", 1, "before $MeshFormat"},
    {"GmshBadNodeLine", {{"a.msh", msh22_head + "$Nodes\n2\n1 0 0 0\n2 1 0 x\n$EndNodes\n"}}, false, "a.msh", 7, "'x' is not a number"},
    {"GmshUnknownNodeTag", {{"a.msh", msh22_head + msh22_nodes + "$Elements\n2\n1 4 0 1 2 3 4\n2 4 0 1 2 3 99\n$EndElements\n"}}, false, "a.msh", 14, "node tag 99 is not defined"},
    {"GmshMissingEndNodes", {{"a.msh", msh22_head + "$Nodes\n1\n1 0 0 0\n$EndNode\n"}}, false, "a.msh", 7, "expected $EndNodes"},
    {"GmshDuplicateNodeTag", {{"a.msh", msh22_head + "$Nodes\n2\n1 0 0 0\n1 1 0 0\n$EndNodes\n"}}, false, "a.msh", 7, "defined twice"},
    {"GmshNoTets", {{"a.msh", msh22_head + msh22_nodes + "$Elements\n1\n1 2 0 1 2 3\n$EndElements\n"}}, false, "a.msh", 0, "no tetrahedra"},
    {"GmshUnterminatedSection", {{"a.msh", msh41_head + "$Entities\n0 0 0 1\n"}}, false, "a.msh", 5, "inside $Entities"},
    {"Gmsh41BlockTooLarge", {{"a.msh", msh41_head + "$Nodes\n1 4 1 4\n3 1 0 5\n"}}, false, "a.msh", 6, "5 is out of range"},
    {"Gmsh41CountMismatch", {{"a.msh", msh41_head + "$Nodes\n1 5 1 5\n3 1 0 1\n1\n0 0 0\n$EndNodes\n"}}, false, "a.msh", 8, "1 nodes in the blocks"},
    {"Gmsh41ElementLineShort", {{"a.msh", msh41_head + "$Nodes\n1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n$EndNodes\n$Elements\n1 1 1 1\n3 1 4 1\n1 1 2 3\n$EndElements\n"}}, false, "a.msh", 19, "line ends early"},
    // Medit
    {"MeditBinary", {{"a.mesh", "MeshVersionUnformatted 1\n"}}, false, "a.mesh", 1, "binary Medit mesh"},
    {"MeditDimension2", {{"a.mesh", "MeshVersionFormatted 1\nDimension\n2\n"}}, false, "a.mesh", 3, "2 is out of range"},
    {"MeditVertexWithoutReference", {{"a.mesh", medit_head + "Vertices\n1\n0 0 0\n"}}, false, "a.mesh", 5, "line ends early"},
    {"MeditZeroIndex", {{"a.mesh", medit_head + medit_vertices + "Tetrahedra\n1\n0 1 2 3 0\nEnd\n"}}, false, "a.mesh", 11, "0 is out of range"},
    {"MeditIndexPastVertices", {{"a.mesh", medit_head + medit_vertices + "Tetrahedra\n2\n1 2 3 4 0\n1 2 3 5 0\nEnd\n"}}, false, "a.mesh", 12, "vertex 5"},
    {"MeditNoTetrahedra", {{"a.mesh", medit_head + medit_vertices + "End\n"}}, false, "a.mesh", 0, "no Tetrahedra"},
    // OBJ
    {"ObjTwoCornerFace", {{"a.obj", "v 0 0 0\nv 1 0 0\nf 1 2\n"}}, true, "a.obj", 3, "a face with 2 corners"},
    {"ObjUndefinedVertex", {{"a.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 5\n"}}, true, "a.obj", 4, "vertex 5 is not defined yet"},
    {"ObjCommaDecimal", {{"a.obj", "# x\nv 0 1,5 0\n"}}, true, "a.obj", 2, "'1,5' is not a number"},
    {"ObjZeroIndex", {{"a.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n"}}, true, "a.obj", 4, "'0' is not a vertex reference"},
    {"ObjNoFaces", {{"a.obj", "v 0 0 0\n"}}, true, "a.obj", 0, "no faces"},
    // OFF
    {"OffBadKeyword", {{"a.off", "OF\n"}}, true, "a.off", 1, "'OF'"},
    {"OffIndexOutOfRange", {{"a.off", "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n"}}, true, "a.off", 6, "3 is out of range"},
    {"OffExtraLine", {{"a.off", "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n3 0 1 2\n"}}, true, "a.off", 7, "an extra line"},
    {"OffBinary", {{"a.off", "OFF BINARY\n"}}, true, "a.off", 1, "binary OFF"},
    // STL
    {"StlMissingEndloop", {{"a.stl", stl_facet_start + "vertex 0 1 0\nendfacet\n"}}, true, "a.stl", 7, "'endloop'"},
    {"StlTwoCoordinates", {{"a.stl", stl_facet_start + "vertex 0 1\n"}}, true, "a.stl", 6, "line ends early"},
    {"StlEndsInsideSolid", {{"a.stl", stl_facet_start + "vertex 0 1 0\nendloop\nendfacet\n"}}, true, "a.stl", 8, "inside a solid"},
    {"StlBinaryNaN", {{"a.stl", one_triangle_binary_stl(std::numeric_limits<float>::quiet_NaN())}}, true, "a.stl", 0, "binary triangle 1 has a non-finite coordinate"},
    {"StlBinaryEmpty", {{"a.stl", std::string(80, ' ') + std::string(4, '\0')}}, true, "a.stl", 0, "no facets"},
    {"StlNeitherAsciiNorBinary", {{"a.stl", "hello\n"}}, true, "a.stl", 1, "'solid <name>'"},
    // D3: a count the remaining bytes cannot hold (at least 2 bytes a line) fails on the line
    // that announces it, before anything is reserved for it.
    {"NodeHugePointCount", {{"a.node", "500000000 3 0 0\n1 0 0 0\n2 1 0 0\n"}, {"a.ele", tet_ele}}, false, "a.node", 1,
     "the file ends early: it announces 500000000 point lines but its 16 remaining bytes hold at most 8 lines"},
    {"EleHugeTetCount", {{"a.ele", "500000000 4 0\n0 0 1 2 3\n"}, {"a.node", tet_node}}, false, "a.ele", 1,
     "the file ends early: it announces 500000000 tet lines"},
    {"MeditHugeVertexCount", {{"a.mesh", medit_head + "Vertices\n500000000\n0 0 0 0\nEnd\n"}}, false, "a.mesh", 4,
     "the file ends early: it announces 500000000 vertex lines"},
    {"MeditHugeTetCount", {{"a.mesh", medit_head + medit_vertices + "Tetrahedra 500000000\n1 2 3 4 0\nEnd\n"}}, false, "a.mesh", 9,
     "the file ends early: it announces 500000000 tetrahedron lines"},
    {"Gmsh41HugeNodeBlock", {{"a.msh", msh41_head + "$Nodes\n1 500000000 1 500000000\n3 1 0 500000000\n1\n"}}, false, "a.msh", 6,
     "the file ends early: it announces 1000000000 lines of node tags and coordinates"},
    {"OffHugeVertexCount", {{"a.off", "OFF\n500000000 1 0\n0 0 0\n3 0 1 2\n"}}, true, "a.off", 2,
     "the file ends early: it announces 500000000 vertex lines"},
    // Dispatch
    {"UnknownTetExtension", {{"a.vtk", "x\n"}}, false, "a.vtk", 0, "unknown tet mesh extension '.vtk'"},
    {"UnknownSurfaceExtension", {{"a.ply", "x\n"}}, true, "a.ply", 0, "unknown surface mesh extension '.ply'"},
};

class MalformedMeshFile : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedMeshFile, ReportsFileLineAndProblem) {
  const MalformedCase& c = GetParam();
  const ScratchFolder folder;
  for (const auto& [name, contents] : c.files) folder.write(name, contents);
  const auto path = folder.path() / c.files.front().first;
  try {
    if (c.surface) {
      (void)read_surface_mesh(path);
    } else {
      (void)read_tet_mesh(path);
    }
    ADD_FAILURE() << "malformed input was accepted";
  } catch (const MeshFormatError& error) {
    const std::string reported = (folder.path() / c.reported_file).string();
    const std::string prefix = reported + (c.line > 0 ? ":" + std::to_string(c.line) : std::string()) + ": ";
    const std::string message = error.what();
    EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
    EXPECT_EQ(error.line(), c.line) << message;
    EXPECT_EQ(error.file(), reported);
    EXPECT_NE(message.find(c.fragment), std::string::npos) << message;
    EXPECT_NE(message.find("; expected "), std::string::npos) << message;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, MalformedMeshFile, ::testing::ValuesIn(malformed_cases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace cholsim::fem
