#include "factor/numeric/left_looking_top.hpp"

#include <algorithm>

#include "factor/numeric/dense_tasks.hpp"
#include "factor/numeric/front_cholesky.hpp"
#include "factor/numeric/multifrontal.hpp"
#include "factor/numeric/update_stack_profile.hpp"
#include "linalg/blas.hpp"

namespace cholsim::factor {
namespace {

namespace blas = linalg::blas;

// column_owner[c]: the supernode whose columns hold elimination column c.
std::vector<Index> column_owners(const Symbolic& symbolic) {
  std::vector<Index> owner(static_cast<std::size_t>(symbolic.size()));
  for (Index s = 0; s < symbolic.supernode_count(); ++s) {
    std::fill_n(owner.begin() + symbolic.first_column(s), symbolic.column_count(s), s);
  }
  return owner;
}

// Where s's rows in left-looking supernodes start. They are a suffix of its rows: s's rows
// past its columns belong to its ancestors, in increasing order up the tree, and the top is
// closed under ancestors.
Index first_left_looking_row(const Symbolic& symbolic, Index s, std::span<const Index> owner,
                             std::span<const char> left_looking) {
  const auto rows = symbolic.rows(s);
  Index first = static_cast<Index>(rows.size());
  while (first > symbolic.column_count(s) && left_looking[owner[rows[first - 1]]]) --first;
  return first;
}

// The thread's buffers: the product of one source and piece, the target positions of its rows,
// and (for the thread that calls pull_updates) the positions of the target's rows.
struct PullBuffers {
  std::vector<double> product;
  std::vector<Index> positions;
  std::vector<Index> row_position;
};

PullBuffers& pull_buffers() {
  thread_local PullBuffers buffers;
  return buffers;
}

// Target columns [begin, end) (elimination numbering) of t's front, from one source:
// front(rows of d from the piece on, piece columns) −= L_d(those rows, :)·L_d(piece rows, :)ᵀ.
void pull_piece(const Symbolic& symbolic, const LeftLookingTop::Source& source, Index begin, Index end,
                std::span<const double> factor_values, std::span<const Index> row_position, Index target_first,
                Index target_rows, double* front) {
  const Index d = source.source;
  const auto rows = symbolic.rows(d);
  const Index* in_target = rows.data() + source.first_row;
  const Index* lo = std::lower_bound(in_target, in_target + source.rows_in_target, begin);
  const Index* hi = std::lower_bound(lo, in_target + source.rows_in_target, end);
  if (lo == hi) return;
  const Index first = static_cast<Index>(lo - rows.data());
  const Index width = static_cast<Index>(hi - lo);
  const Index m = symbolic.row_count(d);
  const Index height = m - first;
  const linalg::ConstDenseView below{factor_values.data() + symbolic.value_offset(d) + first, height,
                                     symbolic.column_count(d), m};

  // Plain one-thread BLAS calls, not the dense tasks: a piece never waits, so no other
  // piece can start on this thread while its buffers are in use.
  PullBuffers& buffers = pull_buffers();
  buffers.product.resize(static_cast<std::size_t>(height) * static_cast<std::size_t>(width));
  const linalg::DenseView product{buffers.product.data(), height, width, height};
  blas::syrk(blas::Transpose::no, -1.0, below.block(0, 0, width, below.cols), 0.0, product.block(0, 0, width, width));
  if (height > width) {
    blas::gemm(blas::Transpose::no, blas::Transpose::yes, -1.0, below.block(width, 0, height - width, below.cols),
               below.block(0, 0, width, below.cols), 0.0, product.block(width, 0, height - width, width));
  }

  buffers.positions.resize(static_cast<std::size_t>(height));
  for (Index i = 0; i < height; ++i) buffers.positions[i] = row_position[rows[first + i]];
  for (Index j = 0; j < width; ++j) {
    double* target = front + static_cast<std::int64_t>(rows[first + j] - target_first) * target_rows;
    const double* column = &product(0, j);
    for (Index i = j; i < height; ++i) target[buffers.positions[i]] += column[i];
  }
}

}  // namespace

LeftLookingTop::LeftLookingTop(const Symbolic& symbolic, std::int64_t min_update_bytes) {
  if (min_update_bytes == kNoLeftLookingTop) return;
  mark_supernodes(symbolic, min_update_bytes);
  if (count_ > 0) collect_sources(symbolic);
}

void LeftLookingTop::mark_supernodes(const Symbolic& symbolic, std::int64_t min_update_bytes) {
  const Index count = symbolic.supernode_count();
  left_looking_.assign(static_cast<std::size_t>(count), 0);
  for (Index s = 0; s < count; ++s) {
    if (update_block_bytes(symbolic, s) >= min_update_bytes) left_looking_[s] = 1;
  }
  for (Index s = 0; s < count; ++s) {  // postorder: a parent comes after its children
    if (left_looking_[s] && symbolic.parent(s) != -1) left_looking_[symbolic.parent(s)] = 1;
  }
  count_ = static_cast<Index>(std::count(left_looking_.begin(), left_looking_.end(), 1));
  if (count_ == 0) left_looking_.clear();
}

void LeftLookingTop::collect_sources(const Symbolic& symbolic) {
  const Index count = symbolic.supernode_count();
  const std::vector<Index> owner = column_owners(symbolic);
  kept_columns_.assign(static_cast<std::size_t>(count), 0);
  source_ptr_.assign(static_cast<std::size_t>(count) + 1, 0);
  // Counting pass: one source per supernode d and run of its rows in one left-looking target.
  std::vector<Index> first_row(static_cast<std::size_t>(count));
  for (Index d = 0; d < count; ++d) {
    first_row[d] = first_left_looking_row(symbolic, d, owner, left_looking_);
    if (!left_looking_[d]) kept_columns_[d] = first_row[d] - symbolic.column_count(d);
    const auto rows = symbolic.rows(d);
    for (Index i = first_row[d]; i < symbolic.row_count(d); ++i) {
      if (i == first_row[d] || owner[rows[i]] != owner[rows[i - 1]]) ++source_ptr_[owner[rows[i]] + 1];
    }
  }
  for (Index t = 0; t < count; ++t) source_ptr_[t + 1] += source_ptr_[t];
  sources_.resize(static_cast<std::size_t>(source_ptr_.back()));
  std::vector<std::int64_t> next(source_ptr_.begin(), source_ptr_.end() - 1);
  for (Index d = 0; d < count; ++d) {  // increasing d: every target's sources in order
    const auto rows = symbolic.rows(d);
    const Index m = symbolic.row_count(d);
    for (Index i = first_row[d]; i < m;) {
      const Index t = owner[rows[i]];
      Index end = i;
      while (end < m && owner[rows[end]] == t) ++end;
      sources_[next[t]++] = {d, i, end - i};
      workspace_entries_ = std::max<std::int64_t>(
          workspace_entries_, static_cast<std::int64_t>(m - i) * std::min(end - i, kPullColumns));
      i = end;
    }
  }
}

std::int64_t LeftLookingTop::workspace_bytes_per_thread(const Symbolic& symbolic) const {
  if (empty()) return 0;
  const std::int64_t largest_front = symbolic.stats().largest_front;  // bounds a product's rows
  return workspace_entries_ * static_cast<std::int64_t>(sizeof(double)) +
         (largest_front + symbolic.size()) * static_cast<std::int64_t>(sizeof(Index));
}

void pull_updates(const Symbolic& symbolic, const LeftLookingTop& top, Index t, std::span<double> factor_values) {
  const Index k = symbolic.column_count(t);
  const Index m = symbolic.row_count(t);
  const Index first_column = symbolic.first_column(t);
  double* front = factor_values.data() + symbolic.value_offset(t);

  std::vector<Index>& row_position = pull_buffers().row_position;
  row_position.resize(static_cast<std::size_t>(symbolic.size()));
  const auto rows = symbolic.rows(t);
  for (Index i = 0; i < m; ++i) row_position[rows[i]] = i;

  const auto sources = top.sources(t);
  double flops = 0.0;
  for (const LeftLookingTop::Source& source : sources) {
    flops += 2.0 * symbolic.column_count(source.source) * source.rows_in_target *
             (symbolic.row_count(source.source) - source.first_row);
  }
  const Index pieces = (k + kPullColumns - 1) / kPullColumns;
  const std::span<const Index> positions = row_position;  // read by every piece
  run_pieces(pieces, split_dense_work() && flops >= 2.0 * kTaskFlops, [&](Index piece) {
    const Index begin = first_column + piece * kPullColumns;
    const Index end = std::min(begin + kPullColumns, first_column + k);
    for (const LeftLookingTop::Source& source : sources) {
      pull_piece(symbolic, source, begin, end, factor_values, positions, first_column, m, front);
    }
  });
}

int compute_left_looking_supernode(const Symbolic& symbolic, const LeftLookingTop& top, Index t,
                                   std::span<const double> a_values, std::span<double> factor_values,
                                   const UpdateBlockStore& updates) {
  double* front = factor_values.data() + symbolic.value_offset(t);
  assemble_front(symbolic, t, a_values, updates, front);
  pull_updates(symbolic, top, t, factor_values);
  // A partial factorization keeps the Schur supernode's front, S = A22 − L21·L21ᵀ, unfactored
  // (seed 004 §4.3, as compute_supernode does).
  if (symbolic.is_schur_supernode(t)) return 0;
  return factor_front_columns({front, symbolic.row_count(t), symbolic.column_count(t), symbolic.row_count(t)});
}

}  // namespace cholsim::factor
