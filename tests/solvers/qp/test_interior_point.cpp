#include "solvers/qp/interior_point.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "linalg/blas.hpp"
#include "qp_test_problems.hpp"

namespace cholsim::solvers::qp {
namespace {

using linalg::DenseMatrix;
using test_problems::HessianShape;
using test_problems::TestQp;

constexpr QpBackend both_backends[] = {QpBackend::schur_reduced, QpBackend::sparse};

InteriorPointResult solve_with(const QpProblem& problem, QpBackend backend) {
  InteriorPointOptions options;
  options.backend = backend;
  options.threads = 1;
  return solve_interior_point(problem, options);
}

/// max |a − b| / (1 + max |b|).
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double difference = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (!std::isfinite(a[i])) return std::numeric_limits<double>::infinity();
    difference = std::max(difference, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return difference / (1.0 + scale);
}

void expect_optimal(const InteriorPointResult& result, double tolerance = 1e-8) {
  EXPECT_EQ(result.solution.status, QpStatus::optimal) << result.solution.message;
  EXPECT_LE(result.stats.residuals.worst(), tolerance);
}

/// x, y and z of `result` against `reference` (a solution with unique x and multipliers).
void expect_same_solution(const QpSolution& solution, const QpSolution& reference, double tolerance) {
  EXPECT_LE(relative_difference(solution.x, reference.x), tolerance);
  EXPECT_LE(relative_difference(solution.equality_multipliers, reference.equality_multipliers), tolerance);
  EXPECT_LE(relative_difference(solution.inequality_multipliers, reference.inequality_multipliers), tolerance);
}

// ---- the brute-force reference: every active set, dense Cholesky ----------------------------

DenseMatrix dense_symmetric(const linalg::SymmetricCscMatrix& a) {
  DenseMatrix dense(a.size(), a.size());
  for (Index j = 0; j < a.size(); ++j) {
    for (auto k = a.lower.col_ptr[static_cast<std::size_t>(j)]; k < a.lower.col_ptr[static_cast<std::size_t>(j) + 1]; ++k) {
      const Index i = a.lower.row_idx[static_cast<std::size_t>(k)];
      dense(i, j) = dense(j, i) = a.lower.values[static_cast<std::size_t>(k)];
    }
  }
  return dense;
}

DenseMatrix dense_rows(const linalg::CscMatrix& a, Index n) {
  DenseMatrix dense(a.rows, n);
  for (Index j = 0; j < a.cols; ++j) {
    for (auto k = a.col_ptr[static_cast<std::size_t>(j)]; k < a.col_ptr[static_cast<std::size_t>(j) + 1]; ++k) {
      dense(a.row_idx[static_cast<std::size_t>(k)], j) = a.values[static_cast<std::size_t>(k)];
    }
  }
  return dense;
}

/// The minimizer of a QP with H positive definite and q ≤ 10, by enumeration: for every
/// active set A the equality-constrained problem with G = [E; C_A] is solved by the range-
/// space method (λ from G·H⁻¹·Gᵀ, dense potrf), and the KKT point with Cx ≥ c and z ≥ 0 of
/// least objective is kept.
QpSolution brute_force_solution(const QpProblem& problem) {
  const Index n = problem.variable_count(), p = problem.equality_count(), q = problem.inequality_count();
  DenseMatrix h_factor = dense_symmetric(problem.hessian);
  EXPECT_EQ(linalg::blas::potrf(h_factor.view()), 0);
  const DenseMatrix e = dense_rows(problem.equality, n), c = dense_rows(problem.inequality, n);
  QpSolution best;
  double best_objective = std::numeric_limits<double>::infinity();
  for (unsigned mask = 0; mask < (1u << q); ++mask) {
    std::vector<Index> active;
    for (Index i = 0; i < q; ++i) {
      if (mask & (1u << i)) active.push_back(i);
    }
    const Index rows = p + static_cast<Index>(active.size());
    DenseMatrix g(rows, n), h_inverse_gt(n, rows);
    std::vector<double> rhs(static_cast<std::size_t>(rows));
    for (Index r = 0; r < rows; ++r) {
      const bool equality = r < p;
      const Index source = equality ? r : active[static_cast<std::size_t>(r - p)];
      for (Index j = 0; j < n; ++j) g(r, j) = h_inverse_gt(j, r) = equality ? e(source, j) : c(source, j);
      rhs[static_cast<std::size_t>(r)] = equality ? problem.equality_rhs[static_cast<std::size_t>(source)]
                                                  : problem.inequality_rhs[static_cast<std::size_t>(source)];
    }
    linalg::blas::potrs(h_factor.view(), h_inverse_gt.view());
    std::vector<double> x(problem.linear);
    linalg::blas::potrs(h_factor.view(), {x.data(), n, 1, n});  // H⁻¹b
    std::vector<double> lambda(rhs);                             // g − G·H⁻¹b
    if (rows > 0) {
      linalg::blas::gemv(linalg::blas::Transpose::no, -1.0, g.view(), x.data(), 1.0, lambda.data());
      DenseMatrix schur(rows, rows);
      linalg::blas::gemm(linalg::blas::Transpose::no, linalg::blas::Transpose::no, 1.0, g.view(),
                         h_inverse_gt.view(), 0.0, schur.view());
      if (linalg::blas::potrf(schur.view()) != 0) continue;  // G without full row rank
      linalg::blas::potrs(schur.view(), {lambda.data(), rows, 1, rows});
      linalg::blas::gemv(linalg::blas::Transpose::no, 1.0, h_inverse_gt.view(), lambda.data(), 1.0, x.data());
    }
    QpSolution candidate;
    candidate.x = x;
    candidate.equality_multipliers.assign(lambda.begin(), lambda.begin() + p);
    candidate.inequality_multipliers.assign(static_cast<std::size_t>(q), 0.0);
    for (std::size_t k = 0; k < active.size(); ++k) {
      candidate.inequality_multipliers[static_cast<std::size_t>(active[k])] = lambda[static_cast<std::size_t>(p) + k];
    }
    const KktResiduals residuals = kkt_residuals(problem, candidate);
    if (residuals.inequality > 1e-12 || residuals.dual_sign > 1e-12) continue;
    const double value = objective(problem, x);
    if (value < best_objective) {
      best_objective = value;
      best = candidate;
      best.status = QpStatus::optimal;
    }
  }
  return best;
}

TEST(InteriorPoint, MatchesTheActiveSetEnumerationOnTinyProblems) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const Index p = seed % 3 == 0 ? 0 : 2;
    const Index q = 4 + static_cast<Index>(seed % 5);
    // Fresh right-hand sides (not the generator's KKT point) so that the active set is
    // whatever the data make it, then the enumeration decides.
    QpProblem problem = test_problems::random_qp(8, p, q, seed, {.bandwidth = 7, .entries_per_row = 4}).problem;
    for (std::size_t i = 0; i < problem.linear.size(); ++i) problem.linear[i] = std::sin(1.7 * static_cast<double>(i + seed));
    for (std::size_t i = 0; i < problem.inequality_rhs.size(); ++i) problem.inequality_rhs[i] = std::cos(static_cast<double>(i * seed)) - 0.5;
    const QpSolution reference = brute_force_solution(problem);
    ASSERT_EQ(reference.status, QpStatus::optimal) << "seed " << seed;
    for (const QpBackend backend : both_backends) {
      const auto result = solve_with(problem, backend);
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::string(to_string(backend)));
      expect_optimal(result);
      EXPECT_LE(relative_difference(result.solution.x, reference.x), 1e-8);
      EXPECT_NEAR(objective(problem, result.solution.x), objective(problem, reference.x), 1e-9);
    }
  }
}

struct RandomCase {
  Index n, p, q, constrained;
  HessianShape shape;
};

TEST(InteriorPoint, RandomProblemsReachTheConstructedKktPointWithBothBackends) {
  const RandomCase cases[] = {
      {30, 0, 20, 0, HessianShape::banded_definite},    // small, every column constrained
      {30, 5, 12, 0, HessianShape::banded_definite},
      {40, 4, 10, 20, HessianShape::semidefinite},
      {400, 6, 40, 60, HessianShape::banded_definite},
      {400, 8, 30, 60, HessianShape::semidefinite},
      {2000, 10, 80, 100, HessianShape::banded_definite},
      {2000, 0, 60, 100, HessianShape::semidefinite},
  };
  std::uint64_t seed = 100;
  for (const RandomCase& c : cases) {
    const TestQp generated = test_problems::random_qp(
        c.n, c.p, c.q, ++seed, {.hessian = c.shape, .bandwidth = c.n <= 40 ? 8 : 3, .constrained_count = c.constrained});
    const auto schur = solve_with(generated.problem, QpBackend::schur_reduced);
    const auto sparse = solve_with(generated.problem, QpBackend::sparse);
    SCOPED_TRACE("n = " + std::to_string(c.n) + ", p = " + std::to_string(c.p) + ", q = " + std::to_string(c.q));
    expect_optimal(schur);
    expect_optimal(sparse);
    expect_same_solution(schur.solution, sparse.solution, 1e-9);
    expect_same_solution(schur.solution, generated.reference, 1e-8);
    EXPECT_EQ(schur.stats.schur_size, static_cast<Index>(constrained_columns(generated.problem).size()));
  }
}

TEST(InteriorPoint, ClothLikeProblemWithPinsAndContacts) {
  // 3·24·24 = 1728 unknowns, 30 constrained nodes (90 Schur columns), 4 of them pinned.
  const TestQp generated = test_problems::cloth_like_qp(24, 24, 30, 17, {.equality_nodes = 4});
  for (const QpBackend backend : both_backends) {
    SCOPED_TRACE(std::string(to_string(backend)));
    const auto result = solve_with(generated.problem, backend);
    expect_optimal(result);
    expect_same_solution(result.solution, generated.reference, 1e-8);
  }
}

TEST(InteriorPoint, ProblemsWithoutSomeKindsOfConstraints) {
  struct Case {
    Index p, q;
  };
  for (const Case c : {Case{0, 0}, Case{5, 0}, Case{0, 9}}) {
    const TestQp generated = test_problems::random_qp(60, c.p, c.q, 31, {.constrained_count = 20});
    for (const QpBackend backend : {QpBackend::automatic, QpBackend::schur_reduced, QpBackend::sparse}) {
      SCOPED_TRACE("p = " + std::to_string(c.p) + ", q = " + std::to_string(c.q) + ", " + std::string(to_string(backend)));
      const auto result = solve_with(generated.problem, backend);
      expect_optimal(result);
      expect_same_solution(result.solution, generated.reference, 1e-9);
    }
  }
}

TEST(InteriorPoint, DegenerateProblemsConverge) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const TestQp generated = test_problems::degenerate_qp(50, 3, 20, seed);
    for (const QpBackend backend : both_backends) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::string(to_string(backend)));
      const auto result = solve_with(generated.problem, backend);
      expect_optimal(result);
      // Redundant rows make the multipliers non-unique; x and the objective are not. Weakly
      // active rows (s = z = 0 at the optimum) converge like √μ, hence the looser x bound.
      EXPECT_LE(relative_difference(result.solution.x, generated.reference.x), 1e-4);
      const double optimum = objective(generated.problem, generated.reference.x);
      EXPECT_NEAR(objective(generated.problem, result.solution.x), optimum, 1e-9 * (1.0 + std::abs(optimum)));
    }
  }
}

TEST(InteriorPoint, InfeasibleProblemsAreReported) {
  using test_problems::InfeasibleKind;
  for (const InfeasibleKind kind : {InfeasibleKind::inequalities, InfeasibleKind::equalities, InfeasibleKind::mixed}) {
    const TestQp generated = test_problems::infeasible_qp(40, 3 + static_cast<std::uint64_t>(kind), kind);
    for (const QpBackend backend : both_backends) {
      SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)) + ", " + std::string(to_string(backend)));
      const auto result = solve_with(generated.problem, backend);
      EXPECT_EQ(result.solution.status, QpStatus::infeasible) << result.solution.message;
      EXPECT_NE(result.solution.message.find("infeasible"), std::string::npos);
      EXPECT_LT(result.solution.iterations, 40);  // detected, not run into the iteration limit
    }
  }
}

TEST(InteriorPoint, UnboundedProblemsAreReported) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const TestQp generated = test_problems::unbounded_qp(40, seed);
    for (const QpBackend backend : both_backends) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::string(to_string(backend)));
      const auto result = solve_with(generated.problem, backend);
      EXPECT_EQ(result.solution.status, QpStatus::unbounded) << result.solution.message;
      EXPECT_NE(result.solution.message.find("unbounded"), std::string::npos);
      EXPECT_LT(result.solution.iterations, 40);
    }
  }
}

/// `problem` with row and column j of H replaced by explicit zeros.
QpProblem with_zero_hessian_column(QpProblem problem, Index j) {
  auto& lower = problem.hessian.lower;
  for (Index column = 0; column < lower.cols; ++column) {
    for (auto k = lower.col_ptr[static_cast<std::size_t>(column)]; k < lower.col_ptr[static_cast<std::size_t>(column) + 1]; ++k) {
      if (column == j || lower.row_idx[static_cast<std::size_t>(k)] == j) lower.values[static_cast<std::size_t>(k)] = 0.0;
    }
  }
  return problem;
}

TEST(InteriorPoint, SchurReductionReportsAnUnconstrainedBlockThatIsNotDefiniteAndAutomaticFallsBack) {
  const QpProblem base = test_problems::random_qp(30, 2, 6, 8, {.constrained_count = 10}).problem;
  const auto constrained = constrained_columns(base);
  Index free_column = 0;
  while (std::binary_search(constrained.begin(), constrained.end(), free_column)) ++free_column;
  QpProblem problem = with_zero_hessian_column(base, free_column);
  problem.linear[static_cast<std::size_t>(free_column)] = 0.0;
  const auto result = solve_with(problem, QpBackend::schur_reduced);
  EXPECT_EQ(result.solution.status, QpStatus::numerical_failure);
  EXPECT_NE(result.solution.message.find("H11"), std::string::npos) << result.solution.message;
  EXPECT_NE(result.solution.message.find("column " + std::to_string(free_column)), std::string::npos)
      << result.solution.message;
  EXPECT_EQ(result.solution.x.size(), 30u);
  // The sparse back end factors H + CᵀDC + ρEᵀE + δI instead and is not stopped by it: x_j is
  // free (H e_j = 0, b_j = 0), every other unknown optimal.
  const auto sparse = solve_with(problem, QpBackend::sparse);
  EXPECT_EQ(sparse.solution.status, QpStatus::optimal) << sparse.solution.message;
  // Left to choose, the method picks the Schur reduction for this shape (m = 10 of 30) and,
  // finding H11 singular, hands the problem to the sparse back end.
  ASSERT_EQ(solve_with(base, QpBackend::automatic).stats.backend, QpBackend::schur_reduced);
  const auto automatic = solve_with(problem, QpBackend::automatic);
  EXPECT_EQ(automatic.stats.backend, QpBackend::sparse);
  EXPECT_EQ(automatic.solution.status, QpStatus::optimal) << automatic.solution.message;
  EXPECT_LE(automatic.stats.residuals.worst(), 1e-6);
}

TEST(InteriorPoint, MalformedInputThrows) {
  QpProblem problem = test_problems::random_qp(10, 1, 3, 2).problem;
  problem.inequality_rhs.pop_back();
  EXPECT_THROW((void)solve_interior_point(problem), std::invalid_argument);
  InteriorPointOptions options;
  options.warm_start.assign(9, 0.0);
  try {
    (void)solve_interior_point(test_problems::random_qp(10, 1, 3, 2).problem, options);
    FAIL() << "a warm start of the wrong size was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("warm start has 9 entries, expected 10"), std::string::npos) << error.what();
  }
  options.warm_start.assign(10, std::numeric_limits<double>::quiet_NaN());
  EXPECT_THROW((void)solve_interior_point(test_problems::random_qp(10, 1, 3, 2).problem, options), std::invalid_argument);
}

TEST(InteriorPoint, WarmStartAtTheSolutionStillConverges) {
  const TestQp generated = test_problems::random_qp(200, 4, 30, 12, {.constrained_count = 40});
  for (const QpBackend backend : both_backends) {
    InteriorPointOptions options;
    options.backend = backend;
    options.warm_start = generated.reference.x;
    const auto result = solve_interior_point(generated.problem, options);
    expect_optimal(result);
    expect_same_solution(result.solution, generated.reference, 1e-9);
  }
}

TEST(InteriorPoint, IterationLimitIsReported) {
  const TestQp generated = test_problems::random_qp(100, 3, 30, 4, {.constrained_count = 30});
  InteriorPointOptions options;
  options.max_iterations = 1;
  const auto result = solve_interior_point(generated.problem, options);
  EXPECT_EQ(result.solution.status, QpStatus::iteration_limit);
  EXPECT_EQ(result.solution.iterations, 1);
  EXPECT_NE(result.solution.message.find("after 1 iterations"), std::string::npos) << result.solution.message;
}

TEST(InteriorPoint, AnAcceptableIterateIsReturnedAsOptimalAtTheIterationLimit) {
  const TestQp generated = test_problems::random_qp(100, 3, 30, 4, {.constrained_count = 30});
  InteriorPointOptions options;
  options.max_iterations = 4;
  const auto limited = solve_interior_point(generated.problem, options);
  ASSERT_EQ(limited.solution.status, QpStatus::iteration_limit);
  double best = limited.stats.history.front().residual;
  for (const auto& record : limited.stats.history) best = std::min(best, record.residual);
  ASSERT_GT(best, options.tolerance);
  options.acceptable_tolerance = 2.0 * best;
  const auto accepted = solve_interior_point(generated.problem, options);
  EXPECT_EQ(accepted.solution.status, QpStatus::optimal);
  EXPECT_NE(accepted.solution.message.find("accepted the iterate"), std::string::npos) << accepted.solution.message;
  EXPECT_EQ(accepted.solution.iterations, 4);
  // The returned point is the best iterate: as close to the constructed solution as the
  // limited run's last one (here the residuals fall monotonically, so they are the same).
  EXPECT_EQ(accepted.solution.x, limited.solution.x);
  options.acceptable_tolerance = 0.5 * best;  // no iterate within it: the limit is reported
  EXPECT_EQ(solve_interior_point(generated.problem, options).solution.status, QpStatus::iteration_limit);
}

TEST(InteriorPoint, AutomaticBackendFollowsItsRule) {
  const QpProblem few = test_problems::random_qp(400, 2, 20, 5, {.constrained_count = 40}).problem;
  const QpProblem many = test_problems::random_qp(60, 2, 40, 5).problem;  // every column constrained
  EXPECT_EQ(solve_interior_point(few).stats.backend, QpBackend::schur_reduced);
  EXPECT_EQ(solve_interior_point(many).stats.backend, QpBackend::sparse);
  InteriorPointOptions small_limit;
  small_limit.automatic_schur_limit = 10;
  EXPECT_EQ(solve_interior_point(few, small_limit).stats.backend, QpBackend::sparse);
}

TEST(InteriorPoint, StatisticsDescribeTheSolve) {
  const TestQp generated = test_problems::random_qp(500, 3, 25, 9, {.constrained_count = 50});
  const auto schur = solve_with(generated.problem, QpBackend::schur_reduced);
  const auto& stats = schur.stats;
  EXPECT_EQ(stats.backend, QpBackend::schur_reduced);
  EXPECT_EQ(stats.variables, 500);
  EXPECT_EQ(stats.schur_size, static_cast<Index>(constrained_columns(generated.problem).size()));
  EXPECT_EQ(stats.iterations, schur.solution.iterations);
  EXPECT_EQ(stats.history.size(), static_cast<std::size_t>(stats.iterations) + 1);
  EXPECT_EQ(stats.refactorizations, stats.iterations + 1);  // the start and every step
  EXPECT_GT(stats.setup_factorization_seconds, 0.0);
  EXPECT_GT(stats.refactor_seconds, 0.0);
  EXPECT_GE(stats.max_refactor_seconds * stats.refactorizations, stats.refactor_seconds);
  EXPECT_GE(stats.total_seconds, stats.refactor_seconds + stats.solve_seconds);
  EXPECT_GT(stats.equality_penalty, 0.0);
  EXPECT_LE(stats.history.back().residual, 1e-10);
  for (std::size_t k = 0; k + 1 < stats.history.size(); ++k) {
    EXPECT_GT(stats.history[k].step, 0.0);
    EXPECT_LE(stats.history[k].step, 1.0);
  }
  const auto sparse = solve_with(generated.problem, QpBackend::sparse);
  EXPECT_EQ(sparse.stats.schur_size, 0);
  EXPECT_EQ(sparse.stats.refactorizations, sparse.stats.iterations);  // the first is the setup
  EXPECT_GT(sparse.stats.analyze_seconds, 0.0);
}

}  // namespace
}  // namespace cholsim::solvers::qp
