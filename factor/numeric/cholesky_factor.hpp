#pragma once
// The numeric supernodal Cholesky factor P·A·Pᵀ = L·Lᵀ and its solves.
//
//   auto symbolic = factor::analyze(A);          // pattern only, reusable
//   factor::Factor L(symbolic);
//   if (!L.factorize(A).ok()) { ... L.status().column ... }
//   L.solve(b);                                   // in place, user numbering
//
// The factorization is multifrontal (seed 000 §4.3): each supernode assembles A's columns and
// its children's update blocks into its m×k factor block and an (m−k)×(m−k) update block,
// then runs potrf / trsm / syrk; update blocks are freed as soon as the parent has consumed
// them, or kept with FactorOptions::retain_update_blocks so that refactorize() can restart
// the factorization at any supernode (seed 000 §4.3). Supernodes run tree-parallel
// (tree_scheduler.hpp).
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "factor/analysis/symbolic.hpp"
#include "factor/gpu/gpu_factorization.hpp"
#include "factor/numeric/factor_status.hpp"
#include "factor/numeric/left_looking_top.hpp"
#include "factor/solve/solve_split.hpp"
#include "factor/update/changed_supernodes.hpp"
#include "factor/update/supernode_cost_model.hpp"
#include "linalg/dense_matrix.hpp"
#include "linalg/huge_page_allocator.hpp"

namespace cholsim::factor {

class UpdateBlockStore;

/// Where the numeric factorization runs (issue 22).
enum class FactorDevice {
  cpu,
  /// The top of the assembly tree on the GPU (factor/gpu/), the subtrees below on the CPU;
  /// without a usable GPU the factorization fails with FactorStatusCode::device_unavailable.
  gpu,
  /// The GPU when one is usable and the analysis predicts at least gpu_min_total_flops, else
  /// the CPU.
  automatic,
};

struct FactorOptions {
  /// Threads used in all, tree tasks and BLAS together; 0 means all hardware threads.
  int threads = 0;
  /// Check the values for NaN/Inf before factorizing (one pass over A).
  bool check_finite = true;
  /// Keep every supernode's update block after its parent has assembled it, so that
  /// refactorize() can recompute only changed supernodes (seed 000 §4.3). Costs
  /// FactorStats::retained_update_bytes of memory for as long as the Factor lives.
  bool retain_update_blocks = false;
  /// With retain_update_blocks: blocks of subtrees cheaper than this many flops per block
  /// entry are not kept, and refactorize recomputes such a subtree with its parent
  /// (update_block_retention.hpp). 0 keeps every block. 100 keeps ≈ 1.75× the factor's bytes
  /// instead of 2.2× on elasticity boxes, for ≈ 1% of the full flops more per refactorize.
  double retain_min_flops_per_entry = 100.0;
  /// Compute with subnormal numbers (below 2.2e-308) flushed to zero, on every thread of the
  /// call (linalg/floating_point_mode.hpp): factors whose entries decay far from the diagonal
  /// can hold many, and each costs about a hundred normal operations on x86. false keeps
  /// IEEE gradual underflow.
  bool flush_subnormals = true;
  /// Supernodes whose multifrontal update block would take at least this many bytes
  /// (update_block_bytes), and all their ancestors, are computed left-looking from L's
  /// columns, without an update block (left_looking_top.hpp): a smaller peak, and faster on
  /// large 3-D problems (kDefaultLeftLookingUpdateBytes says by how much). Lower it for a
  /// factorization whose update blocks would not fit; kNoLeftLookingTop: none. Applies to
  /// factorize (a partial one too) on the CPU without retained blocks or derivative only.
  std::int64_t left_looking_update_bytes = kDefaultLeftLookingUpdateBytes;

  /// Where to compute (issue 22). A refactorize() runs where the retaining factorize ran. The
  /// factorization with derivative and the partial (Schur) factorization always run on the CPU.
  FactorDevice device = FactorDevice::cpu;
  /// GPU: supernodes of at least this many flops, and all their ancestors, run on the device
  /// (device_split.hpp); the subtrees below stay on the CPU's tree tasks.
  double gpu_min_supernode_flops = 2e7;
  /// automatic: the GPU is used from this many predicted flops on.
  double gpu_min_total_flops = 5e9;
  /// GPU: device memory the factorization may use, in bytes; 0 = what the device has free.
  std::int64_t gpu_memory_limit_bytes = 0;
  /// GPU: when device memory runs out, factor on the CPU instead (FactorStats::device_fallback
  /// says why); false returns FactorStatusCode::device_out_of_memory.
  bool gpu_fallback_to_cpu = true;
};

struct FactorStats {
  double seconds = 0.0;          ///< wall time of the whole factorize call
  double flops = 0.0;            ///< flops of the dense kernels (the analysis' count)
  double gflops = 0.0;           ///< flops / seconds / 1e9
  int threads = 1;
  std::int64_t factor_bytes = 0;         ///< L's values
  std::int64_t peak_update_bytes = 0;    ///< most bytes held in update blocks at once
  /// Bytes of the arena the blocks were placed in (its high-water mark, ≥ peak_update_bytes);
  /// 0 with retain_update_blocks, whose blocks are allocated one by one (multifrontal.hpp).
  std::int64_t update_arena_bytes = 0;
  std::int64_t retained_update_bytes = 0;  ///< update blocks kept for refactorize (0 if not retained)
  Index recomputed_supernodes = 0;  ///< supernodes this call computed (all for factorize)
  double recomputed_flops = 0.0;    ///< their flops (Symbolic::supernode_flops)
  Index parallel_subtrees = 0;   ///< subtrees run tree-parallel (phase 1)
  Index top_supernodes = 0;      ///< supernodes of the top phase, their dense pieces on every thread (phase 2)
  Index left_looking_supernodes = 0;  ///< supernodes computed left-looking (left_looking_top.hpp)
  /// "cpu", or "gpu (<device name>)" when the GPU computed part of this call.
  std::string device = "cpu";
  /// Why a GPU factorization ran on the CPU instead (device memory exhausted, …); empty if not.
  std::string device_fallback;
  GpuRunStats gpu;               ///< the device part (zeros when none)
  double cpu_seconds = 0.0;      ///< wall time of the CPU part of a GPU factorization
};

struct SolveStats {
  double seconds = 0.0;
  int refinement_steps = 0;
  double residual = 0.0;  ///< ‖b − A·x‖∞ / ‖b‖∞ after refinement (when refinement ran)
};

/// The checks every factorization variant makes before computing: `a` has the analysed size
/// and pattern and has values, and (with check_finite) no NaN/Inf. Returns ok or the status.
FactorStatus check_matrix(const Symbolic& symbolic, const linalg::SymmetricCscMatrix& a,
                          bool check_finite);

/// The status of a tree-parallel factorization from `failing_column[s]` (1-based column
/// inside supernode s where potrf stopped, 0 if none): the first failure in elimination
/// order, reported in user numbering, or ok.
FactorStatus first_pivot_failure(const Symbolic& symbolic, std::span<const int> failing_column);

/// FactorDevice::automatic's choice: the GPU when one is usable, there is no Schur set and the
/// analysis predicts at least gpu_min_total_flops.
bool automatic_device_picks_gpu(const Symbolic& symbolic, const FactorOptions& options);

/// Whether a factorize with `options` may compute a left-looking top: not where the GPU computes
/// (FactorDevice::gpu, or automatic choosing it), with retained blocks, or for the
/// factorization with derivative (`with_derivative`).
bool left_looking_top_allowed(const Symbolic& symbolic, const FactorOptions& options, bool with_derivative = false);

/// The left-looking top a factorize with `options` uses (FactorOptions::left_looking_update_bytes):
/// empty where left_looking_top_allowed says no.
LeftLookingTop left_looking_top_for(const Symbolic& symbolic, const FactorOptions& options, bool with_derivative = false);

/// A factor (or its derivative) in supernodal layout as a CSC matrix in elimination numbering,
/// explicit zeros of amalgamation kept: supernode s's m×k block at symbolic.value_offset(s).
linalg::CscMatrix supernodal_matrix(const Symbolic& symbolic, std::span<const double> values);

class Factor {
 public:
  explicit Factor(std::shared_ptr<const Symbolic> symbolic);
  ~Factor();
  Factor(Factor&&) noexcept;
  Factor& operator=(Factor&&) noexcept;

  /// Numeric factorization of `a`, which must have the analysed pattern. Repeatable with new
  /// values. Returns the status (also kept in status()); never throws for bad values.
  const FactorStatus& factorize(const linalg::SymmetricCscMatrix& a, const FactorOptions& options = {});

  /// Incremental refactorization (seed 000 §4.3): `a` holds the new values (same pattern);
  /// only the supernodes holding the `changed` entries, their ancestors, and supernodes left
  /// uncomputed by an earlier failure are recomputed, from A's columns plus the children's
  /// update blocks (retained ones for unchanged children, fresh ones for recomputed
  /// children), in postorder and tree-parallel. The result equals factorize(a) to rounding.
  /// A rejected `a` (bad values) leaves the marked supernodes to the next call.
  /// Throws std::logic_error unless a factorize with retain_update_blocks came first;
  /// `options.retain_update_blocks` is ignored (the blocks stay retained).
  const FactorStatus& refactorize(const ChangedEntries& changed, const linalg::SymmetricCscMatrix& a,
                                  const FactorOptions& options = {});
  /// The supernodes refactorize(changed, ·) would recompute: the changed ones, their
  /// ancestors, the subtrees whose blocks are not kept below them, and stale ones.
  [[nodiscard]] std::vector<char> supernodes_to_recompute(const ChangedEntries& changed) const;
  /// True after a factorize with retain_update_blocks: refactorize() is possible.
  [[nodiscard]] bool retains_update_blocks() const { return retained_ != nullptr; }
  /// Measured seconds per supernode (seed 000 §4.4 "cost"), refined by every refactorize.
  [[nodiscard]] const SupernodeCostModel& cost_model() const { return cost_model_; }
  /// The costs to give the update schedulers: cost_model() with the subtrees that are
  /// recomputed alongside a supernode (their blocks are not retained) folded into it.
  [[nodiscard]] std::vector<double> scheduling_costs() const;

  [[nodiscard]] const FactorStatus& status() const { return status_; }
  [[nodiscard]] bool ok() const { return status_.ok(); }
  [[nodiscard]] const Symbolic& symbolic() const { return *symbolic_; }
  [[nodiscard]] const std::shared_ptr<const Symbolic>& symbolic_ptr() const { return symbolic_; }
  [[nodiscard]] const FactorStats& stats() const { return stats_; }

  /// Solves A·x = b in place (user numbering). Throws std::logic_error if not factored.
  void solve(std::span<double> b) const;
  /// Solves A·X = B in place for every column of B (n rows, any number of columns). Columns are
  /// solved together, up to four per pass over L, so 3 columns (x, y, z of seed 003) cost far
  /// less than 3 single solves. AVX2 kernels are used where the CPU has them; setting the
  /// environment variable CHOLSIM_SOLVE_BASELINE forces the SSE2 ones (supernodal_solve.cpp).
  void solve(linalg::DenseView b) const;
  /// Solves A·x = b with iterative refinement against `a` until the relative residual drops
  /// below `tolerance` or `max_steps` corrections were applied.
  SolveStats solve_refined(const linalg::SymmetricCscMatrix& a, std::span<double> b,
                           int max_steps = 2, double tolerance = 1e-15) const;

  /// The supernodal values: supernode s's m×k column-major block starts at
  /// symbolic().value_offset(s); rows are symbolic().rows(s) in elimination numbering.
  [[nodiscard]] std::span<const double> values() const { return values_; }
  /// L as a CSC matrix in elimination numbering (explicit zeros of amalgamation kept).
  [[nodiscard]] linalg::CscMatrix factor_matrix() const;

 private:
  // The derivative factorization (factor_derivative.hpp) computes L in place of values_ on
  // its own schedule, and an extrapolated factor writes L + Δt·L̇ there; both then solve
  // through this class.
  friend class FactorDerivative;
  friend class ExtrapolatedFactor;
  // A partial factorization (schur_complement.hpp) runs its three solve phases on values_.
  friend class SchurComplementFactor;

  void require_factored(const char* operation) const;
  // Checks `a` against the analysis (size, pattern, optionally finiteness) into status_.
  bool accept_matrix(const linalg::SymmetricCscMatrix& a, bool check_finite);
  // Runs on supernode s's task right after L's block of s was computed successfully: the
  // derivative factorization computes L̇'s block of s there, on L's tree schedule.
  using SupernodeFollowUp = std::function<void(Index)>;
  // The step every (re)factorization shares: computes the supernodes in `active` (all when
  // empty) into values_ with `updates`, running `follow_up` (if any) after each, times each
  // L step for the cost model, tracks stale_ and sets status_ from the first failing pivot
  // in elimination order. Returns the seconds of each computed L step (0 for the others).
  // Blocks of children not in `keep_block` are freed once consumed (all when it is empty).
  // Of `options`, the threads and the floating-point mode apply.
  // Supernodes of `top` are computed left-looking (left_looking_top.hpp); `updates` keeps
  // top.kept_columns() of the others' blocks.
  std::vector<double> compute_supernodes(const linalg::SymmetricCscMatrix& a, std::span<const char> active,
                                         const FactorOptions& options, UpdateBlockStore& updates,
                                         std::span<const char> keep_block, const SupernodeFollowUp& follow_up,
                                         const LeftLookingTop& top = {});
  // The device path (issue 22, factor/gpu/factor_on_gpu.cpp): computes the supernodes in
  // `active` (all when empty), those of gpu_'s split on the GPU after the CPU part, into
  // `seconds` (per supernode, as compute_supernodes). Returns false, having done nothing, when
  // the CPU alone should compute them: device cpu, or automatic declining. Otherwise returns
  // true with the call handled: done, a pivot failure, a device status in status_
  // (device_unavailable, device_out_of_memory, device_error), or — after a device failure
  // with gpu_fallback_to_cpu — recomputed on the CPU, stats_.device_fallback saying why.
  bool compute_with_gpu(const linalg::SymmetricCscMatrix& a, std::span<const char> active,
                        const FactorOptions& options, UpdateBlockStore& updates, std::vector<double>& seconds);
  // The device part of compute_with_gpu, once gpu_ is ready: false on a device failure
  // (gpu_->error() says which).
  bool run_hybrid(const linalg::SymmetricCscMatrix& a, std::span<const char> active, const FactorOptions& options,
                  UpdateBlockStore& updates, std::vector<double>& seconds, GpuRunOutcome& outcome);
  // After a device failure (`outcome`, `reason`): drops gpu_, then recomputes on the CPU what
  // the call had to compute plus the device part, or with !gpu_fallback_to_cpu sets status_.
  bool handle_device_failure(const linalg::SymmetricCscMatrix& a, std::span<const char> active,
                             const FactorOptions& options, UpdateBlockStore& updates, std::vector<double>& seconds,
                             GpuRunOutcome outcome, const std::string& reason);
  // factorize (and factorize_with_derivative) after the checks: sets up values_, stale_ and
  // the retained blocks for `options`, computes every supernode and starts the cost model.
  std::vector<double> compute_all_supernodes(const linalg::SymmetricCscMatrix& a, const FactorOptions& options,
                                             const SupernodeFollowUp& follow_up);
  // refactorize (and refactorize_with_derivative) before the checks: throws naming
  // `operation` unless blocks are retained, resets stats_ and returns the supernodes to
  // recompute, marked stale until recomputed so that a rejected matrix loses no change.
  std::vector<char> begin_refactorization(const ChangedEntries& changed, const char* operation);
  // refactorize after the checks: recomputes the `marked` supernodes (none when none is
  // marked) from the retained blocks and refines the cost model with their times.
  std::vector<double> recompute_marked(const linalg::SymmetricCscMatrix& a, std::span<const char> marked,
                                       const FactorOptions& options, const SupernodeFollowUp& follow_up);
  // The wall time since `start` and the rate into stats_.
  void finish_timing(std::chrono::steady_clock::time_point start);
  // The substitutions on right-hand sides in elimination numbering, interleaved: row i's
  // `count` values at rhs[i·count, i·count + count) (supernodal_solve.cpp says why). `work`
  // holds largest_front · count values.
  // `on_threads`: the pass may split the tree over the factorization's threads (solve_split_);
  // false where the caller already runs passes side by side.
  void forward_substitution(double* rhs, Index count, std::span<double> work, bool on_threads = false) const;
  void backward_substitution(double* rhs, Index count, std::span<double> work, bool on_threads = false) const;
  // The same on column-major matrices, for the Schur solve phases, the permutation applied on
  // the way in or out (one pass over the values, not two): forward from B (user numbering)
  // into Y (elimination numbering), backward from Y into X (user numbering; Y is overwritten,
  // X may not alias it). `threads`: 0 the last factorization's, else that many. With more than
  // one and many columns, groups of columns go to threads of their own (each rereads L: worth
  // it once a group has enough columns for BLAS-3); with a single group its pass is split over
  // the tree (solve_split_) (supernodal_solve.cpp).
  void forward_substitution(linalg::ConstDenseView b, linalg::DenseView y, int threads = 0) const;
  void backward_substitution(linalg::DenseView y, linalg::DenseView x, int threads = 0) const;
  // The backward one when Y is zero outside the Schur rows, given as X₂ (S's numbering).
  void backward_substitution_from_schur(linalg::ConstDenseView x2, linalg::DenseView x, int threads = 0) const;
  // The threads a substitution asked for `threads` runs with (0: the last factorization's).
  [[nodiscard]] int substitution_threads(int threads) const { return threads > 0 ? threads : solve_split_threads_; }

  std::shared_ptr<const Symbolic> symbolic_;
  /// L's values; huge-page backed and not zero-filled (linalg/huge_page_allocator.hpp).
  std::vector<double, linalg::HugePageAllocator<double>> values_;
  FactorStatus status_;
  FactorStats stats_;
  /// The tree cut for substitutions on the threads of the last (re)factorization (serial until
  /// one ran, and for small factors).
  SolveSplit solve_split_;
  int solve_split_threads_ = 0;  ///< the thread count solve_split_ was made for
  std::unique_ptr<UpdateBlockStore> retained_;  ///< null unless retain_update_blocks
  std::vector<char> keeps_block_;  ///< keeps_block_[s]: retained_ keeps s's block
  SupernodeCostModel cost_model_;
  std::vector<char> stale_;  ///< stale_[s]: s was not computed by the last (re)factorization
  /// failing_column_[s]: 1-based pivot column where s failed in the last call, 0 if none.
  std::vector<int> failing_column_;
  /// The device part (issue 22): set by a GPU factorize, kept for its refactorizations.
  std::unique_ptr<GpuFactorization> gpu_;
  double gpu_min_supernode_flops_ = 0.0;  ///< the split gpu_ was made for
  std::int64_t gpu_memory_limit_ = 0;     ///< the memory limit gpu_ was made with
};

}  // namespace cholsim::factor
