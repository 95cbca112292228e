#pragma once
// Element loops that accumulate into nodes, in parallel without locks or per-thread copies
// (seed 001 §9, Algorithm 2): the Morton-ordered elements are cut into consecutive blocks;
// every node belongs to one block (that of the first element naming it), and a block's pass
// visits its own elements plus the "ghost" elements of other blocks that touch its nodes,
// writing only to the nodes it owns. Morton order keeps blocks compact, so ghosts are few.
//
// Unlike the paper's 64-element blocks, a block here is a thread's whole share (the loops run on
// 1–2 cores here, where ghost work, not balance, is the cost).
#include <cstdint>
#include <span>
#include <vector>

#include "fem/octree/linear_octree.hpp"
#include "linalg/index_types.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::fem::octree {

class ElementBlocks {
 public:
  ElementBlocks() = default;
  /// Blocks of `mesh`'s elements for `threads` threads (as resolve_thread_count reads it).
  ElementBlocks(const OctreeMesh& mesh, int threads);

  [[nodiscard]] linalg::Index block_count() const { return static_cast<linalg::Index>(block_start_.size()) - 1; }
  /// The block owning `node`: the only one that writes to it.
  [[nodiscard]] linalg::Index owner(linalg::Index node) const { return node_owner_[static_cast<std::size_t>(node)]; }
  [[nodiscard]] std::span<const linalg::Index> owners() const { return node_owner_; }

  /// Calls visit(element, block) for every element touching block's nodes, blocks in parallel;
  /// `visit` must write only to nodes n with owner(n) == block.
  template <typename Visit>
  void run(int threads, Visit&& visit) const {
    const linalg::Index blocks = block_count();
    if (blocks == 1) {
      for (linalg::Index e = block_start_[0]; e < block_start_[1]; ++e) visit(e, linalg::Index{0});
      return;
    }
    linalg::parallel_chunks(blocks, threads, [&](linalg::Index first, linalg::Index last) {
      for (linalg::Index block = first; block < last; ++block) {
        // Ghosts first: they mostly precede the block in Morton order (§9).
        for (std::int64_t k = ghost_start_[block]; k < ghost_start_[block + 1]; ++k) visit(ghosts_[k], block);
        for (linalg::Index e = block_start_[block]; e < block_start_[block + 1]; ++e) visit(e, block);
      }
    }, 1);
  }
  /// Calls visit(first, last) on the block's own elements in parallel (element-local work).
  template <typename Visit>
  void run_own(int threads, Visit&& visit) const {
    linalg::parallel_chunks(block_count(), threads, [&](linalg::Index first, linalg::Index last) {
      visit(block_start_[first], block_start_[last]);
    }, 1);
  }

  /// Elements visited more than once per pass, as a share of the elements (the ghost overhead).
  [[nodiscard]] double ghost_share() const;
  [[nodiscard]] std::size_t memory_bytes() const;

 private:
  /// node_owner_ and the ghosts for the blocks of block_start_.
  void assign_nodes_and_ghosts(const OctreeMesh& mesh);
  /// Moves the cuts so that every block's own elements plus ghosts are about even.
  void balance_with_ghosts();

  std::vector<linalg::Index> block_start_;  ///< block b owns elements [start[b], start[b+1])
  std::vector<linalg::Index> node_owner_;
  std::vector<std::int64_t> ghost_start_;
  std::vector<linalg::Index> ghosts_;
};

}  // namespace cholsim::fem::octree
