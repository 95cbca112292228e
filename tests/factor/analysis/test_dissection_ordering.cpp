// Nested dissection with a constrained minimum degree inside (ND-CAMD): the constrained
// minimum degree keeps its sets and is plain AMD with one set; the dissection orders every
// graph the minimum degree tests use, deterministically, with less fill than METIS_NodeND on
// grids and elasticity meshes; factorizations and Schur complements with it solve.
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "factor/analysis/dissection_ordering.hpp"
#include "factor/analysis/minimum_degree.hpp"
#include "linalg/generators.hpp"
#include "tests/factor/analysis/ordering_graph_helpers.hpp"

namespace cholsim::factor {
namespace {

using testing::adversarial_graphs;
using testing::GraphCase;

// With every vertex in one set the constraint never binds: the same ordering as plain AMD,
// tie for tie.
TEST(ConstrainedMinimumDegree, OneSetIsPlainMinimumDegree) {
  for (const GraphCase& graph_case : adversarial_graphs()) {
    SCOPED_TRACE(graph_case.name);
    const AdjacencyGraph graph = adjacency_graph(testing::matrix_of(graph_case), 1);
    const std::vector<Index> one_set(static_cast<std::size_t>(graph_case.n), 3);
    EXPECT_EQ(constrained_minimum_degree(graph, one_set), approximate_minimum_degree(graph));
  }
}

// Random sets, up to five, on every graph: a permutation, and no vertex before one of a
// lower set (dense rows are left in the minimum degree search here: the rule that puts them
// last is the only one allowed to break the sets).
TEST(ConstrainedMinimumDegree, NoVertexPrecedesALowerSet) {
  std::mt19937 rng(31);
  MinimumDegreeOptions keep_dense_rows;
  keep_dense_rows.dense_row_factor = -1.0;
  for (const GraphCase& graph_case : adversarial_graphs()) {
    for (const Index sets : {2, 5}) {
      SCOPED_TRACE(graph_case.name + ", " + std::to_string(sets) + " sets");
      std::vector<Index> set_of(static_cast<std::size_t>(graph_case.n));
      for (Index& s : set_of) s = std::uniform_int_distribution<Index>(0, sets - 1)(rng);
      const auto perm =
          constrained_minimum_degree(adjacency_graph(testing::matrix_of(graph_case), 1), set_of, keep_dense_rows);
      ASSERT_TRUE(testing::is_permutation_of(perm, graph_case.n));
      for (std::size_t k = 1; k < perm.size(); ++k) {
        ASSERT_LE(set_of[static_cast<std::size_t>(perm[k - 1])], set_of[static_cast<std::size_t>(perm[k])])
            << "position " << k;
      }
    }
  }
}

// One vertex a set leaves nothing to choose: the ordering is the sets' order.
TEST(ConstrainedMinimumDegree, OneVertexPerSetIsTheSetOrder) {
  const GraphCase grid{"grid", 144, testing::grid_edges(12, 12)};
  std::vector<Index> rank(144);
  std::iota(rank.begin(), rank.end(), 0);
  std::shuffle(rank.begin(), rank.end(), std::mt19937(8));
  const auto perm = constrained_minimum_degree(adjacency_graph(testing::matrix_of(grid), 1), rank);
  for (Index k = 0; k < 144; ++k) EXPECT_EQ(rank[static_cast<std::size_t>(perm[static_cast<std::size_t>(k)])], k);
}

TEST(ConstrainedMinimumDegree, RejectsSetsOfTheWrongSize) {
  const GraphCase path{"path", 10, testing::path_edges(10)};
  EXPECT_THROW(constrained_minimum_degree(adjacency_graph(testing::matrix_of(path), 1), std::vector<Index>(9, 0)),
               std::invalid_argument);
}

// Every adversarial graph — empty, edgeless, cliques, hubs, disconnected — at leaf sizes from
// one vertex up, and the same ordering on a second run (METIS is seeded).
TEST(DissectionOrdering, ValidAndDeterministicOnAdversarialGraphs) {
  for (const GraphCase& graph_case : adversarial_graphs()) {
    for (const Index leaf : {1, 4, 64}) {
      SCOPED_TRACE(graph_case.name + ", leaf " + std::to_string(leaf));
      const auto a = testing::matrix_of(graph_case);
      const auto perm = dissection_minimum_degree_ordering(a, 1, leaf);
      ASSERT_TRUE(testing::is_permutation_of(perm, graph_case.n));
      EXPECT_EQ(dissection_minimum_degree_ordering(a, 1, leaf), perm);
    }
  }
}

// The parts: every vertex has one, numbered from 0 without gaps, and only separators — parts
// numbered after both halves they separate — exceed the leaf size.
TEST(DissectionOrdering, PartsCoverTheGraphInPostorder) {
  const auto a = linalg::laplacian_2d(40, 40);
  const Index leaf = 16;
  const std::vector<Index> parts = dissection_parts(adjacency_graph(a, 1), leaf);
  ASSERT_EQ(parts.size(), 1600u);
  const Index count = *std::max_element(parts.begin(), parts.end()) + 1;
  std::vector<Index> sizes(static_cast<std::size_t>(count), 0);
  for (const Index p : parts) {
    ASSERT_GE(p, 0);
    ++sizes[static_cast<std::size_t>(p)];
  }
  for (const Index size : sizes) EXPECT_GT(size, 0);
  // The last part is the top separator: removing it leaves no edge between the vertices
  // numbered before the first part of the second half and those after it.
  const AdjacencyGraph graph = adjacency_graph(a, 1);
  const Index top = count - 1;
  std::vector<Index> component(1600, -1);
  Index components = 0;
  for (Index start = 0; start < 1600; ++start) {
    if (parts[static_cast<std::size_t>(start)] == top || component[static_cast<std::size_t>(start)] >= 0) continue;
    std::vector<Index> stack{start};
    component[static_cast<std::size_t>(start)] = components;
    while (!stack.empty()) {
      const Index v = stack.back();
      stack.pop_back();
      for (Index q = graph.offsets[v]; q < graph.offsets[v + 1]; ++q) {
        const Index w = graph.neighbors[q];
        if (parts[static_cast<std::size_t>(w)] == top || component[static_cast<std::size_t>(w)] >= 0) continue;
        component[static_cast<std::size_t>(w)] = components;
        stack.push_back(w);
      }
    }
    ++components;
  }
  EXPECT_GE(components, 2) << "the top separator does not separate";
  // Each component's parts come as one contiguous range below the separator's number.
  std::vector<Index> low(static_cast<std::size_t>(components), count), high(static_cast<std::size_t>(components), -1);
  for (Index v = 0; v < 1600; ++v) {
    const Index c = component[static_cast<std::size_t>(v)];
    if (c < 0) continue;
    low[static_cast<std::size_t>(c)] = std::min(low[static_cast<std::size_t>(c)], parts[static_cast<std::size_t>(v)]);
    high[static_cast<std::size_t>(c)] = std::max(high[static_cast<std::size_t>(c)], parts[static_cast<std::size_t>(v)]);
  }
  for (Index c = 0; c < components; ++c) {
    for (Index d = 0; d < components; ++d) {
      if (c == d) continue;
      const bool disjoint = high[static_cast<std::size_t>(c)] < low[static_cast<std::size_t>(d)] ||
                            high[static_cast<std::size_t>(d)] < low[static_cast<std::size_t>(c)];
      EXPECT_TRUE(disjoint) << "components " << c << " and " << d << " interleave";
    }
  }
}

// The claim of dissection_ordering.hpp: less fill than METIS's own nested dissection, on the
// node graph as the analysis orders it (docs/benchmarks.md, issue 23, for the bench sizes).
TEST(DissectionOrdering, LessFillThanMetisNodeNd) {
  linalg::ElasticityBoxOptions box;
  box.nx = box.ny = box.nz = 10;
  struct Case {
    const char* name;
    linalg::SymmetricCscMatrix matrix;
    Index dofs_per_node;
  };
  const std::vector<Case> cases{{"laplacian_2d_100x100", linalg::laplacian_2d(100, 100), 1},
                                {"laplacian_3d_20x20x20", linalg::laplacian_3d(20, 20, 20), 1},
                                {"elasticity_10x10x10", linalg::elasticity_matrix(box), 3}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto dissection = testing::fill_of(c.matrix, dissection_minimum_degree_ordering(c.matrix, c.dofs_per_node));
    const auto metis = testing::fill_of(c.matrix, nested_dissection_ordering(c.matrix, c.dofs_per_node));
    EXPECT_LT(dissection, metis);
  }
}

}  // namespace
}  // namespace cholsim::factor
