#pragma once
// Where the work of a factorization lies in the assembly tree, level by level: numerical
// analysts read nested-dissection trees by their level profile (flops and front sizes grow
// towards the root separators).
#include <cstdint>
#include <vector>

#include "factor/analysis/symbolic.hpp"

namespace cholsim::factor {

/// Distance of every supernode from its root (0 for a root), in postorder.
std::vector<Index> supernode_depths(const Symbolic& symbolic);

/// Entries of L that supernode s stores: its m×k block without the strictly upper part of
/// the k×k diagonal block (AnalyzeStats::nnz_l sums these).
std::int64_t supernode_factor_entries(const Symbolic& symbolic, Index s);

/// The supernodes at one depth of the assembly tree, summed.
struct TreeLevel {
  Index supernodes = 0;
  Index columns = 0;
  double flops = 0.0;                 ///< Symbolic::supernode_flops summed
  std::int64_t factor_entries = 0;    ///< supernode_factor_entries summed
  Index largest_front = 0;            ///< most rows of a supernode at this depth
  std::int64_t front_rows = 0;        ///< rows of all its supernodes (mean front = front_rows / supernodes)
};

/// One TreeLevel per depth, root level first; AnalyzeStats::tree_levels of them.
std::vector<TreeLevel> tree_level_profile(const Symbolic& symbolic);

}  // namespace cholsim::factor
