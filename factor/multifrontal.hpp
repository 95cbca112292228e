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
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "factor/symbolic.hpp"

namespace cholsim::factor {

/// One (m−k)×(m−k) column-major update block per supernode (lower triangle meaningful),
/// allocated when its supernode is computed and released when no longer needed.
class UpdateBlockStore {
 public:
  explicit UpdateBlockStore(Index supernodes) : blocks_(static_cast<std::size_t>(supernodes)) {}

  double* allocate(Index s, std::int64_t entries);
  void release(Index s);
  [[nodiscard]] const double* block(Index s) const { return blocks_[s].get(); }
  [[nodiscard]] std::int64_t bytes() const { return bytes_.load(); }
  [[nodiscard]] std::int64_t peak_bytes() const { return peak_bytes_.load(); }

 private:
  struct Block {
    std::unique_ptr<double[]> data;
    std::int64_t entries = 0;
    [[nodiscard]] const double* get() const { return data.get(); }
  };
  std::vector<Block> blocks_;
  std::atomic<std::int64_t> bytes_{0};
  std::atomic<std::int64_t> peak_bytes_{0};
};

/// Computes supernode s of the factor in place in `factor_values` and its update block in
/// `updates`. With `release_children`, the children's update blocks are freed once consumed.
/// Returns 0 on success or the 1-based column within s where the pivot was not positive.
int compute_supernode(const Symbolic& symbolic, Index s, std::span<const double> a_values,
                      std::span<double> factor_values, UpdateBlockStore& updates,
                      bool release_children);

}  // namespace cholsim::factor
