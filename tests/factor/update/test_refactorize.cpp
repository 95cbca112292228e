// Incremental refactorization (seed 000 §4.3): after any partial change of A, refactorize
// gives the factor a fresh full factorization of the new A gives, for 1 and 2 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "factor/numeric/cholesky_factor.hpp"
#include "factor/update/changed_supernodes.hpp"
#include "factor/update/update_scheduling.hpp"
#include "linalg/assembly_pattern.hpp"
#include "linalg/element_changes.hpp"
#include "linalg/generators.hpp"
#include "linalg/vector_norms.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

using linalg::max_abs;

// A small elasticity box kept as mesh + assembly pattern, so element blocks can change.
struct ElasticBox {
  linalg::ElasticityBoxOptions box{.nx = 6, .ny = 5, .nz = 4};
  linalg::TetMesh mesh = linalg::structured_tet_box(box.nx, box.ny, box.nz, box.cell_size);
  linalg::AssemblyPattern pattern{mesh.node_count(), 3, 4, mesh.tets};
  linalg::SymmetricCscMatrix a = linalg::elasticity_matrix(box);
  std::shared_ptr<const Symbolic> symbolic = analyze(a, three_dofs_per_node());

  static AnalyzeOptions three_dofs_per_node() {
    AnalyzeOptions options;
    options.dofs_per_node = 3;
    return options;
  }
};

double max_relative_difference(std::span<const double> x, std::span<const double> reference) {
  double d = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) d = std::max(d, std::abs(x[i] - reference[i]));
  return d / std::max(max_abs(reference), 1e-300);
}

std::vector<double> solve_copy(const Factor& factor, std::vector<double> b) {
  factor.solve(b);
  return b;
}

// The factor and a solve equal those of a fresh full factorization of `a`.
void expect_equals_fresh_factorization(const Factor& incremental, const linalg::SymmetricCscMatrix& a,
                                       const std::string& context) {
  Factor fresh(incremental.symbolic_ptr());
  ASSERT_TRUE(fresh.factorize(a, {.threads = 1}).ok()) << context;
  EXPECT_LE(max_relative_difference(incremental.values(), fresh.values()), 1e-12) << context;
  std::vector<double> b(static_cast<std::size_t>(a.size()));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(0.37 * static_cast<double>(i) + 1.0);
  EXPECT_LE(max_relative_difference(solve_copy(incremental, b), solve_copy(fresh, b)), 1e-12) << context;
}

// values += scale·(element block) for the given elements: a stiffening that keeps A SPD
// however many rounds add to it.
void stiffen_elements(const ElasticBox& box, std::span<const Index> elements, double scale, linalg::SymmetricCscMatrix& a) {
  for (Index e : elements) {
    linalg::linear_tet::ElasticStiffness block = linalg::elasticity_element_matrix(box.mesh.tet_points(e), box.box);
    for (double& v : block) v *= scale;
    box.pattern.scatter_add(e, block.data(), a.lower.values);
  }
}

std::vector<Index> leaf_supernodes(const Symbolic& sym) {
  std::vector<Index> leaves;
  for (Index s = 0; s < sym.supernode_count(); ++s) {
    if (sym.children(s).empty()) leaves.push_back(s);
  }
  return leaves;
}

// Raises the diagonal of every column of supernode s: a change only s assembles (the
// diagonal entry (j, j) lands in the supernode of column j).
void raise_supernode_diagonal(const Symbolic& sym, Index s, linalg::SymmetricCscMatrix& a, double amount) {
  for (Index j = sym.first_column(s); j < sym.first_column(s) + sym.column_count(s); ++j) {
    const Index user = sym.permutation()[j];
    a.lower.values[a.lower.col_ptr[user]] += amount;  // the diagonal is the column's first entry
  }
}

// One random round: changes `a` and returns the matching description of the change.
ChangedEntries random_change(const ElasticBox& box, linalg::SymmetricCscMatrix& a, std::mt19937& rng, std::string& kind) {
  const Symbolic& sym = *box.symbolic;
  const auto pick = [&](Index size) { return std::uniform_int_distribution<Index>(0, size - 1)(rng); };
  const double amount = std::uniform_real_distribution<double>(0.1, 1.0)(rng);
  switch (pick(6)) {
    case 0:
      kind = "empty";
      return ChangedEntries::elements({}, 12);
    case 1: {
      kind = "everything";
      std::vector<Index> all(static_cast<std::size_t>(box.mesh.tet_count()));
      std::iota(all.begin(), all.end(), 0);
      stiffen_elements(box, all, amount, a);
      return ChangedEntries::all();
    }
    case 2: {
      const std::vector<Index> leaves = leaf_supernodes(sym);
      const Index leaf = leaves[static_cast<std::size_t>(pick(static_cast<Index>(leaves.size())))];
      kind = "leaf " + std::to_string(leaf);
      raise_supernode_diagonal(sym, leaf, a, amount);
      return ChangedEntries::supernodes({leaf});
    }
    case 3: {
      kind = "root";
      const Index root = sym.supernode_count() - 1;
      raise_supernode_diagonal(sym, root, a, amount);
      return ChangedEntries::supernodes({root});
    }
    case 4: {
      const std::vector<Index> elements = linalg::random_subset(box.mesh.tet_count(), 1 + pick(40), rng());
      kind = "elements " + std::to_string(elements.size());
      stiffen_elements(box, elements, amount, a);
      return ChangedEntries::elements(linalg::element_dof_lists(box.pattern, elements), 12);
    }
    default: {
      const std::vector<Index> columns = linalg::random_subset(a.size(), 1 + pick(20), rng());
      kind = "columns " + std::to_string(columns.size());
      linalg::scale_columns(a, columns, 1.0 + 0.1 * amount);
      return ChangedEntries::columns(columns);
    }
  }
}

// Run with every block kept and with the default retention policy (small subtrees are
// recomputed with their parent instead of kept).
class RefactorizeRounds : public ::testing::TestWithParam<double> {};

TEST_P(RefactorizeRounds, HundredRandomRoundsEqualFreshFactorizationForOneAndTwoThreads) {
  const ElasticBox box;
  linalg::SymmetricCscMatrix a = box.a;
  const FactorOptions retain{.threads = 1, .retain_update_blocks = true, .retain_min_flops_per_entry = GetParam()};
  Factor one(box.symbolic);
  Factor two(box.symbolic);
  ASSERT_TRUE(one.factorize(a, retain).ok());
  ASSERT_TRUE(two.factorize(a, {.threads = 2, .retain_update_blocks = true, .retain_min_flops_per_entry = GetParam()}).ok());
  std::mt19937 rng(4);
  std::set<std::string> kinds;
  for (int round = 0; round < 100; ++round) {
    std::string kind;
    const ChangedEntries changed = random_change(box, a, rng, kind);
    kinds.insert(kind.substr(0, kind.find(' ')));
    const std::string context = "round " + std::to_string(round) + " (" + kind + ")";
    const std::vector<char> expected = one.supernodes_to_recompute(changed);
    ASSERT_TRUE(one.refactorize(changed, a, {.threads = 1}).ok()) << context << ": " << one.status().message;
    ASSERT_TRUE(two.refactorize(changed, a, {.threads = 2}).ok()) << context << ": " << two.status().message;
    expect_equals_fresh_factorization(one, a, context);
    expect_equals_fresh_factorization(two, a, context);
    EXPECT_LE(max_relative_difference(one.values(), two.values()), 1e-12) << context;
    EXPECT_EQ(one.stats().recomputed_supernodes, std::count(expected.begin(), expected.end(), 1)) << context;
    EXPECT_EQ(one.stats().recomputed_supernodes, two.stats().recomputed_supernodes) << context;
    if (kind == "empty") {
      EXPECT_EQ(one.stats().recomputed_supernodes, 0) << context;
    }
  }
  EXPECT_EQ(kinds.size(), 6u) << "every kind of change was drawn";
}

INSTANTIATE_TEST_SUITE_P(Retention, RefactorizeRounds, ::testing::Values(0.0, FactorOptions{}.retain_min_flops_per_entry));

// Only the changed supernodes and their ancestors run: a leaf's change recomputes exactly the
// path from the leaf to the root; the factor still equals a fresh one.
TEST(Refactorize, LeafChangeRecomputesExactlyItsPathToTheRoot) {
  const ElasticBox box;
  const Symbolic& sym = *box.symbolic;
  linalg::SymmetricCscMatrix a = box.a;
  Factor factor(box.symbolic);
  ASSERT_TRUE(factor.factorize(a, {.threads = 1, .retain_update_blocks = true, .retain_min_flops_per_entry = 0.0}).ok());
  const Index leaf = leaf_supernodes(sym).front();
  Index path = 0;
  double path_flops = 0.0;
  for (Index s = leaf; s != -1; s = sym.parent(s)) {
    ++path;
    path_flops += sym.supernode_flops(s);
  }
  raise_supernode_diagonal(sym, leaf, a, 2.0);
  ASSERT_TRUE(factor.refactorize(ChangedEntries::supernodes({leaf}), a, {.threads = 2}).ok());
  EXPECT_EQ(factor.stats().recomputed_supernodes, path);
  EXPECT_DOUBLE_EQ(factor.stats().recomputed_flops, path_flops);
  EXPECT_LT(path, sym.supernode_count());
  expect_equals_fresh_factorization(factor, a, "leaf change");
}

TEST(Refactorize, WithoutRetainedBlocksFailsWithAClearMessage) {
  const ElasticBox box;
  Factor factor(box.symbolic);
  ASSERT_TRUE(factor.factorize(box.a).ok());
  EXPECT_FALSE(factor.retains_update_blocks());
  try {
    factor.refactorize(ChangedEntries::all(), box.a);
    FAIL() << "refactorize without retained update blocks must throw";
  } catch (const std::logic_error& error) {
    EXPECT_NE(std::string(error.what()).find("retain_update_blocks"), std::string::npos) << error.what();
  }
  // A factorization that retains blocks, then one that does not, drops them again.
  factor.factorize(box.a, {.retain_update_blocks = true});
  EXPECT_TRUE(factor.retains_update_blocks());
  factor.factorize(box.a);
  EXPECT_FALSE(factor.retains_update_blocks());
}

// Statistics: retained blocks are reported apart from the factor, in the packed layout
// (well under the square blocks' bytes), and refactorize keeps them.
TEST(Refactorize, RetainedBytesAreReportedApartFromTheFactor) {
  const ElasticBox box;
  const Symbolic& sym = *box.symbolic;
  Factor factor(box.symbolic);
  ASSERT_TRUE(factor.factorize(box.a, {.retain_update_blocks = true}).ok());
  std::int64_t square_bytes = 0;
  for (Index s = 0; s < sym.supernode_count(); ++s) {
    const std::int64_t size = sym.row_count(s) - sym.column_count(s);
    square_bytes += 8 * size * size;
  }
  const FactorStats& stats = factor.stats();
  EXPECT_EQ(stats.factor_bytes, sym.stats().factor_bytes);
  EXPECT_GT(stats.retained_update_bytes, 0);
  EXPECT_LE(stats.retained_update_bytes, square_bytes);
  EXPECT_EQ(stats.recomputed_supernodes, sym.supernode_count());
  ASSERT_TRUE(factor.refactorize(ChangedEntries::supernodes({0}), box.a).ok());
  EXPECT_EQ(factor.stats().retained_update_bytes, stats.retained_update_bytes);
}

// The retention policy keeps fewer bytes; the recomputed set is then closed under ancestors
// and contains every child of a recomputed supernode whose block was not kept.
TEST(Refactorize, UnretainedSubtreesAreRecomputedWithTheirParent) {
  const ElasticBox box;
  const Symbolic& sym = *box.symbolic;
  Factor all(box.symbolic);
  Factor some(box.symbolic);
  ASSERT_TRUE(all.factorize(box.a, {.retain_update_blocks = true, .retain_min_flops_per_entry = 0.0}).ok());
  ASSERT_TRUE(some.factorize(box.a, {.retain_update_blocks = true, .retain_min_flops_per_entry = 100.0}).ok());
  EXPECT_LT(some.stats().retained_update_bytes, all.stats().retained_update_bytes);
  const Index leaf = leaf_supernodes(sym).front();
  const std::vector<char> path = all.supernodes_to_recompute(ChangedEntries::supernodes({leaf}));
  const std::vector<char> marked = some.supernodes_to_recompute(ChangedEntries::supernodes({leaf}));
  bool grew = false;
  for (Index s = 0; s < sym.supernode_count(); ++s) {
    EXPECT_TRUE(!path[s] || marked[s]) << s;
    EXPECT_TRUE(!marked[s] || sym.parent(s) == -1 || marked[sym.parent(s)]) << s;
    grew = grew || (marked[s] && !path[s]);
  }
  EXPECT_TRUE(grew) << "some sibling subtree on the path has no kept block";
  linalg::SymmetricCscMatrix a = box.a;
  raise_supernode_diagonal(sym, leaf, a, 1.0);
  ASSERT_TRUE(some.refactorize(ChangedEntries::supernodes({leaf}), a).ok());
  EXPECT_EQ(some.stats().recomputed_supernodes, std::count(marked.begin(), marked.end(), 1));
  expect_equals_fresh_factorization(some, a, "retention policy");
}

// The schedulers' costs include the unretained subtrees a marked supernode drags along, so
// the predicted cost of updating a leaf covers every supernode refactorize will recompute.
TEST(Refactorize, SchedulingCostsCoverTheUnretainedSubtrees) {
  const ElasticBox box;
  const Symbolic& sym = *box.symbolic;
  Factor factor(box.symbolic);
  ASSERT_TRUE(factor.factorize(box.a, {.retain_update_blocks = true, .retain_min_flops_per_entry = 100.0}).ok());
  const std::vector<Index> parent = supernode_parents(sym);
  const std::span<const double> measured = factor.cost_model().costs();
  const std::vector<double> scheduling = factor.scheduling_costs();
  ASSERT_EQ(scheduling.size(), measured.size());
  bool folded_any = false;
  for (Index leaf : leaf_supernodes(sym)) {
    std::vector<char> leaf_only(static_cast<std::size_t>(sym.supernode_count()), 0);
    leaf_only[leaf] = 1;
    const std::vector<char> recomputed = factor.supernodes_to_recompute(ChangedEntries::supernodes({leaf}));
    double actual = 0.0;
    for (Index s = 0; s < sym.supernode_count(); ++s) actual += recomputed[s] ? measured[s] : 0.0;
    const double naive = update_cost(parent, measured, leaf_only);
    EXPECT_GE(update_cost(parent, scheduling, leaf_only), actual * (1.0 - 1e-12)) << "leaf " << leaf;
    folded_any = folded_any || naive < actual * (1.0 - 1e-12);
  }
  EXPECT_TRUE(folded_any) << "no leaf path drags an unretained subtree along: the test proves nothing";
}

// A change that makes A indefinite reports the failing column; the supernodes left
// uncomputed are recomputed by the next refactorize, which then equals a fresh factorization.
TEST(Refactorize, RecoversFromAFailedRefactorization) {
  const ElasticBox box;
  const Symbolic& sym = *box.symbolic;
  Factor factor(box.symbolic);
  ASSERT_TRUE(factor.factorize(box.a, {.retain_update_blocks = true}).ok());
  const Index leaf = leaf_supernodes(sym).back();
  const Index user_column = sym.permutation()[sym.first_column(leaf)];
  linalg::SymmetricCscMatrix broken = box.a;
  broken.lower.values[broken.lower.col_ptr[user_column]] = -1.0;
  const FactorStatus& status = factor.refactorize(ChangedEntries::columns({user_column}), broken);
  ASSERT_EQ(status.code, FactorStatusCode::not_positive_definite);
  EXPECT_EQ(status.column, user_column);
  // Back to the original values: the change is the same column again.
  ASSERT_TRUE(factor.refactorize(ChangedEntries::columns({user_column}), box.a).ok());
  expect_equals_fresh_factorization(factor, box.a, "after recovery");
}

// The cost model starts from the measured times and follows the EWMA rule (seed 000 §4.4).
TEST(Refactorize, CostModelIsMeasuredAndRefinedByMovingAverage) {
  const ElasticBox box;
  Factor factor(box.symbolic);
  ASSERT_TRUE(factor.factorize(box.a, {.threads = 1, .retain_update_blocks = true}).ok());
  const SupernodeCostModel& model = factor.cost_model();
  ASSERT_EQ(static_cast<Index>(model.costs().size()), box.symbolic->supernode_count());
  EXPECT_GT(model.full_cost(), 0.0);
  EXPECT_LE(model.full_cost(), factor.stats().seconds);

  SupernodeCostModel refined(std::vector<double>{1.0, 2.0}, 0.25);
  refined.refine(1, 6.0);
  EXPECT_DOUBLE_EQ(refined.cost(1), 0.75 * 2.0 + 0.25 * 6.0);
  EXPECT_DOUBLE_EQ(refined.cost(0), 1.0);
  EXPECT_DOUBLE_EQ(refined.full_cost(), 1.0 + 3.0);
  EXPECT_THROW(SupernodeCostModel({1.0}, 0.0), std::invalid_argument);
}

// The column form marks exactly the supernodes assembling an entry in a changed row or
// column, checked against the matrix itself: entry (i, j) goes to the supernode of min(i, j).
TEST(ChangedSupernodes, ColumnsMarkTheSupernodesOfEveryEntryInThoseRowsAndColumns) {
  const ElasticBox box;
  const Symbolic& sym = *box.symbolic;
  const auto inverse = sym.inverse_permutation();
  const std::vector<Index> columns = {0, 17, 200, box.a.size() - 1};
  std::vector<char> expected(static_cast<std::size_t>(sym.supernode_count()), 0);
  for (Index c = 0; c < box.a.size(); ++c) {
    for (linalg::Offset p = box.a.lower.col_ptr[c]; p < box.a.lower.col_ptr[c + 1]; ++p) {
      const Index r = box.a.lower.row_idx[p];
      if (std::find(columns.begin(), columns.end(), r) == columns.end() &&
          std::find(columns.begin(), columns.end(), c) == columns.end()) {
        continue;
      }
      expected[supernode_of_column(sym, std::min(inverse[r], inverse[c]))] = 1;
    }
  }
  EXPECT_EQ(ChangedEntries::columns(columns).marked_supernodes(sym), expected);
  EXPECT_THROW((void)ChangedEntries::columns({box.a.size()}).marked_supernodes(sym), std::invalid_argument);
}

// The element map lists the supernodes of every entry of the element block, and the badness
// of a supernode is the largest error of its elements.
TEST(ChangedSupernodes, ElementMapMatchesTheEntriesOfEachElementBlock) {
  const ElasticBox box;
  const Symbolic& sym = *box.symbolic;
  const auto inverse = sym.inverse_permutation();
  std::vector<Index> all(static_cast<std::size_t>(box.mesh.tet_count()));
  std::iota(all.begin(), all.end(), 0);
  const std::vector<Index> dofs = linalg::element_dof_lists(box.pattern, all);
  const ElementSupernodeMap map(sym, dofs, 12);
  ASSERT_EQ(map.element_count(), box.mesh.tet_count());
  for (Index e = 0; e < map.element_count(); e += 37) {
    std::set<Index> expected;
    for (int i = 0; i < 12; ++i) {
      for (int j = 0; j <= i; ++j) {
        const Index r = inverse[dofs[static_cast<std::size_t>(12 * e + i)]];
        const Index c = inverse[dofs[static_cast<std::size_t>(12 * e + j)]];
        expected.insert(supernode_of_column(sym, std::min(r, c)));
      }
    }
    const auto got = map.supernodes(e);
    EXPECT_EQ(std::vector<Index>(got.begin(), got.end()), std::vector<Index>(expected.begin(), expected.end()));
  }
  std::vector<double> error(all.size(), 0.0);
  error[5] = 3.0;
  error[9] = 1.0;
  const std::vector<double> badness = map.supernode_badness(error);
  for (Index s : map.supernodes(5)) EXPECT_EQ(badness[s], 3.0);
  for (Index s : map.supernodes(9)) EXPECT_GE(badness[s], 1.0);
  EXPECT_EQ(*std::max_element(badness.begin(), badness.end()), 3.0);
  // The same elements given to ChangedEntries mark the same supernodes.
  std::vector<char> marked(static_cast<std::size_t>(sym.supernode_count()), 0);
  map.mark(std::vector<Index>{5, 9}, marked);
  std::vector<Index> changed_dofs(dofs.begin() + 12 * 5, dofs.begin() + 12 * 6);
  changed_dofs.insert(changed_dofs.end(), dofs.begin() + 12 * 9, dofs.begin() + 12 * 10);
  EXPECT_EQ(ChangedEntries::elements(changed_dofs, 12).marked_supernodes(sym), marked);
  EXPECT_THROW(ChangedEntries::elements({1, 2, 3}, 12), std::invalid_argument);
}

}  // namespace
}  // namespace cholsim::factor
