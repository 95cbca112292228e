#include "factor/numeric/update_stack_profile.hpp"

#include "factor/numeric/multifrontal.hpp"

namespace cholsim::factor {

std::int64_t update_block_bytes(const Symbolic& symbolic, Index s) {
  return update_layout(symbolic, s).entries() * static_cast<std::int64_t>(sizeof(double));
}

std::vector<std::int64_t> update_block_sizes(const Symbolic& symbolic, std::span<const Index> kept_columns) {
  std::vector<std::int64_t> bytes(static_cast<std::size_t>(symbolic.supernode_count()));
  for (Index s = 0; s < symbolic.supernode_count(); ++s) {
    bytes[s] = update_layout(symbolic, s, kept_columns).entries() * static_cast<std::int64_t>(sizeof(double));
  }
  return bytes;
}

UpdateStackProfile sequential_update_stack(const Symbolic& symbolic, std::span<const Index> kept_columns) {
  const Index count = symbolic.supernode_count();
  const std::vector<std::int64_t> bytes = update_block_sizes(symbolic, kept_columns);
  UpdateStackProfile profile;
  profile.bytes_while_computing.reserve(static_cast<std::size_t>(count));
  profile.bytes_after_release.reserve(static_cast<std::size_t>(count));
  std::int64_t live = 0;
  for (Index s = 0; s < count; ++s) {
    // Same order as compute_supernode + release_consumed_children: s's block is allocated
    // while the children's blocks are still being extend-added.
    live += bytes[s];
    profile.bytes_while_computing.push_back(live);
    if (live > profile.peak_bytes) {
      profile.peak_bytes = live;
      profile.peak_supernode = s;
    }
    for (Index child : symbolic.children(s)) live -= bytes[child];
    profile.bytes_after_release.push_back(live);
  }
  return profile;
}

}  // namespace cholsim::factor
