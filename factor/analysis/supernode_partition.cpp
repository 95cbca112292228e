#include "factor/analysis/supernode_partition.hpp"

#include <cstdint>

namespace cholsim::factor {
namespace {

// Entries of a lower-trapezoidal block of `columns` columns and `rows` rows.
std::int64_t trapezoid_entries(std::int64_t columns, std::int64_t rows) {
  return columns * rows - columns * (columns - 1) / 2;
}

bool may_merge(Index columns, double zero_fraction, const AmalgamationOptions& o) {
  return columns <= o.always_columns ||
         (columns <= o.small_columns && zero_fraction <= o.small_zero_fraction) ||
         (columns <= o.medium_columns && zero_fraction <= o.medium_zero_fraction) ||
         zero_fraction <= o.large_zero_fraction;
}

}  // namespace

SupernodePartition fundamental_supernodes(std::span<const Index> parent,
                                          std::span<const Index> counts) {
  const auto n = static_cast<Index>(parent.size());
  std::vector<Index> child_count(static_cast<std::size_t>(n), 0);
  for (Index j = 0; j < n; ++j) {
    if (parent[j] != -1) ++child_count[parent[j]];
  }
  SupernodePartition partition;
  std::vector<Index> supernode_of(static_cast<std::size_t>(n));
  for (Index j = 0; j < n; ++j) {
    const bool extends_previous = j > 0 && parent[j - 1] == j && child_count[j] == 1 &&
                                  counts[j - 1] == counts[j] + 1;
    if (!extends_previous) {
      partition.first_column.push_back(j);
      partition.row_count.push_back(counts[j]);
    }
    supernode_of[j] = static_cast<Index>(partition.first_column.size()) - 1;
  }
  partition.first_column.push_back(n);
  const Index count = static_cast<Index>(partition.row_count.size());
  partition.parent.assign(static_cast<std::size_t>(count), -1);
  for (Index s = 0; s < count; ++s) {
    const Index last = partition.first_column[s + 1] - 1;
    if (parent[last] != -1) partition.parent[s] = supernode_of[parent[last]];
  }
  return partition;
}

SupernodePartition amalgamate(const SupernodePartition& fundamental,
                              const AmalgamationOptions& options) {
  const Index count = fundamental.count();
  if (!options.enabled || count == 0) return fundamental;

  // Working state per fundamental supernode s, describing the merged group that s heads
  // (a group is named by its topmost member, which keeps the last column).
  std::vector<Index> first(fundamental.first_column.begin(), fundamental.first_column.end() - 1);
  std::vector<Index> rows(fundamental.row_count);
  std::vector<std::int64_t> zeros(static_cast<std::size_t>(count), 0);
  std::vector<Index> merged_into(static_cast<std::size_t>(count), -1);

  // Children precede parents in postorder. Visiting parents in increasing order, each absorbs
  // the child group ending right before its first column, repeatedly, while the rules allow.
  std::vector<Index> group_ending_at(static_cast<std::size_t>(fundamental.first_column.back()) + 1, -1);
  for (Index s = 0; s < count; ++s) group_ending_at[fundamental.first_column[s + 1]] = s;

  auto group_head = [&](Index s) {
    while (merged_into[s] != -1) s = merged_into[s];
    return s;
  };
  for (Index s = 0; s < count; ++s) {
    // The child group ending right before s's first column is its last child; after a merge
    // the next one down (a child of the absorbed group) becomes a child of s in turn.
    while (first[s] > 0) {
      const Index child = group_ending_at[first[s]];
      if (child == -1 || fundamental.parent[child] == -1 ||
          group_head(fundamental.parent[child]) != s) {
        break;
      }
      const Index child_columns = first[s] - first[child];
      const Index parent_columns = fundamental.first_column[s + 1] - first[s];
      const Index columns = child_columns + parent_columns;
      // The child's rows below its columns are the parent's columns and rows: the merged
      // supernode has the child's columns on top of the parent's full row set.
      const std::int64_t merged_rows = child_columns + rows[s];
      const std::int64_t merged_entries = trapezoid_entries(columns, merged_rows);
      const std::int64_t merged_zeros =
          merged_entries - (trapezoid_entries(child_columns, rows[child]) - zeros[child]) -
          (trapezoid_entries(parent_columns, rows[s]) - zeros[s]);
      const double zero_fraction =
          static_cast<double>(merged_zeros) / static_cast<double>(merged_entries);
      if (!may_merge(columns, zero_fraction, options)) break;
      merged_into[child] = s;
      group_ending_at[first[s]] = -1;  // the child no longer ends a group of its own
      first[s] = first[child];
      rows[s] = static_cast<Index>(merged_rows);
      zeros[s] = merged_zeros;
    }
  }

  // Renumber the surviving groups in column order and rebuild the tree.
  SupernodePartition merged;
  std::vector<Index> new_index(static_cast<std::size_t>(count), -1);
  for (Index s = 0; s < count; ++s) {
    if (merged_into[s] != -1) continue;
    new_index[s] = static_cast<Index>(merged.row_count.size());
    merged.first_column.push_back(first[s]);
    merged.row_count.push_back(rows[s]);
  }
  merged.first_column.push_back(fundamental.first_column.back());
  merged.parent.assign(merged.row_count.size(), -1);
  for (Index s = 0; s < count; ++s) {
    if (merged_into[s] != -1 || fundamental.parent[s] == -1) continue;
    merged.parent[new_index[s]] = new_index[group_head(fundamental.parent[s])];
  }
  return merged;
}

}  // namespace cholsim::factor
