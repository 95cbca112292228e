#pragma once
// The per-element work of one operator-splitting step (seed 003 Algorithm 2, lines 4–8) as one
// pass over the elements. For a block of elements (one vector each) it forms F(x̃) = Dₛ·Dₘ⁻¹ straight
// from the predicted positions (eq. 4–5), takes the rotations by the APD warm-started from the
// previous step (§3.3, linalg::analytic_polar_decomposition_blocks), and, while F and R are still
// in registers, adds the block's DₜᵀKₜ·(vec R − vec F) = 2μVΔt²·(R − F)·gₖ at each local node k
// to the right-hand side of eq. 12 (gₖ: the shape-function gradients, rows of Dₘ⁻¹ and minus
// their sum) — instead of three passes that store F, the rotations and the element forces.
//
// The per-element constants (Dₘ⁻¹, 2μVΔt², node indices and their right-hand-side rows) are
// structure-of-arrays, padded to whole blocks. The arithmetic is in `Real`: double (8 lanes a
// block), or float (16 lanes, twice the elements per vector instruction, as seed 003's own code
// computes), where the edges x_k − x₀ are formed in double before rounding, so single
// precision costs relative accuracy of the element's shape, not of its position. With one thread each block's forces are added to
// the right-hand side right away. With more, the threads run the blocks and keep their forces,
// then split the rows and add each row's forces in element order: the same additions in the
// same order, so the result does not depend on `threads`.
#include <array>
#include <memory>
#include <span>
#include <vector>

#include "factor/solve/supernodal_solve_tiled.hpp"
#include "fem/elements/elastic_body.hpp"
#include "linalg/polar_decomposition_batch.hpp"

namespace cholsim::fem {

/// Values per right-hand-side row (x, y, z and a 0): the layout factor::TiledSolveFactor::
/// solve_lanes solves in place, so that the step copies nothing into or out of the solve.
inline constexpr std::size_t kRightHandSideStride = factor::TiledSolveFactor::kLaneWidth;

/// 2μV_tΔt² of element t (Algorithm 1 line 5: K's diagonal), for time step Δt.
inline double stretch_weight(const ElasticBody& body, Index element, double time_step) {
  const auto e = static_cast<std::size_t>(element);
  return 2.0 * body.lame[e].mu * body.rest_volumes[e] * time_step * time_step;
}

struct OpsplitElementPassOptions {
  /// False keeps every rotation as it is (no APD): the frozen-r linear model of eq. 11.
  bool update_rotations = true;
  linalg::ApdOptions apd;  ///< tolerance and iteration bound of the APD
  /// Warm-start each element's APD at q_n ∘ (q_{n−1}⁻¹ ∘ q_n) — its last step's rotation
  /// applied once more — instead of at q_n (see OperatorSplittingOptions::rotation_warm_start).
  bool extrapolate_rotations = false;
  int threads = 1;         ///< as linalg::resolve_thread_count reads it
};

template <typename Real>
class OpsplitElementPassOf {
 public:
  /// Elements per block: one 64-byte vector of Real.
  static constexpr Index kLanes = linalg::ApdBlockOf<Real>::kLanes;

  OpsplitElementPassOf() = default;
  /// Element data of `body` for time step Δt > 0, with right-hand-side row system_row[v] for node
  /// v (−1: a fixed node, whose contributions are dropped, eq. 12). Rotations start at the
  /// identity. Throws std::invalid_argument when system_row does not have one entry per node or
  /// names a row outside [−1, rows). A copy shares the element data and has its own rotations.
  OpsplitElementPassOf(const ElasticBody& body, std::span<const Index> system_row, Index rows, double time_step);

  /// Overwrites `right_hand_side` (kRightHandSideStride·rows, row by row: row r's x, y, z at
  /// [4r, 4r + 3) and 0 at 4r + 3) with DᵀK·(r − D·x̃) summed over all elements, x̃ = `predicted`
  /// (3·nodes), updating every element's rotation to the APD of F(x̃) first when
  /// options.update_rotations. Throws std::invalid_argument on size mismatches.
  linalg::ApdBatchStats run(std::span<const double> predicted, std::span<double> right_hand_side,
                            const OpsplitElementPassOptions& options);

  /// Element e's current rotation (unit quaternion); std::out_of_range for a bad index.
  [[nodiscard]] linalg::Quaternion rotation(Index element) const;
  [[nodiscard]] Index element_count() const { return elements_->element_count; }

 private:
  /// F, APD and forces for blocks [first_block, last_block) of kLanes slots, each block's forces handed to
  /// sink(first slot, real lanes, forces).
  template <typename Sink>
  linalg::ApdBatchStats run_blocks(Index first_block, Index last_block, std::span<const double> predicted,
                                   const OpsplitElementPassOptions& options, Sink&& sink);

  /// One thread: each block's forces added to the right-hand side at once.
  linalg::ApdBatchStats run_serial(std::span<const double> predicted, std::span<double> right_hand_side,
                                   const OpsplitElementPassOptions& options);
  /// More: blocks in parallel into element_forces_, then scatter_rows in parallel.
  linalg::ApdBatchStats run_threaded(std::span<const double> predicted, std::span<double> right_hand_side,
                                     const OpsplitElementPassOptions& options, int threads);

  /// Threaded path: adds element_forces_ on rows [row_begin, row_end) in element order.
  void scatter_rows(Index row_begin, Index row_end, std::span<double> right_hand_side) const;

  /// What stays the same from step to step, shared by copies of the pass (copies of one body:
  /// OperatorSplittingSimulation's copies share it). Per slot = element, padded to whole blocks.
  struct Elements {
    Index node_count = 0;
    Index rows = 0;
    Index element_count = 0;
    std::array<std::vector<Index>, 4> nodes;          ///< element nodes
    std::array<std::vector<Index>, 4> rows_of_nodes;  ///< their right-hand-side rows, −1 when fixed
    std::array<std::vector<Real>, 9> rest_inverse;  ///< Dₘ⁻¹ row-major
    std::vector<Real> stretch_weight;               ///< 2μVΔt² (Algorithm 1 line 5)
    std::vector<Index> first_element_of_row;  ///< the first and last element with a node on row r
    std::vector<Index> last_element_of_row;   ///< (element_count and −1 for none)
  };
  std::shared_ptr<const Elements> elements_ = std::make_shared<const Elements>();
  std::array<std::vector<Real>, 4> rotation_;  ///< quaternion w, x, y, z
  /// The rotations before the last update, for extrapolated warm starts; empty until the first
  /// run that extrapolates, which starts them at the current rotations (no increment known).
  std::array<std::vector<Real>, 4> previous_rotation_;
  std::vector<double> element_forces_;  ///< threaded path: [12·slot + 3k + c], force on local node k, coordinate c
};

using OpsplitElementPass = OpsplitElementPassOf<double>;
extern template class OpsplitElementPassOf<double>;
extern template class OpsplitElementPassOf<float>;

}  // namespace cholsim::fem
