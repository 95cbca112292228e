// The Woodbury route for S + W·C·Wᵀ (factor/schur/schur_low_rank) against the dense
// refactorization it replaces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "factor/schur/schur_low_rank.hpp"
#include "linalg/blas.hpp"

namespace cholsim::factor {
namespace {

linalg::DenseMatrix random_spd(Index m, std::mt19937& random) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  linalg::DenseMatrix a(m, m);
  for (Index j = 0; j < m; ++j) {
    for (Index i = j; i < m; ++i) a(i, j) = a(j, i) = uniform(random);
    a(j, j) += static_cast<double>(m);
  }
  return a;
}

// p springs of 4 or 8 entries (a proxy's tet, or a bilateral pair), weights of either sign.
linalg::CscMatrix random_springs(Index m, Index p, std::mt19937& random) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  linalg::Triplets triplets;
  for (Index q = 0; q < p; ++q) {
    const int entries = q % 2 == 0 ? 4 : 8;
    for (int k = 0; k < entries; ++k) triplets.add(static_cast<Index>(random() % m), q, uniform(random));
  }
  return linalg::csc_from_triplets(m, p, triplets);
}

TEST(SchurLowRank, EqualsDenseRefactorizationOfTheUpdatedMatrix) {
  std::mt19937 random(11);
  for (Index p : {0, 1, 7, 40}) {
    const Index m = 60;
    const linalg::DenseMatrix s = random_spd(m, random);
    const linalg::CscMatrix w = random_springs(m, p, random);
    std::vector<double> c(static_cast<std::size_t>(p));
    for (double& k : c) k = 1e3 * (1.0 + std::abs(std::uniform_real_distribution<double>(-1.0, 1.0)(random)));
    linalg::DenseMatrix updated = s;
    for (Index q = 0; q < p; ++q) {
      for (auto a = w.col_ptr[static_cast<std::size_t>(q)]; a < w.col_ptr[static_cast<std::size_t>(q) + 1]; ++a) {
        for (auto b = w.col_ptr[static_cast<std::size_t>(q)]; b < w.col_ptr[static_cast<std::size_t>(q) + 1]; ++b) {
          updated(w.row_idx[static_cast<std::size_t>(a)], w.row_idx[static_cast<std::size_t>(b)]) +=
              c[static_cast<std::size_t>(q)] * w.values[static_cast<std::size_t>(a)] * w.values[static_cast<std::size_t>(b)];
        }
      }
    }
    linalg::DenseMatrix b(m, 3);
    for (Index j = 0; j < 3; ++j) {
      for (Index i = 0; i < m; ++i) b(i, j) = std::uniform_real_distribution<double>(-1.0, 1.0)(random);
    }
    linalg::DenseMatrix reference = b;
    ASSERT_EQ(linalg::blas::potrf(updated.view()), 0);
    linalg::blas::potrs(updated.view(), reference.view());

    SchurLowRankSolver solver(s.view());
    ASSERT_TRUE(solver.refactor(w, c).ok());
    solver.solve(b.view());
    double worst = 0.0;
    double scale = 0.0;
    for (Index j = 0; j < 3; ++j) {
      for (Index i = 0; i < m; ++i) {
        worst = std::max(worst, std::abs(b(i, j) - reference(i, j)));
        scale = std::max(scale, std::abs(reference(i, j)));
      }
    }
    EXPECT_LE(worst, 1e-12 * scale) << p << " springs";
  }
}

TEST(SchurLowRank, RejectsNonPositiveStiffnessAndSolveWithoutFactor) {
  std::mt19937 random(5);
  const linalg::DenseMatrix s = random_spd(20, random);
  SchurLowRankSolver solver(s.view());
  linalg::DenseMatrix b(20, 1);
  EXPECT_THROW(solver.solve(b.view()), std::logic_error);
  const linalg::CscMatrix w = random_springs(20, 3, random);
  const std::vector<double> c{1.0, 0.0, 2.0};
  const FactorStatus& status = solver.refactor(w, c);
  EXPECT_EQ(status.code, FactorStatusCode::not_positive_definite);
  EXPECT_EQ(status.column, 1);
  EXPECT_THROW(solver.solve(b.view()), std::logic_error);
  linalg::DenseMatrix indefinite = s;
  indefinite(3, 3) = -1e6;
  EXPECT_THROW(SchurLowRankSolver{indefinite.view()}, std::runtime_error);
}

TEST(SchurLowRank, PrefersTheWoodburyRouteOnlyForFewSprings) {
  EXPECT_TRUE(SchurLowRankSolver::prefer_low_rank(4000, 300));
  EXPECT_TRUE(SchurLowRankSolver::prefer_low_rank(4000, 0));
  EXPECT_FALSE(SchurLowRankSolver::prefer_low_rank(4000, 3000));
}

}  // namespace
}  // namespace cholsim::factor
