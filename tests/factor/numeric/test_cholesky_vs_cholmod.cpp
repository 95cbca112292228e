// The supernodal factor against CHOLMOD (the reference oracle) given the same permutation:
// identical structural nnz(L), supernodal storage within a few percent (the amalgamation
// rules differ on purpose), and the same solution. Also thread-count (in)dependence of L.
//
// CHOLMOD is driven through its 64-bit `cholmod_l_*` API throughout, so our int64 column
// pointers are used as they are and only the int32 row indices are widened.
#include <gtest/gtest.h>

#include <cholmod.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/cholmod_reference.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/blas_threads.hpp"
#include "linalg/generators.hpp"

namespace cholsim::factor {
namespace {

using linalg::Index;
using linalg::SymmetricCscMatrix;

/// What the CHOLMOD run gives back for comparison.
struct CholmodResult {
  double lnz = 0.0;            ///< Common->lnz: structural nonzeros of L
  std::int64_t xsize = 0;      ///< L->xsize: supernodal values stored
  std::vector<double> solution;
};

/// Analyses A (lower storage) with the given permutation (perm[new] = old) and the relaxed
/// amalgamation rules of `amalgamation` (CHOLMOD's nrelax/zrelax), factorizes it supernodally
/// and solves A·x = b, all with CHOLMOD.
CholmodResult cholmod_solve(const SymmetricCscMatrix& a, std::span<const Index> permutation,
                            const AmalgamationOptions& amalgamation, const std::vector<double>& b) {
  const auto n = static_cast<std::size_t>(a.size());
  reference::CholmodMatrix matrix(a);
  std::vector<SuiteSparse_long> perm(permutation.begin(), permutation.end());
  std::vector<double> rhs = b;

  cholmod_dense rhs_dense{};
  rhs_dense.nrow = n;
  rhs_dense.ncol = 1;
  rhs_dense.nzmax = n;
  rhs_dense.d = n;
  rhs_dense.x = rhs.data();
  rhs_dense.xtype = CHOLMOD_REAL;
  rhs_dense.dtype = CHOLMOD_DOUBLE;

  reference::CholmodCommon common;
  cholmod_common* c = common.get();
  c->nmethods = 1;
  c->method[0].ordering = CHOLMOD_GIVEN;
  c->postorder = 1;
  c->supernodal = CHOLMOD_SUPERNODAL;
  c->nrelax[0] = static_cast<std::size_t>(amalgamation.always_columns);
  c->nrelax[1] = static_cast<std::size_t>(amalgamation.small_columns);
  c->nrelax[2] = static_cast<std::size_t>(amalgamation.medium_columns);
  c->zrelax[0] = amalgamation.small_zero_fraction;
  c->zrelax[1] = amalgamation.medium_zero_fraction;
  c->zrelax[2] = amalgamation.large_zero_fraction;

  CholmodResult result;
  cholmod_factor* factor = cholmod_l_analyze_p(&matrix.sparse, perm.data(), nullptr, 0, c);
  EXPECT_NE(factor, nullptr);
  if (factor == nullptr) return result;
  result.lnz = c->lnz;
  EXPECT_TRUE(cholmod_l_factorize(&matrix.sparse, factor, c));
  EXPECT_EQ(c->status, CHOLMOD_OK);
  EXPECT_EQ(factor->minor, n) << "CHOLMOD found a non-positive pivot";
  EXPECT_TRUE(factor->is_super);
  result.xsize = static_cast<std::int64_t>(factor->xsize);
  cholmod_dense* x = cholmod_l_solve(CHOLMOD_A, factor, &rhs_dense, c);
  EXPECT_NE(x, nullptr);
  if (x != nullptr) {
    const auto* data = static_cast<const double*>(x->x);
    result.solution.assign(data, data + n);
    cholmod_l_free_dense(&x, c);
  }
  cholmod_l_free_factor(&factor, c);
  return result;
}

/// Matrices are built by the test that uses them: gtest names every parameterized test at
/// start-up, in every process, and CTest runs each test suite in a process of its own.
struct VsCholmodCase {
  std::string name;
  std::function<SymmetricCscMatrix()> matrix;
  Index dofs_per_node = 1;
};

SymmetricCscMatrix elasticity_box(Index nx, Index ny, Index nz) {
  return linalg::elasticity_matrix({.nx = nx, .ny = ny, .nz = nz});
}

std::vector<VsCholmodCase> vs_cholmod_cases() {
  std::vector<VsCholmodCase> cases;
  cases.push_back({"elasticity_6x6x6", [] { return elasticity_box(6, 6, 6); }, 3});
  cases.push_back({"elasticity_10x8x7", [] { return elasticity_box(10, 8, 7); }, 3});
  cases.push_back({"laplacian_14x12x10", [] { return linalg::laplacian_3d(14, 12, 10); }, 1});
  return cases;
}

/// ‖b − A·x‖₂ / ‖b‖₂.
double relative_residual(const SymmetricCscMatrix& a, const std::vector<double>& x,
                         const std::vector<double>& b) {
  std::vector<double> ax(b.size());
  linalg::symmetric_multiply(a, x, ax);
  double residual = 0.0;
  double norm_b = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    residual += (b[i] - ax[i]) * (b[i] - ax[i]);
    norm_b += b[i] * b[i];
  }
  return std::sqrt(residual / norm_b);
}

AnalyzeOptions nested_dissection_options(Index dofs_per_node) {
  AnalyzeOptions options;
  options.ordering = OrderingMethod::nested_dissection;
  options.dofs_per_node = dofs_per_node;
  return options;
}

class VsCholmod : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { linalg::set_blas_threads(1); }
};

/// CHOLMOD's default relaxed amalgamation (cholmod_defaults: nrelax 4/16/48, zrelax 0.8/0.1/0.05).
AmalgamationOptions cholmod_default_amalgamation() {
  AmalgamationOptions options;
  options.always_columns = 4;
  options.small_columns = 16;
  options.small_zero_fraction = 0.8;
  options.medium_columns = 48;
  options.medium_zero_fraction = 0.1;
  options.large_zero_fraction = 0.05;
  return options;
}

// Same permutation ⇒ same structure (exact column counts) and the same solution as CHOLMOD.
// Supernodal storage is compared under the SAME amalgamation rules on both sides (ours, then
// CHOLMOD's defaults): the two greedy merge orders differ (we absorb children bottom-up,
// CHOLMOD visits parents top-down), so storage agrees to a few percent, not exactly.
// With each side on its own defaults (ours 8/32/64, CHOLMOD's 4/16/48) the gap is 6–28%
// on these matrices, which measures the parameters rather than the code.
TEST_P(VsCholmod, SameStructureAndSolutionWithSamePermutation) {
  const auto cases = vs_cholmod_cases();
  const VsCholmodCase& test_case = cases[static_cast<std::size_t>(GetParam())];
  SCOPED_TRACE(test_case.name);
  const SymmetricCscMatrix a = test_case.matrix();
  const std::vector<double> b = linalg::ramp_right_hand_side(a);
  const auto ordered = analyze(a, nested_dissection_options(test_case.dofs_per_node));

  for (const bool ours_defaults : {true, false}) {
    SCOPED_TRACE(ours_defaults ? "cholsim's default amalgamation" : "CHOLMOD's default amalgamation");
    AnalyzeOptions options;
    options.ordering = OrderingMethod::given;
    options.given_permutation.assign(ordered->permutation().begin(), ordered->permutation().end());
    if (!ours_defaults) options.amalgamation = cholmod_default_amalgamation();
    const auto symbolic = analyze(a, options);
    Factor factor(symbolic);
    ASSERT_TRUE(factor.factorize(a, {.threads = 1}).ok()) << factor.status().message;
    std::vector<double> ours = b;
    factor.solve(std::span<double>(ours));

    const CholmodResult reference =
        cholmod_solve(a, symbolic->permutation(), options.amalgamation, b);
    ASSERT_EQ(reference.solution.size(), b.size());

    EXPECT_EQ(static_cast<double>(symbolic->stats().nnz_l_exact), reference.lnz);
    const double stored = static_cast<double>(symbolic->factor_value_count());
    const double cholmod_stored = static_cast<double>(reference.xsize);
    EXPECT_LE(std::abs(stored - cholmod_stored), 0.05 * cholmod_stored)
        << "ours " << stored << " vs CHOLMOD L->xsize " << cholmod_stored;

    double difference = 0.0;
    double largest = 0.0;
    for (std::size_t i = 0; i < ours.size(); ++i) {
      difference = std::max(difference, std::abs(ours[i] - reference.solution[i]));
      largest = std::max(largest, std::abs(reference.solution[i]));
    }
    EXPECT_LE(difference, 1e-10 * largest);
    EXPECT_LE(relative_residual(a, ours, b), 1e-12);
    EXPECT_LE(relative_residual(a, reference.solution, b), 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(Matrices, VsCholmod, ::testing::Range(0, 3),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return vs_cholmod_cases()[static_cast<std::size_t>(info.param)].name;
                         });

/// A box large enough that the 2-thread run has independent subtrees and threaded top fronts.
SymmetricCscMatrix threading_box() { return elasticity_box(14, 12, 12); }

std::vector<double> factor_values(const SymmetricCscMatrix& a,
                                  const std::shared_ptr<const Symbolic>& symbolic, int threads) {
  Factor factor(symbolic);
  const FactorStatus& status = factor.factorize(a, {.threads = threads});
  EXPECT_TRUE(status.ok()) << status.message;
  return {factor.values().begin(), factor.values().end()};
}

// The dense work of a front is cut into pieces that depend on its sizes only, and BLAS stays
// on one thread (dense_tasks.hpp): one thread and two give the same bits.
TEST(VsCholmodThreads, OneAndTwoThreadsGiveTheSameBits) {
  const SymmetricCscMatrix a = threading_box();
  const auto symbolic = analyze(a, nested_dissection_options(3));
  const std::vector<double> one = factor_values(a, symbolic, 1);
  const std::vector<double> two = factor_values(a, symbolic, 2);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(double)), 0);
}

// Reproducibility: the same thread count twice gives bit-identical factors, whatever order
// the parallel subtrees happened to finish in.
TEST(VsCholmodThreads, SameThreadCountIsBitwiseReproducible) {
  const SymmetricCscMatrix a = threading_box();
  const auto symbolic = analyze(a, nested_dissection_options(3));
  for (const int threads : {1, 2}) {
    SCOPED_TRACE("threads = " + std::to_string(threads));
    const std::vector<double> first = factor_values(a, symbolic, threads);
    for (int run = 0; run < 3; ++run) {
      const std::vector<double> again = factor_values(a, symbolic, threads);
      ASSERT_EQ(first.size(), again.size());
      EXPECT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(double)), 0)
          << "run " << run;
    }
  }
}

}  // namespace
}  // namespace cholsim::factor
