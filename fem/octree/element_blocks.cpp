#include "fem/octree/element_blocks.hpp"

#include <algorithm>

namespace cholsim::fem::octree {

using linalg::Index;

namespace {

/// Blocks per thread: a few, so that a thread that starts late leaves part of its share.
constexpr Index kBlocksPerThread = 4;

}  // namespace

ElementBlocks::ElementBlocks(const OctreeMesh& mesh, int threads) {
  const Index elements = mesh.element_count();
  const int workers = linalg::resolve_thread_count(threads);
  const Index blocks = workers <= 1 ? 1 : std::clamp<Index>(elements / 1024, 1, kBlocksPerThread * workers);
  block_start_.resize(static_cast<std::size_t>(blocks) + 1);
  for (Index b = 0; b <= blocks; ++b) {
    block_start_[b] = static_cast<Index>(std::int64_t{elements} * b / blocks);
  }
  // A node belongs to the block of the first element naming it.
  node_owner_.assign(static_cast<std::size_t>(mesh.node_count()), -1);
  for (Index b = 0; b < blocks; ++b) {
    for (Index e = block_start_[b]; e < block_start_[b + 1]; ++e) {
      for (const Index node : mesh.conforming_nodes[e]) {
        if (node_owner_[node] < 0) node_owner_[node] = b;
      }
    }
  }
  // Ghosts of block b: elements of other blocks naming one of b's nodes, sorted.
  std::vector<std::vector<Index>> ghosts(static_cast<std::size_t>(blocks));
  for (Index b = 0; b < blocks; ++b) {
    for (Index e = block_start_[b]; e < block_start_[b + 1]; ++e) {
      for (const Index node : mesh.conforming_nodes[e]) {
        const Index owner_block = node_owner_[node];
        if (owner_block != b && (ghosts[owner_block].empty() || ghosts[owner_block].back() != e)) {
          ghosts[owner_block].push_back(e);
        }
      }
    }
  }
  ghost_start_.assign(static_cast<std::size_t>(blocks) + 1, 0);
  for (Index b = 0; b < blocks; ++b) {
    std::vector<Index>& list = ghosts[b];
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    ghost_start_[b + 1] = ghost_start_[b] + static_cast<std::int64_t>(list.size());
  }
  ghosts_.reserve(static_cast<std::size_t>(ghost_start_.back()));
  for (const std::vector<Index>& list : ghosts) ghosts_.insert(ghosts_.end(), list.begin(), list.end());
}

double ElementBlocks::ghost_share() const {
  const Index elements = block_start_.empty() ? 0 : block_start_.back();
  return elements == 0 ? 0.0 : static_cast<double>(ghosts_.size()) / elements;
}

std::size_t ElementBlocks::memory_bytes() const {
  return block_start_.capacity() * sizeof(Index) + node_owner_.capacity() * sizeof(Index) +
         ghost_start_.capacity() * sizeof(std::int64_t) + ghosts_.capacity() * sizeof(Index);
}

}  // namespace cholsim::fem::octree
