#include "factor/solve/solve_split.hpp"

#include <algorithm>
#include <queue>

#include "linalg/parallel_loops.hpp"

namespace cholsim::factor {

namespace {

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

// Values of every subtree of eliminated supernodes: its blocks' m × k, children first.
std::vector<double> subtree_values(const Symbolic& sym) {
  const Index eliminated = sym.eliminated_supernode_count();
  std::vector<double> values(at(eliminated), 0.0);
  for (Index s = 0; s < eliminated; ++s) {
    values[at(s)] += static_cast<double>(sym.row_count(s)) * static_cast<double>(sym.column_count(s));
    const Index parent = sym.parent(s);
    if (parent >= 0 && parent < eliminated) values[at(parent)] += values[at(s)];
  }
  return values;
}

// The rows a forward pass of every thread may write: the top supernodes' columns and the Schur
// set's, merged into increasing ranges.
std::vector<IndexRange> shared_rows(const Symbolic& sym, const std::vector<Index>& top) {
  std::vector<IndexRange> ranges;
  const auto add = [&](Index begin, Index end) {
    if (!ranges.empty() && ranges.back().end == begin) {
      ranges.back().end = end;
    } else {
      ranges.push_back({begin, end});
    }
  };
  for (Index s : top) add(sym.first_column(s), sym.first_column(s) + sym.column_count(s));
  if (sym.schur_size() > 0) add(sym.size() - sym.schur_size(), sym.size());
  return ranges;
}

}  // namespace

SolveSplit split_for_solve(const Symbolic& sym, int threads) {
  SolveSplit split;
  const int workers = linalg::resolve_thread_count(threads);
  const Index eliminated = sym.eliminated_supernode_count();
  const std::vector<double> values = subtree_values(sym);
  double total = 0.0;
  const auto by_values = [&](Index a, Index b) { return values[at(a)] < values[at(b)]; };
  std::priority_queue<Index, std::vector<Index>, decltype(by_values)> candidates(by_values);
  for (Index s = 0; s < eliminated; ++s) {
    const Index parent = sym.parent(s);
    if (parent < 0 || parent >= eliminated) {
      candidates.push(s);
      total += values[at(s)];
    }
  }
  if (workers <= 1 || total < kMinParallelSolveValues) return split;
  // Split the largest subtree until there are enough; a chain's supernodes go one at a time.
  std::vector<Index> subtrees;
  while (!candidates.empty() && candidates.size() < static_cast<std::size_t>(kSubtreesPerThread * workers)) {
    const Index largest = candidates.top();
    if (sym.children(largest).empty()) break;
    candidates.pop();
    split.top.push_back(largest);
    for (Index child : sym.children(largest)) candidates.push(child);
  }
  while (!candidates.empty()) {
    subtrees.push_back(candidates.top());
    candidates.pop();
  }
  // Largest first, each to the least loaded thread.
  split.subtrees.assign(at(workers), {});
  std::vector<double> load(at(workers), 0.0);
  for (Index root : subtrees) {
    const auto thread = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[thread] += values[at(root)];
    split.subtrees[thread].push_back({sym.subtree_begin(root), root + 1});
  }
  for (auto& ranges : split.subtrees) {
    std::sort(ranges.begin(), ranges.end(), [](const IndexRange& a, const IndexRange& b) { return a.begin < b.begin; });
  }
  std::sort(split.top.begin(), split.top.end());
  split.shared_rows = shared_rows(sym, split.top);
  return split;
}

}  // namespace cholsim::factor
