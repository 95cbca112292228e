#include "factor/multifrontal.hpp"

#include <algorithm>

#include "linalg/blas.hpp"

namespace cholsim::factor {
namespace {

namespace blas = linalg::blas;

// Extend-add of a child's update block (`size`×`size`, rows mapped to the parent's rows by
// `position`) into the columns of the parent's factor block that are pivot columns of the
// parent: child columns j < split map to positions < k. Returns split.
Index extend_add_into_factor(const double* child, Index size, std::span<const Index> position,
                             Index k, Index m, double* factor_block) {
  Index split = 0;
  while (split < size && position[split] < k) ++split;
  for (Index j = 0; j < split; ++j) {
    double* target = factor_block + static_cast<std::int64_t>(position[j]) * m;
    const double* source = child + static_cast<std::int64_t>(j) * size;
    for (Index i = j; i < size; ++i) target[position[i]] += source[i];
  }
  return split;
}

// The remaining child columns (j ≥ split) land entirely in the parent's update block.
void extend_add_into_update(const double* child, Index size, std::span<const Index> position,
                            Index split, Index k, double* update_block, Index update_size) {
  for (Index j = split; j < size; ++j) {
    double* target = update_block + static_cast<std::int64_t>(position[j] - k) * update_size;
    const double* source = child + static_cast<std::int64_t>(j) * size;
    for (Index i = j; i < size; ++i) target[position[i] - k] += source[i];
  }
}

}  // namespace

double* UpdateBlockStore::allocate(Index s, std::int64_t entries) {
  Block& b = blocks_[s];
  if (b.entries != entries) {
    b.data.reset();  // release first so the peak does not count both
    b.data = std::make_unique_for_overwrite<double[]>(static_cast<std::size_t>(entries));
    const std::int64_t now = bytes_.fetch_add((entries - b.entries) * 8) + (entries - b.entries) * 8;
    b.entries = entries;
    std::int64_t peak = peak_bytes_.load();
    while (now > peak && !peak_bytes_.compare_exchange_weak(peak, now)) {
    }
  }
  return b.data.get();
}

void UpdateBlockStore::release(Index s) {
  Block& b = blocks_[s];
  bytes_.fetch_sub(b.entries * 8);
  b.data.reset();
  b.entries = 0;
}

int compute_supernode(const Symbolic& symbolic, Index s, std::span<const double> a_values,
                      std::span<double> factor_values, UpdateBlockStore& updates,
                      bool release_children) {
  const Index k = symbolic.column_count(s);
  const Index m = symbolic.row_count(s);
  const Index update_size = m - k;
  double* block = factor_values.data() + symbolic.value_offset(s);

  // Assemble A's entries and the children's contributions to s's columns.
  std::fill(block, block + static_cast<std::int64_t>(m) * k, 0.0);
  const auto sources = symbolic.a_sources(s);
  const auto targets = symbolic.a_targets(s);
  for (std::size_t e = 0; e < sources.size(); ++e) block[targets[e]] += a_values[sources[e]];
  const auto children = symbolic.children(s);
  std::vector<Index> splits(children.size());
  for (std::size_t c = 0; c < children.size(); ++c) {
    const Index child = children[c];
    splits[c] = extend_add_into_factor(updates.block(child), symbolic.row_count(child) - symbolic.column_count(child),
                                       symbolic.parent_positions(child), k, m, block);
  }

  // Dense factorization of the supernode's columns.
  const linalg::DenseView front{block, m, k, m};
  const int info = blas::potrf(front.block(0, 0, k, k));
  if (info != 0) return info;
  const linalg::DenseView below = front.block(k, 0, update_size, k);
  blas::trsm(blas::Side::right, blas::Transpose::yes, blas::Diagonal::non_unit, 1.0,
             front.block(0, 0, k, k), below);

  // Update block: −L21·L21ᵀ, then the children's contributions below s's columns.
  if (update_size > 0) {
    double* update = updates.allocate(s, static_cast<std::int64_t>(update_size) * update_size);
    blas::syrk(blas::Transpose::no, -1.0, below, 0.0, {update, update_size, update_size, update_size});
    for (std::size_t c = 0; c < children.size(); ++c) {
      const Index child = children[c];
      extend_add_into_update(updates.block(child), symbolic.row_count(child) - symbolic.column_count(child),
                             symbolic.parent_positions(child), splits[c], k, update, update_size);
    }
  }
  if (release_children) {
    for (Index child : children) updates.release(child);
  }
  return 0;
}

}  // namespace cholsim::factor
