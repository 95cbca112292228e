#include "factor/schur/schur_ordering.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "factor/analysis/column_counts.hpp"
#include "factor/analysis/elimination_tree.hpp"

namespace cholsim::factor {
namespace {

// The pattern of A restricted to the unknowns `kept` (increasing), renumbered by their rank.
// Increasing ranks keep every lower entry lower.
linalg::SymmetricCscMatrix induced_pattern(const linalg::SymmetricCscMatrix& pattern,
                                           std::span<const Index> kept) {
  const Index n = pattern.size();
  std::vector<Index> rank(static_cast<std::size_t>(n), -1);
  for (Index i = 0; i < static_cast<Index>(kept.size()); ++i) rank[kept[i]] = i;
  linalg::CscMatrix lower;
  lower.rows = lower.cols = static_cast<Index>(kept.size());
  lower.col_ptr.assign(kept.size() + 1, 0);
  for (Index c = 0; c < lower.cols; ++c) {
    const Index column = kept[c];
    for (linalg::Offset p = pattern.lower.col_ptr[column]; p < pattern.lower.col_ptr[column + 1]; ++p) {
      const Index row = rank[pattern.lower.row_idx[p]];
      if (row != -1) lower.row_idx.push_back(row);
    }
    lower.col_ptr[c + 1] = static_cast<linalg::Offset>(lower.row_idx.size());
  }
  return {std::move(lower)};
}

// With k DOFs a node, a node graph of the rest exists only if every node is wholly in or
// wholly out of the Schur set.
void check_whole_nodes(std::span<const char> in_schur, Index dofs_per_node) {
  const auto n = static_cast<Index>(in_schur.size());
  if (dofs_per_node < 1 || n % dofs_per_node != 0) {
    throw std::invalid_argument("analyze: dofs_per_node " + std::to_string(dofs_per_node) +
                                " does not divide the matrix size " + std::to_string(n));
  }
  for (Index node = 0; node < n / dofs_per_node; ++node) {
    Index members = 0;
    for (Index d = 0; d < dofs_per_node; ++d) members += in_schur[node * dofs_per_node + d];
    if (members != 0 && members != dofs_per_node) {
      throw std::invalid_argument("Schur set: node " + std::to_string(node) + " has " +
                                  std::to_string(members) + " of its " + std::to_string(dofs_per_node) +
                                  " DOFs in the set; with dofs_per_node > 1 it must hold whole nodes");
    }
  }
}

}  // namespace

void check_schur_set(std::span<const Index> schur_set, Index n) {
  std::vector<Index> first_position(static_cast<std::size_t>(n), -1);
  for (std::size_t i = 0; i < schur_set.size(); ++i) {
    const Index u = schur_set[i];
    if (u < 0 || u >= n) {
      throw std::invalid_argument("Schur set: entry " + std::to_string(i) + " is " + std::to_string(u) +
                                  ", outside the matrix's range [0, " + std::to_string(n) + ")");
    }
    if (first_position[u] != -1) {
      throw std::invalid_argument("Schur set: index " + std::to_string(u) + " appears twice (entries " +
                                  std::to_string(first_position[u]) + " and " + std::to_string(i) + ")");
    }
    first_position[u] = static_cast<Index>(i);
  }
}

std::vector<Index> connected_patch(const linalg::SymmetricCscMatrix& pattern, Index dofs_per_node,
                                   Index seed_node, Index node_count, std::span<const char> allowed) {
  const AdjacencyGraph graph = adjacency_graph(pattern, dofs_per_node);
  const Index nodes = graph.vertex_count();
  if (seed_node < 0 || seed_node >= nodes || (!allowed.empty() && !allowed[seed_node])) {
    throw std::invalid_argument("connected_patch: seed node " + std::to_string(seed_node) +
                                " is not an allowed node of the graph");
  }
  if (!allowed.empty() && static_cast<Index>(allowed.size()) != nodes) {
    throw std::invalid_argument("connected_patch: allowed has " + std::to_string(allowed.size()) +
                                " entries, the graph " + std::to_string(nodes) + " nodes");
  }
  std::vector<char> visited(static_cast<std::size_t>(nodes), 0);
  std::vector<Index> queue{seed_node};
  visited[seed_node] = 1;
  for (std::size_t head = 0; head < queue.size() && static_cast<Index>(queue.size()) < node_count; ++head) {
    for (Index p = graph.offsets[queue[head]]; p < graph.offsets[queue[head] + 1]; ++p) {
      const Index v = graph.neighbors[p];
      if (visited[v] || (!allowed.empty() && !allowed[v])) continue;
      visited[v] = 1;
      queue.push_back(v);
      if (static_cast<Index>(queue.size()) == node_count) break;
    }
  }
  queue.resize(std::min<std::size_t>(queue.size(), static_cast<std::size_t>(std::max<Index>(node_count, 0))));
  std::vector<Index> dofs;
  dofs.reserve(queue.size() * static_cast<std::size_t>(dofs_per_node));
  for (Index node : queue) {
    for (Index d = 0; d < dofs_per_node; ++d) dofs.push_back(node * dofs_per_node + d);
  }
  return dofs;
}

FillReducingOrdering constrained_ordering(const linalg::SymmetricCscMatrix& pattern,
                                          std::span<const Index> schur_set, OrderingMethod method,
                                          Index dofs_per_node,
                                          std::span<const Index> given_permutation) {
  const Index n = pattern.size();
  check_schur_set(schur_set, n);
  std::vector<char> in_schur(static_cast<std::size_t>(n), 0);
  for (Index u : schur_set) in_schur[u] = 1;

  FillReducingOrdering result{{}, method};
  std::vector<Index>& perm = result.permutation;
  perm.reserve(static_cast<std::size_t>(n));
  switch (method) {
    case OrderingMethod::automatic:
    case OrderingMethod::minimum_degree:
    case OrderingMethod::nested_dissection:
    case OrderingMethod::dissection_minimum_degree: {
      check_whole_nodes(in_schur, dofs_per_node);
      std::vector<Index> rest;
      rest.reserve(static_cast<std::size_t>(n) - schur_set.size());
      for (Index u = 0; u < n; ++u) {
        if (!in_schur[u]) rest.push_back(u);
      }
      // Whole nodes removed in increasing order: the rest's DOFs of a node stay consecutive.
      result = fill_reducing_ordering(induced_pattern(pattern, rest), method, dofs_per_node);
      for (Index& r : perm) r = rest[r];
      break;
    }
    case OrderingMethod::natural:
      for (Index u = 0; u < n; ++u) {
        if (!in_schur[u]) perm.push_back(u);
      }
      break;
    case OrderingMethod::given:
      linalg::check_permutation(given_permutation, n, "analyze: given permutation");
      for (Index u : given_permutation) {
        if (!in_schur[u]) perm.push_back(u);
      }
      break;
  }
  perm.insert(perm.end(), schur_set.begin(), schur_set.end());
  return result;
}

std::int64_t factor_nonzeros(const linalg::SymmetricCscMatrix& pattern, std::span<const Index> perm) {
  const std::vector<Index> counts = ordered_column_counts(pattern, perm);
  return std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
}

std::vector<Index> schur_last_postorder(std::span<const Index> parent, Index eliminated) {
  const auto n = static_cast<Index>(parent.size());
  // The elimination forest of A11: edges into the Schur set are cut.
  std::vector<Index> rest_parent(parent.begin(), parent.begin() + eliminated);
  for (Index& p : rest_parent) {
    if (p >= eliminated) p = -1;
  }
  const std::vector<Index> rest_post = postorder(rest_parent);
  // postorder() emits each tree contiguously, ending at its root.
  std::vector<Index> post;
  post.reserve(static_cast<std::size_t>(n));
  for (const bool attached : {false, true}) {
    std::size_t tree_begin = 0;
    for (std::size_t i = 0; i < rest_post.size(); ++i) {
      const Index column = rest_post[i];
      if (rest_parent[column] != -1) continue;
      if ((parent[column] != -1) == attached) {
        post.insert(post.end(), rest_post.begin() + static_cast<std::ptrdiff_t>(tree_begin),
                    rest_post.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      }
      tree_begin = i + 1;
    }
  }
  for (Index j = eliminated; j < n; ++j) post.push_back(j);
  return post;
}

SupernodePartition schur_supernode_partition(std::span<const Index> parent,
                                             std::span<const Index> counts, Index eliminated,
                                             const AmalgamationOptions& amalgamation) {
  const auto n = static_cast<Index>(parent.size());
  std::vector<Index> rest_parent(parent.begin(), parent.begin() + eliminated);
  for (Index& p : rest_parent) {
    if (p >= eliminated) p = -1;
  }
  SupernodePartition partition =
      amalgamate(fundamental_supernodes(rest_parent, counts.first(static_cast<std::size_t>(eliminated))),
                 amalgamation);
  const Index schur_supernode = partition.count();
  for (Index s = 0; s < schur_supernode; ++s) {
    const Index last = partition.first_column[s + 1] - 1;
    if (partition.parent[s] == -1 && parent[last] >= eliminated) partition.parent[s] = schur_supernode;
  }
  partition.first_column.push_back(n);  // first_column already ends with `eliminated`
  partition.parent.push_back(-1);
  partition.row_count.push_back(n - eliminated);
  return partition;
}

}  // namespace cholsim::factor
