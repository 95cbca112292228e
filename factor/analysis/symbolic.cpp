#include "factor/analysis/symbolic.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <stdexcept>

#include "factor/analysis/column_counts.hpp"
#include "factor/analysis/elimination_tree.hpp"
#include "factor/schur/schur_ordering.hpp"

namespace cholsim::factor {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

FillReducingOrdering choose_ordering(const linalg::SymmetricCscMatrix& pattern,
                                     const AnalyzeOptions& options) {
  if (!options.schur_set.empty()) {
    return constrained_ordering(pattern, options.schur_set, options.ordering,
                                options.dofs_per_node, options.given_permutation);
  }
  if (options.ordering == OrderingMethod::given) {
    linalg::check_permutation(options.given_permutation, pattern.size(),
                              "analyze: given permutation");
    return {options.given_permutation, OrderingMethod::given};
  }
  return fill_reducing_ordering(pattern, options.ordering, options.dofs_per_node);
}

// Flops of one dense supernode step with m rows and k columns: potrf (k³/3) + trsm ((m−k)k²)
// + syrk ((m−k)²k), multiplications and additions both counted, as LAPACK and CHOLMOD count.
double dense_step_flops(double m, double k) {
  const double r = m - k;
  return k * k * k / 3.0 + r * k * k + r * r * k;
}

}  // namespace

std::uint64_t pattern_hash(const linalg::SymmetricCscMatrix& pattern) {
  // FNV-1a over 64-bit words: cheap next to a factorization and sensitive to any change.
  std::uint64_t hash = 1469598103934665603ULL;
  auto mix = [&hash](std::uint64_t word) {
    hash ^= word;
    hash *= 1099511628211ULL;
  };
  mix(static_cast<std::uint64_t>(pattern.size()));
  for (linalg::Offset p : pattern.lower.col_ptr) mix(static_cast<std::uint64_t>(p));
  for (Index r : pattern.lower.row_idx) mix(static_cast<std::uint64_t>(r));
  return hash;
}

double Symbolic::supernode_flops(Index s) const {
  if (is_schur_supernode(s)) return 0.0;  // assembled into S, not factored (schur_ordering.hpp)
  return dense_step_flops(row_count(s), column_count(s));
}

std::int64_t Symbolic::bytes() const {
  const auto held = [](const auto& array) {
    return static_cast<std::int64_t>(array.capacity() * sizeof(array[0]));
  };
  return static_cast<std::int64_t>(sizeof(*this)) + held(permutation_) + held(inverse_permutation_) +
         held(first_column_) + held(parent_) + held(child_ptr_) + held(children_) + held(subtree_begin_) +
         held(row_ptr_) + held(rows_) + held(parent_position_) + held(value_ptr_) + held(a_entry_ptr_) +
         held(a_source_) + held(a_target_);
}

bool Symbolic::matches_pattern(const linalg::SymmetricCscMatrix& a) const {
  return a.size() == n_ && a.nnz_lower() == pattern_nnz_ && pattern_hash(a) == pattern_hash_;
}

std::shared_ptr<const Symbolic> analyze(const linalg::SymmetricCscMatrix& pattern,
                                        const AnalyzeOptions& options) {
  const auto start = Clock::now();
  linalg::check_valid(pattern);
  auto symbolic = std::make_shared<Symbolic>();
  Symbolic& sym = *symbolic;
  const Index n = pattern.size();
  sym.n_ = n;
  sym.pattern_hash_ = pattern_hash(pattern);
  sym.pattern_nnz_ = pattern.nnz_lower();

  // 1. Fill-reducing ordering, then a postorder of its elimination tree so that every
  //    subtree — and so every supernode — occupies contiguous columns.
  FillReducingOrdering chosen = choose_ordering(pattern, options);
  const std::vector<Index> fill_ordering = std::move(chosen.permutation);
  sym.stats_.ordering_seconds = seconds_since(start);
  sym.stats_.ordering_used = chosen.method;
  sym.stats_.minimum_degree_flops = chosen.minimum_degree_flops;
  sym.stats_.nested_dissection_flops = chosen.nested_dissection_flops;
  const auto symbolic_start = Clock::now();
  const linalg::SymmetricCscMatrix pattern_only{
      linalg::CscMatrix{n, n, pattern.lower.col_ptr, pattern.lower.row_idx, {}}};
  const linalg::SymmetricCscMatrix ordered = linalg::permute_symmetric(pattern_only, fill_ordering);
  const std::vector<Index> ordered_parent = elimination_tree(ordered);
  const Index schur_size = static_cast<Index>(options.schur_set.size());
  const Index eliminated = n - schur_size;
  std::vector<Index> post = postorder(ordered_parent);
  const std::vector<Index> ordered_counts = column_counts(ordered, ordered_parent, post);
  // The constrained ordering put the Schur set last; the relabeling must keep it there.
  if (schur_size > 0) post = schur_last_postorder(ordered_parent, eliminated);
  // Relabel by the postorder: elimination column k is ordered column post[k]. A postorder
  // keeps every ancestor after its descendants, so A's entries stay in the lower triangle.
  std::vector<Index> post_position(static_cast<std::size_t>(n));
  for (Index k = 0; k < n; ++k) post_position[post[k]] = k;
  sym.permutation_.resize(static_cast<std::size_t>(n));
  std::vector<Index> parent(static_cast<std::size_t>(n));
  std::vector<Index> counts(static_cast<std::size_t>(n));
  for (Index k = 0; k < n; ++k) {
    sym.permutation_[k] = fill_ordering[post[k]];
    const Index p = ordered_parent[post[k]];
    parent[k] = p == -1 ? -1 : post_position[p];
    counts[k] = ordered_counts[post[k]];
  }
  sym.inverse_permutation_ = linalg::invert_permutation(sym.permutation_);
  const linalg::CscMatrix& ordered_lower = ordered.lower;

  // 2. Supernodes.
  const SupernodePartition fundamental = fundamental_supernodes(parent, counts);
  const SupernodePartition partition =
      schur_size > 0 ? schur_supernode_partition(parent, counts, eliminated, options.amalgamation)
                     : amalgamate(fundamental, options.amalgamation);
  const Index supernodes = partition.count();
  sym.first_column_ = partition.first_column;
  sym.parent_ = partition.parent;
  sym.stats_.schur_size = schur_size;  // is_schur_supernode() depends on it from here on

  // 3. Children lists (increasing) and subtree ranges of the supernodal tree.
  sym.child_ptr_.assign(static_cast<std::size_t>(supernodes) + 1, 0);
  for (Index s = 0; s < supernodes; ++s) {
    if (sym.parent_[s] != -1) ++sym.child_ptr_[sym.parent_[s] + 1];
  }
  std::partial_sum(sym.child_ptr_.begin(), sym.child_ptr_.end(), sym.child_ptr_.begin());
  sym.children_.resize(static_cast<std::size_t>(sym.child_ptr_.back()));
  {
    std::vector<Index> next(sym.child_ptr_.begin(), sym.child_ptr_.end() - 1);
    for (Index s = 0; s < supernodes; ++s) {
      if (sym.parent_[s] != -1) sym.children_[next[sym.parent_[s]]++] = s;
    }
  }
  sym.subtree_begin_.resize(static_cast<std::size_t>(supernodes));
  for (Index s = 0; s < supernodes; ++s) {
    const auto kids = sym.children(s);
    sym.subtree_begin_[s] = kids.empty() ? s : sym.subtree_begin_[kids.front()];
  }

  // 4. Row structure of every supernode: its columns, A's rows below them, and the update
  //    rows of its children that lie below its columns.
  std::vector<Index> marker(static_cast<std::size_t>(n), -1);
  sym.row_ptr_.assign(static_cast<std::size_t>(supernodes) + 1, 0);
  sym.rows_.reserve(static_cast<std::size_t>(std::accumulate(
      partition.row_count.begin(), partition.row_count.end(), std::int64_t{0})));
  for (Index s = 0; s < supernodes; ++s) {
    const Index first = sym.first_column_[s];
    const Index end = sym.first_column_[s + 1];
    const auto begin_rows = static_cast<std::ptrdiff_t>(sym.rows_.size());
    for (Index j = first; j < end; ++j) {
      sym.rows_.push_back(j);
      marker[j] = s;
    }
    auto add_row = [&](Index r) {
      if (marker[r] != s) {
        marker[r] = s;
        sym.rows_.push_back(r);
      }
    };
    for (Index j = first; j < end; ++j) {
      const Index column = post[j];
      for (linalg::Offset p = ordered_lower.col_ptr[column]; p < ordered_lower.col_ptr[column + 1]; ++p) {
        add_row(post_position[ordered_lower.row_idx[p]]);
      }
    }
    for (Index c : sym.children(s)) {
      for (Index r : sym.rows(c).subspan(static_cast<std::size_t>(sym.column_count(c)))) add_row(r);
    }
    std::sort(sym.rows_.begin() + begin_rows + (end - first), sym.rows_.end());
    sym.row_ptr_[s + 1] = static_cast<std::int64_t>(sym.rows_.size());
  }

  // 5. Relative indices for extend-add: each update row's position in its parent's rows.
  std::vector<Index> position(static_cast<std::size_t>(n), -1);
  sym.parent_position_.assign(sym.rows_.size(), -1);
  for (Index s = 0; s < supernodes; ++s) {
    const auto rows_s = sym.rows(s);
    for (Index i = 0; i < static_cast<Index>(rows_s.size()); ++i) position[rows_s[i]] = i;
    for (Index c : sym.children(s)) {
      const Index k = sym.column_count(c);
      for (std::int64_t p = sym.row_ptr_[c] + k; p < sym.row_ptr_[c + 1]; ++p) {
        sym.parent_position_[p] = position[sym.rows_[p]];
      }
    }
  }

  // 6. Value offsets of the m×k blocks.
  sym.value_ptr_.assign(static_cast<std::size_t>(supernodes) + 1, 0);
  for (Index s = 0; s < supernodes; ++s) {
    sym.value_ptr_[s + 1] = sym.value_ptr_[s] + static_cast<std::int64_t>(sym.row_count(s)) *
                                                    sym.column_count(s);
  }

  // 7. Scatter map of A's entries (user numbering) into the supernodal blocks, grouped by
  //    supernode with a counting sort. a_target_ first holds each entry's (row, column) in
  //    elimination numbering, packed, then — supernode by supernode, with the row positions
  //    of that supernode at hand — its offset in the m×k block.
  std::vector<Index> supernode_of(static_cast<std::size_t>(n));
  for (Index s = 0; s < supernodes; ++s) {
    std::fill(supernode_of.begin() + sym.first_column_[s], supernode_of.begin() + sym.first_column_[s + 1], s);
  }
  const linalg::CscMatrix& user = pattern.lower;
  auto eliminated_entry = [&](Index user_row, Index user_column) {
    const Index row = sym.inverse_permutation_[user_row];
    const Index column = sym.inverse_permutation_[user_column];
    return row < column ? std::pair{column, row} : std::pair{row, column};
  };
  sym.a_entry_ptr_.assign(static_cast<std::size_t>(supernodes) + 1, 0);
  for (Index c = 0; c < n; ++c) {
    for (linalg::Offset p = user.col_ptr[c]; p < user.col_ptr[c + 1]; ++p) {
      ++sym.a_entry_ptr_[supernode_of[eliminated_entry(user.row_idx[p], c).second] + 1];
    }
  }
  std::partial_sum(sym.a_entry_ptr_.begin(), sym.a_entry_ptr_.end(), sym.a_entry_ptr_.begin());
  sym.a_source_.resize(static_cast<std::size_t>(user.nnz()));
  sym.a_target_.resize(static_cast<std::size_t>(user.nnz()));
  {
    std::vector<std::int64_t> next(sym.a_entry_ptr_.begin(), sym.a_entry_ptr_.end() - 1);
    for (Index c = 0; c < n; ++c) {
      for (linalg::Offset p = user.col_ptr[c]; p < user.col_ptr[c + 1]; ++p) {
        const auto [row, column] = eliminated_entry(user.row_idx[p], c);
        const std::int64_t slot = next[supernode_of[column]]++;
        sym.a_source_[slot] = p;
        sym.a_target_[slot] = (static_cast<std::int64_t>(row) << 32) | static_cast<std::uint32_t>(column);
      }
    }
  }
  for (Index s = 0; s < supernodes; ++s) {
    const auto rows_s = sym.rows(s);
    for (Index i = 0; i < static_cast<Index>(rows_s.size()); ++i) position[rows_s[i]] = i;
    const std::int64_t m = sym.row_count(s);
    for (std::int64_t q = sym.a_entry_ptr_[s]; q < sym.a_entry_ptr_[s + 1]; ++q) {
      const auto row = static_cast<Index>(sym.a_target_[q] >> 32);
      const auto column = static_cast<Index>(sym.a_target_[q] & 0xffffffff);
      sym.a_target_[q] = (column - sym.first_column_[s]) * m + position[row];
    }
  }

  // 8. Statistics.
  AnalyzeStats& stats = sym.stats_;
  stats.n = n;
  stats.nnz_a_lower = pattern.nnz_lower();
  stats.nnz_l = sym.factor_value_count() - [&] {
    std::int64_t upper = 0;  // the strictly upper parts of the diagonal blocks are not in L
    for (Index s = 0; s < supernodes; ++s) {
      const std::int64_t k = sym.column_count(s);
      upper += k * (k - 1) / 2;
    }
    return upper;
  }();
  stats.nnz_l_exact = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  stats.supernodes = supernodes;
  stats.fundamental_supernodes = fundamental.count();
  std::vector<std::int64_t> depth(static_cast<std::size_t>(supernodes), 1);
  for (Index s = supernodes - 1; s >= 0; --s) {
    if (sym.parent_[s] != -1) depth[s] = depth[sym.parent_[s]] + 1;
    stats.tree_levels = std::max(stats.tree_levels, depth[s]);
    stats.flops += sym.supernode_flops(s);
    stats.largest_front = std::max(stats.largest_front, sym.row_count(s));
    stats.largest_supernode_columns = std::max(stats.largest_supernode_columns, sym.column_count(s));
    std::size_t bucket = 0;
    for (Index width = sym.column_count(s); width > 1 && bucket + 1 < stats.column_histogram.size(); width /= 2) ++bucket;
    ++stats.column_histogram[bucket];
  }
  stats.factor_bytes = sym.factor_value_count() * static_cast<std::int64_t>(sizeof(double));
  stats.symbolic_seconds = seconds_since(symbolic_start);
  if (schur_size > 0 && options.compare_unconstrained_fill) {
    // Counted as ordering time: it is one more ordering (and its column counts).
    const auto comparison_start = Clock::now();
    AnalyzeOptions unconstrained = options;
    unconstrained.schur_set.clear();
    stats.nnz_l_unconstrained = factor_nonzeros(pattern, choose_ordering(pattern, unconstrained).permutation);
    stats.fill_increase = static_cast<double>(stats.nnz_l_exact) /
                              static_cast<double>(std::max<std::int64_t>(1, stats.nnz_l_unconstrained)) -
                          1.0;
    stats.ordering_seconds += seconds_since(comparison_start);
  }
  stats.total_seconds = seconds_since(start);
  return symbolic;
}

}  // namespace cholsim::factor
