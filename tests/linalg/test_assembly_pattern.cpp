#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "linalg/assembly_pattern.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/dense_matrix.hpp"
#include "linalg/generators.hpp"

namespace cholsim::linalg {
namespace {

// Random element matrices, m×m column-major each; symmetric unless asked otherwise.
std::vector<DenseMatrix> random_element_matrices(Index elements, Index m, bool symmetric,
                                                 unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<DenseMatrix> matrices;
  for (Index e = 0; e < elements; ++e) {
    DenseMatrix k(m, m);
    for (Index j = 0; j < m; ++j) {
      for (Index i = 0; i < m; ++i) k(i, j) = uniform(rng);
    }
    if (symmetric) {
      for (Index j = 0; j < m; ++j) {
        for (Index i = j + 1; i < m; ++i) k(j, i) = k(i, j);
      }
    }
    matrices.push_back(std::move(k));
  }
  return matrices;
}

// The reference: every entry of every element matrix as a triplet, upper ones dropped — the
// definition scatter_add documents.
SymmetricCscMatrix rebuild_from_triplets(Index nodes, Index d, Index k,
                                         const std::vector<Index>& connectivity,
                                         const std::vector<DenseMatrix>& matrices) {
  Triplets t;
  const Index m = k * d;
  for (std::size_t e = 0; e < matrices.size(); ++e) {
    for (Index b = 0; b < m; ++b) {
      for (Index a = 0; a < m; ++a) {
        const Index ga = connectivity[e * static_cast<std::size_t>(k) + static_cast<std::size_t>(a / d)] * d + a % d;
        const Index gb = connectivity[e * static_cast<std::size_t>(k) + static_cast<std::size_t>(b / d)] * d + b % d;
        t.add(ga, gb, matrices[e](a, b));
      }
    }
  }
  return symmetric_from_triplets(nodes * d, t, UpperEntries::drop);
}

SymmetricCscMatrix scatter_all(const AssemblyPattern& pattern,
                               const std::vector<DenseMatrix>& matrices) {
  SymmetricCscMatrix assembled = pattern.zero_matrix();
  for (Index e = 0; e < pattern.element_count(); ++e) {
    pattern.scatter_add(e, matrices[static_cast<std::size_t>(e)].view(), assembled.lower.values);
  }
  return assembled;
}

void expect_same_matrix(const SymmetricCscMatrix& actual, const SymmetricCscMatrix& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  ASSERT_EQ(actual.lower.col_ptr, expected.lower.col_ptr);
  ASSERT_EQ(actual.lower.row_idx, expected.lower.row_idx);
  ASSERT_EQ(actual.lower.values.size(), expected.lower.values.size());
  for (std::size_t p = 0; p < expected.lower.values.size(); ++p) {
    EXPECT_NEAR(actual.lower.values[p], expected.lower.values[p], 1e-12) << "entry " << p;
  }
}

// A random mesh on `nodes` nodes in which every node is used; element 0 repeats a node twice
// and element 1 is a single node four times, exercising the repeated-node paths.
std::vector<Index> random_connectivity(Index nodes, Index elements, Index k, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<Index> node(0, nodes - 1);
  std::vector<Index> connectivity;
  for (Index e = 0; e < elements; ++e) {
    for (Index s = 0; s < k; ++s) connectivity.push_back(node(rng));
  }
  connectivity[1] = connectivity[3];
  std::fill_n(connectivity.begin() + k, k, nodes / 2);
  for (Index v = 0; v < nodes; ++v) connectivity.push_back(v);  // one chain element per node
  while (connectivity.size() % static_cast<std::size_t>(k) != 0) connectivity.push_back(0);
  return connectivity;
}

TEST(AssemblyPattern, ScatterEqualsTripletRebuildOnRandomMeshWithRepeatedNodes) {
  for (Index d : {1, 2, 3}) {
    const Index nodes = 13;
    const Index k = 4;
    const std::vector<Index> connectivity = random_connectivity(nodes, 25, k, 7u + static_cast<unsigned>(d));
    const AssemblyPattern pattern(nodes, d, k, connectivity);
    const auto matrices = random_element_matrices(pattern.element_count(), k * d, true, 11);
    SCOPED_TRACE("dofs_per_node " + std::to_string(d));
    expect_same_matrix(scatter_all(pattern, matrices),
                       rebuild_from_triplets(nodes, d, k, connectivity, matrices));
  }
}

TEST(AssemblyPattern, NonSymmetricElementMatrixIsReadWhereItLandsInTheLowerTriangle) {
  // With a non-symmetric Kₑ the documented rule (each global lower entry takes Kₑ(a, b) with
  // gₐ ≥ g_b) is observable: the result must equal the drop-upper triplet rebuild exactly.
  const Index nodes = 9;
  const Index d = 3;
  const Index k = 4;
  const std::vector<Index> connectivity = random_connectivity(nodes, 15, k, 3);
  const AssemblyPattern pattern(nodes, d, k, connectivity);
  const auto matrices = random_element_matrices(pattern.element_count(), k * d, false, 5);
  expect_same_matrix(scatter_all(pattern, matrices),
                     rebuild_from_triplets(nodes, d, k, connectivity, matrices));
}

TEST(AssemblyPattern, ScatterEqualsTripletRebuildOnTetBox) {
  const TetMesh mesh = structured_tet_box(3, 2, 2, 0.5);
  const AssemblyPattern pattern(mesh.node_count(), 3, 4, mesh.tets);
  const auto matrices = random_element_matrices(mesh.tet_count(), 12, true, 23);
  expect_same_matrix(scatter_all(pattern, matrices),
                     rebuild_from_triplets(mesh.node_count(), 3, 4, mesh.tets, matrices));
  check_valid(pattern.pattern());
}

TEST(AssemblyPattern, PointerAndStridedViewOverloadsAgree) {
  const TetMesh mesh = structured_tet_box(1, 1, 2, 1.0);
  const AssemblyPattern pattern(mesh.node_count(), 3, 4, mesh.tets);
  const auto matrices = random_element_matrices(mesh.tet_count(), 12, true, 29);
  SymmetricCscMatrix from_pointer = pattern.zero_matrix();
  SymmetricCscMatrix from_view = pattern.zero_matrix();
  DenseMatrix padded(15, 12, -99.0);  // ld = 15 > 12: the padding must never be read
  for (Index e = 0; e < mesh.tet_count(); ++e) {
    const DenseMatrix& element = matrices[static_cast<std::size_t>(e)];
    pattern.scatter_add(e, element.data(), from_pointer.lower.values);
    for (Index j = 0; j < 12; ++j) {
      for (Index i = 0; i < 12; ++i) padded(i + 2, j) = element(i, j);
    }
    pattern.scatter_add(e, padded.view().block(2, 0, 12, 12), from_view.lower.values);
  }
  EXPECT_EQ(from_pointer.lower.values, from_view.lower.values);
}

TEST(AssemblyPattern, PatternHasExactlyTheExpectedEntriesOnTwoTets) {
  // Tets {0,1,2,3} and {1,2,3,4} share a face; nodes 0 and 4 never meet. Lower node pairs:
  // 5 diagonal + 9 off-diagonal. Each off-diagonal pair couples d² dofs, each diagonal one
  // d(d+1)/2: 9·9 + 5·6 = 111 for d = 3 and 14 for d = 1.
  const std::vector<Index> connectivity{0, 1, 2, 3, 3, 2, 1, 4};
  const AssemblyPattern vector_pattern(5, 3, 4, connectivity);
  EXPECT_EQ(vector_pattern.size(), 15);
  EXPECT_EQ(vector_pattern.nnz_lower(), 111);
  EXPECT_EQ(vector_pattern.element_entries(), 78);
  EXPECT_EQ(vector_pattern.block_positions(1).size(), 30u);  // 10 node pairs × 3 columns
  const AssemblyPattern scalar_pattern(5, 1, 4, connectivity);
  EXPECT_EQ(scalar_pattern.nnz_lower(), 14);
  // Nodes 0 and 4 are not coupled: column 0 of the scalar pattern is rows 0..3.
  const CscMatrix& lower = scalar_pattern.pattern().lower;
  EXPECT_EQ(std::vector<Index>(lower.row_idx.begin(), lower.row_idx.begin() + lower.col_ptr[1]),
            (std::vector<Index>{0, 1, 2, 3}));
  // An unused node still gets its diagonal entries (an explicit zero pivot, not a gap).
  EXPECT_EQ(AssemblyPattern(6, 3, 4, connectivity).nnz_lower(), 111 + 6);
  const SymmetricCscMatrix zero = vector_pattern.zero_matrix();
  EXPECT_EQ(zero.lower.values, std::vector<double>(111, 0.0));
}

TEST(AssemblyPattern, BlockPositionsPointAtTheFirstLowerEntryOfEachLandedBlockColumn) {
  const std::vector<Index> connectivity{4, 0, 2, 1, 3, 3, 1, 0};  // node order ≠ global order
  const Index d = 2;
  const AssemblyPattern pattern(5, d, 4, connectivity);
  const CscMatrix& lower = pattern.pattern().lower;
  for (Index e = 0; e < pattern.element_count(); ++e) {
    const auto nodes = pattern.element_nodes(e);
    const auto order = pattern.landing_order(e);
    const auto positions = pattern.block_positions(e);
    std::size_t q = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      for (std::size_t i = j; i < 4; ++i) {
        const Index lo = nodes[order[j]];
        const Index hi = nodes[order[i]];
        ASSERT_LE(lo, hi) << "slots out of landing order in element " << e;
        for (Index c = 0; c < d; ++c, ++q) {
          const auto column = static_cast<std::size_t>(lo * d + c);
          const Offset p = positions[q];
          EXPECT_GE(p, lower.col_ptr[column]);
          EXPECT_LT(p, lower.col_ptr[column + 1]);
          EXPECT_EQ(lower.row_idx[static_cast<std::size_t>(p)], hi == lo ? lo * d + c : hi * d);
        }
      }
    }
    EXPECT_EQ(q, positions.size());
  }
}

TEST(AssemblyPattern, BadConnectivityThrowsNamingElementAndSlot) {
  const std::vector<Index> connectivity{0, 1, 2, 3, 1, 2, 7, 3};
  try {
    AssemblyPattern(5, 3, 4, connectivity);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("element 1"), std::string::npos) << message;
    EXPECT_NE(message.find("slot 2"), std::string::npos) << message;
  }
  const std::vector<Index> negative{0, -1, 2, 3};
  EXPECT_THROW(AssemblyPattern(5, 3, 4, negative), std::invalid_argument);
  const std::vector<Index> ragged{0, 1, 2, 3, 4};
  EXPECT_THROW(AssemblyPattern(5, 3, 4, ragged), std::invalid_argument);
  EXPECT_THROW(AssemblyPattern(5, 0, 4, std::vector<Index>{0, 1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(AssemblyPattern(5, 3, 0, std::vector<Index>{}), std::invalid_argument);
  EXPECT_THROW(AssemblyPattern(-1, 3, 4, std::vector<Index>{}), std::invalid_argument);
}

TEST(AssemblyPattern, ScatterMisuseThrows) {
  const std::vector<Index> connectivity{0, 1, 2, 3};
  const AssemblyPattern pattern(4, 3, 4, connectivity);
  SymmetricCscMatrix matrix = pattern.zero_matrix();
  DenseMatrix element(12, 12, 1.0);
  DenseMatrix wrong(11, 11, 1.0);
  EXPECT_THROW(pattern.scatter_add(1, element.view(), matrix.lower.values), std::invalid_argument);
  EXPECT_THROW(pattern.scatter_add(-1, element.data(), matrix.lower.values), std::invalid_argument);
  EXPECT_THROW(pattern.scatter_add(0, wrong.view(), matrix.lower.values), std::invalid_argument);
  std::vector<double> short_values(matrix.lower.values.size() - 1);
  EXPECT_THROW(pattern.scatter_add(0, element.view(), short_values), std::invalid_argument);
  EXPECT_THROW((void)pattern.block_positions(1), std::invalid_argument);
  EXPECT_THROW((void)pattern.landing_order(-1), std::invalid_argument);
}

TEST(AssemblyPattern, EmptyMeshGivesDiagonalNodeBlocks) {
  const AssemblyPattern pattern(3, 2, 4, std::vector<Index>{});
  EXPECT_EQ(pattern.element_count(), 0);
  EXPECT_EQ(pattern.size(), 6);
  EXPECT_EQ(pattern.nnz_lower(), 2 * 3 + 3);  // per node: (0,0), (1,0), (1,1)
  EXPECT_GT(pattern.bytes(), 0u);
}

}  // namespace
}  // namespace cholsim::linalg
