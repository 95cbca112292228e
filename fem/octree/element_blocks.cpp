#include "fem/octree/element_blocks.hpp"

#include <algorithm>

namespace cholsim::fem::octree {

using linalg::Index;

namespace {

/// Blocks per thread: one. More would let a thread that starts late leave part of its share,
/// but every block boundary adds ghost elements computed twice, and that costs more than the
/// balance gains (armadillo, two threads, `bench_octree --experiment threads`, stop 51: a frame
/// at 256 cells 6.72–6.80 s with 4 blocks a thread, 6.31 with 2, 6.23–6.31 with 1; at 128 cells
/// 1.58, 1.54, 1.41 s).
constexpr Index kBlocksPerThread = 1;

}  // namespace

ElementBlocks::ElementBlocks(const OctreeMesh& mesh, int threads) {
  const Index elements = mesh.element_count();
  const int workers = linalg::resolve_thread_count(threads);
  const Index blocks = workers <= 1 ? 1 : std::clamp<Index>(elements / 1024, 1, kBlocksPerThread * workers);
  block_start_.resize(static_cast<std::size_t>(blocks) + 1);
  for (Index b = 0; b <= blocks; ++b) {
    block_start_[b] = static_cast<Index>(std::int64_t{elements} * b / blocks);
  }
  assign_nodes_and_ghosts(mesh);
  if (blocks > 1) {
    balance_with_ghosts();
    assign_nodes_and_ghosts(mesh);
  }
}

void ElementBlocks::assign_nodes_and_ghosts(const OctreeMesh& mesh) {
  const Index blocks = block_count();
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
  ghosts_.clear();
  ghosts_.reserve(static_cast<std::size_t>(ghost_start_.back()));
  for (const std::vector<Index>& list : ghosts) ghosts_.insert(ghosts_.end(), list.begin(), list.end());
}

void ElementBlocks::balance_with_ghosts() {
  // A shared node belongs to the lower block, so the ghosts fall mostly on the lower blocks:
  // with equal element counts the first thread did ~10 % more element work than the second
  // (perf, armadillo at 128 cells). Cut again so that own elements plus ghosts are even, each
  // element of block b weighing (own + ghosts of b) / own.
  const Index blocks = block_count();
  std::vector<double> weight(static_cast<std::size_t>(blocks));
  double total = 0.0;
  for (Index b = 0; b < blocks; ++b) {
    const double own = block_start_[b + 1] - block_start_[b];
    const double work = own + static_cast<double>(ghost_start_[b + 1] - ghost_start_[b]);
    weight[b] = own > 0 ? work / own : 1.0;
    total += work;
  }
  std::vector<Index> start(block_start_.size(), block_start_.back());  // a cut rounding never reaches stays at the end
  start.front() = 0;
  double cumulative = 0.0;
  Index cut = 1;
  for (Index b = 0; b < blocks && cut < blocks; ++b) {
    for (Index e = block_start_[b]; e < block_start_[b + 1] && cut < blocks; ++e) {
      cumulative += weight[b];
      while (cut < blocks && cumulative >= total * cut / blocks) start[cut++] = e + 1;
    }
  }
  block_start_ = std::move(start);
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
