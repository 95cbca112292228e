// Factor::refactorize — the incremental refactorization of seed 000 §4.3: restart the
// multifrontal factorization at the changed supernodes, reading the retained update blocks of
// every child that did not change.
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "factor/numeric/cholesky_factor.hpp"
#include "factor/numeric/multifrontal.hpp"
#include "factor/update/update_block_retention.hpp"
#include "factor/update/update_scheduling.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::factor {

std::vector<char> Factor::supernodes_to_recompute(const ChangedEntries& changed) const {
  const Symbolic& sym = *symbolic_;
  std::vector<char> marked = changed.marked_supernodes(sym);
  // Supernodes that an earlier failed call left uncomputed are recomputed too.
  for (Index s = 0; s < static_cast<Index>(stale_.size()); ++s) marked[s] = marked[s] || stale_[s];
  close_under_ancestors(supernode_parents(sym), marked);
  if (retained_) add_unretained_children(sym, keeps_block_, marked);
  return marked;
}

std::vector<double> Factor::scheduling_costs() const {
  return costs_with_unretained_children(*symbolic_, keeps_block_, cost_model_.costs());
}

const FactorStatus& Factor::refactorize(const ChangedEntries& changed, const linalg::SymmetricCscMatrix& a,
                                        const FactorOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<char> marked = begin_refactorization(changed, "refactorize");
  if (!accept_matrix(a, options.check_finite)) return status_;
  recompute_marked(a, marked, options, {});
  finish_timing(start);
  return status_;
}

std::vector<char> Factor::begin_refactorization(const ChangedEntries& changed, const char* operation) {
  if (!retained_) {
    throw std::logic_error(std::string(operation) +
                           ": this factor keeps no update blocks; call the factorization with "
                           "FactorOptions::retain_update_blocks = true first");
  }
  std::vector<char> marked = supernodes_to_recompute(changed);
  for (std::size_t s = 0; s < marked.size(); ++s) stale_[s] = stale_[s] || marked[s];
  stats_ = {};
  return marked;
}

std::vector<double> Factor::recompute_marked(const linalg::SymmetricCscMatrix& a, std::span<const char> marked,
                                             const FactorOptions& options, const SupernodeFollowUp& follow_up) {
  const Symbolic& sym = *symbolic_;
  std::vector<double> seconds(static_cast<std::size_t>(sym.supernode_count()), 0.0);
  // An empty `active` span would mean "every supernode": run only when something is marked.
  if (std::find(marked.begin(), marked.end(), 1) != marked.end()) {
    // A factor whose retaining factorize ran on the GPU keeps its top's blocks there.
    if (follow_up || !gpu_ || !compute_with_gpu(a, marked, options, *retained_, seconds)) {
      seconds = compute_supernodes(a, marked, options, *retained_, keeps_block_, follow_up);
    }
    for (Index s = 0; s < sym.supernode_count(); ++s) {
      if (marked[s] && !stale_[s]) cost_model_.refine(s, seconds[s]);  // seed 000 §4.4: EWMA
    }
  }
  stats_.threads = linalg::resolve_thread_count(options.threads);
  stats_.factor_bytes = sym.stats().factor_bytes;
  stats_.retained_update_bytes = retained_->bytes();
  stats_.peak_update_bytes = retained_->peak_bytes();
  return seconds;
}

}  // namespace cholsim::factor
