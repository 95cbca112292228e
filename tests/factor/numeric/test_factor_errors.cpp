// Errors are values: failing column of an indefinite matrix, NaN/Inf, wrong pattern or size.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "factor/numeric/cholesky_factor.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

linalg::SymmetricCscMatrix grid_matrix() { return testing::spd_test_matrices().back().matrix; }

// Makes the leading principal minors positive up to (in elimination order) column `bad`,
// where the pivot becomes negative: a diagonal entry is lowered far below its row sum.
TEST(FactorErrors, IndefiniteMatrixReportsTheFailingUserColumn) {
  linalg::SymmetricCscMatrix a = grid_matrix();
  const auto symbolic = analyze(a);
  for (Index user_column : {0, 17, 77, 143}) {
    linalg::SymmetricCscMatrix broken = a;
    const auto& l = broken.lower;
    broken.lower.values[l.col_ptr[user_column]] = -1.0;  // the diagonal is the first entry
    Factor factor(symbolic);
    const FactorStatus& status = factor.factorize(broken);
    ASSERT_EQ(status.code, FactorStatusCode::not_positive_definite);
    // Only the broken column has a non-positive diagonal, and everything before it in
    // elimination order is a principal submatrix of an SPD matrix, so it must fail there.
    EXPECT_EQ(status.column, user_column);
    EXPECT_NE(status.message.find(std::to_string(user_column)), std::string::npos);
    EXPECT_FALSE(factor.ok());
    std::vector<double> b(static_cast<std::size_t>(a.size()), 1.0);
    EXPECT_THROW(factor.solve(b), std::logic_error);
  }
}

TEST(FactorErrors, FailingColumnIsTheSameForOneAndTwoThreads) {
  linalg::SymmetricCscMatrix a = grid_matrix();
  // Two broken columns in different subtrees: the first in elimination order is reported.
  a.lower.values[a.lower.col_ptr[5]] = -2.0;
  a.lower.values[a.lower.col_ptr[140]] = -2.0;
  const auto symbolic = analyze(a);
  Factor one(symbolic);
  Factor two(symbolic);
  one.factorize(a, {.threads = 1});
  two.factorize(a, {.threads = 2});
  ASSERT_EQ(one.status().code, FactorStatusCode::not_positive_definite);
  EXPECT_EQ(one.status().column, two.status().column);
  const auto inverse = symbolic->inverse_permutation();
  EXPECT_EQ(one.status().column, inverse[5] < inverse[140] ? 5 : 140);
}

TEST(FactorErrors, NonFiniteValuesAreRejectedWithTheirPosition) {
  const linalg::SymmetricCscMatrix a = grid_matrix();
  const auto symbolic = analyze(a);
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity()}) {
    linalg::SymmetricCscMatrix broken = a;
    const linalg::Offset p = broken.lower.col_ptr[30] + 1;  // an off-diagonal entry of column 30
    broken.lower.values[p] = bad;
    Factor factor(symbolic);
    const FactorStatus& status = factor.factorize(broken);
    ASSERT_EQ(status.code, FactorStatusCode::non_finite_value);
    EXPECT_EQ(status.column, 30);
    EXPECT_EQ(status.row, broken.lower.row_idx[p]);
  }
}

TEST(FactorErrors, DifferentPatternIsRejected) {
  const linalg::SymmetricCscMatrix a = grid_matrix();
  const auto symbolic = analyze(a);
  linalg::Triplets t;
  for (Index c = 0; c < a.size(); ++c) {
    for (linalg::Offset p = a.lower.col_ptr[c]; p < a.lower.col_ptr[c + 1]; ++p) t.add(a.lower.row_idx[p], c, a.lower.values[p]);
  }
  t.add(100, 3, 0.01);  // one extra entry
  const linalg::SymmetricCscMatrix other = linalg::symmetric_from_triplets(a.size(), t);
  Factor factor(symbolic);
  EXPECT_EQ(factor.factorize(other).code, FactorStatusCode::pattern_mismatch);

  // Same number of entries, one moved: the hash still catches it.
  linalg::SymmetricCscMatrix moved = a;
  const linalg::Offset last = moved.lower.col_ptr[1] - 1;  // the last entry of column 0
  ASSERT_LT(moved.lower.row_idx[last], a.size() - 1);
  ++moved.lower.row_idx[last];
  linalg::check_valid(moved);  // still a well-formed matrix, just a different pattern
  EXPECT_EQ(factor.factorize(moved).code, FactorStatusCode::pattern_mismatch);
}

TEST(FactorErrors, WrongSizeIsRejected) {
  const auto symbolic = analyze(grid_matrix());
  Factor factor(symbolic);
  EXPECT_EQ(factor.factorize(testing::spd_test_matrices()[2].matrix).code, FactorStatusCode::size_mismatch);
  linalg::SymmetricCscMatrix a = grid_matrix();
  ASSERT_TRUE(factor.factorize(a).ok());
  std::vector<double> wrong(5, 1.0);
  EXPECT_THROW(factor.solve(wrong), std::invalid_argument);
}

TEST(FactorErrors, MalformedPatternOrPermutationThrowsAtAnalysis) {
  linalg::SymmetricCscMatrix upper = grid_matrix();
  std::swap(upper.lower.row_idx[upper.lower.col_ptr[3]], upper.lower.row_idx[upper.lower.col_ptr[3] + 1]);
  EXPECT_THROW(analyze(upper), std::invalid_argument);
  AnalyzeOptions options;
  options.ordering = OrderingMethod::given;
  options.given_permutation = std::vector<Index>(144, 0);
  EXPECT_THROW(analyze(grid_matrix(), options), std::invalid_argument);
  options.ordering = OrderingMethod::nested_dissection;
  options.dofs_per_node = 5;  // 144 is not a multiple of 5
  EXPECT_THROW(analyze(grid_matrix(), options), std::invalid_argument);
}

// factorize is repeatable with new values on one analysis, and recovers after a failure.
TEST(FactorReuse, RefactorizingWithNewValuesMatchesAFreshFactor) {
  linalg::SymmetricCscMatrix a = grid_matrix();
  const auto symbolic = analyze(a);
  Factor reused(symbolic);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> scale(0.5, 2.0);
  for (int round = 0; round < 4; ++round) {
    for (double& v : a.lower.values) v *= scale(rng);
    for (Index c = 0; c < a.size(); ++c) a.lower.values[a.lower.col_ptr[c]] += 20.0;  // keep SPD
    linalg::SymmetricCscMatrix broken = a;
    broken.lower.values[0] = -1.0;
    EXPECT_FALSE(reused.factorize(broken).ok());
    ASSERT_TRUE(reused.factorize(a).ok());
    Factor fresh(analyze(a));
    ASSERT_TRUE(fresh.factorize(a).ok());
    std::vector<double> b(static_cast<std::size_t>(a.size()));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(static_cast<double>(i));
    std::vector<double> x1 = b;
    std::vector<double> x2 = b;
    reused.solve(x1);
    fresh.solve(x2);
    for (std::size_t i = 0; i < b.size(); ++i) EXPECT_NEAR(x1[i], x2[i], 1e-12 * (1 + std::abs(x2[i])));
  }
}

TEST(FactorSolve, ManyRightHandSidesMatchOneAtATimeAndRefinementConverges) {
  const linalg::SymmetricCscMatrix a = grid_matrix();
  Factor factor(analyze(a));
  ASSERT_TRUE(factor.factorize(a).ok());
  const Index n = a.size();
  const Index count = 7;
  linalg::DenseMatrix b(n, count);
  for (Index c = 0; c < count; ++c) {
    for (Index i = 0; i < n; ++i) b(i, c) = std::cos(static_cast<double>(i * (c + 1)));
  }
  linalg::DenseMatrix x = b;
  factor.solve(x.view());
  for (Index c = 0; c < count; ++c) {
    std::vector<double> single(static_cast<std::size_t>(n));
    for (Index i = 0; i < n; ++i) single[i] = b(i, c);
    std::vector<double> rhs = single;
    factor.solve(single);
    for (Index i = 0; i < n; ++i) EXPECT_NEAR(x(i, c), single[i], 1e-13 * (1 + std::abs(single[i])));
    const SolveStats stats = factor.solve_refined(a, rhs, 3, 1e-16);
    EXPECT_LE(stats.residual, 1e-14);
    EXPECT_LE(testing::relative_residual(a, rhs, std::vector<double>(b.storage().begin() + c * n, b.storage().begin() + (c + 1) * n)), 1e-14);
  }
}

}  // namespace
}  // namespace cholsim::factor
