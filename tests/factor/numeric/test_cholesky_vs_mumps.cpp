// The supernodal factor against MUMPS, the second reference peer: the same solution to 1e-10
// (relative, max norm) whether MUMPS eliminates in our order or in one of its own, and, in
// our order, a factor no smaller than our exact nnz(L) (any storage of the same elimination
// holds at least the structural nonzeros; MUMPS adds its amalgamation's zeros).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/blas_threads.hpp"
#include "linalg/generators.hpp"
#include "tests/factor/factor_test_matrices.hpp"

#ifdef CHOLSIM_HAVE_MUMPS
#include "bench/mumps_reference.hpp"
#endif

namespace cholsim::factor {
namespace {

using linalg::SymmetricCscMatrix;
using testing::relative_max_difference;

#ifndef CHOLSIM_HAVE_MUMPS
TEST(VsMumps, SameSolution) {
  GTEST_SKIP() << "MUMPS was not found when configuring (libmumps-seq-dev, scripts/install-deps.sh)";
}
#else

/// Matrices are built by the test that uses them: gtest names every parameterized test at
/// start-up, in every process, and CTest runs each test suite in a process of its own.
struct VsMumpsCase {
  std::string name;
  std::function<SymmetricCscMatrix()> matrix;
  Index dofs_per_node = 1;
};

SymmetricCscMatrix spd_test_matrix(const std::string& name) {
  for (testing::NamedMatrix& named : testing::spd_test_matrices()) {
    if (named.name == name) return std::move(named.matrix);
  }
  throw std::invalid_argument("no factor test matrix named " + name);
}

std::vector<VsMumpsCase> vs_mumps_cases() {
  std::vector<VsMumpsCase> cases;
  cases.push_back({"elasticity_7x6x5", [] { return linalg::elasticity_matrix({.nx = 7, .ny = 6, .nz = 5}); }, 3});
  cases.push_back({"laplacian_13x11x9", [] { return linalg::laplacian_3d(13, 11, 9); }, 1});
  for (const char* name : {"random_5", "grid_12x12"}) {
    cases.push_back({name, [name] { return spd_test_matrix(name); }, 1});
  }
  return cases;
}

class VsMumps : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { linalg::set_blas_threads(1); }
};

TEST_P(VsMumps, SameSolutionInOurOrderAndInItsOwn) {
  const auto cases = vs_mumps_cases();
  const VsMumpsCase& test_case = cases[static_cast<std::size_t>(GetParam())];
  const SymmetricCscMatrix a = test_case.matrix();
  const std::vector<double> b = linalg::ramp_right_hand_side(a);

  AnalyzeOptions options;
  options.ordering = OrderingMethod::nested_dissection;
  options.dofs_per_node = test_case.dofs_per_node;
  const auto symbolic = analyze(a, options);
  Factor factor(symbolic);
  ASSERT_TRUE(factor.factorize(a, {.threads = 1}).ok()) << factor.status().message;
  std::vector<double> ours = b;
  factor.solve(std::span<double>(ours));
  EXPECT_LE(testing::relative_residual(a, ours, b), 1e-12);

  for (const bool our_order : {true, false}) {
    SCOPED_TRACE(our_order ? "MUMPS in our order (ICNTL(7) = 1)" : "MUMPS in its own order");
    reference::MumpsSolver mumps(a);
    mumps.analyze({.permutation = our_order ? symbolic->permutation() : std::span<const Index>{}});
    mumps.factorize();
    std::vector<double> theirs = b;
    mumps.solve(theirs);
    EXPECT_LE(testing::relative_residual(a, theirs, b), 1e-12);
    EXPECT_LE(relative_max_difference(ours, theirs), 1e-10);
    if (our_order) {
      EXPECT_EQ(mumps.stats().ordering, 1) << "MUMPS did not take the given ordering";
      EXPECT_GE(mumps.stats().factor_entries, static_cast<double>(symbolic->stats().nnz_l_exact));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Matrices, VsMumps, ::testing::Range(0, 4),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return vs_mumps_cases()[static_cast<std::size_t>(info.param)].name;
                         });

#endif  // CHOLSIM_HAVE_MUMPS

}  // namespace
}  // namespace cholsim::factor
