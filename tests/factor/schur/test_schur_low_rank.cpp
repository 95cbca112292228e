// The Woodbury route for S + W·C·Wᵀ (factor/schur/schur_low_rank) against the dense
// refactorization it replaces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "factor/schur/schur_low_rank.hpp"
#include "linalg/blas.hpp"
#include "linalg/generators.hpp"

namespace cholsim::factor {
namespace {

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

std::vector<double> random_stiffnesses(Index p, std::mt19937& random) {
  std::vector<double> c(static_cast<std::size_t>(p));
  for (double& k : c) k = 1e3 * (1.0 + std::abs(std::uniform_real_distribution<double>(-1.0, 1.0)(random)));
  return c;
}

linalg::DenseMatrix random_right_hand_sides(Index m, std::mt19937& random) {
  linalg::DenseMatrix b(m, 3);
  for (Index j = 0; j < 3; ++j) {
    for (Index i = 0; i < m; ++i) b(i, j) = std::uniform_real_distribution<double>(-1.0, 1.0)(random);
  }
  return b;
}

// (S + W·C·Wᵀ)⁻¹·B by forming S + W·C·Wᵀ and factoring it densely: seed 004's route.
linalg::DenseMatrix dense_solution(const linalg::DenseMatrix& s, const linalg::CscMatrix& w,
                                   std::span<const double> c, const linalg::DenseMatrix& b) {
  linalg::DenseMatrix updated = s;
  for (Index q = 0; q < w.cols; ++q) {
    for (auto a = w.col_ptr[static_cast<std::size_t>(q)]; a < w.col_ptr[static_cast<std::size_t>(q) + 1]; ++a) {
      for (auto k = w.col_ptr[static_cast<std::size_t>(q)]; k < w.col_ptr[static_cast<std::size_t>(q) + 1]; ++k) {
        updated(w.row_idx[static_cast<std::size_t>(a)], w.row_idx[static_cast<std::size_t>(k)]) +=
            c[static_cast<std::size_t>(q)] * w.values[static_cast<std::size_t>(a)] * w.values[static_cast<std::size_t>(k)];
      }
    }
  }
  linalg::DenseMatrix x = b;
  EXPECT_EQ(linalg::blas::potrf(updated.view()), 0);
  linalg::blas::potrs(updated.view(), x.view());
  return x;
}

// max |x − reference| / max |reference|.
double relative_error(const linalg::DenseMatrix& x, const linalg::DenseMatrix& reference) {
  double worst = 0.0;
  double scale = 0.0;
  for (std::size_t i = 0; i < reference.storage().size(); ++i) {
    worst = std::max(worst, std::abs(x.storage()[i] - reference.storage()[i]));
    scale = std::max(scale, std::abs(reference.storage()[i]));
  }
  return worst / scale;
}

TEST(SchurLowRank, EqualsDenseRefactorizationOfTheUpdatedMatrix) {
  std::mt19937 random(11);
  for (Index p : {0, 1, 7, 40}) {
    const Index m = 60;
    const linalg::DenseMatrix s = linalg::random_dominant_spd_matrix(m, random());
    const linalg::CscMatrix w = random_springs(m, p, random);
    const std::vector<double> c = random_stiffnesses(p, random);
    const linalg::DenseMatrix b = random_right_hand_sides(m, random);
    SchurLowRankSolver solver(s.view());
    ASSERT_TRUE(solver.refactor(w, c).ok());
    linalg::DenseMatrix x = b;
    solver.solve(x.view());
    EXPECT_LE(relative_error(x, dense_solution(s, w, c, b)), 1e-12) << p << " springs";
  }
}

// S⁻¹ is kept in row tiles of 32 (m = 700 ends in a partial tile, m = 2080 does not), with
// H's storage kept between refactorizations: more springs, fewer, more again must each give the
// dense route's solution, on one thread and on two (not the same bits: OpenBLAS's potrf and
// gemm round differently by threads).
TEST(SchurLowRank, TiledFormationEqualsDenseRouteAcrossRefactorizationsAndThreadCounts) {
  std::mt19937 random(23);
  for (const Index m : {700, 2080}) {
    const linalg::DenseMatrix s = linalg::random_dominant_spd_matrix(m, random());
    SchurLowRankSolver two_threads(s.view(), 2);
    SchurLowRankSolver one_thread(s.view(), 1);
    for (const Index p : {m / 3, m / 10, m / 2}) {
      const linalg::CscMatrix w = random_springs(m, p, random);
      const std::vector<double> c = random_stiffnesses(p, random);
      const linalg::DenseMatrix b = random_right_hand_sides(m, random);
      ASSERT_TRUE(two_threads.refactor(w, c).ok());
      ASSERT_TRUE(one_thread.refactor(w, c).ok());
      linalg::DenseMatrix x = b;
      linalg::DenseMatrix x_one_thread = b;
      two_threads.solve(x.view());
      one_thread.solve(x_one_thread.view());
      const linalg::DenseMatrix reference = dense_solution(s, w, c, b);
      EXPECT_LE(relative_error(x, reference), 1e-12) << "m = " << m << ", p = " << p;
      EXPECT_LE(relative_error(x_one_thread, reference), 1e-12) << "m = " << m << ", p = " << p;
    }
  }
}

// refactor_and_solve forms S⁻¹B in the pass that forms S⁻¹W: the same solution as refactor()
// then solve(), for right-hand sides taken three at a time and one at a time (1–5 columns), on
// Schur sizes with and without a partial last tile, with and without springs.
TEST(SchurLowRank, RefactorAndSolveEqualsRefactorThenSolve) {
  std::mt19937 random(31);
  for (const Index m : {17, 96, 333}) {
    const linalg::DenseMatrix s = linalg::random_dominant_spd_matrix(m, random());
    SchurLowRankSolver solver(s.view(), 2);
    for (const Index p : {Index{0}, m / 5}) {
      for (const Index columns : {1, 2, 3, 4, 5}) {
        const linalg::CscMatrix w = random_springs(m, p, random);
        const std::vector<double> c = random_stiffnesses(p, random);
        linalg::DenseMatrix b(m, columns);
        for (double& value : b.storage()) value = std::uniform_real_distribution<double>(-1.0, 1.0)(random);
        linalg::DenseMatrix fused = b;
        ASSERT_TRUE(solver.refactor_and_solve(w, c, fused.view()).ok());
        linalg::DenseMatrix separate = b;
        ASSERT_TRUE(solver.refactor(w, c).ok());
        solver.solve(separate.view());
        EXPECT_LE(relative_error(fused, separate), 1e-13) << "m = " << m << ", p = " << p << ", " << columns << " columns";
        EXPECT_LE(relative_error(fused, dense_solution(s, w, c, b)), 1e-12) << "m = " << m << ", p = " << p;
      }
    }
  }
}

TEST(SchurLowRank, RejectsNonPositiveStiffnessAndSolveWithoutFactor) {
  std::mt19937 random(5);
  const linalg::DenseMatrix s = linalg::random_dominant_spd_matrix(20, random());
  SchurLowRankSolver solver(s.view());
  linalg::DenseMatrix b(20, 1);
  EXPECT_THROW(solver.solve(b.view()), std::logic_error);
  const linalg::CscMatrix w = random_springs(20, 3, random);
  const std::vector<double> c{1.0, 0.0, 2.0};
  const FactorStatus& status = solver.refactor(w, c);
  EXPECT_EQ(status.code, FactorStatusCode::not_positive_definite);
  EXPECT_EQ(status.column, 1);
  EXPECT_THROW(solver.solve(b.view()), std::logic_error);
  b(4, 0) = 2.5;  // a failed refactor_and_solve leaves B as it was
  EXPECT_EQ(solver.refactor_and_solve(w, c, b.view()).code, FactorStatusCode::not_positive_definite);
  EXPECT_EQ(b(4, 0), 2.5);
  EXPECT_THROW(solver.solve(b.view()), std::logic_error);
  linalg::DenseMatrix indefinite = s;
  indefinite(3, 3) = -1e6;
  EXPECT_THROW(SchurLowRankSolver{indefinite.view()}, std::runtime_error);
}

TEST(SchurLowRank, PrefersTheWoodburyRouteOnlyForFewSprings) {
  EXPECT_TRUE(SchurLowRankSolver::prefer_low_rank(4000, 300));
  EXPECT_TRUE(SchurLowRankSolver::prefer_low_rank(4000, 0));
  EXPECT_TRUE(SchurLowRankSolver::prefer_low_rank(4000, 3350));
  EXPECT_FALSE(SchurLowRankSolver::prefer_low_rank(4000, 3400));
  EXPECT_FALSE(SchurLowRankSolver::prefer_low_rank(4000, 4000));
}

}  // namespace
}  // namespace cholsim::factor
