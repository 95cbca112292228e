#pragma once
// The top of the assembly tree computed left-looking, without update blocks, so that a
// factorization whose multifrontal update blocks would not fit in memory still runs
// (issue 23: the 1.03M-DOF box; CHOLMOD's supernodal method is left-looking throughout).
//
// The multifrontal method (multifrontal.hpp) passes every supernode's Schur update up the
// tree in a dense update block; near the root of a 3-D problem those blocks are the size of
// the separators squared, and two of them with the root's front outgrow the machine. Here the
// supernodes whose update block would take at least a given number of bytes, and all their
// ancestors (the "left-looking top", an ancestor-closed set), keep no update block. Instead
// each of them, t, assembles its front from A and then pulls the updates of every supernode
// d below it whose rows meet t's columns straight from L's columns of d (Ng and Peyton 1993;
// Rothberg and Gupta 1991):
//
//     L(rows of d ≥ t's first column, t's columns) −= L_d(those rows, :) · L_d(rows in t, :)ᵀ.
//
// The supernodes below keep the part of their update block that their multifrontal ancestors
// need (its leading columns, PanelLowerLayout::kept_columns): a block whose parent is in the
// top keeps none. A left-looking supernode only reads finished columns of L and writes its
// own, in the same order of its sources every time: the result does not depend on threads.
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "factor/analysis/symbolic.hpp"

namespace cholsim::factor {

/// FactorOptions::left_looking_update_bytes when no supernode is computed left-looking.
inline constexpr std::int64_t kNoLeftLookingTop = std::numeric_limits<std::int64_t>::max();

/// FactorOptions::left_looking_update_bytes by default: 32 MiB. On the 311K-DOF elasticity box
/// at two threads (47 supernodes left-looking) the factorization took 16.8–17.1 s against
/// 19.1–19.9 multifrontal and 1.1–1.4 GB less resident memory — fresh update-block pages cost
/// this VM 0.4–0.8 s/GB, and the pulled updates are added once into L instead of through every
/// front on the way up; 16–64 MiB did as well, 128 MiB (10 supernodes) less. Below it nothing
/// changed measurably (32³ box: 9 supernodes; a 1400² 2-D Laplacian: none), 4 MiB made the
/// 2-D Laplacian slower (docs/benchmarks.md, issue 23).
inline constexpr std::int64_t kDefaultLeftLookingUpdateBytes = std::int64_t{32} << 20;

class LeftLookingTop {
 public:
  /// No supernode left-looking: plain multifrontal.
  LeftLookingTop() = default;
  /// The supernodes whose whole update block takes at least `min_update_bytes`
  /// (update_block_bytes) and their ancestors. The Schur supernode of a partial factorization,
  /// the root, is one of them whenever any is: it pulls its updates into S and is not factored.
  LeftLookingTop(const Symbolic& symbolic, std::int64_t min_update_bytes);

  [[nodiscard]] bool empty() const { return count_ == 0; }
  [[nodiscard]] Index supernode_count() const { return count_; }
  [[nodiscard]] bool is_left_looking(Index s) const { return !left_looking_.empty() && left_looking_[s] != 0; }
  /// Per supernode, the update-block columns its multifrontal ancestors need
  /// (UpdateBlockStore's kept_columns); empty when the top is empty.
  [[nodiscard]] std::span<const Index> kept_columns() const { return kept_columns_; }

  /// One source of a left-looking supernode t: supernode `source`'s rows from position
  /// `first_row` on are t's columns (`rows_in_target` of them) and then rows below t's columns.
  struct Source {
    Index source;
    Index first_row;
    Index rows_in_target;
  };
  /// The sources of left-looking supernode t, in increasing supernode order.
  [[nodiscard]] std::span<const Source> sources(Index t) const {
    return {sources_.data() + source_ptr_[t], sources_.data() + source_ptr_[t + 1]};
  }
  /// Doubles of the largest product one call of pull_updates holds at a time.
  [[nodiscard]] std::int64_t workspace_entries() const { return workspace_entries_; }
  /// Bytes one thread holds while computing left-looking supernodes (product and row map).
  [[nodiscard]] std::int64_t workspace_bytes_per_thread(const Symbolic& symbolic) const;

 private:
  // The supernodes with blocks of at least `min_update_bytes`, closed under ancestors.
  void mark_supernodes(const Symbolic& symbolic, std::int64_t min_update_bytes);
  // The kept columns of every block and the sources of every left-looking supernode.
  void collect_sources(const Symbolic& symbolic);

  Index count_ = 0;
  std::vector<char> left_looking_;
  std::vector<Index> kept_columns_;
  std::vector<std::int64_t> source_ptr_;
  std::vector<Source> sources_;
  std::int64_t workspace_entries_ = 0;
};

/// Columns of t handled by one piece of pull_updates: each source's product is formed this
/// many target columns at a time.
inline constexpr Index kPullColumns = 256;

/// Subtracts from t's assembled front (L's block of t, m×k column-major in `factor_values`)
/// the updates of all of t's sources, read from their finished columns of L. The work is cut
/// by t's columns into pieces of kPullColumns, tasks when BLAS is on one thread
/// (dense_tasks.hpp); each piece takes the sources in order, so the sums do not depend on threads.
void pull_updates(const Symbolic& symbolic, const LeftLookingTop& top, Index t, std::span<double> factor_values);

class UpdateBlockStore;

/// Computes left-looking supernode t in place in `factor_values`: its front from A's entries
/// (its children keep no update-block columns for it in `updates`), the pulled updates, then
/// potrf + trsm (not for the Schur supernode, whose front is S). Returns 0 or the 1-based
/// column within t whose pivot was not positive.
int compute_left_looking_supernode(const Symbolic& symbolic, const LeftLookingTop& top, Index t,
                                   std::span<const double> a_values, std::span<double> factor_values,
                                   const UpdateBlockStore& updates);

}  // namespace cholsim::factor
