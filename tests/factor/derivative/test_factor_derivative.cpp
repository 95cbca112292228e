// The factor's time derivative L̇ (seed 002 ch. 5, app. C.1): the defining identity, the dense
// column algorithm 5.2, finite differences (eq. 5.8), linearity, threads, and the extrapolated
// factor L + Δt·L̇ (eq. 5.4) as a direct solver and a PCG preconditioner.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

#include "factor/derivative/extrapolated_factor.hpp"
#include "factor/derivative/factor_derivative.hpp"
#include "linalg/generators.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

using testing::NamedMatrix;

// A symmetric Ȧ on a's pattern with random values of either sign (not definite).
linalg::SymmetricCscMatrix random_derivative(const linalg::SymmetricCscMatrix& a, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  linalg::SymmetricCscMatrix a_dot = a;
  for (double& v : a_dot.lower.values) v = value(rng);
  return a_dot;
}

linalg::SymmetricCscMatrix combination(double alpha, const linalg::SymmetricCscMatrix& x, double beta,
                                       const linalg::SymmetricCscMatrix& y) {
  linalg::SymmetricCscMatrix result = x;
  for (std::size_t p = 0; p < result.lower.values.size(); ++p) {
    result.lower.values[p] = alpha * x.lower.values[p] + beta * y.lower.values[p];
  }
  return result;
}

// Dense lower-triangular n×n matrix from a CSC factor in elimination numbering.
linalg::DenseMatrix dense_lower(const linalg::CscMatrix& l) {
  linalg::DenseMatrix d(l.rows, l.cols);
  for (Index c = 0; c < l.cols; ++c) {
    for (linalg::Offset p = l.col_ptr[c]; p < l.col_ptr[c + 1]; ++p) d(l.row_idx[p], c) = l.values[p];
  }
  return d;
}

// Thesis Algorithm 5.2 (column-pivoting dense Cholesky with derivative), with the loop bounds of
// its lines 14–16 read as the rows below the pivot.
void dense_cholesky_with_derivative(linalg::DenseMatrix& l, linalg::DenseMatrix& l_dot) {
  const Index n = l.rows();
  for (Index j = 0; j < n; ++j) {
    for (Index k = 0; k < j; ++k) {
      for (Index i = j; i < n; ++i) {
        l(i, j) -= l(i, k) * l(j, k);
        l_dot(i, j) -= l_dot(i, k) * l(j, k) + l(i, k) * l_dot(j, k);
      }
    }
    l(j, j) = std::sqrt(l(j, j));
    l_dot(j, j) = 0.5 * l_dot(j, j) / l(j, j);
    for (Index i = j + 1; i < n; ++i) {
      l(i, j) /= l(j, j);
      l_dot(i, j) = (l_dot(i, j) - l(i, j) * l_dot(j, j)) / l(j, j);
    }
  }
}

linalg::DenseMatrix permuted_dense(const linalg::SymmetricCscMatrix& a, std::span<const Index> perm) {
  const linalg::DenseMatrix dense = linalg::to_dense(a);
  const Index n = a.size();
  linalg::DenseMatrix permuted(n, n);
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < n; ++i) permuted(i, j) = dense(perm[i], perm[j]);
  }
  return permuted;
}

class DerivativeShapes : public ::testing::TestWithParam<std::tuple<int, OrderingMethod>> {};

// L̇·Lᵀ + L·L̇ᵀ = Ȧ on Ȧ's pattern, and L̇ equals the dense column algorithm 5.2 on P·A·Pᵀ.
TEST_P(DerivativeShapes, SatisfiesIdentityAndEqualsDenseAlgorithm) {
  const auto matrices = testing::spd_test_matrices();
  const auto [index, ordering] = GetParam();
  ASSERT_LT(index, static_cast<int>(matrices.size()));
  const NamedMatrix& named = matrices[static_cast<std::size_t>(index)];
  SCOPED_TRACE(named.name);
  const auto& a = named.matrix;
  const auto a_dot = random_derivative(a, 17 + static_cast<unsigned>(index));
  AnalyzeOptions options;
  options.ordering = ordering;
  const auto symbolic = analyze(a, options);
  FactorDerivative ldot(symbolic);
  ASSERT_TRUE(ldot.factorize_with_derivative(a, a_dot, {.threads = 2}).ok()) << ldot.status().message;

  const double residual = derivative_identity_residual(*symbolic, ldot.factor().values(),
                                                       ldot.derivative_values(), a_dot);
  EXPECT_LE(residual, 1e-12);

  const Index n = a.size();
  linalg::DenseMatrix l = permuted_dense(a, symbolic->permutation());
  linalg::DenseMatrix l_dot = permuted_dense(a_dot, symbolic->permutation());
  dense_cholesky_with_derivative(l, l_dot);
  const linalg::DenseMatrix ours = dense_lower(ldot.derivative_matrix());
  double scale = 0.0;
  for (Index j = 0; j < n; ++j) {
    for (Index i = j; i < n; ++i) scale = std::max(scale, std::abs(l_dot(i, j)));
  }
  for (Index j = 0; j < n; ++j) {
    for (Index i = j; i < n; ++i) {
      ASSERT_NEAR(ours(i, j), l_dot(i, j), 1e-12 * scale) << "L̇(" << i << ", " << j << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllShapes, DerivativeShapes,
                         ::testing::Combine(::testing::Range(0, 13),
                                            ::testing::Values(OrderingMethod::nested_dissection,
                                                              OrderingMethod::natural)));

// An elasticity box big enough for multi-panel supernodes (the recursive column split of
// differentiate_front) and a tree-parallel schedule.
struct ElasticityCase {
  linalg::SymmetricCscMatrix a;
  linalg::SymmetricCscMatrix a_dot;
  std::shared_ptr<const Symbolic> symbolic;
};

ElasticityCase elasticity_case() {
  ElasticityCase c;
  c.a = linalg::elasticity_matrix({.nx = 7, .ny = 6, .nz = 9});
  // A smooth Ȧ: A's own entries modulated along the index, scaled to A's size.
  c.a_dot = c.a;
  const auto& col_ptr = c.a.lower.col_ptr;
  for (Index j = 0; j < c.a.size(); ++j) {
    for (linalg::Offset p = col_ptr[j]; p < col_ptr[j + 1]; ++p) {
      c.a_dot.lower.values[p] *= std::cos(0.01 * static_cast<double>(j + c.a.lower.row_idx[p]));
    }
  }
  AnalyzeOptions options;
  options.dofs_per_node = 3;
  c.symbolic = analyze(c.a, options);
  return c;
}

TEST(FactorDerivative, ElasticityIdentityAndCentralDifference) {
  const ElasticityCase c = elasticity_case();
  ASSERT_GT(c.symbolic->stats().largest_supernode_columns, 128);  // exercises the column split
  FactorDerivative ldot(c.symbolic);
  ASSERT_TRUE(ldot.factorize_with_derivative(c.a, c.a_dot, {.threads = 2}).ok());
  EXPECT_LE(derivative_identity_residual(*c.symbolic, ldot.factor().values(), ldot.derivative_values(),
                                         c.a_dot),
            1e-10);

  const auto central = finite_difference_derivative(c.symbolic, c.a, c.a_dot);
  ASSERT_TRUE(central.status.ok()) << central.status.message;
  EXPECT_LE(relative_difference(central.values, ldot.derivative_values()), 1e-6);
  FiniteDifferenceOptions forward_options;
  forward_options.scheme = FiniteDifferenceScheme::forward;
  const auto forward = finite_difference_derivative(c.symbolic, c.a, c.a_dot, forward_options);
  ASSERT_TRUE(forward.status.ok()) << forward.status.message;
  const double forward_error = relative_difference(forward.values, ldot.derivative_values());
  EXPECT_LE(forward_error, 1e-4);
  // Central differences are the more accurate at their own default step.
  EXPECT_LT(relative_difference(central.values, ldot.derivative_values()), forward_error);
  EXPECT_GT(forward.epsilon, 0.0);
  EXPECT_GT(central.epsilon, forward.epsilon);

  // A step far too large shows the truncation error: the check can fail.
  forward_options.epsilon = 1e4 * forward.epsilon;
  const auto coarse = finite_difference_derivative(c.symbolic, c.a, c.a_dot, forward_options);
  ASSERT_TRUE(coarse.status.ok());
  EXPECT_GT(relative_difference(coarse.values, ldot.derivative_values()), 1e-6);

  // Stats: L̇ costs flops of the same order as L, both sized like L.
  const DerivativeFactorStats& stats = ldot.stats();
  EXPECT_EQ(stats.derivative_bytes, stats.factor_bytes);
  EXPECT_EQ(stats.factor_bytes, c.symbolic->stats().factor_bytes);
  EXPECT_GT(stats.derivative_flops, stats.factor_flops);
  EXPECT_LT(stats.derivative_flops, 4.0 * stats.factor_flops);
  EXPECT_GT(stats.seconds, 0.0);
  EXPECT_GT(stats.peak_derivative_update_bytes, 0);
}

// The L of the derivative path is the plain factorization's L, and one thread or two give the
// same L̇ (to rounding: threaded BLAS at the top of the tree may sum in another order).
TEST(FactorDerivative, SameFactorAsFactorizeAndThreadIndependent) {
  const ElasticityCase c = elasticity_case();
  Factor plain(c.symbolic);
  ASSERT_TRUE(plain.factorize(c.a, {.threads = 1}).ok());
  FactorDerivative one(c.symbolic);
  ASSERT_TRUE(one.factorize_with_derivative(c.a, c.a_dot, {.threads = 1}).ok());
  const auto plain_values = plain.values();
  const auto one_values = one.factor().values();
  ASSERT_EQ(plain_values.size(), one_values.size());
  for (std::size_t i = 0; i < plain_values.size(); ++i) ASSERT_EQ(plain_values[i], one_values[i]);

  FactorDerivative two(c.symbolic);
  ASSERT_TRUE(two.factorize_with_derivative(c.a, c.a_dot, {.threads = 2}).ok());
  EXPECT_EQ(two.stats().threads, 2);
  EXPECT_LE(relative_difference(two.derivative_values(), one.derivative_values()), 1e-13);
  EXPECT_LE(relative_difference(two.factor().values(), one.factor().values()), 1e-14);

  // Repeating the call with the same thread count reproduces L̇ bitwise.
  ASSERT_TRUE(two.factorize_with_derivative(c.a, c.a_dot, {.threads = 2}).ok());
  FactorDerivative again(c.symbolic);
  ASSERT_TRUE(again.factorize_with_derivative(c.a, c.a_dot, {.threads = 2}).ok());
  const auto x = two.derivative_values();
  const auto y = again.derivative_values();
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(x[i], y[i]);
}

// L̇ is linear in Ȧ, and Ȧ = 0 gives L̇ = 0 exactly.
TEST(FactorDerivative, LinearInDerivativeAndZeroForZero) {
  const auto matrices = testing::spd_test_matrices();
  const auto& a = matrices[11].matrix;  // random_40
  const auto symbolic = analyze(a);
  const auto d1 = random_derivative(a, 1);
  const auto d2 = random_derivative(a, 2);
  FactorDerivative first(symbolic);
  FactorDerivative second(symbolic);
  FactorDerivative combined(symbolic);
  ASSERT_TRUE(first.factorize_with_derivative(a, d1).ok());
  ASSERT_TRUE(second.factorize_with_derivative(a, d2).ok());
  ASSERT_TRUE(combined.factorize_with_derivative(a, combination(2.5, d1, -0.75, d2)).ok());
  std::vector<double> expected(first.derivative_values().size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    expected[i] = 2.5 * first.derivative_values()[i] - 0.75 * second.derivative_values()[i];
  }
  EXPECT_LE(relative_difference(combined.derivative_values(), expected), 1e-13);

  FactorDerivative zero(symbolic);
  ASSERT_TRUE(zero.factorize_with_derivative(a, combination(0.0, d1, 0.0, d2)).ok());
  for (double v : zero.derivative_values()) ASSERT_EQ(v, 0.0);
}

TEST(FactorDerivative, ErrorsAreValues) {
  const auto matrices = testing::spd_test_matrices();
  const auto& a = matrices[9].matrix;  // random_5
  const auto symbolic = analyze(a);
  FactorDerivative ldot(symbolic);
  EXPECT_THROW((void)ldot.derivative_values(), std::logic_error);

  // Ȧ with another pattern.
  const auto& other = matrices[10].matrix;
  ASSERT_EQ(other.size(), a.size());
  EXPECT_EQ(ldot.factorize_with_derivative(a, random_derivative(other, 3)).code,
            FactorStatusCode::pattern_mismatch);
  EXPECT_EQ(ldot.status().message.rfind("derivative: ", 0), 0u) << ldot.status().message;

  // NaN in Ȧ, located in the user's numbering.
  auto a_dot = random_derivative(a, 4);
  a_dot.lower.values[5] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(ldot.factorize_with_derivative(a, a_dot).code, FactorStatusCode::non_finite_value);
  EXPECT_GE(ldot.status().column, 0);
  EXPECT_THROW((void)ldot.derivative_values(), std::logic_error);
  EXPECT_THROW((void)ExtrapolatedFactor{ldot}, std::logic_error);

  // A not positive definite: the failing column is named, as by factorize.
  auto indefinite = a;
  const Index bad = 7;
  indefinite.lower.values[static_cast<std::size_t>(indefinite.lower.col_ptr[bad])] = -1.0;  // diagonal
  Factor plain(symbolic);
  plain.factorize(indefinite);
  ASSERT_EQ(plain.status().code, FactorStatusCode::not_positive_definite);
  EXPECT_EQ(ldot.factorize_with_derivative(indefinite, random_derivative(a, 5)).code,
            FactorStatusCode::not_positive_definite);
  EXPECT_EQ(ldot.status().column, plain.status().column);
}

// With A(t) = A + t·Ȧ, L̃ = L + Δt·L̇ is the factor of A(Δt) up to O(Δt²): better than the
// frozen L both as a direct solver and as a PCG preconditioner (seed 002 §5.4.2.3).
int pcg_iterations(const linalg::SymmetricCscMatrix& a, std::span<const double> b,
                   const std::function<void(std::span<double>)>& precondition) {
  const std::size_t n = b.size();
  std::vector<double> x(n, 0.0);
  std::vector<double> r(b.begin(), b.end());
  std::vector<double> z = r;
  precondition(z);
  std::vector<double> p = z;
  std::vector<double> q(n);
  const double b_norm = std::sqrt(std::inner_product(b.begin(), b.end(), b.begin(), 0.0));
  double rz = std::inner_product(r.begin(), r.end(), z.begin(), 0.0);
  for (int iteration = 1; iteration <= 200; ++iteration) {
    linalg::symmetric_multiply(a, p, q);
    const double alpha = rz / std::inner_product(p.begin(), p.end(), q.begin(), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    if (std::sqrt(std::inner_product(r.begin(), r.end(), r.begin(), 0.0)) <= 1e-12 * b_norm) return iteration;
    z = r;
    precondition(z);
    const double rz_next = std::inner_product(r.begin(), r.end(), z.begin(), 0.0);
    for (std::size_t i = 0; i < n; ++i) p[i] = z[i] + rz_next / rz * p[i];
    rz = rz_next;
  }
  return 201;
}

TEST(ExtrapolatedFactor, ZeroStepSolvesExactlyLikeL) {
  const ElasticityCase c = elasticity_case();
  FactorDerivative ldot(c.symbolic);
  ASSERT_TRUE(ldot.factorize_with_derivative(c.a, c.a_dot).ok());
  ExtrapolatedFactor extrapolated(ldot);
  std::vector<double> unused(static_cast<std::size_t>(c.a.size()));
  EXPECT_THROW(extrapolated.solve(unused), std::logic_error);
  ASSERT_TRUE(extrapolated.extrapolate(0.0).ok());
  const Index n = c.a.size();
  linalg::DenseMatrix b(n, 3);
  for (Index j = 0; j < 3; ++j) {
    for (Index i = 0; i < n; ++i) b(i, j) = std::sin(0.1 * static_cast<double>(i + 7 * j));
  }
  linalg::DenseMatrix x = b;
  linalg::DenseMatrix y = b;
  ldot.factor().solve(x.view());
  extrapolated.solve(y.view());
  for (std::size_t i = 0; i < x.storage().size(); ++i) ASSERT_EQ(x.storage()[i], y.storage()[i]);
}

TEST(ExtrapolatedFactor, BeatsFrozenFactorAndRefusesNonPositiveDiagonal) {
  const ElasticityCase c = elasticity_case();
  FactorDerivative ldot(c.symbolic);
  ASSERT_TRUE(ldot.factorize_with_derivative(c.a, c.a_dot).ok());
  ExtrapolatedFactor extrapolated(ldot);

  // A step small enough for the O(Δt²) term to be below the frozen factor's O(Δt) error, and
  // the orders themselves: halving Δt halves the frozen factor's error and quarters the
  // extrapolated one's. (Their constants depend on the ordering, as L's entries do.)
  double a_max = 0.0;
  double a_dot_max = 0.0;
  for (double v : c.a.lower.values) a_max = std::max(a_max, std::abs(v));
  for (double v : c.a_dot.lower.values) a_dot_max = std::max(a_dot_max, std::abs(v));
  const auto n = static_cast<std::size_t>(c.a.size());
  std::vector<double> x_true(n);
  for (std::size_t i = 0; i < n; ++i) x_true[i] = std::cos(0.3 * static_cast<double>(i));
  struct Errors {
    double frozen;
    double extrapolated;
  };
  const auto errors_at = [&](double step) {
    const auto a_step = combination(1.0, c.a, step, c.a_dot);
    EXPECT_TRUE(extrapolated.extrapolate(step).ok()) << extrapolated.status().message;
    std::vector<double> b(n);
    linalg::symmetric_multiply(a_step, x_true, b);
    auto error_of = [&](const auto& solver) {
      std::vector<double> x = b;
      solver.solve(x);
      return relative_difference(x, x_true);
    };
    return Errors{error_of(ldot.factor()), error_of(extrapolated)};
  };
  const double dt = 0.002 * a_max / a_dot_max;
  const Errors half = errors_at(0.5 * dt);
  const Errors full = errors_at(dt);
  EXPECT_EQ(extrapolated.time_step(), dt);
  EXPECT_LT(full.extrapolated, 0.2 * full.frozen) << full.frozen;
  EXPECT_NEAR(half.frozen / full.frozen, 0.5, 0.05);
  EXPECT_NEAR(half.extrapolated / full.extrapolated, 0.25, 0.05);

  const auto a_next = combination(1.0, c.a, dt, c.a_dot);
  std::vector<double> b(n);
  linalg::symmetric_multiply(a_next, x_true, b);
  const int frozen_iterations =
      pcg_iterations(a_next, b, [&](std::span<double> r) { ldot.factor().solve(r); });
  const int extrapolated_iterations =
      pcg_iterations(a_next, b, [&](std::span<double> r) { extrapolated.solve(r); });
  EXPECT_LE(extrapolated_iterations, 200);
  EXPECT_LT(extrapolated_iterations, frozen_iterations);

  // Overshooting (Fig. 5.2b) past the Δt where a diagonal entry of L̃ crosses zero: refused,
  // with the column named.
  const Symbolic& sym = *c.symbolic;
  const auto values = ldot.factor().values();
  const auto derivative = ldot.derivative_values();
  double crossing = std::numeric_limits<double>::infinity();
  for (Index s = 0; s < sym.supernode_count(); ++s) {
    const Index m = sym.row_count(s);
    for (Index j = 0; j < sym.column_count(s); ++j) {
      const auto e = static_cast<std::size_t>(sym.value_offset(s) + static_cast<std::int64_t>(j) * m + j);
      if (derivative[e] < 0.0) crossing = std::min(crossing, -values[e] / derivative[e]);
    }
  }
  ASSERT_TRUE(std::isfinite(crossing));
  const FactorStatus& refused = extrapolated.extrapolate(1.01 * crossing);
  EXPECT_EQ(refused.code, FactorStatusCode::not_positive_definite);
  EXPECT_GE(refused.column, 0);
  EXPECT_LE(refused.value, 0.0);
  std::vector<double> x = b;
  EXPECT_THROW(extrapolated.solve(x), std::logic_error);
  // A good step makes it usable again.
  EXPECT_TRUE(extrapolated.extrapolate(dt).ok());
  EXPECT_NO_THROW(extrapolated.solve(x));
}

}  // namespace
}  // namespace cholsim::factor
