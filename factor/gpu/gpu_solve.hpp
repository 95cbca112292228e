#pragma once
// A factor's L copied once to the GPU for many solves with the same factor (issue 22): seed
// 003's operator splitting factors M + DᵀKD once and solves it with the x, y and z right-hand
// sides every time step — the GPU counterpart of TiledSolveFactor.
//
// Both substitutions are one kernel launch each (solve_kernels.hpp): a thread block per solve
// unit (a supernode, or a run of at most kSolveUnitColumns of its columns), taken in postorder
// for the forward and in reverse for the backward substitution, each waiting only for the units
// it depends on instead of for a whole tree level. A solve is then: the right-hand sides to the
// device, two launches, the solution back, all on one stream.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "factor/gpu/gpu_factorization.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::factor {

/// What the last solve did.
struct GpuSolveStats {
  double seconds = 0.0;         ///< the whole call, host side (permutation and transfers included)
  /// On the device (CUDA events): the reset of the work buffers and both substitutions, which
  /// read B from and write X to the page-locked host buffer themselves (no separate copies).
  double device_seconds = 0.0;
  std::int64_t bytes_to_device = 0;    ///< B's solved lanes read across the bus
  std::int64_t bytes_from_device = 0;  ///< X's solved lanes written back
};

/// One solve unit's part in a substitution, when recording is on (GpuSolveFactor::
/// record_unit_timings): device-clock seconds from the substitution's first claim.
struct GpuSolveUnitTiming {
  Index columns = 0;
  Index rows = 0;
  Index parent_unit = -1;  ///< the unit it signals forward (and waits for backward), or −1
  double claimed = 0.0;    ///< its thread block took it
  double ready = 0.0;      ///< what it depends on was done
  double done = 0.0;       ///< it signalled
};

class GpuSolveFactor {
 public:
  /// Values per row of solve_lanes' right-hand sides, as TiledSolveFactor::kLaneWidth.
  static constexpr std::size_t kLaneWidth = 4;

  /// Copies L of `factor` to the GPU. Throws std::logic_error unless `factor` holds a successful
  /// full factorization (not a partial/Schur one), GpuError when no GPU is usable or L does not
  /// fit in `memory_limit_bytes` (0: the device's free memory). Later changes to `factor`
  /// (refactorize) are not seen: build a new GpuSolveFactor.
  explicit GpuSolveFactor(const Factor& factor, std::int64_t memory_limit_bytes = 0);
  ~GpuSolveFactor();
  GpuSolveFactor(const GpuSolveFactor&) = delete;
  GpuSolveFactor& operator=(const GpuSolveFactor&) = delete;

  /// Solves A·X = B in place for every column of B (user numbering, n rows, any number of
  /// columns, four per pass), like Factor::solve(DenseView). Throws std::invalid_argument when
  /// B has the wrong number of rows, GpuError when a CUDA call fails.
  void solve(linalg::DenseView b);
  /// TiledSolveFactor::solve_lanes' contract: up to four right-hand sides already permuted, row
  /// k of the permuted system at lanes[4k, 4k + 4), and one work row after the last
  /// (lanes.size() == 4·(n + 1)) whose contents are left alone here. Only the first `columns`
  /// lanes are solved (the others are left as they are; fewer columns, less work). Throws
  /// std::invalid_argument for another size or a column count outside 1…4, GpuError when a
  /// CUDA call fails.
  void solve_lanes(std::span<double> lanes, int columns = 4);
  /// A lanes buffer in page-locked, device-mapped host memory owned by this object (zeros at
  /// first): solving it with solve_lanes, the kernels read B from it and write X into it
  /// directly; any other buffer is copied through it on the host. A right-hand side solved
  /// every time step is best written here.
  [[nodiscard]] std::span<double> pinned_lanes();

  /// permutation()[k] = the user row of row k of the permuted system.
  [[nodiscard]] std::span<const Index> permutation() const;
  [[nodiscard]] Index size() const;
  /// Solve units (supernodes, the widest cut into runs of kSolveUnitColumns).
  [[nodiscard]] Index unit_count() const;
  /// Device memory held: L, its row lists, the units, the right-hand sides.
  [[nodiscard]] std::int64_t device_bytes() const;
  [[nodiscard]] const std::string& device_name() const;
  [[nodiscard]] const GpuSolveStats& last_solve() const;

  /// Records, from the next solve on, when every unit was claimed, ready and done in both
  /// substitutions (a device clock read and store per unit and event; off by default): where
  /// the time goes along the tree's critical path. Throws GpuError when a CUDA call fails.
  void record_unit_timings(bool on);
  /// The last solve's timings (of its last pass of four columns), per unit; empty when off.
  [[nodiscard]] const std::vector<GpuSolveUnitTiming>& forward_timings() const;
  [[nodiscard]] const std::vector<GpuSolveUnitTiming>& backward_timings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cholsim::factor
