// L and L̇ with retained update blocks (issue 6 with seed 000 §4.3): after any partial change of
// A and Ȧ, refactorize_with_derivative gives the L and L̇ a fresh factorize_with_derivative of
// the current pair gives, for 1 and 2 threads and both retention policies.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

#include "factor/derivative/factor_derivative.hpp"
#include "factor/update/changed_supernodes.hpp"
#include "linalg/assembly_pattern.hpp"
#include "linalg/element_changes.hpp"
#include "linalg/generators.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

// A pair (A, Ȧ) on one analysis; `mesh`/`pattern` only for the elasticity box, whose element
// blocks can change.
struct DerivativeProblem {
  std::string name;
  linalg::SymmetricCscMatrix a;
  linalg::SymmetricCscMatrix a_dot;
  std::shared_ptr<const Symbolic> symbolic;
  linalg::ElasticityBoxOptions box{.nx = 6, .ny = 5, .nz = 4};
  linalg::TetMesh mesh;
  std::optional<linalg::AssemblyPattern> pattern;
};

// Ȧ on a's pattern with random values of either sign (not definite).
linalg::SymmetricCscMatrix random_values_on_pattern(const linalg::SymmetricCscMatrix& a, std::mt19937& rng) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  linalg::SymmetricCscMatrix a_dot = a;
  for (double& v : a_dot.lower.values) v = value(rng);
  return a_dot;
}

DerivativeProblem elasticity_problem() {
  DerivativeProblem p;
  p.name = "elasticity_box";
  p.mesh = linalg::structured_tet_box(p.box.nx, p.box.ny, p.box.nz, p.box.cell_size);
  p.pattern.emplace(p.mesh.node_count(), 3, 4, p.mesh.tets);
  p.a = linalg::elasticity_matrix(p.box);
  std::mt19937 rng(11);
  p.a_dot = random_values_on_pattern(p.a, rng);
  AnalyzeOptions options;
  options.dofs_per_node = 3;
  p.symbolic = analyze(p.a, options);
  return p;
}

DerivativeProblem shape_problem(const testing::NamedMatrix& named) {
  DerivativeProblem p;
  p.name = named.name;
  p.a = named.matrix;
  std::mt19937 rng(12);
  p.a_dot = random_values_on_pattern(p.a, rng);
  p.symbolic = analyze(p.a);
  return p;
}

// L and L̇ equal those of a fresh factorize_with_derivative of the current (A, Ȧ), in the
// relative 2-norm.
void expect_equals_fresh(const FactorDerivative& incremental, const DerivativeProblem& p, const std::string& context) {
  FactorDerivative fresh(p.symbolic);
  ASSERT_TRUE(fresh.factorize_with_derivative(p.a, p.a_dot, {.threads = 1}).ok()) << context;
  EXPECT_LE(relative_difference(incremental.factor().values(), fresh.factor().values()), 1e-12) << context;
  EXPECT_LE(relative_difference(incremental.derivative_values(), fresh.derivative_values()), 1e-12) << context;
}

// Changes the entries of A and Ȧ that supernode s assembles (those whose smaller elimination
// index is one of s's columns): Ȧ at random, A on the diagonal only (raising it keeps A SPD).
void perturb_entries_of_supernode(const Symbolic& sym, Index s, DerivativeProblem& p, std::mt19937& rng) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  const auto elimination_index = sym.inverse_permutation();
  const linalg::CscMatrix& lower = p.a.lower;
  for (Index j = 0; j < lower.cols; ++j) {
    for (linalg::Offset e = lower.col_ptr[j]; e < lower.col_ptr[j + 1]; ++e) {
      const Index i = lower.row_idx[e];
      if (supernode_of_column(sym, std::min(elimination_index[i], elimination_index[j])) != s) continue;
      p.a_dot.lower.values[e] += value(rng);
      if (i == j) p.a.lower.values[e] += 1.0 + value(rng);
    }
  }
}

// A += α·Kₑ (stiffer, still SPD) and Ȧ += β·Kₑ for each given element of the box.
void perturb_elements(std::span<const Index> elements, DerivativeProblem& p, std::mt19937& rng) {
  std::uniform_real_distribution<double> weight(0.1, 1.0);
  for (Index e : elements) {
    const linalg::linear_tet::ElasticStiffness block = linalg::elasticity_element_matrix(p.mesh.tet_points(e), p.box);
    const double alpha = weight(rng);
    const double beta = weight(rng) - 0.55;
    linalg::linear_tet::ElasticStiffness scaled = block;
    for (double& v : scaled) v *= alpha;
    p.pattern->scatter_add(e, scaled.data(), p.a.lower.values);
    for (std::size_t k = 0; k < scaled.size(); ++k) scaled[k] = beta * block[k];
    p.pattern->scatter_add(e, scaled.data(), p.a_dot.lower.values);
  }
}

// One random round: changes A and/or Ȧ in `p` and returns the change; `kind` names it.
ChangedEntries random_change(DerivativeProblem& p, std::mt19937& rng, std::string& kind) {
  const Symbolic& sym = *p.symbolic;
  const auto pick = [&](Index size) { return std::uniform_int_distribution<Index>(0, size - 1)(rng); };
  const double scale = std::uniform_real_distribution<double>(1.05, 1.5)(rng);
  switch (pick(p.pattern ? 7 : 6)) {
    case 0:
      kind = "empty";
      return ChangedEntries::columns({});
    case 1:
      kind = "everything";
      for (double& v : p.a.lower.values) v *= scale;
      p.a_dot = random_values_on_pattern(p.a, rng);
      return ChangedEntries::all();
    case 2: {
      std::vector<Index> leaves;
      for (Index s = 0; s < sym.supernode_count(); ++s) {
        if (sym.children(s).empty()) leaves.push_back(s);
      }
      const Index leaf = leaves[static_cast<std::size_t>(pick(static_cast<Index>(leaves.size())))];
      kind = "leaf " + std::to_string(leaf);
      perturb_entries_of_supernode(sym, leaf, p, rng);
      return ChangedEntries::supernodes({leaf});
    }
    case 3: {
      kind = "root";  // the last supernode in postorder is a root
      perturb_entries_of_supernode(sym, sym.supernode_count() - 1, p, rng);
      return ChangedEntries::supernodes({sym.supernode_count() - 1});
    }
    case 4: {
      const std::vector<Index> columns = linalg::random_subset(p.a.size(), 1 + pick(std::min<Index>(p.a.size(), 20)), rng());
      kind = "columns " + std::to_string(columns.size());
      linalg::scale_columns(p.a, columns, scale);
      linalg::scale_columns(p.a_dot, columns, 2.0 - scale);
      return ChangedEntries::columns(columns);
    }
    case 5: {
      const std::vector<Index> columns = linalg::random_subset(p.a.size(), 1 + pick(std::min<Index>(p.a.size(), 5)), rng());
      kind = "derivative_columns " + std::to_string(columns.size());
      linalg::scale_columns(p.a_dot, columns, -scale);  // Ȧ alone changes
      return ChangedEntries::columns(columns);
    }
    default: {
      const std::vector<Index> elements = linalg::random_subset(p.mesh.tet_count(), 1 + pick(30), rng());
      kind = "elements " + std::to_string(elements.size());
      perturb_elements(elements, p, rng);
      return ChangedEntries::elements(linalg::element_dof_lists(*p.pattern, elements), 12);
    }
  }
}

std::vector<DerivativeProblem> derivative_problems() {
  std::vector<DerivativeProblem> problems;
  problems.push_back(elasticity_problem());
  for (const testing::NamedMatrix& named : testing::spd_test_matrices()) {
    if (named.matrix.size() > 0) problems.push_back(shape_problem(named));
  }
  return problems;
}

// Every block kept, and the default policy (small subtrees recomputed with their parent).
class DerivativeRefactorizeRounds : public ::testing::TestWithParam<double> {};

TEST_P(DerivativeRefactorizeRounds, RandomRoundsEqualFreshFactorizationForOneAndTwoThreads) {
  for (DerivativeProblem& p : derivative_problems()) {
    const FactorOptions retain{.threads = 1, .retain_update_blocks = true, .retain_min_flops_per_entry = GetParam()};
    FactorDerivative one(p.symbolic);
    FactorDerivative two(p.symbolic);
    ASSERT_TRUE(one.factorize_with_derivative(p.a, p.a_dot, retain).ok()) << p.name;
    ASSERT_TRUE(two.factorize_with_derivative(p.a, p.a_dot, {.threads = 2, .retain_update_blocks = true,
                                                             .retain_min_flops_per_entry = GetParam()})
                    .ok())
        << p.name;
    std::mt19937 rng(5);
    std::set<std::string> kinds;
    const int rounds = p.pattern ? 40 : 12;
    for (int round = 0; round < rounds; ++round) {
      std::string kind;
      const ChangedEntries changed = random_change(p, rng, kind);
      kinds.insert(kind.substr(0, kind.find(' ')));
      const std::string context = p.name + " round " + std::to_string(round) + " (" + kind + ")";
      const std::vector<char> expected = one.factor().supernodes_to_recompute(changed);
      ASSERT_TRUE(one.refactorize_with_derivative(changed, p.a, p.a_dot, {.threads = 1}).ok())
          << context << ": " << one.status().message;
      ASSERT_TRUE(two.refactorize_with_derivative(changed, p.a, p.a_dot, {.threads = 2}).ok())
          << context << ": " << two.status().message;
      expect_equals_fresh(one, p, context);
      expect_equals_fresh(two, p, context);
      const DerivativeFactorStats& stats = one.stats();
      EXPECT_EQ(stats.recomputed_supernodes, std::count(expected.begin(), expected.end(), 1)) << context;
      EXPECT_EQ(stats.recomputed_supernodes, two.stats().recomputed_supernodes) << context;
      EXPECT_EQ(stats.retained_update_bytes, stats.retained_derivative_update_bytes) << context;
      if (kind == "empty") {
        EXPECT_EQ(stats.recomputed_supernodes, 0) << context;
        EXPECT_EQ(stats.derivative_flops, 0.0) << context;
      }
      if (kind == "everything") {
        EXPECT_EQ(stats.recomputed_supernodes, p.symbolic->supernode_count()) << context;
      }
    }
    if (p.pattern) {
      EXPECT_EQ(kinds.size(), 7u) << "every kind of change was drawn";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Retention, DerivativeRefactorizeRounds,
                         ::testing::Values(0.0, FactorOptions{}.retain_min_flops_per_entry));

TEST(DerivativeRefactorize, WithoutRetainedBlocksThrowsWithAClearMessage) {
  const DerivativeProblem p = elasticity_problem();
  FactorDerivative ldot(p.symbolic);
  EXPECT_THROW(ldot.refactorize_with_derivative(ChangedEntries::all(), p.a, p.a_dot), std::logic_error);
  ASSERT_TRUE(ldot.factorize_with_derivative(p.a, p.a_dot).ok());
  EXPECT_FALSE(ldot.retains_update_blocks());
  try {
    ldot.refactorize_with_derivative(ChangedEntries::all(), p.a, p.a_dot);
    FAIL() << "refactorize_with_derivative without retained update blocks must throw";
  } catch (const std::logic_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("refactorize_with_derivative"), std::string::npos) << message;
    EXPECT_NE(message.find("retain_update_blocks"), std::string::npos) << message;
  }
  // Retaining, then not retaining, drops the blocks of both L and L̇ again.
  ASSERT_TRUE(ldot.factorize_with_derivative(p.a, p.a_dot, {.retain_update_blocks = true}).ok());
  EXPECT_TRUE(ldot.retains_update_blocks());
  ASSERT_TRUE(ldot.factorize_with_derivative(p.a, p.a_dot).ok());
  EXPECT_FALSE(ldot.retains_update_blocks());
  EXPECT_EQ(ldot.stats().retained_update_bytes, 0);
  EXPECT_EQ(ldot.stats().retained_derivative_update_bytes, 0);
}

// U and U̇ are kept for the same supernodes as a plain Factor keeps U; a leaf's change
// recomputes exactly its path to the root (every block kept), and the statistics say so.
TEST(DerivativeRefactorize, StatisticsReportRetainedBytesAndTheRecomputedShare) {
  DerivativeProblem p = elasticity_problem();
  const Symbolic& sym = *p.symbolic;
  for (double min_flops : {0.0, 100.0}) {
    const FactorOptions options{.threads = 2, .retain_update_blocks = true, .retain_min_flops_per_entry = min_flops};
    Factor plain(p.symbolic);
    ASSERT_TRUE(plain.factorize(p.a, options).ok());
    FactorDerivative ldot(p.symbolic);
    ASSERT_TRUE(ldot.factorize_with_derivative(p.a, p.a_dot, options).ok());
    const DerivativeFactorStats& stats = ldot.stats();
    EXPECT_GT(stats.retained_update_bytes, 0);
    EXPECT_EQ(stats.retained_update_bytes, plain.stats().retained_update_bytes) << min_flops;
    EXPECT_EQ(stats.retained_derivative_update_bytes, stats.retained_update_bytes) << min_flops;
    EXPECT_EQ(stats.recomputed_supernodes, sym.supernode_count());
    EXPECT_NEAR(stats.recomputed_flop_fraction, 1.0, 1e-12);
  }

  FactorDerivative ldot(p.symbolic);
  ASSERT_TRUE(ldot.factorize_with_derivative(p.a, p.a_dot, {.retain_update_blocks = true,
                                                            .retain_min_flops_per_entry = 0.0})
                  .ok());
  const double full_derivative_flops = ldot.stats().derivative_flops;
  Index leaf = 0;
  while (!sym.children(leaf).empty()) ++leaf;
  Index path = 0;
  double path_flops = 0.0;
  for (Index s = leaf; s != -1; s = sym.parent(s)) {
    ++path;
    path_flops += sym.supernode_flops(s);
  }
  std::mt19937 rng(3);
  perturb_entries_of_supernode(sym, leaf, p, rng);
  ASSERT_TRUE(ldot.refactorize_with_derivative(ChangedEntries::supernodes({leaf}), p.a, p.a_dot).ok());
  const DerivativeFactorStats& stats = ldot.stats();
  EXPECT_EQ(stats.recomputed_supernodes, path);
  EXPECT_LT(path, sym.supernode_count());
  EXPECT_NEAR(stats.recomputed_flop_fraction, path_flops / sym.stats().flops, 1e-12);
  EXPECT_NEAR(stats.factor_flops, path_flops, 1e-9 * path_flops);
  EXPECT_GT(stats.derivative_flops, 0.0);
  EXPECT_LT(stats.derivative_flops, full_derivative_flops);
  EXPECT_GT(stats.retained_derivative_update_bytes, 0);
  expect_equals_fresh(ldot, p, "leaf change");
}

// Failures are values, and recoverable: a pivot failure names the column a plain factorization
// names, a rejected Ȧ is reported like factorize_with_derivative's; the next call, told only of
// its own change, still recomputes what the failed one left (equal to a fresh factorization).
TEST(DerivativeRefactorize, FailuresAreReportedAndTheNextCallRecovers) {
  DerivativeProblem p = elasticity_problem();
  const Symbolic& sym = *p.symbolic;
  FactorDerivative ldot(p.symbolic);
  ASSERT_TRUE(ldot.factorize_with_derivative(p.a, p.a_dot, {.threads = 2, .retain_update_blocks = true}).ok());

  // A leaf column's diagonal made negative.
  Index leaf = 0;
  while (!sym.children(leaf).empty()) ++leaf;
  const Index column = sym.permutation()[sym.first_column(leaf)];
  const auto diagonal = static_cast<std::size_t>(p.a.lower.col_ptr[column]);
  const double saved = p.a.lower.values[diagonal];
  p.a.lower.values[diagonal] = -1.0;
  ASSERT_EQ(ldot.refactorize_with_derivative(ChangedEntries::columns({column}), p.a, p.a_dot).code,
            FactorStatusCode::not_positive_definite);
  Factor plain(p.symbolic);
  ASSERT_EQ(plain.factorize(p.a).code, FactorStatusCode::not_positive_definite);
  EXPECT_EQ(ldot.status().column, plain.status().column);
  EXPECT_THROW((void)ldot.derivative_values(), std::logic_error);
  p.a.lower.values[diagonal] = saved;
  ASSERT_TRUE(ldot.refactorize_with_derivative(ChangedEntries::columns({}), p.a, p.a_dot).ok());
  expect_equals_fresh(ldot, p, "after a pivot failure");

  // Columns 0..2 of A change while Ȧ has a NaN elsewhere: rejected, nothing computed.
  const std::vector<Index> changed_columns{0, 1, 2};
  linalg::scale_columns(p.a, changed_columns, 1.3);
  const Index nan_column = p.a.size() - 1;
  const auto nan_entry = static_cast<std::size_t>(p.a_dot.lower.col_ptr[nan_column]);
  const double finite = p.a_dot.lower.values[nan_entry];
  p.a_dot.lower.values[nan_entry] = std::numeric_limits<double>::quiet_NaN();
  std::vector<Index> both = changed_columns;
  both.push_back(nan_column);
  ASSERT_EQ(ldot.refactorize_with_derivative(ChangedEntries::columns(both), p.a, p.a_dot).code,
            FactorStatusCode::non_finite_value);
  EXPECT_EQ(ldot.status().message.rfind("derivative: ", 0), 0u) << ldot.status().message;
  EXPECT_EQ(ldot.stats().recomputed_supernodes, 0);
  // Fixed, and told only of the fix: the columns the rejected call did not compute still are.
  p.a_dot.lower.values[nan_entry] = 2.0 * finite;
  ASSERT_TRUE(ldot.refactorize_with_derivative(ChangedEntries::columns({nan_column}), p.a, p.a_dot).ok());
  expect_equals_fresh(ldot, p, "after a rejected derivative");
}

}  // namespace
}  // namespace cholsim::factor
