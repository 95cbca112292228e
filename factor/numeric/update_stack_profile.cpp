#include "factor/numeric/update_stack_profile.hpp"

#include "factor/numeric/multifrontal.hpp"

namespace cholsim::factor {

std::int64_t update_block_bytes(const Symbolic& symbolic, Index s) {
  return update_layout(symbolic, s).entries() * static_cast<std::int64_t>(sizeof(double));
}

UpdateStackProfile sequential_update_stack(const Symbolic& symbolic) {
  const Index count = symbolic.supernode_count();
  UpdateStackProfile profile;
  profile.bytes_while_computing.reserve(static_cast<std::size_t>(count));
  profile.bytes_after_release.reserve(static_cast<std::size_t>(count));
  std::int64_t live = 0;
  for (Index s = 0; s < count; ++s) {
    // Same order as compute_supernode + release_consumed_children: s's block is allocated
    // while the children's blocks are still being extend-added.
    live += update_block_bytes(symbolic, s);
    profile.bytes_while_computing.push_back(live);
    if (live > profile.peak_bytes) {
      profile.peak_bytes = live;
      profile.peak_supernode = s;
    }
    for (Index child : symbolic.children(s)) live -= update_block_bytes(symbolic, child);
    profile.bytes_after_release.push_back(live);
  }
  return profile;
}

}  // namespace cholsim::factor
