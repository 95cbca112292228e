// Partial factorization against MUMPS's Schur complement (ICNTL(19)), same matrix and same
// Schur set: S equal to 1e-10 relative, whether MUMPS eliminates the rest in our constrained
// order or in one of its own (S does not depend on the order), and the three-phase solve equal
// to MUMPS's full solve to 1e-10.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "tests/factor/factor_test_matrices.hpp"
#include "factor/schur/schur_complement.hpp"
#include "factor/schur/schur_ordering.hpp"
#include "factor/schur/schur_system.hpp"
#include "linalg/blas_threads.hpp"
#include "linalg/element_changes.hpp"
#include "linalg/generators.hpp"

#ifdef CHOLSIM_HAVE_MUMPS
#include "bench/mumps_reference.hpp"
#endif

namespace cholsim::factor {
namespace {

using linalg::DenseMatrix;
using linalg::SymmetricCscMatrix;
using testing::relative_max_difference;

#ifndef CHOLSIM_HAVE_MUMPS
TEST(SchurVsMumps, SameSchurComplement) {
  GTEST_SKIP() << "MUMPS was not found when configuring (libmumps-seq-dev, scripts/install-deps.sh)";
}
#else

struct SchurProblem {
  SymmetricCscMatrix matrix;
  std::vector<Index> schur_set;
};

/// Matrices are built by the test that uses them: gtest names every parameterized test at
/// start-up, in every process, and CTest runs each test suite in a process of its own.
struct SchurCase {
  std::string name;
  std::function<SchurProblem()> problem;
};

/// A connected patch of whole nodes of an elasticity box (seed 004's shape, grown from a
/// corner) and a scattered random set of a scalar matrix, shuffled: S's rows follow the
/// order given, on both sides.
std::vector<SchurCase> schur_cases() {
  std::vector<SchurCase> cases;
  cases.push_back({"elasticity_8x7x6_patch", [] {
                     SymmetricCscMatrix box = linalg::elasticity_matrix({.nx = 8, .ny = 7, .nz = 6});
                     std::vector<Index> patch = connected_patch(box, 3, 0, 20);
                     return SchurProblem{std::move(box), std::move(patch)};
                   }});
  cases.push_back({"laplacian_12x10x9_random", [] {
                     SymmetricCscMatrix laplacian = linalg::laplacian_3d(12, 10, 9);
                     std::vector<Index> scattered = linalg::random_subset(laplacian.size(), 45, 23);
                     std::shuffle(scattered.begin(), scattered.end(), std::mt19937(23));
                     return SchurProblem{std::move(laplacian), std::move(scattered)};
                   }});
  return cases;
}

class SchurVsMumps : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { linalg::set_blas_threads(1); }
};

TEST_P(SchurVsMumps, SameSchurComplementAndSolution) {
  const auto cases = schur_cases();
  const SchurCase& test_case = cases[static_cast<std::size_t>(GetParam())];
  const SchurProblem problem = test_case.problem();
  const SymmetricCscMatrix& a = problem.matrix;
  ASSERT_GT(problem.schur_set.size(), 10u);

  AnalyzeOptions options;
  options.schur_set = problem.schur_set;
  SchurComplementFactor partial(analyze(a, options));
  ASSERT_TRUE(partial.factorize(a, {.threads = 1}).ok()) << partial.status().message;
  const DenseMatrix ours = partial.schur_complement_symmetric();

  for (const bool our_order : {true, false}) {
    SCOPED_TRACE(our_order ? "MUMPS in our constrained order" : "MUMPS in its own order");
    reference::MumpsSolver mumps(a);
    mumps.analyze({.permutation = our_order ? partial.symbolic().permutation() : std::span<const Index>{},
                   .schur_set = problem.schur_set});
    mumps.factorize();
    const DenseMatrix theirs = mumps.schur_complement();
    ASSERT_EQ(theirs.rows(), ours.rows());
    EXPECT_LE(relative_max_difference(ours.storage(), theirs.storage()), 1e-10);
  }

  std::vector<double> b(static_cast<std::size_t>(a.size()));
  std::iota(b.begin(), b.end(), 1.0);
  std::vector<double> ours_x = b;
  SchurSystem schur(partial.schur_complement(), partial.schur_set());
  ASSERT_TRUE(schur.refactor().ok());
  partial.solve(schur, std::span<double>(ours_x));
  reference::MumpsSolver mumps(a);
  mumps.analyze({});
  mumps.factorize();
  std::vector<double> theirs_x = b;
  mumps.solve(theirs_x);
  EXPECT_LE(relative_max_difference(ours_x, theirs_x), 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Matrices, SchurVsMumps, ::testing::Range(0, 2),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return schur_cases()[static_cast<std::size_t>(info.param)].name;
                         });

#endif  // CHOLSIM_HAVE_MUMPS

}  // namespace
}  // namespace cholsim::factor
