#include "factor/multifrontal.hpp"

#include <algorithm>

#include "linalg/blas.hpp"

namespace cholsim::factor {
namespace {

namespace blas = linalg::blas;

// Extend-add of a child's update block (rows mapped to the parent's rows by `position`)
// into the parent's factor block, for the child columns that land in the parent's pivot
// columns (positions < k, a prefix since positions increase). Returns that prefix's length.
Index extend_add_into_factor(const double* child, PanelLowerLayout layout,
                             std::span<const Index> position, Index k, Index m, double* factor_block) {
  Index split = 0;
  while (split < layout.size && position[split] < k) ++split;
  for (Index j = 0; j < split; ++j) {
    double* target = factor_block + static_cast<std::int64_t>(position[j]) * m;
    const double* source = child + layout.column_offset(j);  // source[i − j] = entry (i, j)
    for (Index i = j; i < layout.size; ++i) target[position[i]] += source[i - j];
  }
  return split;
}

// The remaining child columns (j ≥ split) land entirely in the parent's update block.
void extend_add_into_update(const double* child, PanelLowerLayout layout,
                            std::span<const Index> position, Index split, Index k,
                            double* update_block, PanelLowerLayout update_layout) {
  for (Index j = split; j < layout.size; ++j) {
    const Index offset = position[j];  // target[r − offset] = parent update entry (r − k, offset − k)
    double* target = update_block + update_layout.column_offset(offset - k);
    const double* source = child + layout.column_offset(j);
    for (Index i = j; i < layout.size; ++i) target[position[i] - offset] += source[i - j];
  }
}

// U = −L21·L21ᵀ, panel by panel: syrk on each panel's diagonal block, gemm below it.
void compute_update_block(linalg::ConstDenseView below, double* update, PanelLowerLayout layout) {
  for (Index p = 0; p < layout.panels(); ++p) {
    const Index first = p * PanelLowerLayout::panel_width;
    const Index width = std::min(PanelLowerLayout::panel_width, layout.size - first);
    const Index ld = layout.leading_dimension(p);
    double* panel = update + layout.panel_offset(p);
    const linalg::ConstDenseView panel_rows = below.block(first, 0, width, below.cols);
    blas::syrk(blas::Transpose::no, -1.0, panel_rows, 0.0, {panel, width, width, ld});
    if (ld > width) {
      blas::gemm(blas::Transpose::no, blas::Transpose::yes, -1.0,
                 below.block(first + width, 0, ld - width, below.cols), panel_rows, 0.0,
                 {panel + width, ld - width, width, ld});
    }
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

PanelLowerLayout update_layout(const Symbolic& symbolic, Index s) {
  return {symbolic.row_count(s) - symbolic.column_count(s)};
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
    splits[c] = extend_add_into_factor(updates.block(child), update_layout(symbolic, child),
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
    const PanelLowerLayout layout = update_layout(symbolic, s);
    double* update = updates.allocate(s, layout.entries());
    compute_update_block(below, update, layout);
    for (std::size_t c = 0; c < children.size(); ++c) {
      const Index child = children[c];
      extend_add_into_update(updates.block(child), update_layout(symbolic, child),
                             symbolic.parent_positions(child), splits[c], k, update, layout);
    }
  }
  if (release_children) {
    for (Index child : children) updates.release(child);
  }
  return 0;
}

}  // namespace cholsim::factor
