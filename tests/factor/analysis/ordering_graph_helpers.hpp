#pragma once
// Graphs the ordering tests share (minimum degree, nested dissection, the automatic choice):
// paths, grids, trees, hubs, arrowheads, cliques, disconnected and random graphs, and the
// checks every ordering must pass.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "factor/analysis/column_counts.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor::testing {

using Edges = std::vector<std::pair<Index, Index>>;

struct GraphCase {
  std::string name;
  Index n;
  Edges edges;  // (i, j) with i > j
};

inline void add_edge(Edges& edges, Index a, Index b) { edges.emplace_back(std::max(a, b), std::min(a, b)); }

inline Edges path_edges(Index n) {
  Edges edges;
  for (Index i = 1; i < n; ++i) add_edge(edges, i, i - 1);
  return edges;
}

inline Edges grid_edges(Index nx, Index ny) {
  Edges edges;
  for (Index y = 0; y < ny; ++y) {
    for (Index x = 0; x < nx; ++x) {
      if (x > 0) add_edge(edges, y * nx + x, y * nx + x - 1);
      if (y > 0) add_edge(edges, y * nx + x, (y - 1) * nx + x);
    }
  }
  return edges;
}

// A random tree: every vertex hangs from an earlier one.
inline Edges random_tree_edges(Index n, std::mt19937& rng) {
  Edges edges;
  for (Index i = 1; i < n; ++i) add_edge(edges, i, std::uniform_int_distribution<Index>(0, i - 1)(rng));
  return edges;
}

// A 2D grid whose `hubs` are joined to every other vertex: rows far above 10·√n.
inline Edges grid_with_hubs(Index side, std::initializer_list<Index> hubs) {
  Edges edges = grid_edges(side, side);
  for (Index hub : hubs) {
    for (Index v = 0; v < side * side; ++v) {
      const bool other_hub = std::find(hubs.begin(), hubs.end(), v) != hubs.end() && v < hub;
      if (v != hub && !other_hub) add_edge(edges, hub, v);
    }
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  return edges;
}

inline Edges arrowhead_edges(Index n, Index hub) {
  Edges edges;
  for (Index v = 0; v < n; ++v) {
    if (v != hub) add_edge(edges, hub, v);
  }
  return edges;
}

inline std::vector<GraphCase> adversarial_graphs() {
  std::mt19937 rng(23);
  std::vector<GraphCase> cases{
      {"empty", 0, {}},
      {"single_vertex", 1, {}},
      {"no_edges", 25, {}},
      {"path", 50, path_edges(50)},
      {"clique", 40, random_edges(40, 1.0, rng)},
      {"grid_20x20", 400, grid_edges(20, 20)},
      {"arrowhead", 500, arrowhead_edges(500, 499)},
      {"grid_with_two_dense_rows", 900, grid_with_hubs(30, {7, 450})},
      {"random_tree", 300, random_tree_edges(300, rng)},
  };
  Edges components;  // four random blocks and isolated vertices in between
  for (Index block = 0; block < 4; ++block) {
    for (auto [i, j] : random_edges(30, 0.2, rng)) add_edge(components, i + 40 * block, j + 40 * block);
  }
  cases.push_back({"disconnected", 160, components});
  for (const double density : {0.005, 0.02, 0.1, 0.4}) {
    for (const unsigned seed : {1u, 2u, 3u}) {
      std::mt19937 random(seed);
      cases.push_back({"random_" + std::to_string(density) + "_" + std::to_string(seed), 300,
                       random_edges(300, density, random)});
    }
  }
  return cases;
}

inline linalg::SymmetricCscMatrix matrix_of(const GraphCase& graph_case) {
  return spd_from_edges(graph_case.n, graph_case.edges, 7);
}

inline bool is_permutation_of(const std::vector<Index>& perm, Index n) {
  if (static_cast<Index>(perm.size()) != n) return false;
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  for (Index v : perm) {
    if (v < 0 || v >= n || seen[v]) return false;
    seen[v] = 1;
  }
  return true;
}

inline std::int64_t fill_of(const linalg::SymmetricCscMatrix& a, std::span<const Index> perm) {
  const std::vector<Index> counts = ordered_column_counts(a, perm);
  return std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
}

}  // namespace cholsim::factor::testing
