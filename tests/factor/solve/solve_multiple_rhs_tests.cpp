// Factor::solve and TiledSolveFactor::solve with 1 to 9 right-hand sides against a dense LAPACK
// solve (potrf/potrs of A), on matrices whose supernodes range from single columns to one wide
// dense block, so that every path of the substitution kernels runs: the BLAS path of a single
// right-hand side, the kernels' groups of 1–4 right-hand sides, their 8-, 4- and 1-row steps and
// panels, and the tiled copy's partial panels and padded tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>
#include <unistd.h>

#include "factor/numeric/cholesky_factor.hpp"
#include "factor/solve/supernodal_solve_tiled.hpp"
#include "linalg/blas.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/generators.hpp"
#include "linalg/vector_norms.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

using linalg::max_abs;

using testing::NamedMatrix;

/// The matrices: a small tet-box per-coordinate matrix (seed 003's M + DᵀKD, many small
/// supernodes and a few wide separators), a 3D Laplacian, random sparse SPD, a dense 70×70
/// (one supernode wider than several panels), a diagonal matrix (only 1-column supernodes
/// without update rows, or one amalgamated block) and n = 1.
std::vector<NamedMatrix> solve_test_matrices() {
  std::vector<NamedMatrix> out;
  linalg::ElasticityBoxOptions box;
  box.nx = 7;
  box.ny = 4;
  box.nz = 4;
  out.push_back({"scalar_tet_box", linalg::scalar_elasticity_matrix(box)});
  out.push_back({"laplacian_3d", linalg::laplacian_3d(6, 5, 4)});
  std::mt19937 rng(11);
  out.push_back({"random_sparse", testing::spd_from_edges(90, testing::random_edges(90, 0.06, rng), 3)});
  out.push_back({"dense", testing::spd_from_edges(70, testing::random_edges(70, 1.0, rng), 4)});
  out.push_back({"diagonal", testing::spd_from_edges(25, {}, 5)});
  out.push_back({"one_by_one", testing::spd_from_edges(1, {}, 6)});
  return out;
}

/// X = A⁻¹B through dense potrf/potrs (B column-major n×count).
std::vector<double> dense_solve(const linalg::SymmetricCscMatrix& a, const std::vector<double>& b, Index count) {
  linalg::DenseMatrix dense = linalg::to_dense(a);
  EXPECT_EQ(linalg::blas::potrf(dense.view()), 0);
  std::vector<double> x = b;
  linalg::blas::potrs(dense.view(), linalg::DenseView{x.data(), a.size(), count, std::max<Index>(1, a.size())});
  return x;
}

std::vector<double> random_right_hand_sides(Index n, Index count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> b(static_cast<std::size_t>(n * count));
  for (double& v : b) v = uniform(rng);
  return b;
}

/// METIS, whose wide top separators give these small matrices the wide supernodes with update
/// rows that the kernel paths need (SolveMultipleRhsCoverage); AMD's are at most 16 wide here.
AnalyzeOptions analysis_options(bool amalgamate) {
  AnalyzeOptions options;
  options.ordering = OrderingMethod::nested_dissection;
  options.amalgamation.enabled = amalgamate;
  return options;
}

/// `a` analysed (with or without supernode amalgamation) and factored on one thread.
Factor factored(const linalg::SymmetricCscMatrix& a, bool amalgamate) {
  Factor factor(analyze(a, analysis_options(amalgamate)));
  if (!factor.factorize(a, {.threads = 1}).ok()) throw std::runtime_error(factor.status().message);
  return factor;
}

/// Which solve a test runs: Factor::solve, or a TiledSolveFactor copied from the factor.
enum class Solver { factor, tiled };

/// Every column of the solve of B equals the dense solution, for every count of columns,
/// with B stored at a leading dimension larger than n (the solve must honour it and leave the
/// padding alone).
void expect_solves_equal_dense_solves(int index, bool amalgamate, Solver solver = Solver::factor) {
  const auto matrices = solve_test_matrices();
  const NamedMatrix& named = matrices[static_cast<std::size_t>(index)];
  SCOPED_TRACE(named.name);
  const auto& a = named.matrix;
  const Index n = a.size();
  Factor factor = factored(a, amalgamate);
  TiledSolveFactor tiled(factor);

  for (const Index count : {1, 2, 3, 4, 5, 7, 9}) {
    SCOPED_TRACE("count " + std::to_string(count));
    const std::vector<double> b = random_right_hand_sides(n, count, static_cast<unsigned>(count + 17 * index));
    const std::vector<double> expected = dense_solve(a, b, count);
    const Index ld = n + 3;
    constexpr double kPadding = -12345.0;
    std::vector<double> padded(static_cast<std::size_t>(ld * count), kPadding);
    for (Index c = 0; c < count; ++c) std::copy_n(b.begin() + c * n, n, padded.begin() + c * ld);
    const linalg::DenseView view{padded.data(), n, count, ld};
    if (solver == Solver::tiled) {
      tiled.solve(view);
    } else {
      factor.solve(view);
    }
    const double scale = max_abs(expected);
    for (Index c = 0; c < count; ++c) {
      for (Index i = 0; i < n; ++i) {
        ASSERT_NEAR(padded[static_cast<std::size_t>(c * ld + i)], expected[static_cast<std::size_t>(c * n + i)],
                    1e-11 * scale)
            << "row " << i << ", column " << c;
      }
      for (Index i = n; i < ld; ++i) ASSERT_EQ(padded[static_cast<std::size_t>(c * ld + i)], kPadding);
    }
  }
}

class SolveMultipleRhs : public ::testing::TestWithParam<std::tuple<int, bool>> {
 protected:
  /// The parameter's test matrix, named in every failure of the test, and its analysis flag.
  const NamedMatrix named_ = solve_test_matrices()[static_cast<std::size_t>(std::get<0>(GetParam()))];
  const bool amalgamate_ = std::get<1>(GetParam());
  const ::testing::ScopedTrace trace_{__FILE__, __LINE__, named_.name};
};

TEST_P(SolveMultipleRhs, EqualsDenseSolveForEveryCount) {
  const auto [index, amalgamate] = GetParam();
  expect_solves_equal_dense_solves(index, amalgamate);
}

// The same with the SSE2 kernels forced (CHOLSIM_SOLVE_BASELINE), which a CPU with AVX2 would
// otherwise never run.
TEST_P(SolveMultipleRhs, BaselineKernelsEqualDenseSolveForEveryCount) {
  struct ForceBaselineKernels {
    ForceBaselineKernels() { setenv("CHOLSIM_SOLVE_BASELINE", "1", 1); }
    ~ForceBaselineKernels() { unsetenv("CHOLSIM_SOLVE_BASELINE"); }
  } force_baseline;
  const auto [index, amalgamate] = GetParam();
  expect_solves_equal_dense_solves(index, amalgamate);
}

// The tiled copy of L solves as Factor::solve does, with the AVX2 and with the SSE2 kernels (the
// copy is solved repeatedly with growing column counts, so its kept work arrays are reused and
// regrown between calls).
TEST_P(SolveMultipleRhs, TiledCopyEqualsDenseSolveForEveryCount) {
  const auto [index, amalgamate] = GetParam();
  expect_solves_equal_dense_solves(index, amalgamate, Solver::tiled);
}

TEST_P(SolveMultipleRhs, TiledCopyBaselineKernelsEqualDenseSolveForEveryCount) {
  struct ForceBaselineKernels {
    ForceBaselineKernels() { setenv("CHOLSIM_SOLVE_BASELINE", "1", 1); }
    ~ForceBaselineKernels() { unsetenv("CHOLSIM_SOLVE_BASELINE"); }
  } force_baseline;
  const auto [index, amalgamate] = GetParam();
  expect_solves_equal_dense_solves(index, amalgamate, Solver::tiled);
}

// The copy kept in single precision (TiledSolveFactor::Precision::single_values) solves with
// a backward error of single precision, not double: every column's residual is small against
// |A|·|x| + |b| (componentwise), with the AVX2 and the SSE2 kernels alike.
TEST_P(SolveMultipleRhs, SinglePrecisionCopyHasASinglePrecisionBackwardError) {
  const auto& a = named_.matrix;
  const Index n = a.size();
  Factor factor = factored(a, amalgamate_);
  TiledSolveFactor single(factor, TiledSolveFactor::Precision::single_values);
  EXPECT_EQ(single.precision(), TiledSolveFactor::Precision::single_values);
  linalg::SymmetricCscMatrix magnitude = a;
  for (double& value : magnitude.lower.values) value = std::abs(value);
  for (const bool baseline : {false, true}) {
    SCOPED_TRACE(baseline ? "SSE2 kernels" : "AVX2 kernels where available");
    if (baseline) setenv("CHOLSIM_SOLVE_BASELINE", "1", 1);
    constexpr Index kCount = 3;
    const std::vector<double> b = random_right_hand_sides(n, kCount, 7);
    std::vector<double> x = b;
    single.solve(linalg::DenseView{x.data(), n, kCount, std::max<Index>(1, n)});
    unsetenv("CHOLSIM_SOLVE_BASELINE");
    double worst = 0.0;
    for (Index c = 0; c < kCount; ++c) {
      const std::span<const double> xc(x.data() + c * n, static_cast<std::size_t>(n));
      const std::span<const double> bc(b.data() + c * n, static_cast<std::size_t>(n));
      std::vector<double> ax(static_cast<std::size_t>(n));
      std::vector<double> bound(static_cast<std::size_t>(n));
      std::vector<double> abs_x(xc.begin(), xc.end());
      for (double& value : abs_x) value = std::abs(value);
      linalg::symmetric_multiply(a, xc, ax);
      linalg::symmetric_multiply(magnitude, abs_x, bound);
      for (Index i = 0; i < n; ++i) {
        const auto k = static_cast<std::size_t>(i);
        worst = std::max(worst, std::abs(bc[k] - ax[k]) / (bound[k] + std::abs(bc[k])));
      }
    }
    EXPECT_LT(worst, 1e-5);   // single precision: u = 6·10⁻⁸, times modest growth
    EXPECT_GT(worst, 1e-12);  // and really not the double-precision copy
  }
}

// A multi-column solve gives each column the same answer as solving it alone (the single
// right-hand side goes through BLAS, the columns through the kernels), and a repeated solve
// gives the same result (no state kept between calls).
TEST_P(SolveMultipleRhs, ColumnsEqualSingleSolvesAndRepeatedSolvesAgree) {
  const auto& a = named_.matrix;
  const Index n = a.size();
  Factor factor = factored(a, amalgamate_);
  constexpr Index kCount = 3;
  const std::vector<double> b = random_right_hand_sides(n, kCount, 99);
  std::vector<double> together = b;
  factor.solve(linalg::DenseView{together.data(), n, kCount, std::max<Index>(1, n)});
  std::vector<double> again = b;
  factor.solve(linalg::DenseView{again.data(), n, kCount, std::max<Index>(1, n)});
  EXPECT_EQ(together, again);
  const double scale = max_abs(together);
  for (Index c = 0; c < kCount; ++c) {
    std::vector<double> column(b.begin() + c * n, b.begin() + (c + 1) * n);
    factor.solve(column);
    for (Index i = 0; i < n; ++i) {
      ASSERT_NEAR(column[static_cast<std::size_t>(i)], together[static_cast<std::size_t>(c * n + i)], 1e-12 * scale)
          << "row " << i << ", column " << c;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Matrices, SolveMultipleRhs,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(solve_test_matrices().size())),
                                            ::testing::Bool()));

// The test matrices really do have single-column supernodes and supernodes wider than two
// kernel panels with update rows below them (otherwise the tests above would not reach every
// kernel path).
TEST(SolveMultipleRhsCoverage, MatricesHaveTinyAndWideSupernodes) {
  Index narrowest = 1 << 30;
  Index widest_with_update_rows = 0;
  for (const NamedMatrix& named : solve_test_matrices()) {
    const auto symbolic = analyze(named.matrix, analysis_options(true));
    for (Index s = 0; s < symbolic->supernode_count(); ++s) {
      narrowest = std::min(narrowest, symbolic->column_count(s));
      if (symbolic->row_count(s) > symbolic->column_count(s)) {
        widest_with_update_rows = std::max(widest_with_update_rows, symbolic->column_count(s));
      }
    }
  }
  EXPECT_EQ(narrowest, 1);
  EXPECT_GT(widest_with_update_rows, 16);
}

// Solving with a right-hand side of the wrong height is misuse and throws, naming both sizes.
TEST(SolveMultipleRhsErrors, WrongRowCountThrows) {
  const auto a = linalg::laplacian_3d(3, 3, 3);
  Factor factor(analyze(a));
  ASSERT_TRUE(factor.factorize(a).ok());
  std::vector<double> b(static_cast<std::size_t>(3 * 26));
  try {
    factor.solve(linalg::DenseView{b.data(), 26, 3, 26});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("26"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("27"), std::string::npos) << error.what();
  }
}

// Right-hand sides stored row by row give the tiled copy's column-major answer, bit for bit
// (the same substitutions on the same permuted values), for 1, 3 and 5 columns.
TEST(SolveMultipleRhsTiled, InterleavedRightHandSidesEqualColumnMajorOnes) {
  const auto a = linalg::laplacian_3d(6, 5, 4);
  const Index n = a.size();
  Factor factor(analyze(a));
  ASSERT_TRUE(factor.factorize(a).ok());
  TiledSolveFactor tiled(factor);
  for (const Index count : {1, 3, 5}) {
    std::vector<double> columns = random_right_hand_sides(n, count, static_cast<unsigned>(40 + count));
    std::vector<double> rows(columns.size());
    for (Index i = 0; i < n; ++i) {
      for (Index c = 0; c < count; ++c) {
        rows[static_cast<std::size_t>(i * count + c)] = columns[static_cast<std::size_t>(c * n + i)];
      }
    }
    tiled.solve(linalg::DenseView{columns.data(), n, count, n});
    tiled.solve_interleaved(rows, count);
    for (Index i = 0; i < n; ++i) {
      for (Index c = 0; c < count; ++c) {
        ASSERT_EQ(rows[static_cast<std::size_t>(i * count + c)], columns[static_cast<std::size_t>(c * n + i)])
            << "row " << i << ", column " << c << " of " << count;
      }
    }
  }
  std::vector<double> short_rows(static_cast<std::size_t>(3 * n - 1));
  EXPECT_THROW(tiled.solve_interleaved(short_rows, 3), std::invalid_argument);
  EXPECT_THROW(tiled.solve_interleaved(short_rows, 0), std::invalid_argument);
}

// Precision::automatic keeps L in double where the double copy fits in a core's L2 cache and
// in single beyond it, and solves as the precision it picked does (bit for bit).
TEST(SolveMultipleRhsTiled, AutomaticPrecisionIsDoubleInL2AndSingleBeyond) {
  const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
  const std::int64_t l2_bytes = reported > 0 ? reported : std::int64_t{512} << 10;
  for (const Index side : {8, 250}) {  // ≈ 10³ and ≈ 2·10⁶ stored values (16 MB in double)
    const auto a = linalg::laplacian_2d(side, side);
    const Index n = a.size();
    Factor factor(analyze(a));
    ASSERT_TRUE(factor.factorize(a).ok());
    TiledSolveFactor automatic(factor, TiledSolveFactor::Precision::automatic);
    const bool fits = 8 * automatic.stored_values() <= l2_bytes;
    EXPECT_EQ(fits, side == 8) << 8 * automatic.stored_values() << " bytes against " << l2_bytes;
    const auto expected_precision = fits ? TiledSolveFactor::Precision::double_values
                                         : TiledSolveFactor::Precision::single_values;
    EXPECT_EQ(automatic.precision(), expected_precision) << "side " << side;
    TiledSolveFactor chosen(factor, expected_precision);
    const std::vector<double> rhs = random_right_hand_sides(n, 3, 5);
    std::vector<double> x_automatic = rhs, x_chosen = rhs;
    automatic.solve_interleaved(x_automatic, 3);
    chosen.solve_interleaved(x_chosen, 3);
    EXPECT_EQ(x_automatic, x_chosen) << "side " << side;
  }
}

// Right-hand sides the caller keeps permuted, four a row (solve_lanes), give solve_interleaved's
// answer bit for bit, with the AVX2 lane kernels and (both) with the baseline kernels forced; the
// fourth lane stays zero; wrong sizes throw.
TEST(SolveMultipleRhsTiled, LanesInPermutedOrderEqualInterleavedSolves) {
  const auto a = linalg::laplacian_3d(6, 5, 4);
  const Index n = a.size();
  Factor factor(analyze(a));
  ASSERT_TRUE(factor.factorize(a).ok());
  TiledSolveFactor tiled(factor, TiledSolveFactor::Precision::single_values);
  const auto permutation = tiled.permutation();
  ASSERT_EQ(static_cast<Index>(permutation.size()), n);
  const std::vector<double> rhs = random_right_hand_sides(n, 3, 77);  // row by row, three a row
  for (const bool baseline : {false, true}) {
    if (baseline) setenv("CHOLSIM_SOLVE_BASELINE", "1", 1);
    std::vector<double> expected = rhs;
    tiled.solve_interleaved(expected, 3);
    std::vector<double> lanes(TiledSolveFactor::kLaneWidth * static_cast<std::size_t>(n + 1), -1.0);
    for (Index k = 0; k < n; ++k) {
      const auto user = static_cast<std::size_t>(permutation[static_cast<std::size_t>(k)]);
      double* row = lanes.data() + TiledSolveFactor::kLaneWidth * static_cast<std::size_t>(k);
      for (std::size_t c = 0; c < 3; ++c) row[c] = rhs[3 * user + c];
      row[3] = 0.0;
    }
    tiled.solve_lanes(lanes);
    if (baseline) unsetenv("CHOLSIM_SOLVE_BASELINE");
    for (Index k = 0; k < n; ++k) {
      const auto user = static_cast<std::size_t>(permutation[static_cast<std::size_t>(k)]);
      const double* row = lanes.data() + TiledSolveFactor::kLaneWidth * static_cast<std::size_t>(k);
      for (std::size_t c = 0; c < 3; ++c) {
        ASSERT_EQ(row[c], expected[3 * user + c]) << "row " << k << ", column " << c << (baseline ? ", baseline" : "");
      }
      ASSERT_EQ(row[3], 0.0) << "row " << k;
    }
  }
  std::vector<double> no_work_row(TiledSolveFactor::kLaneWidth * static_cast<std::size_t>(n));
  EXPECT_THROW(tiled.solve_lanes(no_work_row), std::invalid_argument);
  EXPECT_THROW(TiledSolveFactor().solve_lanes(no_work_row), std::logic_error);
  EXPECT_TRUE(TiledSolveFactor().permutation().empty());
}

// The tiled copy holds no more values than Factor's blocks on a matrix with wide supernodes
// (it drops the square blocks' upper triangles and pads at most 7 rows per panel).
TEST(SolveMultipleRhsTiled, StoresNoMoreThanTheFactor) {
  linalg::ElasticityBoxOptions box;
  box.nx = 7;
  box.ny = 4;
  box.nz = 4;
  const auto a = linalg::scalar_elasticity_matrix(box);
  Factor factor(analyze(a));
  ASSERT_TRUE(factor.factorize(a).ok());
  const TiledSolveFactor tiled(factor);
  EXPECT_EQ(tiled.size(), a.size());
  EXPECT_LE(tiled.stored_values(), static_cast<std::int64_t>(factor.values().size()));
  EXPECT_GE(tiled.stored_values(), factor.symbolic().stats().nnz_l);
}

// Misuse throws: copying a factor that is not factored or is a partial (Schur) factorization,
// solving with a default-constructed copy or with a right-hand side of the wrong height.
TEST(SolveMultipleRhsTiled, MisuseThrows) {
  const auto a = linalg::laplacian_3d(3, 3, 3);
  Factor unfactored(analyze(a));
  EXPECT_THROW(TiledSolveFactor{unfactored}, std::logic_error);

  AnalyzeOptions partial_options;
  partial_options.schur_set = {0, 5};
  Factor partial(analyze(a, partial_options));
  ASSERT_TRUE(partial.factorize(a).ok()) << partial.status().message;
  EXPECT_THROW(TiledSolveFactor{partial}, std::logic_error);

  std::vector<double> b(static_cast<std::size_t>(3 * 26));
  TiledSolveFactor empty;
  EXPECT_THROW(empty.solve(linalg::DenseView{b.data(), 26, 3, 26}), std::logic_error);

  Factor factor(analyze(a));
  ASSERT_TRUE(factor.factorize(a).ok());
  TiledSolveFactor tiled(factor);
  try {
    tiled.solve(linalg::DenseView{b.data(), 26, 3, 26});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("26"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("27"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace cholsim::factor
