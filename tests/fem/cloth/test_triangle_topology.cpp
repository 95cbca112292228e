#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "fem/cloth/triangle_topology.hpp"

namespace cholsim::fem::cloth {
namespace {

using Kind = FeatureAttachment::Kind;

ClothMesh unit_sheet(int cells_u, int cells_v) {
  return make_rectangle_cloth(2.0, 1.0, cells_u, cells_v, {0.5, -1.0, 0.2}, {1.0, 0.0, 0.0}, {0.0, 0.6, 0.8});
}

/// Distinct per-vertex velocities, so that interpolation errors show.
void fill_velocities(ClothMesh& cloth, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (double& v : cloth.velocities) v = value(random);
  for (double& v : cloth.material_velocities) v = value(random);
}

double total_material_area(const ClothMesh& cloth) {
  double area = 0.0;
  for (Index t = 0; t < cloth.triangle_count(); ++t) area += material_area(cloth, t);
  return area;
}

/// The incident-triangle sets of `topology` equal those of a topology rebuilt from scratch.
void expect_adjacency_current(const TriangleTopology& topology) {
  ClothMesh copy = topology.cloth();
  const TriangleTopology rebuilt(copy);
  for (Index v = 0; v < copy.vertex_count(); ++v) {
    const auto kept = topology.incident_triangles(v);
    const auto fresh = rebuilt.incident_triangles(v);
    ASSERT_EQ(std::set<Index>(kept.begin(), kept.end()), std::set<Index>(fresh.begin(), fresh.end())) << "vertex " << v;
  }
}

TEST(TriangleTopology, CountsEdgesBorderAndCornersOfARectangle) {
  ClothMesh cloth = unit_sheet(5, 3);
  const TriangleTopology topology(cloth);
  // A grid of 5 × 3 cells: horizontal, vertical and one diagonal edge per cell.
  EXPECT_EQ(topology.edges().size(), static_cast<std::size_t>(5 * 4 + 3 * 6 + 15));
  EXPECT_EQ(euler_characteristic(topology), 1);
  const std::vector<unsigned char> border = border_vertices(cloth);
  int corners = 0;
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    EXPECT_EQ(topology.is_border_vertex(v), border[v] != 0) << v;
    if (topology.is_border_corner(v)) {
      ++corners;
      const double u = cloth.material[2 * v], w = cloth.material[2 * v + 1];
      EXPECT_TRUE((u == 0.0 || u == 2.0) && (w == 0.0 || w == 1.0)) << v;
    }
  }
  EXPECT_EQ(corners, 4);
}

TEST(TriangleTopology, SplitEdgeInterpolatesEveryFieldAndLogsTheParents) {
  ClothMesh cloth = unit_sheet(3, 3);
  fill_velocities(cloth, 1);
  TriangleTopology topology(cloth);
  const Index a = 5, b = 6;  // an interior edge of the grid
  ASSERT_FALSE(topology.is_border_edge(a, b));
  const ClothMesh before = cloth;
  const SplitResult split = topology.split_edge(a, b, 0.3);
  ASSERT_EQ(split.status, EditStatus::done);
  EXPECT_EQ(cloth.triangle_count(), before.triangle_count() + 2);
  const Index p = split.vertex;
  for (int k = 0; k < 3; ++k) {
    EXPECT_DOUBLE_EQ(cloth.positions[3 * p + k], 0.7 * before.positions[3 * a + k] + 0.3 * before.positions[3 * b + k]);
    EXPECT_DOUBLE_EQ(cloth.velocities[3 * p + k],
                     0.7 * before.velocities[3 * a + k] + 0.3 * before.velocities[3 * b + k]);
  }
  for (int k = 0; k < 2; ++k) {
    EXPECT_NEAR(cloth.material[2 * p + k], 0.7 * before.material[2 * a + k] + 0.3 * before.material[2 * b + k], 1e-15);
    EXPECT_DOUBLE_EQ(cloth.material_velocities[2 * p + k],
                     0.7 * before.material_velocities[2 * a + k] + 0.3 * before.material_velocities[2 * b + k]);
  }
  EXPECT_EQ(cloth.attachments[p].kind, Kind::none);
  EXPECT_FALSE(topology.is_edge(a, b));
  EXPECT_TRUE(topology.is_edge(a, p) && topology.is_edge(p, b));
  ASSERT_EQ(topology.created_vertices().size(), 1u);
  const VertexOrigin& origin = topology.created_vertices().front();
  EXPECT_EQ(origin.vertex, p);
  EXPECT_EQ(origin.operation, VertexOrigin::Operation::edge_split);
  EXPECT_EQ(origin.parents[0], a);
  EXPECT_EQ(origin.parents[1], b);
  EXPECT_DOUBLE_EQ(origin.weights[1], 0.3);
  EXPECT_NO_THROW(validate_cloth(cloth));
  EXPECT_NEAR(total_material_area(cloth), 2.0, 1e-14);
  expect_adjacency_current(topology);
}

TEST(TriangleTopology, SplitBorderEdgeAndFaceKeepTheMeshValid) {
  ClothMesh cloth = unit_sheet(3, 2);
  TriangleTopology topology(cloth);
  const Index triangles = cloth.triangle_count();
  ASSERT_TRUE(topology.is_border_edge(0, 1));
  const SplitResult border = topology.split_edge(0, 1, 0.5);
  ASSERT_EQ(border.status, EditStatus::done);
  EXPECT_EQ(cloth.triangle_count(), triangles + 1);
  EXPECT_TRUE(topology.is_border_vertex(border.vertex));
  EXPECT_FALSE(topology.is_border_corner(border.vertex));

  const SplitResult face = topology.split_face(2, {0.2, 0.5, 0.3});
  ASSERT_EQ(face.status, EditStatus::done);
  EXPECT_EQ(cloth.triangle_count(), triangles + 3);
  EXPECT_EQ(topology.created_vertices().back().operation, VertexOrigin::Operation::face_split);
  EXPECT_NO_THROW(validate_cloth(cloth));
  EXPECT_EQ(euler_characteristic(topology), 1);
  EXPECT_NEAR(total_material_area(cloth), 2.0, 1e-14);
  expect_adjacency_current(topology);

  EXPECT_THROW(topology.split_edge(0, border.vertex, 1.0), std::invalid_argument);
  EXPECT_THROW(topology.split_face(0, {0.5, 0.6, -0.1}), std::invalid_argument);
  const ClothMesh before = cloth;
  EXPECT_EQ(topology.split_edge(0, 7, 0.5).status, EditStatus::not_an_edge);
  EXPECT_EQ(topology.split_face(0, {1.0 - 2e-13, 1e-13, 1e-13}).status, EditStatus::degenerate_triangle);
  EXPECT_TRUE(cloth == before);
}

TEST(TriangleTopology, CollapseRefusalsNameTheReasonAndChangeNothing) {
  ClothMesh cloth = unit_sheet(4, 4);
  TriangleTopology topology(cloth);
  // Grid vertex (i, j) is j * 5 + i.
  const auto grid = [](int i, int j) { return static_cast<Index>(5 * j + i); };
  const ClothMesh before = cloth;
  EXPECT_EQ(topology.collapse_edge(grid(0, 0), grid(1, 0)), EditStatus::protected_vertex);  // a cloth corner
  EXPECT_EQ(topology.collapse_edge(grid(1, 0), grid(1, 1)), EditStatus::changes_border);    // border vertex inward
  EXPECT_EQ(topology.collapse_edge(grid(0, 2), grid(2, 2)), EditStatus::not_an_edge);
  cloth.attachments[grid(2, 2)] = {Kind::edge, 0, 3};
  EXPECT_EQ(topology.collapse_edge(grid(2, 2), grid(2, 1)), EditStatus::protected_vertex);  // conformal onto free
  cloth.attachments[grid(2, 1)] = {Kind::edge, 0, 4};
  EXPECT_EQ(topology.collapse_edge(grid(2, 2), grid(2, 1)), EditStatus::protected_vertex);  // another feature
  cloth.attachments[grid(2, 1)] = {};
  cloth.attachments[grid(2, 2)] = {};
  // With (2, 2) moved past the edge (0, 2)–(1, 3), collapsing (1, 2) onto it turns the
  // triangle (0, 2), (1, 2), (1, 3) over.
  cloth.material[2 * grid(2, 2)] = 0.2;
  cloth.material[2 * grid(2, 2) + 1] = 0.85;
  EXPECT_EQ(topology.collapse_edge(grid(1, 2), grid(2, 2)), EditStatus::inverts_triangle);
  cloth.material = before.material;
  EXPECT_TRUE(cloth == before);

  // Conformal onto conformal of the same feature, and along the border, are allowed.
  cloth.attachments[grid(2, 2)] = {Kind::edge, 0, 3};
  cloth.attachments[grid(2, 1)] = {Kind::edge, 0, 3};
  EXPECT_EQ(topology.collapse_edge(grid(2, 2), grid(2, 1)), EditStatus::done);
  EXPECT_EQ(topology.collapse_edge(grid(1, 0), grid(2, 0)), EditStatus::done);
  EXPECT_NO_THROW(validate_cloth(cloth));
  EXPECT_EQ(euler_characteristic(topology), 1);
  EXPECT_NEAR(total_material_area(cloth), 2.0, 1e-14);
  expect_adjacency_current(topology);
  const std::vector<Index> numbers = topology.compact();
  EXPECT_EQ(numbers[grid(2, 2)], -1);
  EXPECT_EQ(numbers[grid(1, 0)], -1);
  EXPECT_EQ(cloth.vertex_count(), before.vertex_count() - 2);
  EXPECT_NO_THROW(validate_cloth(cloth));
  EXPECT_EQ(euler_characteristic(TriangleTopology(cloth)), 1);
}

TEST(TriangleTopology, FlipRefusalsAndARoundTrip) {
  ClothMesh cloth = unit_sheet(2, 2);
  TriangleTopology topology(cloth);
  const ClothMesh before = cloth;
  EXPECT_EQ(topology.flip_edge(0, 1), EditStatus::border_edge);
  // Cell (0, 0) has the diagonal 0–4; its quad 0, 1, 4, 3 is a square: the flip gives 1–3.
  ASSERT_TRUE(topology.is_edge(0, 4));
  cloth.attachments[0] = {Kind::edge, 1, 0};
  cloth.attachments[4] = {Kind::edge, 1, 0};
  EXPECT_EQ(topology.flip_edge(0, 4), EditStatus::conformal_edge);
  cloth.attachments[0] = cloth.attachments[4] = {};
  cloth.material[2 * 4] = 0.3;  // vertex 4 moved inside the quad's corner: 0, 1, 4, 3 not convex
  cloth.material[2 * 4 + 1] = 0.15;
  EXPECT_EQ(topology.flip_edge(0, 4), EditStatus::not_convex);
  cloth.material = before.material;
  EXPECT_TRUE(cloth == before);

  ASSERT_EQ(topology.flip_edge(0, 4), EditStatus::done);
  EXPECT_TRUE(topology.is_edge(1, 3));
  EXPECT_FALSE(topology.is_edge(0, 4));
  EXPECT_NO_THROW(validate_cloth(cloth));
  ASSERT_EQ(topology.flip_edge(1, 3), EditStatus::done);
  std::multiset<std::set<Index>> triangles_before, triangles_after;
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    triangles_before.insert({before.triangles[3 * t], before.triangles[3 * t + 1], before.triangles[3 * t + 2]});
    triangles_after.insert({cloth.triangles[3 * t], cloth.triangles[3 * t + 1], cloth.triangles[3 * t + 2]});
  }
  EXPECT_EQ(triangles_before, triangles_after);
  expect_adjacency_current(topology);
}

/// Random splits, flips and collapses: every accepted operation keeps the cloth valid, the
/// Euler characteristic of a disk, the material area of the domain and the adjacency current;
/// every refused one leaves the cloth as it was.
void run_random_operations(ClothMesh& cloth, unsigned seed, int operations) {
  fill_velocities(cloth, seed);
  TriangleTopology topology(cloth);
  const double domain_area = cloth.material_width * cloth.material_height;
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int accepted = 0;
  for (int step = 0; step < operations; ++step) {
    const std::vector<MeshEdge> edges = topology.edges();
    const MeshEdge edge = edges[random() % edges.size()];
    const ClothMesh before = cloth;
    bool done = false;
    switch (random() % 4) {
      case 0: done = topology.split_edge(edge.a, edge.b, 0.05 + 0.9 * unit(random)).status == EditStatus::done; break;
      case 1: {
        const double w0 = 0.05 + 0.9 * unit(random), w1 = (1.0 - w0) * (0.05 + 0.9 * unit(random));
        const auto t = static_cast<Index>(random() % static_cast<unsigned>(cloth.triangle_count()));
        done = topology.split_face(t, {w0, w1, 1.0 - w0 - w1}).status == EditStatus::done;
        break;
      }
      case 2: done = topology.flip_edge(edge.a, edge.b) == EditStatus::done; break;
      default:
        done = (random() % 2 == 0 ? topology.collapse_edge(edge.a, edge.b) : topology.collapse_edge(edge.b, edge.a)) ==
               EditStatus::done;
    }
    if (!done) {
      ASSERT_TRUE(cloth == before) << "a refused operation changed the mesh at step " << step;
      continue;
    }
    ++accepted;
    ASSERT_NO_THROW(validate_cloth(cloth, topology.degenerate_area())) << "step " << step;
    ASSERT_EQ(euler_characteristic(topology), 1) << "step " << step;
    ASSERT_NEAR(total_material_area(cloth), domain_area, 1e-12 * domain_area) << "step " << step;
  }
  expect_adjacency_current(topology);
  EXPECT_GT(accepted, operations / 4);
  topology.compact();
  EXPECT_NO_THROW(validate_cloth(cloth));
  for (Index v = 0; v < cloth.vertex_count(); ++v) EXPECT_FALSE(topology.incident_triangles(v).empty());
  EXPECT_EQ(euler_characteristic(TriangleTopology(cloth)), 1);
}

TEST(TriangleTopology, RandomOperationsOnARegularMesh) {
  ClothMesh cloth = unit_sheet(6, 5);
  run_random_operations(cloth, 7, 400);
}

TEST(TriangleTopology, RandomOperationsOnAnIrregularMesh) {
  // The regular sheet with its interior vertices jittered and some faces split first.
  ClothMesh cloth = unit_sheet(7, 4);
  std::mt19937 random(11);
  std::uniform_real_distribution<double> jitter(-0.07, 0.07);
  const std::vector<unsigned char> border = border_vertices(cloth);
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    if (border[v]) continue;
    cloth.material[2 * v] += jitter(random);
    cloth.material[2 * v + 1] += jitter(random);
  }
  {
    TriangleTopology topology(cloth);
    for (Index t = 0; t < 20; t += 3) ASSERT_EQ(topology.split_face(t, {0.5, 0.3, 0.2}).status, EditStatus::done);
  }
  ASSERT_NO_THROW(validate_cloth(cloth));
  run_random_operations(cloth, 13, 400);
}

}  // namespace
}  // namespace cholsim::fem::cloth
