#pragma once
// The symbolic analysis: a pure function of the sparsity pattern, reused by any number of
// numeric factorizations (CHOLMOD's cholmod_analyze, Eigen's analyzePattern).
//
// Index spaces: "user" indices are rows/columns of the matrix as the caller gave it;
// "elimination" indices are positions in the permuted, postordered matrix P·A·Pᵀ that the
// factor is computed for. `permutation[elimination] = user` and
// `inverse_permutation[user] = elimination`. Everything stored below is in elimination
// indices unless its name says otherwise.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "factor/analysis/ordering.hpp"
#include "factor/analysis/supernode_partition.hpp"
#include "linalg/csc_matrix.hpp"

namespace cholsim::factor {

struct AnalyzeOptions {
  /// AMD, or METIS where AMD's predicted factorization is expensive and METIS's cheaper
  /// (fill_reducing_ordering in ordering.hpp states the rule).
  OrderingMethod ordering = OrderingMethod::automatic;
  /// DOFs per mesh node for the compressed AMD / nested-dissection ordering (FEM elasticity: 3).
  /// 1 orders the scalar graph. Must divide the matrix size.
  Index dofs_per_node = 1;
  /// Used when ordering == given: perm[new] = old, user numbering.
  std::vector<Index> given_permutation;
  AmalgamationOptions amalgamation;
  /// Unknowns (user numbering) kept out of the elimination for a partial factorization
  /// (seed 004 §4.3): they are ordered last, in this order, as one dense supernode whose
  /// assembled front is the Schur complement S (schur_ordering.hpp). Empty: a full
  /// factorization. Must be duplicate-free and in range (std::invalid_argument otherwise).
  std::vector<Index> schur_set;
  /// With a Schur set, also order the pattern without the constraint and report the fill
  /// increase (AnalyzeStats::fill_increase); costs one more ordering and column count.
  bool compare_unconstrained_fill = true;
};

struct AnalyzeStats {
  double ordering_seconds = 0.0;
  /// The method whose ordering was used: AnalyzeOptions::ordering, or for `automatic` the
  /// candidate it kept (minimum_degree or dissection_minimum_degree).
  OrderingMethod ordering_used = OrderingMethod::natural;
  /// Predicted flops Σⱼ cⱼ² of the candidates `automatic` compared, AMD and ND-CAMD
  /// (FillReducingOrdering);
  /// 0 for one it did not run and for every other method. With a Schur set: of the
  /// eliminated unknowns' ordering.
  double minimum_degree_flops = 0.0;
  double nested_dissection_flops = 0.0;
  double symbolic_seconds = 0.0;  ///< everything after the ordering
  double total_seconds = 0.0;
  Index n = 0;
  std::int64_t nnz_a_lower = 0;     ///< stored entries of A (lower triangle)
  std::int64_t nnz_l = 0;           ///< entries of L stored by the supernodes (with explicit zeros)
  std::int64_t nnz_l_exact = 0;     ///< structural nonzeros of L (sum of column counts)
  double flops = 0.0;               ///< factorization flops of the chosen supernodes
  Index supernodes = 0;
  Index fundamental_supernodes = 0;
  Index largest_front = 0;          ///< rows of the largest supernode (front order)
  Index largest_supernode_columns = 0;
  /// Supernode counts by column width: 1, 2–3, 4–7, 8–15, …, ≥ 2^(k-1).
  std::array<Index, 12> column_histogram{};
  std::int64_t factor_bytes = 0;    ///< bytes of L's values
  std::int64_t tree_levels = 0;     ///< height of the supernodal tree
  Index schur_size = 0;             ///< unknowns in the Schur set (0: full factorization)
  /// nnz(L) exact of the same ordering method without the Schur constraint, and the relative
  /// increase nnz_l_exact / nnz_l_unconstrained − 1 (seed 004 §4.3 saw "slight" increases).
  /// Only with a Schur set and compare_unconstrained_fill; 0 otherwise.
  std::int64_t nnz_l_unconstrained = 0;
  double fill_increase = 0.0;
};

class Symbolic {
 public:
  [[nodiscard]] Index size() const { return n_; }
  [[nodiscard]] Index supernode_count() const { return static_cast<Index>(parent_.size()); }
  /// Size of the Schur set: the last schur_size() elimination columns, all in the last
  /// supernode, which a factorization assembles into S but does not factor. 0 without one.
  [[nodiscard]] Index schur_size() const { return stats_.schur_size; }
  /// Supernodes a factorization eliminates: all of them, or all but the Schur supernode.
  [[nodiscard]] Index eliminated_supernode_count() const {
    return supernode_count() - (schur_size() > 0 ? 1 : 0);
  }
  [[nodiscard]] bool is_schur_supernode(Index s) const { return s == eliminated_supernode_count(); }

  // Ordering. permutation()[elimination] = user column.
  [[nodiscard]] std::span<const Index> permutation() const { return permutation_; }
  [[nodiscard]] std::span<const Index> inverse_permutation() const { return inverse_permutation_; }

  // Supernodal tree, in postorder (children before parents, subtrees contiguous).
  [[nodiscard]] Index first_column(Index s) const { return first_column_[s]; }
  [[nodiscard]] Index column_count(Index s) const { return first_column_[s + 1] - first_column_[s]; }
  [[nodiscard]] Index row_count(Index s) const {
    return static_cast<Index>(row_ptr_[s + 1] - row_ptr_[s]);
  }
  [[nodiscard]] Index parent(Index s) const { return parent_[s]; }
  [[nodiscard]] std::span<const Index> children(Index s) const {
    return {children_.data() + child_ptr_[s], children_.data() + child_ptr_[s + 1]};
  }
  /// The first supernode of s's subtree: the subtree is [subtree_begin(s), s].
  [[nodiscard]] Index subtree_begin(Index s) const { return subtree_begin_[s]; }
  /// Row structure of supernode s (elimination indices, increasing): its own columns first,
  /// then the rows of its update block.
  [[nodiscard]] std::span<const Index> rows(Index s) const {
    return {rows_.data() + row_ptr_[s], rows_.data() + row_ptr_[s + 1]};
  }
  /// For each update-block row of s (rows(s) past its columns), its position in rows(parent).
  [[nodiscard]] std::span<const Index> parent_positions(Index s) const {
    return {parent_position_.data() + row_ptr_[s] + column_count(s),
            parent_position_.data() + row_ptr_[s + 1]};
  }
  /// Offset of supernode s's m×k column-major block in the factor's value array.
  [[nodiscard]] std::int64_t value_offset(Index s) const { return value_ptr_[s]; }
  [[nodiscard]] std::int64_t factor_value_count() const { return value_ptr_.back(); }

  /// Where A's stored entries land: for supernode s, pairs (index into the user's value
  /// array, offset inside s's block). Duplicated positions are summed.
  [[nodiscard]] std::span<const std::int64_t> a_sources(Index s) const {
    return {a_source_.data() + a_entry_ptr_[s], a_source_.data() + a_entry_ptr_[s + 1]};
  }
  [[nodiscard]] std::span<const std::int64_t> a_targets(Index s) const {
    return {a_target_.data() + a_entry_ptr_[s], a_target_.data() + a_entry_ptr_[s + 1]};
  }

  /// Estimated cost of supernode s (flops of potrf + trsm + syrk), used by the scheduler;
  /// 0 for the Schur supernode, which is only assembled.
  [[nodiscard]] double supernode_flops(Index s) const;

  /// True if `a` has exactly the pattern this analysis was made for (size, pointers, rows).
  [[nodiscard]] bool matches_pattern(const linalg::SymmetricCscMatrix& a) const;

  /// Bytes this analysis holds (its arrays' capacities): part of a factor's memory footprint.
  [[nodiscard]] std::int64_t bytes() const;

  [[nodiscard]] const AnalyzeStats& stats() const { return stats_; }

 private:
  friend std::shared_ptr<const Symbolic> analyze(const linalg::SymmetricCscMatrix&,
                                                 const AnalyzeOptions&);
  Index n_ = 0;
  std::vector<Index> permutation_;
  std::vector<Index> inverse_permutation_;
  std::vector<Index> first_column_;
  std::vector<Index> parent_;
  std::vector<Index> child_ptr_;
  std::vector<Index> children_;
  std::vector<Index> subtree_begin_;
  std::vector<std::int64_t> row_ptr_;
  std::vector<Index> rows_;
  std::vector<Index> parent_position_;
  std::vector<std::int64_t> value_ptr_;
  std::vector<std::int64_t> a_entry_ptr_;
  std::vector<std::int64_t> a_source_;
  std::vector<std::int64_t> a_target_;
  std::uint64_t pattern_hash_ = 0;
  std::int64_t pattern_nnz_ = 0;
  AnalyzeStats stats_;
};

/// Runs ordering and symbolic analysis of the lower-stored pattern (values are ignored).
/// Throws std::invalid_argument for a malformed pattern or a bad given permutation.
std::shared_ptr<const Symbolic> analyze(const linalg::SymmetricCscMatrix& pattern,
                                        const AnalyzeOptions& options = {});

/// 64-bit hash of a pattern (size, column pointers, row indices).
std::uint64_t pattern_hash(const linalg::SymmetricCscMatrix& pattern);

}  // namespace cholsim::factor
