#include "factor/update/update_block_retention.hpp"

#include "factor/numeric/multifrontal.hpp"

namespace cholsim::factor {

std::vector<char> retained_update_blocks(const Symbolic& symbolic, double min_flops_per_entry) {
  const Index count = symbolic.supernode_count();
  std::vector<double> subtree_flops(static_cast<std::size_t>(count), 0.0);
  std::vector<char> kept(static_cast<std::size_t>(count), 0);
  for (Index s = 0; s < count; ++s) {  // postorder: children are complete before s
    subtree_flops[s] += symbolic.supernode_flops(s);
    if (symbolic.parent(s) != -1) subtree_flops[symbolic.parent(s)] += subtree_flops[s];
    const auto entries = static_cast<double>(update_layout(symbolic, s).entries());
    kept[s] = entries > 0.0 && subtree_flops[s] >= min_flops_per_entry * entries ? 1 : 0;
  }
  return kept;
}

UpdateBlockStore& update_blocks_for_call(std::unique_ptr<UpdateBlockStore>& retained, bool retain,
                                         UpdateBlockStore& transient, const Symbolic& symbolic) {
  if (!retain) {
    retained.reset();
    return transient;
  }
  if (!retained) retained = std::make_unique<UpdateBlockStore>(symbolic, BlockLifetime::across_calls);
  return *retained;
}

void release_consumed_children(const Symbolic& symbolic, Index s, std::span<const char> kept,
                               UpdateBlockStore& updates) {
  for (Index c : symbolic.children(s)) {
    if (kept.empty() || !kept[c]) updates.release(c);
  }
}

void add_unretained_children(const Symbolic& symbolic, std::span<const char> kept, std::span<char> marked) {
  for (Index s = symbolic.supernode_count() - 1; s >= 0; --s) {  // parents before children
    if (!marked[s]) continue;
    for (Index c : symbolic.children(s)) {
      if (!kept[c]) marked[c] = 1;
    }
  }
}

std::vector<double> costs_with_unretained_children(const Symbolic& symbolic, std::span<const char> kept,
                                                   std::span<const double> cost) {
  std::vector<double> total(cost.begin(), cost.end());
  if (kept.empty()) return total;
  for (Index s = 0; s < symbolic.supernode_count(); ++s) {  // children before parents
    for (Index c : symbolic.children(s)) {
      if (!kept[c]) total[s] += total[c];
    }
  }
  return total;
}

}  // namespace cholsim::factor
