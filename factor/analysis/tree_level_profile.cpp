#include "factor/analysis/tree_level_profile.hpp"

#include <algorithm>

namespace cholsim::factor {

std::vector<Index> supernode_depths(const Symbolic& symbolic) {
  std::vector<Index> depth(static_cast<std::size_t>(symbolic.supernode_count()), 0);
  // Postorder puts every parent after its children, so a backward sweep sees parents first.
  for (Index s = symbolic.supernode_count() - 1; s >= 0; --s) {
    if (symbolic.parent(s) != -1) depth[s] = depth[symbolic.parent(s)] + 1;
  }
  return depth;
}

std::int64_t supernode_factor_entries(const Symbolic& symbolic, Index s) {
  const std::int64_t k = symbolic.column_count(s);
  return k * symbolic.row_count(s) - k * (k - 1) / 2;
}

std::vector<TreeLevel> tree_level_profile(const Symbolic& symbolic) {
  const std::vector<Index> depth = supernode_depths(symbolic);
  const Index levels = depth.empty() ? 0 : *std::max_element(depth.begin(), depth.end()) + 1;
  std::vector<TreeLevel> profile(static_cast<std::size_t>(levels));
  for (Index s = 0; s < symbolic.supernode_count(); ++s) {
    TreeLevel& level = profile[depth[s]];
    ++level.supernodes;
    level.columns += symbolic.column_count(s);
    level.flops += symbolic.supernode_flops(s);
    level.factor_entries += supernode_factor_entries(symbolic, s);
    level.largest_front = std::max(level.largest_front, symbolic.row_count(s));
    level.front_rows += symbolic.row_count(s);
  }
  return profile;
}

}  // namespace cholsim::factor
