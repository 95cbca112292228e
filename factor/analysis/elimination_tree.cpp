#include "factor/analysis/elimination_tree.hpp"

namespace cholsim::factor {

std::vector<Index> elimination_tree(const linalg::SymmetricCscMatrix& pattern) {
  // Liu's algorithm visits, for each column k, the entries A(i, k) with i < k: the upper
  // triangle's column k, i.e. row k of the stored lower triangle.
  const linalg::CscMatrix upper = linalg::transpose(pattern.lower);
  const Index n = pattern.size();
  std::vector<Index> parent(static_cast<std::size_t>(n), -1);
  std::vector<Index> ancestor(static_cast<std::size_t>(n), -1);  // path-compressed shortcuts
  for (Index k = 0; k < n; ++k) {
    for (linalg::Offset p = upper.col_ptr[k]; p < upper.col_ptr[k + 1]; ++p) {
      Index i = upper.row_idx[p];
      // Climb from i to the root of its current subtree, pointing every visited node at k.
      while (i != -1 && i < k) {
        const Index next = ancestor[i];
        ancestor[i] = k;
        if (next == -1) parent[i] = k;
        i = next;
      }
    }
  }
  return parent;
}

std::vector<Index> postorder(std::span<const Index> parent) {
  const auto n = static_cast<Index>(parent.size());
  // Children lists as linked lists; building them backwards keeps increasing order.
  std::vector<Index> first_child(static_cast<std::size_t>(n), -1);
  std::vector<Index> next_sibling(static_cast<std::size_t>(n), -1);
  for (Index j = n - 1; j >= 0; --j) {
    const Index p = parent[j];
    if (p != -1) {
      next_sibling[j] = first_child[p];
      first_child[p] = j;
    }
  }
  std::vector<Index> post;
  post.reserve(static_cast<std::size_t>(n));
  std::vector<Index> stack;
  for (Index root = 0; root < n; ++root) {
    if (parent[root] != -1) continue;
    // Iterative depth-first search: a node is emitted once all its children are.
    stack.push_back(root);
    while (!stack.empty()) {
      const Index top = stack.back();
      const Index child = first_child[top];
      if (child == -1) {
        stack.pop_back();
        post.push_back(top);
      } else {
        first_child[top] = next_sibling[child];  // consume the child
        stack.push_back(child);
      }
    }
  }
  return post;
}

}  // namespace cholsim::factor
