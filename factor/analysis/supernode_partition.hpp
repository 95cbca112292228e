#pragma once
// Supernodes: fundamental supernodes from the column counts, then relaxed amalgamation.
#include <span>
#include <vector>

#include "linalg/index_types.hpp"

namespace cholsim::factor {

using linalg::Index;

/// When two supernodes may be merged although the result stores explicit zeros.
///
/// A child is merged into its parent if the merged supernode has at most `always_columns`
/// columns, or at most `small_columns` columns and a zero fraction ≤ `small_zero_fraction`,
/// or at most `medium_columns` and ≤ `medium_zero_fraction`, or any size and
/// ≤ `large_zero_fraction` zeros. The zero fraction counts explicit zeros over all stored
/// entries of the merged (lower-trapezoidal) supernode.
///
/// The defaults are CHOLMOD's (4 / 16 at 0.8 / 48 at 0.1 / 0.05): they keep the stored size
/// of L within a few percent of CHOLMOD's for the same permutation, which the benchmark
/// compares. Merging more (8 / 32 / 64) cut the multifrontal factor time on 3D elasticity
/// boxes by a few percent at most in our measurements (bench_factor_vs_cholmod), at 3–25%
/// more stored entries on small problems — not worth the memory by default.
struct AmalgamationOptions {
  bool enabled = true;
  Index always_columns = 4;
  Index small_columns = 16;
  double small_zero_fraction = 0.8;
  Index medium_columns = 48;
  double medium_zero_fraction = 0.1;
  double large_zero_fraction = 0.05;
};

/// A partition of the columns 0..n-1 of a postordered matrix into contiguous supernodes.
struct SupernodePartition {
  std::vector<Index> first_column;  ///< size count + 1; supernode s holds [first[s], first[s+1])
  std::vector<Index> parent;        ///< supernodal tree, -1 for roots
  std::vector<Index> row_count;     ///< rows of each supernode (its first column's count)
  [[nodiscard]] Index count() const { return static_cast<Index>(parent.size()); }
};

/// Fundamental supernodes of a postordered elimination tree: column j joins j-1's supernode
/// when j-1 is j's only child and count[j-1] = count[j] + 1 (identical structure below).
SupernodePartition fundamental_supernodes(std::span<const Index> parent,
                                          std::span<const Index> counts);

/// Relaxed amalgamation: merges children into parents (only the child that immediately
/// precedes its parent, so supernodes stay contiguous) while the rules above allow it.
SupernodePartition amalgamate(const SupernodePartition& fundamental,
                              const AmalgamationOptions& options);

}  // namespace cholsim::factor
