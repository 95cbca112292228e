// Partial factorization with a Schur complement (seed 004 §4.3–4.4), against dense linear
// algebra: S = A22 − A21·A11⁻¹·A12, three-phase solves = full solves of A (with ΔS: of
// A + [0 0; 0 ΔS]), the constrained ordering and its fill report, and the failure paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/schur/schur_complement.hpp"
#include "factor/schur/schur_ordering.hpp"
#include "factor/schur/schur_system.hpp"
#include "factor/update/changed_supernodes.hpp"
#include "linalg/blas.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/generators.hpp"
#include "linalg/vector_norms.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

using linalg::max_abs_difference;

using linalg::DenseMatrix;
using linalg::to_dense;

// S = A22 − A21·A11⁻¹·A12 with dense LAPACK, rows and columns in the Schur set's order.
DenseMatrix dense_schur_complement(const linalg::SymmetricCscMatrix& a, const std::vector<Index>& schur) {
  const DenseMatrix full = to_dense(a);
  const Index n = a.size();
  const auto m = static_cast<Index>(schur.size());
  std::vector<char> in_schur(static_cast<std::size_t>(n), 0);
  for (Index u : schur) in_schur[u] = 1;
  std::vector<Index> rest;
  for (Index u = 0; u < n; ++u) {
    if (!in_schur[u]) rest.push_back(u);
  }
  const auto n1 = static_cast<Index>(rest.size());
  DenseMatrix a11(n1, n1), a12(n1, m), s(m, m);
  for (Index j = 0; j < n1; ++j) {
    for (Index i = 0; i < n1; ++i) a11(i, j) = full(rest[i], rest[j]);
  }
  for (Index j = 0; j < m; ++j) {
    for (Index i = 0; i < n1; ++i) a12(i, j) = full(rest[i], schur[j]);
    for (Index i = 0; i < m; ++i) s(i, j) = full(schur[i], schur[j]);
  }
  if (n1 > 0 && m > 0) {
    DenseMatrix x = a12;
    EXPECT_EQ(linalg::blas::potrf(a11.view()), 0);
    linalg::blas::potrs(a11.view(), x.view());
    linalg::blas::gemm(linalg::blas::Transpose::yes, linalg::blas::Transpose::no, -1.0, a12.view(), x.view(),
                       1.0, s.view());
  }
  return s;
}

// max |S_partial − S_dense| over the lower triangle, relative to max |S_dense|.
double relative_lower_difference(linalg::ConstDenseView partial, const DenseMatrix& reference) {
  double difference = 0.0;
  double scale = 0.0;
  for (Index j = 0; j < reference.cols(); ++j) {
    for (Index i = j; i < reference.rows(); ++i) {
      difference = std::max(difference, std::abs(partial(i, j) - reference(i, j)));
      scale = std::max(scale, std::abs(reference(i, j)));
    }
  }
  return scale > 0.0 ? difference / scale : difference;
}

std::vector<Index> random_schur_set(Index n, Index m, unsigned seed) {
  std::vector<Index> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);  // a shuffled order: S follows the given order
  all.resize(static_cast<std::size_t>(m));
  return all;
}

std::shared_ptr<const Symbolic> analyze_with_schur(const linalg::SymmetricCscMatrix& a,
                                                   std::vector<Index> schur,
                                                   OrderingMethod ordering = AnalyzeOptions{}.ordering) {
  AnalyzeOptions options;
  options.ordering = ordering;
  options.schur_set = std::move(schur);
  return analyze(a, options);
}

std::vector<double> random_vector(Index n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = value(rng);
  return v;
}

// A + [0 0; 0 ΔS] as a sparse matrix (ΔS dense, Schur numbering, lower triangle read).
linalg::SymmetricCscMatrix add_schur_update(const linalg::SymmetricCscMatrix& a, const std::vector<Index>& schur,
                                            const DenseMatrix& delta) {
  linalg::Triplets t;
  const linalg::CscMatrix& l = a.lower;
  for (Index c = 0; c < l.cols; ++c) {
    for (linalg::Offset p = l.col_ptr[c]; p < l.col_ptr[c + 1]; ++p) t.add(l.row_idx[p], c, l.values[p]);
  }
  for (Index j = 0; j < delta.cols(); ++j) {
    for (Index i = j; i < delta.rows(); ++i) {
      if (delta(i, j) != 0.0) t.add(schur[i], schur[j], delta(i, j));
    }
  }
  return linalg::symmetric_from_triplets(a.size(), t, linalg::UpperEntries::transpose);
}

std::vector<double> full_solve(const linalg::SymmetricCscMatrix& a, std::vector<double> b) {
  Factor full(analyze(a));
  EXPECT_TRUE(full.factorize(a).ok()) << full.status().message;
  full.solve(b);
  return b;
}

TEST(SchurComplement, EqualsDenseSchurComplementOnEveryTestShape) {
  for (const auto& [name, a] : testing::spd_test_matrices()) {
    const Index n = a.size();
    if (n < 2) continue;
    for (const Index m : {Index{1}, std::max<Index>(2, n / 6), n - 1}) {
      for (const OrderingMethod ordering :
           {OrderingMethod::nested_dissection, OrderingMethod::dissection_minimum_degree,
            OrderingMethod::minimum_degree, OrderingMethod::automatic, OrderingMethod::natural}) {
        SCOPED_TRACE(name + " m=" + std::to_string(m) + " " + std::string(to_string(ordering)));
        const std::vector<Index> schur = random_schur_set(n, m, static_cast<unsigned>(n * 31 + m));
        const auto symbolic = analyze_with_schur(a, schur, ordering);
        // Multifrontal, and with every supernode left-looking (left_looking_top.hpp).
        for (const std::int64_t top_from : {kNoLeftLookingTop, std::int64_t{0}}) {
          SchurComplementFactor partial(symbolic);
          ASSERT_TRUE(partial.factorize(a, {.left_looking_update_bytes = top_from}).ok()) << partial.status().message;
          ASSERT_EQ(partial.schur_size(), m);
          EXPECT_TRUE(std::equal(schur.begin(), schur.end(), partial.schur_set().begin()));
          EXPECT_LE(relative_lower_difference(partial.schur_complement(), dense_schur_complement(a, schur)), 1e-11)
              << top_from;
        }
      }
    }
  }
}

TEST(SchurComplement, EqualsDenseSchurComplementOnMeshMatrices) {
  linalg::ElasticityBoxOptions box;
  box.nx = box.ny = box.nz = 5;
  const linalg::SymmetricCscMatrix scalar = linalg::scalar_elasticity_matrix(box);
  const std::vector<Index> schur = random_schur_set(scalar.size(), 20, 7);
  SchurComplementFactor partial(analyze_with_schur(scalar, schur));
  ASSERT_TRUE(partial.factorize(scalar).ok());
  EXPECT_LE(relative_lower_difference(partial.schur_complement(), dense_schur_complement(scalar, schur)), 1e-11);
  const DenseMatrix symmetric = partial.schur_complement_symmetric();
  for (Index j = 0; j < symmetric.cols(); ++j) {
    for (Index i = 0; i < j; ++i) EXPECT_EQ(symmetric(i, j), partial.schur_complement()(j, i));
  }

  // 3 DOFs per node: the Schur set holds whole nodes and the rest is ordered as a node graph.
  box.nx = box.ny = box.nz = 3;
  const linalg::SymmetricCscMatrix elasticity = linalg::elasticity_matrix(box);
  std::vector<Index> node_dofs;
  for (Index node : {Index{5}, Index{0}, Index{17}}) {
    for (Index d = 0; d < 3; ++d) node_dofs.push_back(3 * node + d);
  }
  AnalyzeOptions options;
  options.dofs_per_node = 3;
  options.schur_set = node_dofs;
  SchurComplementFactor blocks(analyze(elasticity, options));
  ASSERT_TRUE(blocks.factorize(elasticity).ok());
  EXPECT_LE(relative_lower_difference(blocks.schur_complement(), dense_schur_complement(elasticity, node_dofs)),
            1e-11);
}

TEST(SchurComplement, ThreePhaseSolveEqualsFullSolveForOneAndManyRightHandSides) {
  const linalg::SymmetricCscMatrix a = linalg::laplacian_3d(7, 6, 5);
  const Index n = a.size();
  const std::vector<Index> schur = random_schur_set(n, 25, 3);
  SchurComplementFactor partial(analyze_with_schur(a, schur));
  ASSERT_TRUE(partial.factorize(a).ok());
  SchurSystem system(partial.schur_complement(), partial.schur_set());
  ASSERT_TRUE(system.refactor().ok());

  const std::vector<double> b = random_vector(n, 11);
  std::vector<double> x = b;
  partial.solve(system, x);
  EXPECT_LE(testing::relative_residual(a, x, b), 1e-13);
  EXPECT_LE(max_abs_difference(x, full_solve(a, b)), 1e-12);

  // Many right-hand sides at once, phase by phase, solve each column: four (the kernels) and
  // fifteen (the BLAS-3 path, rows padded to sixteen).
  for (const Index count : {Index{4}, Index{15}}) {
    DenseMatrix many(n, count);
    for (Index c = 0; c < count; ++c) {
      const std::vector<double> column = random_vector(n, 100 + static_cast<unsigned>(c));
      std::copy(column.begin(), column.end(), many.data() + static_cast<std::size_t>(c) * n);
    }
    DenseMatrix y(n, count), x_many(n, count);
    partial.forward(many.view(), y.view());
    system.solve(partial.schur_rows(y.view()));
    partial.backward(y.view(), x_many.view());
    for (Index c = 0; c < count; ++c) {
      const std::vector<double> column(many.data() + static_cast<std::size_t>(c) * n,
                                       many.data() + static_cast<std::size_t>(c + 1) * n);
      const std::vector<double> solved(x_many.data() + static_cast<std::size_t>(c) * n,
                                       x_many.data() + static_cast<std::size_t>(c + 1) * n);
      EXPECT_LE(testing::relative_residual(a, solved, column), 1e-13) << "column " << c << " of " << count;
    }
  }
}

// backward_from_schur(X₂) = [−A11⁻¹A12·X₂; X₂] (user numbering): A·X vanishes on the eliminated
// rows, the Schur rows are X₂, and it equals backward() on [0; X₂] — one column, and fourteen on
// two threads (two groups of seven on the BLAS-3 path, rows padded to eight).
TEST(SchurComplement, BackwardFromTheSchurRowsIsTheCondensationJacobian) {
  const linalg::SymmetricCscMatrix a = linalg::laplacian_3d(8, 7, 6);
  const Index n = a.size();
  const std::vector<Index> schur = random_schur_set(n, 7, 9);
  const auto m = static_cast<Index>(schur.size());
  SchurComplementFactor partial(analyze_with_schur(a, schur));
  ASSERT_TRUE(partial.factorize(a).ok());
  std::vector<char> in_schur(static_cast<std::size_t>(n), 0);
  for (const Index i : schur) in_schur[i] = 1;
  for (const Index count : {Index{1}, Index{14}}) {
    DenseMatrix x2(m, count);
    for (Index c = 0; c < count; ++c) {
      const std::vector<double> column = random_vector(m, 40 + static_cast<unsigned>(c));
      for (Index i = 0; i < m; ++i) x2(i, c) = column[i];
    }
    DenseMatrix x(n, count);
    partial.backward_from_schur(x2.view(), x.view(), 2);
    DenseMatrix y(n, count), reference(n, count);
    for (Index c = 0; c < count; ++c) {
      for (Index i = 0; i < m; ++i) partial.schur_rows(y.view())(i, c) = x2(i, c);
    }
    partial.backward(y.view(), reference.view(), 2);
    for (Index c = 0; c < count; ++c) {
      std::vector<double> column(static_cast<std::size_t>(n)), product(static_cast<std::size_t>(n));
      for (Index i = 0; i < n; ++i) column[i] = x(i, c);
      linalg::symmetric_multiply(a, column, product);
      for (Index i = 0; i < n; ++i) {
        EXPECT_NEAR(x(i, c), reference(i, c), 1e-14) << "row " << i << ", column " << c << " of " << count;
        if (!in_schur[i]) {
          EXPECT_NEAR(product[i], 0.0, 1e-12) << "eliminated row " << i << ", column " << c;
        }
      }
      for (Index k = 0; k < m; ++k) EXPECT_EQ(x(schur[k], c), x2(k, c)) << "Schur row " << k;
    }
  }
  DenseMatrix wrong(m + 1, 1), out(n, 1);
  EXPECT_THROW(partial.backward_from_schur(wrong.view(), out.view()), std::invalid_argument);
}

TEST(SchurComplement, ForwardPhaseLeavesTheReducedRightHandSide) {
  // b̃₂ = b₂ − A21·A11⁻¹·b₁: with b₁ = 0 it is b₂ itself, and S·x₂ = b̃₂ holds for x's Schur part.
  const linalg::SymmetricCscMatrix a = linalg::laplacian_2d(9, 8);
  const std::vector<Index> schur = random_schur_set(a.size(), 6, 5);
  SchurComplementFactor partial(analyze_with_schur(a, schur));
  ASSERT_TRUE(partial.factorize(a).ok());
  std::vector<double> b(static_cast<std::size_t>(a.size()), 0.0);
  for (std::size_t i = 0; i < schur.size(); ++i) b[schur[i]] = 1.0 + static_cast<double>(i);
  DenseMatrix y(a.size(), 1);
  partial.forward(linalg::ConstDenseView{b.data(), a.size(), 1, a.size()}, y.view());
  const linalg::DenseView reduced = partial.schur_rows(y.view());
  for (Index i = 0; i < reduced.rows; ++i) EXPECT_DOUBLE_EQ(reduced(i, 0), 1.0 + static_cast<double>(i));
}

TEST(SchurComplement, UpdatesEqualSolvesOfTheModifiedFullMatrix) {
  const linalg::SymmetricCscMatrix a = linalg::laplacian_3d(6, 6, 6);
  const Index n = a.size();
  const std::vector<Index> schur = random_schur_set(n, 18, 9);
  const auto m = static_cast<Index>(schur.size());
  SchurComplementFactor partial(analyze_with_schur(a, schur));
  ASSERT_TRUE(partial.factorize(a).ok());
  SchurSystem system(partial.schur_complement(), schur);
  const std::vector<double> b = random_vector(n, 21);

  // Collision springs W·diag(c)·Wᵀ: each proxy couples 3 Schur unknowns with barycentric weights.
  linalg::Triplets w_entries;
  std::vector<double> stiffness;
  for (Index proxy = 0; proxy < 5; ++proxy) {
    w_entries.add(proxy, proxy, 0.2);
    w_entries.add(proxy + 3, proxy, 0.3);
    w_entries.add(proxy + 7, proxy, 0.5);
    stiffness.push_back(10.0 + proxy);
  }
  const linalg::CscMatrix w = linalg::csc_from_triplets(m, 5, w_entries);
  DenseMatrix low_rank(m, m);
  for (Index q = 0; q < w.cols; ++q) {
    for (linalg::Offset i = w.col_ptr[q]; i < w.col_ptr[q + 1]; ++i) {
      for (linalg::Offset j = w.col_ptr[q]; j < w.col_ptr[q + 1]; ++j) {
        low_rank(w.row_idx[i], w.row_idx[j]) += stiffness[q] * w.values[i] * w.values[j];
      }
    }
  }
  // A sparse ΔS and a dense ΔS (a positive semidefinite rank-one term over the whole set).
  linalg::Triplets sparse_entries;
  sparse_entries.add(4, 1, -0.5);
  sparse_entries.add(4, 4, 2.0);
  sparse_entries.add(1, 1, 2.0);
  sparse_entries.add(m - 1, m - 1, 3.0);
  const linalg::SymmetricCscMatrix sparse = linalg::symmetric_from_triplets(m, sparse_entries);
  DenseMatrix dense(m, m);
  const std::vector<double> u = random_vector(m, 4);
  for (Index j = 0; j < m; ++j) {
    for (Index i = 0; i < m; ++i) dense(i, j) = u[i] * u[j];
  }

  DenseMatrix total = low_rank;
  const DenseMatrix sparse_dense = to_dense(sparse);
  for (Index j = 0; j < m; ++j) {
    for (Index i = 0; i < m; ++i) total(i, j) += sparse_dense(i, j) + dense(i, j);
  }
  struct Case {
    std::string name;
    std::function<void()> apply;
    const DenseMatrix* delta;
  };
  const std::vector<Case> cases = {
      {"low_rank", [&] { system.add_low_rank(w, stiffness); }, &low_rank},
      {"sparse", [&] { system.add(sparse); }, &sparse_dense},
      {"dense", [&] { system.add(dense.view()); }, &dense},
      {"all_three", [&] {
         system.add_low_rank(w, stiffness);
         system.add(sparse);
         system.add(dense.view());
       }, &total},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    system.clear_updates();
    c.apply();
    ASSERT_TRUE(system.refactor().ok()) << system.status().message;
    std::vector<double> x = b;
    partial.solve(system, x);
    const linalg::SymmetricCscMatrix modified = add_schur_update(a, schur, *c.delta);
    EXPECT_LE(testing::relative_residual(modified, x, b), 1e-13);
    EXPECT_LE(max_abs_difference(x, full_solve(modified, b)), 1e-12);
  }
  // Without updates the system is S again.
  system.clear_updates();
  ASSERT_TRUE(system.refactor().ok());
  std::vector<double> x = b;
  partial.solve(system, x);
  EXPECT_LE(testing::relative_residual(a, x, b), 1e-13);
}

TEST(SchurComplement, GpuDeviceAgreesWithTheCpuOrFallsBackWithANote) {
  // Runs the GPU path where cuSOLVER and a device exist, else checks the fallback: either way
  // the same updates, refactorizations and solves give the CPU's results.
  const linalg::SymmetricCscMatrix a = linalg::laplacian_3d(6, 5, 5);
  const std::vector<Index> schur = random_schur_set(a.size(), 40, 17);
  SchurComplementFactor partial(analyze_with_schur(a, schur));
  ASSERT_TRUE(partial.factorize(a).ok());
  SchurSystem cpu(partial.schur_complement(), schur);
  SchurSystem gpu(partial.schur_complement(), schur, {.device = SchurDevice::gpu});
  if (gpu.device() == SchurDevice::cpu) {
    EXPECT_NE(gpu.device_note().find("using the CPU"), std::string::npos) << gpu.device_note();
  } else {
    EXPECT_TRUE(gpu.device_note().empty());
  }
  linalg::Triplets w_entries;
  for (Index q = 0; q < 8; ++q) {
    w_entries.add(q, q, 0.6);
    w_entries.add(q + 20, q, 0.4);
  }
  const linalg::CscMatrix w = linalg::csc_from_triplets(40, 8, w_entries);
  const std::vector<double> stiffness(8, 50.0);
  linalg::Triplets sparse_entries;
  sparse_entries.add(7, 3, 0.25);
  sparse_entries.add(7, 7, 1.5);
  const linalg::SymmetricCscMatrix sparse = linalg::symmetric_from_triplets(40, sparse_entries);
  DenseMatrix dense(40, 40);
  for (Index i = 0; i < 40; ++i) dense(i, i) = 0.5;
  DenseMatrix b(40, 3);
  for (Index c = 0; c < 3; ++c) {
    for (Index i = 0; i < 40; ++i) b(i, c) = std::sin(1.0 + i + 7.0 * c);
  }
  std::vector<DenseMatrix> solutions;
  for (SchurSystem* system : {&cpu, &gpu}) {
    for (int iteration = 0; iteration < 2; ++iteration) {  // the second reuses the uploaded S
      system->clear_updates();
      system->add_low_rank(w, stiffness);
      system->add(sparse);
      system->add(dense.view());
      ASSERT_TRUE(system->refactor().ok()) << system->status().message;
    }
    DenseMatrix x = b;
    system->solve(x.view());
    solutions.push_back(x);
  }
  for (Index c = 0; c < 3; ++c) {
    for (Index i = 0; i < 40; ++i) EXPECT_NEAR(solutions[0](i, c), solutions[1](i, c), 1e-11);
  }
  gpu.clear_updates();
  DenseMatrix negative(40, 40);
  negative(5, 5) = -1e6;
  gpu.add(negative.view());
  EXPECT_EQ(gpu.refactor().code, FactorStatusCode::not_positive_definite);
  EXPECT_EQ(gpu.status().column, schur[5]);
  gpu.clear_updates();
  DenseMatrix not_a_number(40, 40);
  not_a_number(9, 2) = std::nan("");
  gpu.add(not_a_number.view());
  // OpenBLAS lets the NaN through to the pivot check (non_finite_value), cuSOLVER's potrf
  // stops at it (not_positive_definite): either way a failure at Schur row 9.
  EXPECT_FALSE(gpu.refactor().ok());
  EXPECT_EQ(gpu.status().column, schur[9]);
}

TEST(SchurComplement, EmptySetIsAFullFactorizationAndFullSetIsA) {
  const linalg::SymmetricCscMatrix a = linalg::laplacian_2d(6, 5);
  const Index n = a.size();
  const std::vector<double> b = random_vector(n, 2);

  SchurComplementFactor none(analyze_with_schur(a, {}));
  ASSERT_TRUE(none.factorize(a).ok());
  EXPECT_EQ(none.schur_size(), 0);
  SchurSystem empty(none.schur_complement());
  ASSERT_TRUE(empty.refactor().ok());
  std::vector<double> x = b;
  none.solve(empty, x);
  EXPECT_LE(testing::relative_residual(a, x, b), 1e-13);

  const std::vector<Index> everything = random_schur_set(n, n, 8);
  SchurComplementFactor all(analyze_with_schur(a, everything));
  ASSERT_TRUE(all.factorize(a).ok());
  EXPECT_EQ(all.symbolic().supernode_count(), 1);
  const DenseMatrix dense = to_dense(a);
  const linalg::ConstDenseView s = all.schur_complement();
  for (Index j = 0; j < n; ++j) {
    for (Index i = j; i < n; ++i) EXPECT_EQ(s(i, j), dense(everything[i], everything[j]));
  }
  SchurSystem whole(s, everything);
  ASSERT_TRUE(whole.refactor().ok());
  x = b;
  all.solve(whole, x);
  EXPECT_LE(testing::relative_residual(a, x, b), 1e-13);
}

TEST(SchurComplement, BadSchurSetsAreRejectedWithAMessage) {
  const linalg::SymmetricCscMatrix a = linalg::laplacian_2d(4, 4);
  auto message_of = [&](std::vector<Index> schur, Index dofs_per_node = 1) {
    AnalyzeOptions options;
    options.schur_set = std::move(schur);
    options.dofs_per_node = dofs_per_node;
    try {
      (void)analyze(a, options);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message_of({3, 7, 3}).find("index 3 appears twice"), std::string::npos) << message_of({3, 7, 3});
  EXPECT_NE(message_of({1, 16}).find("entry 1 is 16, outside"), std::string::npos) << message_of({1, 16});
  EXPECT_NE(message_of({-1}).find("outside"), std::string::npos);
  EXPECT_NE(message_of({0, 1, 2}, 2).find("whole nodes"), std::string::npos) << message_of({0, 1, 2}, 2);
  EXPECT_EQ(message_of({0, 1, 2, 3}, 2), "accepted");
}

TEST(SchurComplement, IndefiniteUpdateReportsFailureInsteadOfASolution) {
  const linalg::SymmetricCscMatrix a = linalg::laplacian_2d(8, 8);
  const std::vector<Index> schur = {10, 20, 30, 40};
  SchurComplementFactor partial(analyze_with_schur(a, schur));
  ASSERT_TRUE(partial.factorize(a).ok());
  SchurSystem system(partial.schur_complement(), schur);
  linalg::Triplets t;
  t.add(2, 2, -100.0);
  system.add(linalg::symmetric_from_triplets(4, t));
  const FactorStatus& status = system.refactor();
  EXPECT_EQ(status.code, FactorStatusCode::not_positive_definite);
  EXPECT_EQ(status.column, 30);  // Schur row 2, reported in the matrix's numbering
  std::vector<double> b(static_cast<std::size_t>(a.size()), 1.0);
  EXPECT_THROW(partial.solve(system, b), std::logic_error);
  // Adding to a factored (or failed) system without clearing is misuse.
  EXPECT_THROW(system.add(linalg::symmetric_from_triplets(4, t)), std::logic_error);
  system.clear_updates();
  EXPECT_TRUE(system.refactor().ok());
  // A NaN in ΔS is a failure too, not a factor full of NaN.
  system.clear_updates();
  DenseMatrix nan_update(4, 4);
  nan_update(3, 1) = std::nan("");
  system.add(nan_update.view());
  EXPECT_EQ(system.refactor().code, FactorStatusCode::non_finite_value);
  EXPECT_EQ(system.status().column, 40);  // row 3 of S holds the NaN
  EXPECT_THROW(partial.solve(system, b), std::logic_error);
}

TEST(SchurComplement, IndefiniteEliminatedBlockReportsItsColumn) {
  // A11 has a negative pivot at user column 2; the Schur set {0} does not hide it.
  linalg::Triplets t;
  for (Index i = 0; i < 5; ++i) t.add(i, i, i == 2 ? -1.0 : 4.0);
  for (Index i = 1; i < 5; ++i) t.add(i, i - 1, 1.0);
  const linalg::SymmetricCscMatrix a = linalg::symmetric_from_triplets(5, t);
  SchurComplementFactor partial(analyze_with_schur(a, {0}, OrderingMethod::natural));
  const FactorStatus& status = partial.factorize(a);
  EXPECT_EQ(status.code, FactorStatusCode::not_positive_definite);
  EXPECT_EQ(status.column, 2);
  EXPECT_THROW((void)partial.schur_complement(), std::logic_error);
}

TEST(SchurComplement, PartialFactorRefusesAFullSolve) {
  const linalg::SymmetricCscMatrix a = linalg::laplacian_2d(5, 5);
  SchurComplementFactor partial(analyze_with_schur(a, {3, 4}));
  ASSERT_TRUE(partial.factorize(a).ok());
  std::vector<double> b(25, 1.0);
  EXPECT_THROW(partial.factor().solve(b), std::logic_error);
}

TEST(SchurComplement, ConstrainedOrderingPutsTheSetLastAndReportsItsFill) {
  const linalg::SymmetricCscMatrix a = linalg::laplacian_3d(10, 10, 10);
  const Index n = a.size();
  // A connected patch on the face z = 0, listed in a scrambled order.
  std::vector<Index> schur;
  for (Index y = 3; y < 7; ++y) {
    for (Index x = 2; x < 8; ++x) schur.push_back(x + 10 * y);
  }
  std::reverse(schur.begin(), schur.end());
  const auto m = static_cast<Index>(schur.size());
  const auto constrained = analyze_with_schur(a, schur);
  const Symbolic& sym = *constrained;
  EXPECT_EQ(sym.schur_size(), m);
  for (Index i = 0; i < m; ++i) EXPECT_EQ(sym.permutation()[n - m + i], schur[i]);
  // One dense supernode of its own, not amalgamated with the rest.
  const Index last = sym.supernode_count() - 1;
  EXPECT_EQ(sym.first_column(last), n - m);
  EXPECT_EQ(sym.row_count(last), m);
  EXPECT_TRUE(sym.is_schur_supernode(last));
  for (Index s = 0; s < last; ++s) EXPECT_LE(sym.first_column(s + 1), n - m);
  // The subtree of the Schur supernode is contiguous and ends at it.
  for (Index s = sym.subtree_begin(last); s < last; ++s) {
    Index ancestor = s;
    while (sym.parent(ancestor) != -1) ancestor = sym.parent(ancestor);
    EXPECT_EQ(ancestor, last);
  }
  // Fill: the exact nnz(L) with and without the constraint, the latter from a plain analysis.
  const auto unconstrained = analyze(a);
  EXPECT_EQ(sym.stats().nnz_l_unconstrained, unconstrained->stats().nnz_l_exact);
  EXPECT_EQ(sym.stats().nnz_l_exact, factor_nonzeros(a, sym.permutation()));
  EXPECT_NEAR(sym.stats().fill_increase,
              static_cast<double>(sym.stats().nnz_l_exact) / static_cast<double>(sym.stats().nnz_l_unconstrained) - 1.0,
              1e-15);
  EXPECT_GT(sym.stats().fill_increase, -0.5);
  EXPECT_LT(sym.stats().fill_increase, 0.5);
  // The partial factorization does not count S's potrf, in the supernode cost nor the total.
  EXPECT_EQ(sym.supernode_flops(last), 0.0);
  double flops = 0.0;
  for (Index s = 0; s < last; ++s) flops += sym.supernode_flops(s);
  EXPECT_NEAR(sym.stats().flops, flops, 1e-12 * flops);
}

TEST(SchurComplement, ConnectedPatchGrowsBreadthFirstInsideTheAllowedNodes) {
  // 2D grid 6×5, unknown (i, j) = i + 6j; allowed: the bottom two rows only (a "surface").
  const linalg::SymmetricCscMatrix a = linalg::laplacian_2d(6, 5);
  std::vector<char> allowed(30, 0);
  for (Index v = 0; v < 12; ++v) allowed[v] = 1;
  const std::vector<Index> patch = connected_patch(a, 1, 2, 5, allowed);
  ASSERT_EQ(patch.size(), 5u);
  EXPECT_EQ(patch[0], 2);
  EXPECT_EQ((std::vector<Index>(patch.begin() + 1, patch.end())), (std::vector<Index>{1, 3, 8, 0}));
  EXPECT_EQ(connected_patch(a, 1, 2, 100, allowed).size(), 12u);  // only the allowed part
  EXPECT_THROW((void)connected_patch(a, 1, 20, 3, allowed), std::invalid_argument);
  // Node graphs: whole nodes, DOFs consecutive.
  linalg::ElasticityBoxOptions box;
  box.nx = box.ny = box.nz = 2;
  const std::vector<Index> dofs = connected_patch(linalg::elasticity_matrix(box), 3, 4, 2);
  EXPECT_EQ((std::vector<Index>(dofs.begin(), dofs.begin() + 3)), (std::vector<Index>{12, 13, 14}));
  EXPECT_EQ(dofs.size(), 6u);
}

TEST(SchurComplement, DisconnectedRestKeepsTheSchurSubtreeContiguous) {
  // Two components; the Schur set touches only the second, so the first's tree is a root of
  // its own and must come before the Schur supernode's subtree.
  linalg::Triplets t;
  for (Index i = 0; i < 20; ++i) t.add(i, i, 4.0);
  for (Index i = 1; i < 10; ++i) t.add(i, i - 1, -1.0);
  for (Index i = 11; i < 20; ++i) t.add(i, i - 1, -1.0);
  const linalg::SymmetricCscMatrix a = linalg::symmetric_from_triplets(20, t);
  const std::vector<Index> schur = {15, 12};
  SchurComplementFactor partial(analyze_with_schur(a, schur, OrderingMethod::natural));
  ASSERT_TRUE(partial.factorize(a).ok());
  const Symbolic& sym = partial.symbolic();
  const Index last = sym.supernode_count() - 1;
  for (Index s = sym.subtree_begin(last); s < last; ++s) {
    Index ancestor = s;
    while (sym.parent(ancestor) != -1) ancestor = sym.parent(ancestor);
    EXPECT_EQ(ancestor, last);
  }
  EXPECT_LE(relative_lower_difference(partial.schur_complement(), dense_schur_complement(a, schur)), 1e-11);
  SchurSystem system(partial.schur_complement());
  ASSERT_TRUE(system.refactor().ok());
  const std::vector<double> b = random_vector(20, 6);
  std::vector<double> x = b;
  partial.solve(system, x);
  EXPECT_LE(testing::relative_residual(a, x, b), 1e-13);
}

TEST(SchurComplement, ChangingOnlyA22RecomputesOnlyTheSchurSupernode) {
  const linalg::SymmetricCscMatrix a = linalg::laplacian_3d(6, 5, 4);
  const std::vector<Index> schur = random_schur_set(a.size(), 12, 13);
  SchurComplementFactor partial(analyze_with_schur(a, schur));
  FactorOptions retain;
  retain.retain_update_blocks = true;
  retain.retain_min_flops_per_entry = 0.0;  // keep every block: nothing below S is recomputed
  ASSERT_TRUE(partial.factorize(a, retain).ok());
  const std::vector<double> eliminated_before(
      partial.factor().values().begin(),
      partial.factor().values().begin() + partial.symbolic().value_offset(partial.symbolic().supernode_count() - 1));

  // New values on A22's diagonal only.
  linalg::SymmetricCscMatrix changed = a;
  for (Index c : schur) {
    const linalg::Offset p = changed.lower.col_ptr[c];  // the diagonal comes first in each column
    ASSERT_EQ(changed.lower.row_idx[p], c);
    changed.lower.values[p] += 5.0;
  }
  // Entries of A22 are assembled by the Schur supernode alone (ChangedEntries::columns would
  // also mark the supernodes assembling A21).
  const Index schur_supernode = partial.symbolic().supernode_count() - 1;
  ASSERT_TRUE(partial.refactorize(ChangedEntries::supernodes({schur_supernode}), changed).ok());
  EXPECT_EQ(partial.stats().recomputed_supernodes, 1);
  EXPECT_TRUE(std::equal(eliminated_before.begin(), eliminated_before.end(), partial.factor().values().begin()));
  EXPECT_LE(relative_lower_difference(partial.schur_complement(), dense_schur_complement(changed, schur)), 1e-11);
}

}  // namespace
}  // namespace cholsim::factor
