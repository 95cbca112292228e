// Seed 001 §3.2, §5, §7.1: the mesh of one level — hanging nodes exactly at the edge
// midpoints and face centres of coarser kept elements (checked against a brute-force search),
// W reproducing affine fields, scatter the exact transpose of gather, interpolation
// continuous across coarse–fine faces, point location.
#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <set>

#include "fem/mesh/mesh_io.hpp"
#include "octree_test_helpers.hpp"

namespace cholsim::fem::octree {
namespace {

using GridPoint = std::array<std::int64_t, 3>;

GridPoint corner_of(const Octant& o, int a) {
  const auto p = corner_point(o, a);
  return {p[0], p[1], p[2]};
}

/// Where p sits relative to the closed box of o: how many coordinates lie strictly inside
/// o's range (0: corner, 1: inside an edge, 2: inside a face, 3: interior), or −1 outside.
int open_axes(const Octant& o, const GridPoint& p) {
  const std::array<std::int64_t, 3> low{o.x, o.y, o.z};
  const std::int64_t size = octant_size(o);
  int open = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    if (p[i] < low[i] || p[i] > low[i] + size) return -1;
    open += p[i] > low[i] && p[i] < low[i] + size;
  }
  return open;
}

/// The meshes every test below runs on: random trees (kept subsets with holes) at several
/// coarsenings, and the armadillo at 32 cells.
std::vector<OctreeMesh> test_meshes() {
  std::vector<OctreeMesh> meshes;
  for (unsigned seed = 11; seed <= 13; ++seed) {
    const BalancedOctree tree = test::random_balanced_octree(4, 3, 0.7, seed);
    for (int level = 0; level <= 2; ++level) meshes.push_back(make_octree_mesh(tree, level, 1));
  }
  const BalancedOctree armadillo = build_balanced_octree(read_surface_mesh(test::kArmadillo), {.cells_across = 32, .threads = 2});
  for (int level = 0; level <= 1; ++level) meshes.push_back(make_octree_mesh(armadillo, level, 2));
  return meshes;
}

const std::vector<OctreeMesh>& meshes() {
  static const std::vector<OctreeMesh> all = test_meshes();
  return all;
}

TEST(OctreeMesh, HangingNodesAreExactlyCornersInsideEdgesOrFacesOfKeptElements) {
  // Brute force on the random trees: every element against every element corner.
  for (std::size_t m = 0; m < 9; ++m) {
    const OctreeMesh& mesh = meshes()[m];
    std::size_t hanging_seen = 0;
    for (Index e = 0; e < mesh.element_count(); ++e) {
      const Octant& small = mesh.elements[std::size_t(e)];
      for (int a = 0; a < 8; ++a) {
        const GridPoint p = corner_of(small, a);
        bool inside_edge_or_face = false;
        for (const Octant& big : mesh.elements) {
          const int open = open_axes(big, p);
          if (open != 1 && open != 2) continue;
          inside_edge_or_face = true;
          // Balance: only midpoints of edges and centres of faces, of elements one level up.
          EXPECT_EQ(big.level, small.level + 1);
          const std::int64_t half = octant_size(small);
          EXPECT_TRUE((p[0] - big.x) % half == 0 && (p[1] - big.y) % half == 0 && (p[2] - big.z) % half == 0);
          EXPECT_EQ(open, std::popcount(unsigned(a ^ child_number(small)))) << "edge midpoint vs face centre";
        }
        EXPECT_EQ(inside_edge_or_face, ((mesh.hanging[std::size_t(e)] >> a) & 1) != 0) << "mesh " << m << " element " << e << " corner " << a;
        hanging_seen += inside_edge_or_face;
      }
    }
    if (mesh.min_level == 0) {
      EXPECT_GT(hanging_seen, 0u) << "mesh " << m << " has hanging nodes to test";
    }
  }
}

TEST(OctreeMesh, EveryHangingCaseOccursInTheRandomTrees) {
  // Per (edge or face) case and per corner of the element, that some mesh exercises it.
  std::set<std::pair<int, int>> cases;  // (|a xor child|, a)
  for (std::size_t m = 0; m < 9; ++m) {
    const OctreeMesh& mesh = meshes()[m];
    for (Index e = 0; e < mesh.element_count(); ++e) {
      for (int a = 0; a < 8; ++a) {
        if ((mesh.hanging[std::size_t(e)] >> a) & 1) cases.insert({std::popcount(unsigned(a ^ child_number(mesh.elements[std::size_t(e)]))), a});
      }
    }
  }
  EXPECT_EQ(cases.size(), 16u) << "8 corners × {edge, face}";
}

TEST(OctreeMesh, NodesAreTheNonHangingCornersAndConformingNodesAreNodes) {
  for (const OctreeMesh& mesh : meshes()) {
    std::set<GridPoint> corners, hanging_points;
    for (Index e = 0; e < mesh.element_count(); ++e) {
      const Octant& o = mesh.elements[std::size_t(e)];
      for (int a = 0; a < 8; ++a) {
        const GridPoint p = corner_of(o, a);
        ((mesh.hanging[std::size_t(e)] >> a) & 1 ? hanging_points : corners).insert(p);
        const auto& node = mesh.node_grid[std::size_t(mesh.conforming_nodes[std::size_t(e)][std::size_t(a)])];
        const GridPoint q{node[0], node[1], node[2]};
        if (!((mesh.hanging[std::size_t(e)] >> a) & 1)) {
          EXPECT_EQ(q, p);
        } else {  // the far end of the coarse edge or face diagonal from the parent's corner
          const GridPoint c = corner_of(o, child_number(o));
          EXPECT_EQ(q, (GridPoint{2 * p[0] - c[0], 2 * p[1] - c[1], 2 * p[2] - c[2]}));
        }
      }
    }
    for (const GridPoint& p : hanging_points) EXPECT_FALSE(corners.contains(p)) << "a point hangs in one element only";
    EXPECT_EQ(corners.size(), std::size_t(mesh.node_count()));
    for (Index n = 1; n < mesh.node_count(); ++n) {
      const auto& a = mesh.node_grid[std::size_t(n - 1)];
      const auto& b = mesh.node_grid[std::size_t(n)];
      EXPECT_LT(morton_key(a[0], a[1], a[2]), morton_key(b[0], b[1], b[2]));
    }
    for (const Octant& o : mesh.elements) EXPECT_GE(o.level, mesh.min_level);
  }
}

std::vector<double> random_nodal(Index nodes, std::mt19937& random) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> v(3 * std::size_t(nodes));
  for (double& x : v) x = value(random);
  return v;
}

Vec3 affine_field(const Vec3& x) {
  return {1.5 * x.x - 0.25 * x.y + 2.0 * x.z + 0.5, -x.x + 0.75 * x.y + 3.0, 0.125 * x.x + x.y - 2.5 * x.z - 1.0};
}

TEST(OctreeMesh, GatherReproducesAffineFieldsAtPrimaryNodes) {
  for (const OctreeMesh& mesh : meshes()) {
    std::vector<double> nodal(3 * std::size_t(mesh.node_count()));
    for (Index n = 0; n < mesh.node_count(); ++n) {
      const Vec3 v = affine_field(mesh.node_position(n));
      for (int i = 0; i < 3; ++i) nodal[3 * std::size_t(n) + std::size_t(i)] = v[i];
    }
    std::array<Vec3, 8> primary;
    for (Index e = 0; e < mesh.element_count(); ++e) {
      mesh.gather(e, nodal, primary);
      for (int a = 0; a < 8; ++a) {
        const Vec3 corner = mesh.element_origin(e) + mesh.element_size(e) * Vec3{double(a & 1), double((a >> 1) & 1), double(a >> 2)};
        const Vec3 expected = affine_field(corner);
        for (int i = 0; i < 3; ++i) ASSERT_NEAR(primary[std::size_t(a)][i], expected[i], 1e-14 * (1.0 + std::abs(expected[i])));
      }
    }
  }
}

TEST(OctreeMesh, ScatterIsTheTransposeOfGatherAndMatchesW) {
  std::mt19937 random(17);
  for (const OctreeMesh& mesh : meshes()) {
    const std::vector<double> u = random_nodal(mesh.node_count(), random);
    const std::vector<double> v = random_nodal(8 * mesh.element_count(), random);
    std::vector<double> scattered(u.size(), 0.0);
    double gathered_dot_v = 0.0;
    for (Index e = 0; e < mesh.element_count(); ++e) {
      std::array<Vec3, 8> gathered, primary;
      mesh.gather(e, u, gathered);
      const auto w = mesh.interpolation_matrix(e);
      for (std::size_t a = 0; a < 8; ++a) {
        primary[a] = {v[24 * std::size_t(e) + 3 * a], v[24 * std::size_t(e) + 3 * a + 1], v[24 * std::size_t(e) + 3 * a + 2]};
        gathered_dot_v += linalg::dot(gathered[a], primary[a]);
        // Row a of W applied to the conforming nodes gives the same primary value.
        Vec3 by_matrix;
        double row_sum = 0.0;
        for (std::size_t b = 0; b < 8; ++b) {
          const auto node = 3 * std::size_t(mesh.conforming_nodes[std::size_t(e)][b]);
          by_matrix += w[a][b] * Vec3{u[node], u[node + 1], u[node + 2]};
          row_sum += w[a][b];
        }
        EXPECT_DOUBLE_EQ(row_sum, 1.0);
        for (int i = 0; i < 3; ++i) EXPECT_NEAR(by_matrix[i], gathered[a][i], 1e-15);
      }
      mesh.scatter_add(e, primary, scattered);
    }
    double u_dot_scattered = 0.0;
    for (std::size_t k = 0; k < u.size(); ++k) u_dot_scattered += u[k] * scattered[k];
    EXPECT_NEAR(gathered_dot_v, u_dot_scattered, 1e-12 * (1.0 + std::abs(gathered_dot_v)));
  }
}

/// Σ_b Ñ_b(ξ) ũ_b of component 0 of a nodal field at p, from p's element.
double interpolate(const OctreeMesh& mesh, const std::vector<double>& nodal, const ElementPoint& p) {
  const std::array<double, 8> w = conforming_weights(mesh, p);
  double value = 0.0;
  for (std::size_t b = 0; b < 8; ++b) value += w[b] * nodal[3 * std::size_t(mesh.conforming_nodes[std::size_t(p.element)][b])];
  return value;
}

TEST(OctreeMesh, InterpolationIsContinuousAcrossFacesBetweenElements) {
  // A random (not affine) field: continuity comes from the conforming nodes alone.
  std::mt19937 random(23);
  std::uniform_real_distribution<double> along(0.0, 1.0);
  for (const OctreeMesh& mesh : meshes()) {
    const std::vector<double> nodal = random_nodal(mesh.node_count(), random);
    Index coarse_fine_faces = 0;
    for (Index e = 0; e < mesh.element_count(); ++e) {
      const Octant& o = mesh.elements[std::size_t(e)];
      const double size = octant_size(o);
      for (int axis = 0; axis < 3; ++axis) {
        for (int sample = 0; sample < 3; ++sample) {
          // A point on e's upper face normal to `axis`, and the element across it.
          Vec3 xi{along(random), along(random), along(random)};
          xi[axis] = 1.0;
          const Vec3 grid = Vec3{double(o.x), double(o.y), double(o.z)} + size * xi;
          std::array<std::uint32_t, 3> cell{std::uint32_t(std::floor(grid.x)), std::uint32_t(std::floor(grid.y)), std::uint32_t(std::floor(grid.z))};
          cell[std::size_t(axis)] = std::uint32_t(grid[axis]);
          if (cell[std::size_t(axis)] >= octant_size(mesh.depth)) continue;
          const std::optional<Index> across = element_containing_cell(mesh, cell);
          if (!across) continue;
          const Octant& n = mesh.elements[std::size_t(*across)];
          const Vec3 xi_across = (grid - Vec3{double(n.x), double(n.y), double(n.z)}) / double(octant_size(n));
          coarse_fine_faces += n.level != o.level;
          EXPECT_NEAR(interpolate(mesh, nodal, {e, xi}), interpolate(mesh, nodal, {*across, xi_across}), 1e-13)
              << "element " << e << " level " << int(o.level) << " vs " << *across << " level " << int(n.level);
        }
      }
    }
    if (mesh.min_level == 0) {
      EXPECT_GT(coarse_fine_faces, 0);
    }
  }
}

TEST(OctreeMesh, LocatePointFindsTheElementHoldingThePoint) {
  std::mt19937 random(29);
  for (const OctreeMesh& mesh : meshes()) {
    const double cube = mesh.cell_size * octant_size(mesh.depth);
    std::uniform_real_distribution<double> coordinate(-0.05 * cube, 1.05 * cube);
    for (int trial = 0; trial < 200; ++trial) {
      const Vec3 world = mesh.origin + Vec3{coordinate(random), coordinate(random), coordinate(random)};
      const std::optional<ElementPoint> found = locate_point(mesh, world);
      bool in_some_element = false;
      for (Index e = 0; e < mesh.element_count(); ++e) {
        const Vec3 xi = (world - mesh.element_origin(e)) / mesh.element_size(e);
        in_some_element = in_some_element || (xi.x >= 0 && xi.x <= 1 && xi.y >= 0 && xi.y <= 1 && xi.z >= 0 && xi.z <= 1);
      }
      ASSERT_EQ(found.has_value(), in_some_element);
      if (!found) continue;
      const Vec3 back = mesh.element_origin(found->element) + mesh.element_size(found->element) * found->xi;
      EXPECT_LT(linalg::norm(back - world), 1e-12 * cube);
      for (int i = 0; i < 3; ++i) {
        EXPECT_GE(found->xi[i], 0.0);
        EXPECT_LE(found->xi[i], 1.0);
      }
    }
    // Nodes lie on element boundaries, where rounding in world coordinates must not lose them.
    for (Index n = 0; n < mesh.node_count(); ++n) {
      const std::optional<ElementPoint> at_node = locate_point(mesh, mesh.node_position(n));
      ASSERT_TRUE(at_node.has_value()) << "node " << n;
      for (int i = 0; i < 3; ++i) {
        const double scaled = 2.0 * at_node->xi[i];  // a node is a corner or an edge/face midpoint
        EXPECT_NEAR(scaled, std::round(scaled), 1e-9);
      }
    }
  }
}

TEST(OctreeMesh, MemoryStaysLeanAndBadLevelsThrow) {
  const OctreeMesh& mesh = meshes().back();
  const double per_element = double(mesh.memory_bytes()) / mesh.element_count();
  EXPECT_LT(per_element, 8 + 32 + 1 + 2 * 6 + 4);  // octant, 8 conforming nodes, hanging byte, < 2 nodes each
  const BalancedOctree tree = test::random_balanced_octree(3, 1, 1.0, 1);
  EXPECT_THROW(make_octree_mesh(tree, -1), std::invalid_argument);
  EXPECT_THROW(make_octree_mesh(tree, 4), std::invalid_argument);
  EXPECT_EQ(make_octree_mesh(tree, 3).element_count(), 1);
}

}  // namespace
}  // namespace cholsim::fem::octree
