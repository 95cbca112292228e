#pragma once
// Small SPD test matrices of many shapes, shared by the factor tests.
#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "factor/analysis/symbolic.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/dense_matrix.hpp"
#include "linalg/generators.hpp"

namespace cholsim::factor::testing {

using linalg::Index;

struct NamedMatrix {
  std::string name;
  linalg::SymmetricCscMatrix matrix;
};

/// Makes the pattern given by `edges` (i > j) SPD by diagonal dominance with random values.
inline linalg::SymmetricCscMatrix spd_from_edges(Index n, const std::vector<std::pair<Index, Index>>& edges,
                                                 unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  linalg::Triplets t;
  std::vector<double> row_sum(static_cast<std::size_t>(n), 0.0);
  for (auto [i, j] : edges) {
    const double v = value(rng);
    t.add(i, j, v);
    row_sum[i] += std::abs(v);
    row_sum[j] += std::abs(v);
  }
  for (Index i = 0; i < n; ++i) t.add(i, i, row_sum[i] + 0.5 + std::abs(value(rng)));
  return linalg::symmetric_from_triplets(n, t);
}

inline std::vector<std::pair<Index, Index>> random_edges(Index n, double density, std::mt19937& rng) {
  std::vector<std::pair<Index, Index>> edges;
  std::bernoulli_distribution keep(density);
  for (Index j = 0; j < n; ++j) {
    for (Index i = j + 1; i < n; ++i) {
      if (keep(rng)) edges.emplace_back(i, j);
    }
  }
  return edges;
}

/// The shapes the issue asks for: diagonal, tridiagonal, arrowhead, dense, disconnected
/// components, 1×1, n = 0, a dense row/column, random sparse of several densities.
inline std::vector<NamedMatrix> spd_test_matrices() {
  std::vector<NamedMatrix> out;
  std::mt19937 rng(2026);
  auto add = [&](std::string name, Index n, std::vector<std::pair<Index, Index>> edges) {
    out.push_back({std::move(name), spd_from_edges(n, edges, static_cast<unsigned>(out.size() + 1))});
  };
  add("empty", 0, {});
  add("one_by_one", 1, {});
  add("diagonal", 40, {});
  std::vector<std::pair<Index, Index>> tri;
  for (Index i = 1; i < 60; ++i) tri.emplace_back(i, i - 1);
  add("tridiagonal", 60, tri);
  std::vector<std::pair<Index, Index>> arrow;
  for (Index i = 0; i < 49; ++i) arrow.emplace_back(49, i);
  add("arrowhead_last", 50, arrow);
  std::vector<std::pair<Index, Index>> arrow_first;
  for (Index i = 1; i < 50; ++i) arrow_first.emplace_back(i, 0);
  add("dense_first_column", 50, arrow_first);
  add("dense", 70, random_edges(70, 1.0, rng));
  std::vector<std::pair<Index, Index>> components;
  for (Index block = 0; block < 4; ++block) {
    for (auto [i, j] : random_edges(15, 0.3, rng)) components.emplace_back(i + 15 * block, j + 15 * block);
  }
  add("four_components", 60, components);
  for (double density : {0.02, 0.05, 0.15, 0.4}) {
    add("random_" + std::to_string(static_cast<int>(density * 100)), 120, random_edges(120, density, rng));
  }
  std::vector<std::pair<Index, Index>> grid;  // 2D 12×12 grid: a nested-dissection shape
  for (Index y = 0; y < 12; ++y) {
    for (Index x = 0; x < 12; ++x) {
      const Index v = y * 12 + x;
      if (x > 0) grid.emplace_back(v, v - 1);
      if (y > 0) grid.emplace_back(v, v - 12);
    }
  }
  add("grid_12x12", 144, grid);
  return out;
}

/// The elasticity matrix M + Δt²K of a cube of cells × cells × cells cells (3 DOFs a node).
inline linalg::SymmetricCscMatrix elasticity_cube(Index cells) {
  linalg::ElasticityBoxOptions box;
  box.nx = box.ny = box.nz = cells;
  return linalg::elasticity_matrix(box);
}

/// The analysis of an elasticity matrix with its 3 DOFs a node ordered together.
inline std::shared_ptr<const Symbolic> analyze_elasticity(const linalg::SymmetricCscMatrix& a) {
  AnalyzeOptions options;
  options.dofs_per_node = 3;
  return analyze(a, options);
}

/// max |x − y| / max |y| over two equally long arrays.
inline double relative_max_difference(std::span<const double> x, std::span<const double> y) {
  double difference = 0.0;
  double largest = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    difference = std::max(difference, std::abs(x[i] - y[i]));
    largest = std::max(largest, std::abs(y[i]));
  }
  return difference / largest;
}

inline double relative_residual(const linalg::SymmetricCscMatrix& a, const std::vector<double>& x,
                                const std::vector<double>& b) {
  std::vector<double> ax(b.size());
  linalg::symmetric_multiply(a, x, ax);
  double r = 0.0;
  double nb = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    r += (b[i] - ax[i]) * (b[i] - ax[i]);
    nb += b[i] * b[i];
  }
  return nb > 0 ? std::sqrt(r / nb) : std::sqrt(r);
}

}  // namespace cholsim::factor::testing
