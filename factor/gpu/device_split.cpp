#include "factor/gpu/device_split.hpp"

namespace cholsim::factor {

std::vector<char> supernodes_on_device(const Symbolic& symbolic, double min_supernode_flops) {
  const Index count = symbolic.supernode_count();
  std::vector<char> on_device(static_cast<std::size_t>(count), 0);
  if (symbolic.schur_size() > 0) return on_device;
  for (Index s = 0; s < count; ++s) {  // postorder: a child is decided before its parent
    if (symbolic.supernode_flops(s) >= min_supernode_flops) on_device[s] = 1;
  }
  for (Index s = 0; s < count; ++s) {
    const Index p = symbolic.parent(s);
    if (on_device[s] && p != -1) on_device[p] = 1;
  }
  return on_device;
}

double marked_flops(const Symbolic& symbolic, std::span<const char> marked) {
  double flops = 0.0;
  for (Index s = 0; s < symbolic.supernode_count(); ++s) {
    if (marked[s]) flops += symbolic.supernode_flops(s);
  }
  return flops;
}

}  // namespace cholsim::factor
