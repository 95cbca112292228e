#include "factor/analysis/column_counts.hpp"

#include "factor/analysis/elimination_tree.hpp"

namespace cholsim::factor {
namespace {

// Bookkeeping of the row subtrees T_i (the subtree of the etree spanned by row i of L).
struct RowSubtrees {
  std::vector<Index> first_descendant;   // postorder number of the first descendant of j
  std::vector<Index> max_first;          // largest first_descendant seen among leaves of T_i
  std::vector<Index> previous_leaf;      // the last leaf found in T_i
  std::vector<Index> set_parent;         // disjoint-set forest over processed nodes

  // Returns the root of j's set, compressing the path.
  Index find(Index j) {
    Index root = j;
    while (set_parent[root] != root) root = set_parent[root];
    while (set_parent[j] != root) {
      const Index next = set_parent[j];
      set_parent[j] = root;
      j = next;
    }
    return root;
  }
};

}  // namespace

std::vector<Index> column_counts(const linalg::SymmetricCscMatrix& pattern,
                                 std::span<const Index> parent, std::span<const Index> post) {
  const Index n = pattern.size();
  const linalg::CscMatrix& lower = pattern.lower;
  RowSubtrees rows{std::vector<Index>(n, -1), std::vector<Index>(n, -1),
                   std::vector<Index>(n, -1), std::vector<Index>(n)};
  std::vector<Index> delta(static_cast<std::size_t>(n), 0);

  // first_descendant[j]: smallest postorder number in j's subtree; leaves start with delta 1.
  for (Index k = 0; k < n; ++k) {
    Index j = post[k];
    delta[j] = rows.first_descendant[j] == -1 ? 1 : 0;
    for (; j != -1 && rows.first_descendant[j] == -1; j = parent[j]) {
      rows.first_descendant[j] = k;
    }
  }
  for (Index j = 0; j < n; ++j) rows.set_parent[j] = j;

  for (Index k = 0; k < n; ++k) {
    const Index j = post[k];
    if (parent[j] != -1) --delta[parent[j]];
    // Entries A(i, j) with i > j: j may be a leaf of row subtree T_i.
    for (linalg::Offset p = lower.col_ptr[j]; p < lower.col_ptr[j + 1]; ++p) {
      const Index i = lower.row_idx[p];
      if (i <= j || rows.first_descendant[j] <= rows.max_first[i]) continue;  // not a leaf
      rows.max_first[i] = rows.first_descendant[j];
      const Index previous = rows.previous_leaf[i];
      rows.previous_leaf[i] = j;
      ++delta[j];  // A(i, j) belongs to the skeleton: row i reaches column j
      if (previous != -1) {
        // T_i was already counted from the least common ancestor of the two leaves upward.
        --delta[rows.find(previous)];
      }
    }
    if (parent[j] != -1) rows.set_parent[j] = parent[j];
  }

  // Column count = sum of deltas over the subtree (children precede parents in postorder).
  for (Index k = 0; k < n; ++k) {
    const Index j = post[k];
    if (parent[j] != -1) delta[parent[j]] += delta[j];
  }
  return delta;
}

std::vector<Index> ordered_column_counts(const linalg::SymmetricCscMatrix& pattern,
                                         std::span<const Index> perm) {
  const linalg::SymmetricCscMatrix pattern_only{
      linalg::CscMatrix{pattern.size(), pattern.size(), pattern.lower.col_ptr, pattern.lower.row_idx, {}}};
  const linalg::SymmetricCscMatrix ordered = linalg::permute_symmetric(pattern_only, perm);
  const std::vector<Index> parent = elimination_tree(ordered);
  return column_counts(ordered, parent, postorder(parent));
}

}  // namespace cholsim::factor
