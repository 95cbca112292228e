#pragma once
// The per-supernode step of the multifrontal factorization (seed 000 §4.3, Figure 3):
//
//   assemble:  F = [F11; F21] ← A's columns of s  +  extend-add of the children's update
//              blocks restricted to s's columns;
//   factor:    F11 = L11·L11ᵀ (potrf),  L21 = F21·L11⁻ᵀ (trsm);
//   update:    U = −L21·L21ᵀ (syrk)  +  extend-add of the children's blocks below s's columns.
//
// Shared by every factorization variant (full, incremental, with derivative), which differ
// only in where the children's update blocks come from and whether blocks are kept.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/update_block_arena.hpp"
#include "linalg/dense_matrix.hpp"
#include "linalg/huge_page_allocator.hpp"

namespace cholsim::factor {

/// Storage of the lower triangle of a symmetric `size`×`size` block as column panels of
/// `panel_width` columns; each panel is a column-major rectangle from its first diagonal entry
/// down (leading dimension size − first column). BLAS (syrk + gemm) writes the panels in place
/// and the block takes size²/2 + size·panel_width/2 entries instead of size²; entry (i, j),
/// i ≥ j, sits at column_offset(j) + (i − j).
///
/// The panel width grows with the block (for_size): each panel is one gemm whose left operand
/// (all rows below the panel) OpenBLAS packs again per call, so wide panels pack less per flop
/// — one-thread dgemm with 4000 rows and 512–1500 inner columns ran at 70–76 GFLOP/s for 64
/// columns, 83–90 for 128 and 88–92 for 256 (docs/benchmarks.md, issue 23 item 2) — while the
/// wasted half panel, size·panel_width/2 entries, stays within 1/8 of the block (widening at
/// 8× rather than 32× the width made a one-thread 32³ factorization 4 % faster for 4 % more
/// update-block memory).
struct PanelLowerLayout {
  Index size = 0;
  Index panel_width = 64;
  /// The columns stored: a prefix of the block, all of them unless fewer are asked for. Under
  /// a left-looking top (left_looking_top.hpp) a block keeps only its columns that belong to
  /// multifrontal supernodes; the left-looking ones read L instead. Panels stay full height.
  Index kept_columns = std::numeric_limits<Index>::max();

  /// The layout for a size×size block: 64-column panels below 512 rows, 128 below 1024,
  /// 256 from there on; its first `kept_columns` columns stored.
  [[nodiscard]] static PanelLowerLayout for_size(Index size,
                                                 Index kept_columns = std::numeric_limits<Index>::max()) {
    Index width = 64;
    while (width < 256 && size >= 8 * width) width *= 2;
    return {size, width, kept_columns};
  }

  [[nodiscard]] Index columns() const { return std::min(kept_columns, size); }
  [[nodiscard]] Index panels() const { return (columns() + panel_width - 1) / panel_width; }
  [[nodiscard]] std::int64_t panel_offset(Index p) const {
    const std::int64_t w = panel_width;
    return w * (p * static_cast<std::int64_t>(size) - w * p * (p - 1) / 2);
  }
  [[nodiscard]] Index leading_dimension(Index p) const { return size - p * panel_width; }
  /// Where column j's storage starts (its unused entries above the panel's diagonal included).
  [[nodiscard]] std::int64_t column_start(Index j) const {
    const Index p = j / panel_width;
    return panel_offset(p) + static_cast<std::int64_t>(j - p * panel_width) * leading_dimension(p);
  }
  [[nodiscard]] std::int64_t column_offset(Index j) const {
    return column_start(j) + (j - j / panel_width * panel_width);
  }
  [[nodiscard]] std::int64_t entries() const { return size == 0 ? 0 : column_start(columns()); }
};

/// How long a store's blocks live, which decides where they are allocated.
enum class BlockLifetime {
  /// Some blocks outlive the call (retain_update_blocks): each is allocated on its own.
  across_calls,
  /// Every block is freed within the call: all are placed in one UpdateBlockArena, so that
  /// blocks reuse the pages of consumed ones (first_fit_placement.hpp says why).
  one_call,
};

/// One update block per supernode in PanelLowerLayout, allocated when its supernode is
/// computed and released when no longer needed.
class UpdateBlockStore {
 public:
  /// `kept_columns[s]` (optional, empty = all): the columns s's block keeps (PanelLowerLayout).
  UpdateBlockStore(const Symbolic& symbolic, BlockLifetime lifetime, std::span<const Index> kept_columns = {});
  ~UpdateBlockStore();

  double* allocate(Index s, std::int64_t entries);
  void release(Index s);
  [[nodiscard]] const double* block(Index s) const { return blocks_[s].data; }
  /// The layout of s's block in this store.
  [[nodiscard]] PanelLowerLayout layout(Index s) const;
  [[nodiscard]] std::int64_t bytes() const { return bytes_.load(); }
  [[nodiscard]] std::int64_t peak_bytes() const { return peak_bytes_.load(); }
  /// Bytes of the arena ever used (its high-water mark); 0 for an across_calls store.
  [[nodiscard]] std::int64_t arena_bytes() const;

 private:
  struct Block {
    double* data = nullptr;
    std::int64_t entries = 0;
    linalg::LargeArray own;  // a block allocated on its own (linalg/huge_page_allocator.hpp)
  };
  const Symbolic& symbolic_;
  std::vector<Index> kept_columns_;  ///< empty: every block whole
  std::vector<Block> blocks_;
  std::unique_ptr<UpdateBlockArena> arena_;  // one_call stores only
  std::atomic<std::int64_t> bytes_{0};
  std::atomic<std::int64_t> peak_bytes_{0};
};

/// The layout of supernode s's update block ((m−k)×(m−k) lower triangle): whole, or keeping
/// its first kept_columns[s] columns when `kept_columns` is given (left_looking_top.hpp).
PanelLowerLayout update_layout(const Symbolic& symbolic, Index s, std::span<const Index> kept_columns = {});

/// Assembles supernode s's m×k front (column-major, leading dimension m) in `front`: zero,
/// A's entries of s's columns from `a_values`, and the extend-add of the children's update
/// blocks restricted to s's columns. Returns, per child, how many of its update-block columns
/// landed in s's columns (the split extend_add_children_below continues from). The
/// derivative factorization assembles its front from Ȧ and the derivative blocks with it.
std::vector<Index> assemble_front(const Symbolic& symbolic, Index s, std::span<const double> a_values,
                                  const UpdateBlockStore& updates, double* front);

/// Extend-adds the children's update-block columns past `splits` (assemble_front's result)
/// into s's update block `update` (updates.layout(s)).
void extend_add_children_below(const Symbolic& symbolic, Index s, const UpdateBlockStore& updates,
                               std::span<const Index> splits, double* update);

/// Writes into `update` (in `layout`, overwriting; its kept columns only) U = −L21·L21ᵀ when `below_derivative` is an
/// empty view, else its derivative U̇ = −(L̇21·L21ᵀ + L21·L̇21ᵀ) (one syr2k per panel diagonal,
/// seed 002 app. C.1). `below` is L21 ((m−k)×k), `below_derivative` L̇21 of the same shape.
void compute_update_block(linalg::ConstDenseView below, linalg::ConstDenseView below_derivative,
                          double* update, PanelLowerLayout layout);

/// Computes supernode s of the factor in place in `factor_values` and its update block in
/// `updates`. With `release_children`, the children's update blocks are freed once consumed.
/// Returns 0 on success or the 1-based column within s where the pivot was not positive.
int compute_supernode(const Symbolic& symbolic, Index s, std::span<const double> a_values,
                      std::span<double> factor_values, UpdateBlockStore& updates,
                      bool release_children);

}  // namespace cholsim::factor
