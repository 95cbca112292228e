// The supernodal factor against dense LAPACK on small matrices of many shapes.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/blas.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

using testing::NamedMatrix;

struct OrderingCase {
  OrderingMethod ordering;
  bool amalgamate;
};

class DenseReference : public ::testing::TestWithParam<std::tuple<int, OrderingCase>> {};

// Factor entries equal the dense Cholesky factor of P·A·Pᵀ, and the solve has a tiny residual.
TEST_P(DenseReference, FactorEqualsDenseCholeskyOfPermutedMatrix) {
  const auto matrices = testing::spd_test_matrices();
  const auto [index, ordering_case] = GetParam();
  ASSERT_LT(index, static_cast<int>(matrices.size()));
  const NamedMatrix& named = matrices[static_cast<std::size_t>(index)];
  SCOPED_TRACE(named.name);
  const auto& a = named.matrix;
  const Index n = a.size();

  AnalyzeOptions options;
  options.ordering = ordering_case.ordering;
  options.amalgamation.enabled = ordering_case.amalgamate;
  const auto symbolic = analyze(a, options);
  Factor factor(symbolic);
  ASSERT_TRUE(factor.factorize(a, {.threads = 2}).ok()) << factor.status().message;

  // Dense reference: potrf of P·A·Pᵀ.
  const linalg::DenseMatrix dense = linalg::to_dense(a);
  linalg::DenseMatrix permuted(n, n);
  const auto perm = symbolic->permutation();
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < n; ++i) permuted(i, j) = dense(perm[i], perm[j]);
  }
  ASSERT_EQ(linalg::blas::potrf(permuted.view()), 0);
  const linalg::CscMatrix l = factor.factor_matrix();
  linalg::DenseMatrix ours(n, n);
  for (Index c = 0; c < n; ++c) {
    for (linalg::Offset p = l.col_ptr[c]; p < l.col_ptr[c + 1]; ++p) ours(l.row_idx[p], c) = l.values[p];
  }
  double max_reference = 0.0;
  for (Index j = 0; j < n; ++j) {
    for (Index i = j; i < n; ++i) max_reference = std::max(max_reference, std::abs(permuted(i, j)));
  }
  for (Index j = 0; j < n; ++j) {
    for (Index i = j; i < n; ++i) {
      ASSERT_NEAR(ours(i, j), permuted(i, j), 1e-13 * max_reference) << "L(" << i << ", " << j << ")";
    }
  }

  std::vector<double> x_true(static_cast<std::size_t>(n));
  std::iota(x_true.begin(), x_true.end(), 1.0);
  std::vector<double> b(static_cast<std::size_t>(n));
  linalg::symmetric_multiply(a, x_true, b);
  std::vector<double> x = b;
  factor.solve(x);
  EXPECT_LE(testing::relative_residual(a, x, b), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(
    AllShapes, DenseReference,
    ::testing::Combine(::testing::Range(0, 13),
                       ::testing::Values(OrderingCase{OrderingMethod::nested_dissection, true},
                                         OrderingCase{OrderingMethod::minimum_degree, true},
                                         OrderingCase{OrderingMethod::automatic, true},
                                         OrderingCase{OrderingMethod::natural, true},
                                         OrderingCase{OrderingMethod::nested_dissection, false})));

}  // namespace
}  // namespace cholsim::factor
