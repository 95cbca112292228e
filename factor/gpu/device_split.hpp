#pragma once
// Which supernodes of a factorization run on the GPU (issue 22): those whose dense work is at
// least `min_supernode_flops`, and all their ancestors, so that the device part is the top of
// the assembly tree and every device supernode's parent is on the device too — an update
// block crosses from host to device at most once and never back. The subtrees below stay on
// the CPU's tree tasks (tree_scheduler.hpp).
#include <span>
#include <vector>

#include "factor/analysis/symbolic.hpp"

namespace cholsim::factor {

/// on_device[s] = 1 for the supernodes the GPU computes. A partial factorization (Schur
/// supernode) keeps everything on the CPU: its solve phases read the host factor.
std::vector<char> supernodes_on_device(const Symbolic& symbolic, double min_supernode_flops);

/// The flops of the marked supernodes.
double marked_flops(const Symbolic& symbolic, std::span<const char> marked);

}  // namespace cholsim::factor
