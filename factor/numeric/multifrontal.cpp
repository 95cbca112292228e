#include "factor/numeric/multifrontal.hpp"

#include <algorithm>
#include <vector>

#include "factor/numeric/dense_tasks.hpp"
#include "factor/numeric/front_cholesky.hpp"
#include "linalg/blas.hpp"

namespace cholsim::factor {
namespace {

namespace blas = linalg::blas;

// The columns of a child's update block that land in the parent's pivot columns (positions
// < k): a prefix, since positions increase. The rest land in the parent's update block.
Index columns_into_factor(std::span<const Index> position, Index size, Index k) {
  Index split = 0;
  while (split < size && position[split] < k) ++split;
  return split;
}

// Runs add(begin, end) on the child columns [first, last) of a block of `size` rows (column
// j holds size − j entries), cut into pieces of about kTaskEntries that run as tasks when
// BLAS is on one thread (dense_tasks.hpp) and the columns hold enough entries. Each child
// column lands in its own parent column, so the pieces never write the same entry, and the
// children are added one after the other in a fixed order: the sums do not depend on threads.
template <typename Add>
void over_child_columns(Index first, Index last, Index size, const Add& add) {
  const double entries = 0.5 * static_cast<double>(last - first) * (2.0 * size - first - last + 1);
  if (!split_dense_work() || entries < 2.0 * kTaskEntries) {
    add(first, last);
    return;
  }
  const std::vector<IndexRange> pieces =
      cut_into_pieces(last - first, [&](Index j) { return static_cast<double>(size - first - j); }, kTaskEntries);
  run_pieces(static_cast<Index>(pieces.size()), true, [&](Index p) {
    const IndexRange piece = pieces[static_cast<std::size_t>(p)];
    add(first + piece.begin, first + piece.end);
  });
}

// Extend-add of a child's update block (rows mapped to the parent's rows by `position`) into
// the parent's factor block (m rows), for the child columns [0, split) that land there.
void extend_add_into_factor(const double* child, PanelLowerLayout layout, std::span<const Index> position,
                            Index split, Index m, double* factor_block) {
  over_child_columns(0, split, layout.size, [&](Index begin, Index end) {
    for (Index j = begin; j < end; ++j) {
      double* target = factor_block + static_cast<std::int64_t>(position[j]) * m;
      const double* source = child + layout.column_offset(j);  // source[i − j] = entry (i, j)
      for (Index i = j; i < layout.size; ++i) target[position[i]] += source[i - j];
    }
  });
}

// The remaining child columns (split ≤ j < the kept columns) land entirely in the parent's
// update block.
void extend_add_into_update(const double* child, PanelLowerLayout layout,
                            std::span<const Index> position, Index split, Index k,
                            double* update_block, PanelLowerLayout update_layout) {
  over_child_columns(split, layout.columns(), layout.size, [&](Index begin, Index end) {
    for (Index j = begin; j < end; ++j) {
      const Index offset = position[j];  // target[r − offset] = parent update entry (r − k, offset − k)
      double* target = update_block + update_layout.column_offset(offset - k);
      const double* source = child + layout.column_offset(j);
      for (Index i = j; i < layout.size; ++i) target[position[i] - offset] += source[i - j];
    }
  });
}

// Zeroes the m×k front, its columns cut into tasks like the extend-adds.
void zero_front(double* front, Index m, Index k) {
  const bool as_tasks = split_dense_work() && static_cast<double>(m) * k >= 2.0 * kTaskEntries;
  const Index step = as_tasks ? std::max<Index>(1, static_cast<Index>(kTaskEntries) / std::max<Index>(m, 1)) : k;
  run_pieces((k + step - 1) / step, as_tasks, [&](Index p) {
    const std::int64_t begin = static_cast<std::int64_t>(p) * step;
    const std::int64_t end = std::min<std::int64_t>(k, begin + step);
    std::fill(front + begin * m, front + end * m, 0.0);
  });
}

}  // namespace

void compute_update_block(linalg::ConstDenseView below, linalg::ConstDenseView below_derivative,
                          double* update, PanelLowerLayout layout) {
  const bool derivative = below_derivative.data != nullptr;
  // Each panel's rectangle below its diagonal block is −left·rightᵀ. For U, left = right = L21.
  // For U̇ = −(L̇21·L21ᵀ + L21·L̇21ᵀ) (seed 002 app. C.1) it is one gemm of inner dimension 2k on
  // left = [L̇21 L21], right = [L21 L̇21], both column ranges of [L̇21 L21 L̇21]: the rectangle is
  // read and written once, not twice — narrow supernodes are bound by that traffic, not by flops.
  linalg::ConstDenseView left = below;
  linalg::ConstDenseView right = below;
  thread_local std::vector<double> stacked_storage;
  if (derivative && layout.panels() > 0) {
    const Index r = below.rows;
    const Index k = below.cols;
    stacked_storage.resize(3 * static_cast<std::size_t>(r) * static_cast<std::size_t>(k));
    const linalg::DenseView stacked{stacked_storage.data(), r, 3 * k, r};
    for (Index j = 0; j < k; ++j) {
      std::copy_n(&below_derivative(0, j), r, &stacked(0, j));
      std::copy_n(&below(0, j), r, &stacked(0, k + j));
      std::copy_n(&below_derivative(0, j), r, &stacked(0, 2 * k + j));
    }
    left = stacked.block(0, 0, r, 2 * k);
    right = stacked.block(0, k, r, 2 * k);
  }
  // Panels are independent: with BLAS on one thread they are tasks (dense_tasks.hpp), and a
  // large panel cuts its rows further.
  const double flops = static_cast<double>(below.cols) * layout.size * layout.size;
  run_pieces(layout.panels(), split_dense_work() && flops >= 2.0 * kTaskFlops, [&](Index p) {
    const Index first = p * layout.panel_width;
    const Index width = std::min(layout.panel_width, layout.columns() - first);
    const Index ld = layout.leading_dimension(p);
    double* panel = update + layout.panel_offset(p);
    if (!derivative) {
      lower_trapezoid_update(0.0, below.block(first, 0, ld, below.cols), {panel, ld, width, ld});
      return;
    }
    blas::syr2k(-1.0, below_derivative.block(first, 0, width, below.cols), below.block(first, 0, width, below.cols),
                0.0, {panel, width, width, ld});
    if (ld > width) {
      blas::gemm(blas::Transpose::no, blas::Transpose::yes, -1.0,
                 left.block(first + width, 0, ld - width, left.cols), right.block(first, 0, width, right.cols),
                 0.0, {panel + width, ld - width, width, ld});
    }
  });
}

UpdateBlockStore::UpdateBlockStore(const Symbolic& symbolic, BlockLifetime lifetime,
                                   std::span<const Index> kept_columns)
    : symbolic_(symbolic), kept_columns_(kept_columns.begin(), kept_columns.end()),
      blocks_(static_cast<std::size_t>(symbolic.supernode_count())) {
  if (lifetime != BlockLifetime::one_call) return;
  // Room for every block at once: first fit never needs more, and the reservation costs
  // address space only (the pages touched are the high-water mark).
  std::int64_t capacity = 0;
  for (Index s = 0; s < symbolic.supernode_count(); ++s) {
    capacity += FirstFitPlacement::rounded(layout(s).entries() * static_cast<std::int64_t>(sizeof(double)));
  }
  if (capacity > 0) arena_ = std::make_unique<UpdateBlockArena>(capacity);
}

UpdateBlockStore::~UpdateBlockStore() {
  for (Index s = 0; s < static_cast<Index>(blocks_.size()); ++s) release(s);  // arena blocks go back first
}

double* UpdateBlockStore::allocate(Index s, std::int64_t entries) {
  Block& b = blocks_[s];
  if (b.entries != entries) {
    release(s);  // first, so that the peak does not count both
    b.data = arena_ ? arena_->allocate(entries) : nullptr;
    if (b.data == nullptr) {  // no arena, or no room left in it
      b.own = linalg::make_large_array(static_cast<std::size_t>(entries));
      b.data = b.own.get();
    }
    b.entries = entries;
    const std::int64_t now = bytes_.fetch_add(entries * 8) + entries * 8;
    std::int64_t peak = peak_bytes_.load();
    while (now > peak && !peak_bytes_.compare_exchange_weak(peak, now)) {
    }
  }
  return b.data;
}

void UpdateBlockStore::release(Index s) {
  Block& b = blocks_[s];
  if (b.data == nullptr) return;
  bytes_.fetch_sub(b.entries * 8);
  if (b.own) {
    b.own.reset();
  } else {
    arena_->release(b.data, b.entries);
  }
  b.data = nullptr;
  b.entries = 0;
}

PanelLowerLayout UpdateBlockStore::layout(Index s) const { return update_layout(symbolic_, s, kept_columns_); }

std::int64_t UpdateBlockStore::arena_bytes() const { return arena_ ? arena_->high_water_bytes() : 0; }

PanelLowerLayout update_layout(const Symbolic& symbolic, Index s, std::span<const Index> kept_columns) {
  const Index size = symbolic.row_count(s) - symbolic.column_count(s);
  return kept_columns.empty() ? PanelLowerLayout::for_size(size) : PanelLowerLayout::for_size(size, kept_columns[s]);
}

std::vector<Index> assemble_front(const Symbolic& symbolic, Index s, std::span<const double> a_values,
                                  const UpdateBlockStore& updates, double* front) {
  const Index k = symbolic.column_count(s);
  const Index m = symbolic.row_count(s);
  zero_front(front, m, k);
  const auto sources = symbolic.a_sources(s);
  const auto targets = symbolic.a_targets(s);
  for (std::size_t e = 0; e < sources.size(); ++e) front[targets[e]] += a_values[sources[e]];
  const auto children = symbolic.children(s);
  std::vector<Index> splits(children.size());
  for (std::size_t c = 0; c < children.size(); ++c) {
    const Index child = children[c];
    const PanelLowerLayout layout = updates.layout(child);
    const auto position = symbolic.parent_positions(child);
    splits[c] = columns_into_factor(position, layout.columns(), k);
    extend_add_into_factor(updates.block(child), layout, position, splits[c], m, front);
  }
  return splits;
}

void extend_add_children_below(const Symbolic& symbolic, Index s, const UpdateBlockStore& updates,
                               std::span<const Index> splits, double* update) {
  const auto children = symbolic.children(s);
  const PanelLowerLayout layout = updates.layout(s);
  for (std::size_t c = 0; c < children.size(); ++c) {
    const Index child = children[c];
    extend_add_into_update(updates.block(child), updates.layout(child),
                           symbolic.parent_positions(child), splits[c], symbolic.column_count(s),
                           update, layout);
  }
}

int compute_supernode(const Symbolic& symbolic, Index s, std::span<const double> a_values,
                      std::span<double> factor_values, UpdateBlockStore& updates,
                      bool release_children) {
  const Index k = symbolic.column_count(s);
  const Index m = symbolic.row_count(s);
  const Index update_size = m - k;
  double* block = factor_values.data() + symbolic.value_offset(s);

  const std::vector<Index> splits = assemble_front(symbolic, s, a_values, updates, block);

  // A partial factorization stops here (seed 004 §4.3, eq. 14): the assembled front of the
  // Schur supernode is S = A22 − L21·L21ᵀ, kept unfactored for the dense solves of §4.4.
  if (symbolic.is_schur_supernode(s)) {
    if (release_children) {
      for (Index child : symbolic.children(s)) updates.release(child);
    }
    return 0;
  }

  // Dense factorization of the supernode's columns.
  const linalg::DenseView front{block, m, k, m};
  if (const int info = factor_front_columns(front); info != 0) return info;
  const linalg::DenseView below = front.block(k, 0, update_size, k);

  // Update block: −L21·L21ᵀ, then the children's contributions below s's columns (the kept
  // columns only: none when s's parent is computed left-looking).
  const PanelLowerLayout layout = updates.layout(s);
  if (layout.entries() > 0) {
    double* update = updates.allocate(s, layout.entries());
    compute_update_block(below, {}, update, layout);
    extend_add_children_below(symbolic, s, updates, splits, update);
  }
  if (release_children) {
    for (Index child : symbolic.children(s)) updates.release(child);
  }
  return 0;
}

}  // namespace cholsim::factor
