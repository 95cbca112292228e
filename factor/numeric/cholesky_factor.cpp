#include "factor/numeric/cholesky_factor.hpp"

#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "factor/numeric/multifrontal.hpp"
#include "factor/numeric/tree_scheduler.hpp"
#include "factor/update/update_block_retention.hpp"
#include "linalg/floating_point_mode.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::factor {
namespace {

using Clock = std::chrono::steady_clock;

// The first NaN/Inf in column-major order, or ok.
FactorStatus check_finite_values(const linalg::SymmetricCscMatrix& a) {
  const linalg::CscMatrix& l = a.lower;
  for (Index c = 0; c < l.cols; ++c) {
    for (linalg::Offset p = l.col_ptr[c]; p < l.col_ptr[c + 1]; ++p) {
      if (!std::isfinite(l.values[p])) {
        std::ostringstream message;
        message << "value " << l.values[p] << " at (" << l.row_idx[p] << ", " << c
                << ") is not finite";
        FactorStatus status = failed_status(FactorStatusCode::non_finite_value, message.str());
        status.row = l.row_idx[p];
        status.column = c;
        status.value = l.values[p];
        return status;
      }
    }
  }
  return {FactorStatusCode::ok, -1, -1, 0.0, {}};
}

}  // namespace

FactorStatus check_matrix(const Symbolic& symbolic, const linalg::SymmetricCscMatrix& a,
                          bool check_finite) {
  if (a.size() != symbolic.size()) {
    return failed_status(FactorStatusCode::size_mismatch,
                   "matrix is " + std::to_string(a.size()) + "x" + std::to_string(a.size()) +
                       " but the analysis was for size " + std::to_string(symbolic.size()));
  }
  if (!a.lower.has_values()) {
    return failed_status(FactorStatusCode::pattern_mismatch, "matrix has no values");
  }
  if (!symbolic.matches_pattern(a)) {
    return failed_status(FactorStatusCode::pattern_mismatch,
                   "matrix pattern differs from the analysed pattern (" +
                       std::to_string(a.nnz_lower()) + " stored entries); analyze it again");
  }
  if (check_finite) return check_finite_values(a);
  return {FactorStatusCode::ok, -1, -1, 0.0, {}};
}

FactorStatus first_pivot_failure(const Symbolic& symbolic, std::span<const int> failing_column) {
  // The first failure in elimination order is the one a sequential factorization would meet.
  for (Index s = 0; s < symbolic.supernode_count(); ++s) {
    if (failing_column[s] == 0) continue;
    const Index column = symbolic.permutation()[symbolic.first_column(s) + failing_column[s] - 1];
    FactorStatus status = failed_status(FactorStatusCode::not_positive_definite,
                                  "matrix is not positive definite: pivot of column " +
                                      std::to_string(column) + " is not positive");
    status.column = column;
    return status;
  }
  return {FactorStatusCode::ok, -1, -1, 0.0, {}};
}

Factor::Factor(std::shared_ptr<const Symbolic> symbolic) : symbolic_(std::move(symbolic)) {
  if (!symbolic_) throw std::invalid_argument("Factor: null symbolic analysis");
}

Factor::~Factor() = default;
Factor::Factor(Factor&&) noexcept = default;
Factor& Factor::operator=(Factor&&) noexcept = default;

const FactorStatus& Factor::factorize(const linalg::SymmetricCscMatrix& a,
                                      const FactorOptions& options) {
  const auto start = Clock::now();
  stats_ = {};
  if (!accept_matrix(a, options.check_finite)) return status_;
  compute_all_supernodes(a, options, {});
  finish_timing(start);
  return status_;
}

std::vector<double> Factor::compute_all_supernodes(const linalg::SymmetricCscMatrix& a,
                                                   const FactorOptions& options,
                                                   const SupernodeFollowUp& follow_up) {
  const Symbolic& sym = *symbolic_;
  if (values_.size() != static_cast<std::size_t>(sym.factor_value_count())) {
    values_.resize(static_cast<std::size_t>(sym.factor_value_count()));
    linalg::populate_pages(values_.data(), values_.size() * sizeof(double), options.threads);
  }
  stale_.assign(static_cast<std::size_t>(sym.supernode_count()), 1);
  const LeftLookingTop top = left_looking_top_for(sym, options, static_cast<bool>(follow_up));
  UpdateBlockStore transient(sym, BlockLifetime::one_call, top.kept_columns());
  UpdateBlockStore& updates = update_blocks_for_call(retained_, options.retain_update_blocks, transient, sym);
  keeps_block_ = retained_ ? retained_update_blocks(sym, options.retain_min_flops_per_entry) : std::vector<char>{};
  std::vector<double> seconds;
  if (follow_up || !compute_with_gpu(a, {}, options, updates, seconds)) {
    seconds = compute_supernodes(a, {}, options, updates, keeps_block_, follow_up, top);
  }
  // seed 000 §4.4: the time of every supernode in the full factorization is its cost.
  cost_model_ = SupernodeCostModel(seconds);
  stats_.peak_update_bytes = updates.peak_bytes();
  stats_.update_arena_bytes = updates.arena_bytes();
  return seconds;
}

void Factor::finish_timing(Clock::time_point start) {
  stats_.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  stats_.gflops = stats_.seconds > 0 ? stats_.flops / stats_.seconds * 1e-9 : 0.0;
}

bool Factor::accept_matrix(const linalg::SymmetricCscMatrix& a, bool check_finite) {
  status_ = check_matrix(*symbolic_, a, check_finite);
  return status_.ok();
}

std::vector<double> Factor::compute_supernodes(const linalg::SymmetricCscMatrix& a,
                                               std::span<const char> active, const FactorOptions& options,
                                               UpdateBlockStore& updates, std::span<const char> keep_block,
                                               const SupernodeFollowUp& follow_up, const LeftLookingTop& top) {
  const Symbolic& sym = *symbolic_;
  const int threads = linalg::resolve_thread_count(options.threads);
  if (solve_split_threads_ != threads) {  // the solves use the factorization's threads
    solve_split_ = split_for_solve(sym, threads);
    solve_split_threads_ = threads;
  }
  std::vector<double> cost(static_cast<std::size_t>(sym.supernode_count()));
  for (Index s = 0; s < sym.supernode_count(); ++s) cost[s] = sym.supernode_flops(s);
  const TreeSchedule schedule = plan_tree_schedule(sym, cost, threads, active);

  // failing_column[s]: 1-based column inside s where potrf stopped, 0 if none.
  failing_column_.assign(static_cast<std::size_t>(sym.supernode_count()), 0);
  std::span<int> failing_column = failing_column_;
  std::vector<double> seconds(static_cast<std::size_t>(sym.supernode_count()), 0.0);
  for (Index s = 0; s < sym.supernode_count(); ++s) {
    if (active.empty() || active[s]) stale_[s] = 1;
  }
  const linalg::FloatingPointMode mode = options.flush_subnormals ? linalg::FloatingPointMode::flushing_subnormals()
                                                                 : linalg::FloatingPointMode::current();
  run_tree_schedule(sym, schedule, threads, [&](Index s) {
    const linalg::FloatingPointMode::Scope supernode_mode(mode);
    const auto supernode_start = Clock::now();
    failing_column[s] = top.is_left_looking(s)
                            ? compute_left_looking_supernode(sym, top, s, a.lower.values, values_, updates)
                            : compute_supernode(sym, s, a.lower.values, values_, updates, false);
    release_consumed_children(sym, s, keep_block, updates);
    seconds[s] = std::chrono::duration<double>(Clock::now() - supernode_start).count();
    if (failing_column[s] == 0 && follow_up) follow_up(s);
    stale_[s] = failing_column[s] == 0 ? 0 : 1;
    return failing_column[s] == 0;
  }, active, follow_up ? TopPhase::threaded_blas : TopPhase::dense_tasks);

  status_ = first_pivot_failure(sym, failing_column);

  stats_.threads = threads;
  stats_.factor_bytes = sym.stats().factor_bytes;
  stats_.retained_update_bytes = retained_ ? retained_->bytes() : 0;
  stats_.parallel_subtrees = static_cast<Index>(schedule.subtree_roots.size());
  stats_.top_supernodes = static_cast<Index>(schedule.top.size());
  stats_.left_looking_supernodes = top.supernode_count();
  stats_.recomputed_supernodes = 0;
  stats_.recomputed_flops = 0.0;
  for (Index s = 0; s < sym.supernode_count(); ++s) {
    if (!active.empty() && !active[s]) continue;
    ++stats_.recomputed_supernodes;
    stats_.recomputed_flops += cost[s];
  }
  stats_.flops = stats_.recomputed_flops;
  return seconds;
}

void Factor::require_factored(const char* operation) const {
  if (!status_.ok()) {
    throw std::logic_error(std::string(operation) + ": no successful factorization (" +
                           (status_.message.empty() ? "not factored" : status_.message) + ")");
  }
}

linalg::CscMatrix Factor::factor_matrix() const {
  require_factored("factor_matrix");
  return supernodal_matrix(*symbolic_, values_);
}

bool left_looking_top_allowed(const Symbolic& symbolic, const FactorOptions& options, bool with_derivative) {
  const bool on_gpu = options.device == FactorDevice::gpu ||
                      (options.device == FactorDevice::automatic && automatic_device_picks_gpu(symbolic, options));
  return !on_gpu && !options.retain_update_blocks && !with_derivative;
}

LeftLookingTop left_looking_top_for(const Symbolic& symbolic, const FactorOptions& options, bool with_derivative) {
  if (!left_looking_top_allowed(symbolic, options, with_derivative)) return {};
  return {symbolic, options.left_looking_update_bytes};
}

linalg::CscMatrix supernodal_matrix(const Symbolic& sym, std::span<const double> values) {
  linalg::CscMatrix l;
  l.rows = l.cols = sym.size();
  l.col_ptr.assign(static_cast<std::size_t>(sym.size()) + 1, 0);
  for (Index s = 0; s < sym.supernode_count(); ++s) {
    const Index k = sym.column_count(s);
    const Index m = sym.row_count(s);
    const auto rows = sym.rows(s);
    const double* block = values.data() + sym.value_offset(s);
    for (Index j = 0; j < k; ++j) {
      for (Index i = j; i < m; ++i) {
        l.row_idx.push_back(rows[i]);
        l.values.push_back(block[static_cast<std::int64_t>(j) * m + i]);
      }
      l.col_ptr[sym.first_column(s) + j + 1] = static_cast<linalg::Offset>(l.row_idx.size());
    }
  }
  return l;
}

}  // namespace cholsim::factor
