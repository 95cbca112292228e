#include "fem/opsplit/opsplit_element_pass.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <string>

#include "linalg/parallel_loops.hpp"
#include "linalg/unaligned_vector.hpp"

namespace cholsim::fem {
namespace {

using linalg::ApdBatchStats;
using linalg::ApdBlockOf;
using linalg::Quaternion;

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

// As in linalg/polar_decomposition_batch.cpp: AVX-512 and AVX2 clones picked at load time,
// since the library is built without -march=native. The kernels are templates on the
// arithmetic, inlined into one clone set per precision (target_clones does not apply to
// templates).
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define CHOLSIM_OPSPLIT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CHOLSIM_OPSPLIT_CLONES
#endif

/// One row of the right-hand side (kRightHandSideStride doubles) as a GCC vector, which may
/// alias the doubles it is read from and need not be aligned.
CHOLSIM_UNALIGNED_VECTOR(RightHandSideRow, double, 4, may_alias);
static_assert(kRightHandSideStride == 4);

/// Read-only per-slot arrays, as raw pointers so the kernels below see plain loads.
template <typename Real>
struct SlotData {
  std::array<const Index*, 4> nodes;
  std::array<const Real*, 9> rest_inverse;
  const Real* stretch_weight;
  std::array<const Real*, 4> rotation;
  std::array<const Real*, 4> previous_rotation;  ///< null unless warm starts are extrapolated
};

/// DₜᵀKₜ·(vec R − vec F) of a block at local node k, coordinate c, lane l.
template <typename Real>
struct BlockForces {
  alignas(64) Real node[4][3][ApdBlockOf<Real>::kLanes];
};

/// The edges of a block's elements at the predicted positions, e[k][r][l] = x_{k+1} − x₀ of
/// lane l, coordinate r (the columns of Dₛ, eq. 4).
template <typename Real>
struct BlockEdges {
  alignas(64) Real e[3][3][ApdBlockOf<Real>::kLanes];
};

/// Forms the block's edges with plain loads, in double (rounded to Real after the
/// subtraction): GCC makes a slow mix of partial vector loads and lane extracts of the indexed
/// loads when it meets them inside the vectorized loop of load_block.
template <typename Real>
[[gnu::always_inline]] inline void gather_edges_of(const SlotData<Real>& d, std::size_t first, const double* predicted,
                                                   BlockEdges<Real>& out) {
  for (int l = 0; l < ApdBlockOf<Real>::kLanes; ++l) {
    const std::size_t s = first + static_cast<std::size_t>(l);
    const double* x0 = predicted + 3 * at(d.nodes[0][s]);
    for (std::size_t k = 0; k < 3; ++k) {
      const double* x = predicted + 3 * at(d.nodes[k + 1][s]);
      for (int r = 0; r < 3; ++r) out.e[k][r][l] = static_cast<Real>(x[r] - x0[r]);
    }
  }
}

/// Adds lanes [0, lanes) of a block's forces to the right-hand-side rows of their nodes, in
/// lane order (the lanes of a block may share nodes). Fixed nodes (row −1) are skipped: Δx = 0
/// (eq. 12).
template <typename Real>
[[gnu::always_inline]] inline void scatter_forces_of(const std::array<const Index*, 4>& rows_of_nodes, std::size_t first,
                                                     int lanes, const BlockForces<Real>& forces, double* right_hand_side) {
  for (int l = 0; l < lanes; ++l) {
    for (std::size_t k = 0; k < 4; ++k) {
      const Index row = rows_of_nodes[k][first + static_cast<std::size_t>(l)];
      if (row < 0) continue;
      // A row is (x, y, z, 0): one four-wide add instead of three scalar read-modify-writes.
      auto* target = reinterpret_cast<RightHandSideRow*>(right_hand_side + kRightHandSideStride * at(row));
      *target += RightHandSideRow{forces.node[k][0][l], forces.node[k][1][l], forces.node[k][2][l], 0.0};
    }
  }
}

/// F(x̃) = Dₛ·Dₘ⁻¹ (eq. 4–5) and the current rotations of slots [first, first + lanes).
template <typename Real>
[[gnu::always_inline]] inline void load_block_of(const SlotData<Real>& d, std::size_t first,
                                                 const BlockEdges<Real>& __restrict p, ApdBlockOf<Real>& __restrict block) {
  for (int l = 0; l < ApdBlockOf<Real>::kLanes; ++l) {
    const std::size_t s = first + static_cast<std::size_t>(l);
    for (int r = 0; r < 3; ++r) {
      const Real e1 = p.e[0][r][l], e2 = p.e[1][r][l], e3 = p.e[2][r][l];  // row r of Dₛ
      for (int c = 0; c < 3; ++c) {
        block.f[3 * r + c][l] = e1 * d.rest_inverse[at(c)][s] + e2 * d.rest_inverse[at(3 + c)][s] +
                                e3 * d.rest_inverse[at(6 + c)][s];
      }
    }
    for (int k = 0; k < 4; ++k) block.q[k][l] = d.rotation[at(k)][s];
  }
}

/// Replaces the block's warm starts q_n by q_n ∘ (q_{n−1}⁻¹ ∘ q_n): the rotation of the last step,
/// taken again. Seed 003 §3.3 warm-starts from q_n, so a body turning at a steady rate starts
/// every element one step's rotation (≈ 0.01–0.05 rad in the armadillo scenes) from its answer,
/// and the APD needs a second Newton step to see the first one was enough; from the
/// extrapolation it starts within the rate's change, below the 1e-3 rad tolerance for 96 % of
/// those elements, and most blocks stop after one step. Same stopping rule, same accuracy.
template <typename Real>
[[gnu::always_inline]] inline void extrapolate_warm_starts_of(const SlotData<Real>& d, std::size_t first,
                                                              ApdBlockOf<Real>& __restrict block) {
  for (int l = 0; l < ApdBlockOf<Real>::kLanes; ++l) {
    const std::size_t s = first + static_cast<std::size_t>(l);
    const Real w = block.q[0][l], x = block.q[1][l], y = block.q[2][l], z = block.q[3][l];
    const Real pw = d.previous_rotation[0][s], px = d.previous_rotation[1][s];
    const Real py = d.previous_rotation[2][s], pz = d.previous_rotation[3][s];
    // The increment q_{n−1}⁻¹ ∘ q_n (unit quaternions: the inverse is the conjugate) ...
    const Real iw = pw * w + px * x + py * y + pz * z;
    const Real ix = pw * x - px * w - py * z + pz * y;
    const Real iy = pw * y + px * z - py * w - pz * x;
    const Real iz = pw * z - px * y + py * x - pz * w;
    // ... applied to q_n. The APD renormalizes its warm starts.
    block.q[0][l] = w * iw - x * ix - y * iy - z * iz;
    block.q[1][l] = w * ix + x * iw + y * iz - z * iy;
    block.q[2][l] = w * iy - x * iz + y * iw + z * ix;
    block.q[3][l] = w * iz + x * iy - y * ix + z * iw;
  }
}

/// Writes the block's rotations to slots [first, first + lanes) of `rotation` — whole blocks:
/// padding slots get the identity they hold.
template <typename Real>
[[gnu::always_inline]] inline void store_rotations_of(const std::array<Real*, 4>& rotation, std::size_t first,
                                                      const ApdBlockOf<Real>& __restrict block) {
  for (std::size_t k = 0; k < 4; ++k) {
    Real* __restrict out = rotation[k] + first;
    for (int l = 0; l < ApdBlockOf<Real>::kLanes; ++l) out[l] = block.q[k][l];
  }
}

/// Algorithm 2 lines 7–8 for a block: P = 2μVΔt²·(R − F), then P·gₖ at local nodes 1..3
/// (gₖ = row k−1 of Dₘ⁻¹) and minus their sum at node 0.
template <typename Real>
[[gnu::always_inline]] inline void block_forces_of(const SlotData<Real>& d, std::size_t first,
                                                   const ApdBlockOf<Real>& __restrict block,
                                                   BlockForces<Real>& __restrict out) {
  for (int l = 0; l < ApdBlockOf<Real>::kLanes; ++l) {
    const std::size_t s = first + static_cast<std::size_t>(l);
    const Real w = block.q[0][l], x = block.q[1][l], y = block.q[2][l], z = block.q[3][l];
    // linalg::to_rotation_matrix, spelt out for the vectorizer.
    const Real xx = x * x, yy = y * y, zz = z * z, xy = x * y, xz = x * z, yz = y * z;
    const Real wx = w * x, wy = w * y, wz = w * z;
    constexpr Real one = 1, two = 2;
    const Real r[9] = {one - two * (yy + zz), two * (xy - wz),       two * (xz + wy),
                       two * (xy + wz),       one - two * (xx + zz), two * (yz - wx),
                       two * (xz - wy),       two * (yz + wx),       one - two * (xx + yy)};
    const Real weight = d.stretch_weight[s];
    for (int row = 0; row < 3; ++row) {
      Real p[3];
      for (int c = 0; c < 3; ++c) p[c] = weight * (r[3 * row + c] - block.f[3 * row + c][l]);
      Real sum = 0;
      for (int k = 0; k < 3; ++k) {
        const Real force = p[0] * d.rest_inverse[at(3 * k)][s] + p[1] * d.rest_inverse[at(3 * k + 1)][s] +
                           p[2] * d.rest_inverse[at(3 * k + 2)][s];
        out.node[k + 1][row][l] = force;
        sum += force;
      }
      out.node[0][row][l] = -sum;
    }
  }
}

// The gathers and scatters are scalar loads and stores, but their subtractions, conversions and
// four-wide row additions are shorter in AVX.
CHOLSIM_OPSPLIT_CLONES void gather_edges(const SlotData<double>& d, std::size_t first, const double* predicted,
                                         BlockEdges<double>& out) {
  gather_edges_of(d, first, predicted, out);
}
CHOLSIM_OPSPLIT_CLONES void gather_edges(const SlotData<float>& d, std::size_t first, const double* predicted,
                                         BlockEdges<float>& out) {
  gather_edges_of(d, first, predicted, out);
}
CHOLSIM_OPSPLIT_CLONES void scatter_forces(const std::array<const Index*, 4>& rows_of_nodes, std::size_t first, int lanes,
                                           const BlockForces<double>& forces, double* right_hand_side) {
  scatter_forces_of(rows_of_nodes, first, lanes, forces, right_hand_side);
}
CHOLSIM_OPSPLIT_CLONES void scatter_forces(const std::array<const Index*, 4>& rows_of_nodes, std::size_t first, int lanes,
                                           const BlockForces<float>& forces, double* right_hand_side) {
  scatter_forces_of(rows_of_nodes, first, lanes, forces, right_hand_side);
}
CHOLSIM_OPSPLIT_CLONES void load_block(const SlotData<double>& d, std::size_t first, const BlockEdges<double>& __restrict p,
                                       ApdBlockOf<double>& __restrict block) {
  load_block_of(d, first, p, block);
}
CHOLSIM_OPSPLIT_CLONES void load_block(const SlotData<float>& d, std::size_t first, const BlockEdges<float>& __restrict p,
                                       ApdBlockOf<float>& __restrict block) {
  load_block_of(d, first, p, block);
}
CHOLSIM_OPSPLIT_CLONES void extrapolate_warm_starts(const SlotData<double>& d, std::size_t first,
                                                    ApdBlockOf<double>& __restrict block) {
  extrapolate_warm_starts_of(d, first, block);
}
CHOLSIM_OPSPLIT_CLONES void extrapolate_warm_starts(const SlotData<float>& d, std::size_t first,
                                                    ApdBlockOf<float>& __restrict block) {
  extrapolate_warm_starts_of(d, first, block);
}
CHOLSIM_OPSPLIT_CLONES void store_rotations(const std::array<double*, 4>& rotation, std::size_t first,
                                            const ApdBlockOf<double>& __restrict block) {
  store_rotations_of(rotation, first, block);
}
CHOLSIM_OPSPLIT_CLONES void store_rotations(const std::array<float*, 4>& rotation, std::size_t first,
                                            const ApdBlockOf<float>& __restrict block) {
  store_rotations_of(rotation, first, block);
}
CHOLSIM_OPSPLIT_CLONES void block_forces(const SlotData<double>& d, std::size_t first,
                                         const ApdBlockOf<double>& __restrict block, BlockForces<double>& __restrict out) {
  block_forces_of(d, first, block, out);
}
CHOLSIM_OPSPLIT_CLONES void block_forces(const SlotData<float>& d, std::size_t first,
                                         const ApdBlockOf<float>& __restrict block, BlockForces<float>& __restrict out) {
  block_forces_of(d, first, block, out);
}

}  // namespace

template <typename Real>
OpsplitElementPassOf<Real>::OpsplitElementPassOf(const ElasticBody& body, std::span<const Index> system_row, Index rows,
                                                 double time_step) {
  const Index node_count = body.node_count();
  if (!(time_step > 0.0) || !std::isfinite(time_step)) {
    throw std::invalid_argument("OpsplitElementPass: time step must be positive and finite, got " +
                                std::to_string(time_step));
  }
  if (static_cast<Index>(system_row.size()) != node_count) {
    throw std::invalid_argument("OpsplitElementPass: " + std::to_string(system_row.size()) + " system rows for " +
                                std::to_string(node_count) + " nodes");
  }
  for (std::size_t v = 0; v < system_row.size(); ++v) {
    if (system_row[v] < -1 || system_row[v] >= rows) {
      throw std::invalid_argument("OpsplitElementPass: node " + std::to_string(v) + " has system row " +
                                  std::to_string(system_row[v]) + " outside -1.." + std::to_string(rows - 1));
    }
  }
  auto c = std::make_shared<Elements>();
  c->node_count = node_count;
  c->rows = rows;
  c->element_count = body.element_count();
  const Index element_count = c->element_count;
  // Padded to whole blocks; padding slots hold node 0 (row −1), zero Dₘ⁻¹ and weight, and the
  // identity, and are never scattered.
  const std::size_t slots = at((element_count + kLanes - 1) / kLanes * kLanes);
  for (auto& a : c->nodes) a.assign(slots, 0);
  for (auto& a : c->rows_of_nodes) a.assign(slots, -1);
  for (auto& a : c->rest_inverse) a.assign(slots, Real(0));
  c->stretch_weight.assign(slots, Real(0));
  rotation_[0].assign(slots, Real(1));
  for (std::size_t k = 1; k < 4; ++k) rotation_[k].assign(slots, Real(0));
  for (Index e = 0; e < element_count; ++e) {
    const auto element_nodes = body.element_nodes(e);
    for (std::size_t k = 0; k < 4; ++k) {
      c->nodes[k][at(e)] = element_nodes[k];
      c->rows_of_nodes[k][at(e)] = system_row[at(element_nodes[k])];
    }
    for (std::size_t k = 0; k < 9; ++k) c->rest_inverse[k][at(e)] = static_cast<Real>(body.rest_shape_inverse[at(e)].entries[k]);
    c->stretch_weight[at(e)] = static_cast<Real>(stretch_weight(body, e, time_step));
  }
  c->first_element_of_row.assign(at(rows), element_count);
  c->last_element_of_row.assign(at(rows), -1);
  for (Index e = 0; e < element_count; ++e) {
    for (std::size_t k = 0; k < 4; ++k) {
      const Index row = c->rows_of_nodes[k][at(e)];
      if (row < 0) continue;
      c->first_element_of_row[at(row)] = std::min(c->first_element_of_row[at(row)], e);
      c->last_element_of_row[at(row)] = e;
    }
  }
  elements_ = std::move(c);
}

template <typename Real>
void OpsplitElementPassOf<Real>::scatter_rows(Index row_begin, Index row_end, std::span<double> right_hand_side) const {
  const Elements& c = *elements_;
  Index first = c.element_count, last = -1;
  for (Index row = row_begin; row < row_end; ++row) {
    first = std::min(first, c.first_element_of_row[at(row)]);
    last = std::max(last, c.last_element_of_row[at(row)]);
  }
  for (Index e = first; e <= last; ++e) {
    for (std::size_t k = 0; k < 4; ++k) {
      const Index row = c.rows_of_nodes[k][at(e)];
      if (row < row_begin || row >= row_end) continue;  // another thread's row, or fixed (−1)
      const double* force = element_forces_.data() + 12 * at(e) + 3 * k;
      double* target = right_hand_side.data() + kRightHandSideStride * at(row);
      for (std::size_t r = 0; r < 3; ++r) target[r] += force[r];
    }
  }
}

template <typename Real>
template <typename Sink>
linalg::ApdBatchStats OpsplitElementPassOf<Real>::run_blocks(Index first_block, Index last_block,
                                                             std::span<const double> predicted,
                                                             const OpsplitElementPassOptions& options, Sink&& sink) {
  const Elements& elements = *elements_;
  SlotData<Real> d;
  for (std::size_t k = 0; k < 4; ++k) d.nodes[k] = elements.nodes[k].data();
  for (std::size_t k = 0; k < 9; ++k) d.rest_inverse[k] = elements.rest_inverse[k].data();
  d.stretch_weight = elements.stretch_weight.data();
  for (std::size_t k = 0; k < 4; ++k) d.rotation[k] = rotation_[k].data();
  const bool extrapolate = options.update_rotations && options.extrapolate_rotations;
  for (std::size_t k = 0; k < 4; ++k) d.previous_rotation[k] = extrapolate ? previous_rotation_[k].data() : nullptr;
  // Extrapolating, the new rotations overwrite q_{n−1} (read by now) and run() swaps the two
  // arrays afterwards: q_n becomes the previous rotation without a copy.
  std::array<Real*, 4> updated;
  for (std::size_t k = 0; k < 4; ++k) updated[k] = extrapolate ? previous_rotation_[k].data() : rotation_[k].data();
  ApdBatchStats stats;
  std::array<BlockEdges<Real>, linalg::kApdInterleavedBlocks> edges;
  std::array<ApdBlockOf<Real>, linalg::kApdInterleavedBlocks> blocks;
  std::array<int, linalg::kApdInterleavedBlocks> lanes{};
  BlockForces<Real> forces;
  for (Index group = first_block; group < last_block; group += linalg::kApdInterleavedBlocks) {
    const auto count = static_cast<std::size_t>(std::min(linalg::kApdInterleavedBlocks, last_block - group));
    // All gathers first: the vector loads of load_block then find the gathers' scalar stores
    // already written to the cache instead of waiting for them.
    for (std::size_t b = 0; b < count; ++b) {
      const Index first = (group + static_cast<Index>(b)) * kLanes;
      lanes[b] = static_cast<int>(std::min<Index>(kLanes, elements.element_count - first));
      gather_edges(d, at(first), predicted.data(), edges[b]);
    }
    for (std::size_t b = 0; b < count; ++b) {
      load_block(d, at((group + static_cast<Index>(b)) * kLanes), edges[b], blocks[b]);
      if (extrapolate) extrapolate_warm_starts(d, at((group + static_cast<Index>(b)) * kLanes), blocks[b]);
    }
    if (options.update_rotations) {
      const ApdBatchStats apd = linalg::analytic_polar_decomposition_blocks(
          std::span(blocks).first(count), std::span<const int>(lanes).first(count), options.apd);
      stats.vector_iterations += apd.vector_iterations;
      stats.scalar_fallbacks += apd.scalar_fallbacks;
      stats.unconverged += apd.unconverged;
    }
    for (std::size_t b = 0; b < count; ++b) {
      const Index first = (group + static_cast<Index>(b)) * kLanes;
      if (options.update_rotations) store_rotations(updated, at(first), blocks[b]);
      block_forces(d, at(first), blocks[b], forces);
      sink(first, lanes[b], forces);
    }
  }
  return stats;
}

template <typename Real>
linalg::ApdBatchStats OpsplitElementPassOf<Real>::run(std::span<const double> predicted, std::span<double> right_hand_side,
                                                      const OpsplitElementPassOptions& options) {
  const Elements& elements = *elements_;
  if (predicted.size() != 3 * at(elements.node_count) ||
      right_hand_side.size() != kRightHandSideStride * at(elements.rows)) {
    throw std::invalid_argument("OpsplitElementPass::run: expected " + std::to_string(3 * elements.node_count) +
                                " positions and " + std::to_string(kRightHandSideStride * at(elements.rows)) +
                                " right-hand-side values, got " +
                                std::to_string(predicted.size()) + " and " + std::to_string(right_hand_side.size()));
  }
  const Index slots = static_cast<Index>(elements.stretch_weight.size());
  const int threads = slots < linalg::kMinParallelIterations ? 1 : linalg::resolve_thread_count(options.threads);
  const bool extrapolate = options.update_rotations && options.extrapolate_rotations;
  if (extrapolate && previous_rotation_[0].empty()) previous_rotation_ = rotation_;  // no increment known yet
  std::fill(right_hand_side.begin(), right_hand_side.end(), 0.0);
  const ApdBatchStats stats = threads == 1 ? run_serial(predicted, right_hand_side, options)
                                           : run_threaded(predicted, right_hand_side, options, threads);
  if (extrapolate) std::swap(rotation_, previous_rotation_);  // run_blocks wrote the new rotations over q_{n−1}
  return stats;
}

template <typename Real>
ApdBatchStats OpsplitElementPassOf<Real>::run_serial(std::span<const double> predicted, std::span<double> right_hand_side,
                                                     const OpsplitElementPassOptions& options) {
  // Fused: each block's forces go to the right-hand side while still in cache, in element order.
  const Elements& elements = *elements_;
  const std::array<const Index*, 4> rows_of_nodes = {elements.rows_of_nodes[0].data(), elements.rows_of_nodes[1].data(),
                                                     elements.rows_of_nodes[2].data(), elements.rows_of_nodes[3].data()};
  const Index blocks = static_cast<Index>(elements.stretch_weight.size()) / kLanes;
  return run_blocks(0, blocks, predicted, options, [&](Index first, int lanes, const BlockForces<Real>& forces) {
    scatter_forces(rows_of_nodes, at(first), lanes, forces, right_hand_side.data());
  });
}

template <typename Real>
ApdBatchStats OpsplitElementPassOf<Real>::run_threaded(std::span<const double> predicted,
                                                       std::span<double> right_hand_side,
                                                       const OpsplitElementPassOptions& options, int threads) {
  // The blocks in parallel, keeping their forces; then the scatter, split by rows: each thread
  // adds, in element order, the forces on its rows only — the same additions in the same order
  // per row as the serial scatter, so the result does not depend on the thread count. (Summing
  // per row from a row → element list instead reads the 96 bytes of forces per element at
  // random and was slower on 55K tets.)
  const Elements& elements = *elements_;
  const Index slots = static_cast<Index>(elements.stretch_weight.size());
  element_forces_.resize(12 * at(slots));  // allocates on the first threaded run only
  ApdBatchStats total;
  std::mutex total_mutex;
  linalg::parallel_chunks(slots, threads, [&](Index begin, Index end) {
    const ApdBatchStats part = run_blocks(begin / kLanes, end / kLanes, predicted, options,
                                          [&](Index first, int, const BlockForces<Real>& forces) {
                                            double* out = element_forces_.data() + 12 * at(first);
                                            for (Index l = 0; l < kLanes; ++l) {
                                              for (int k = 0; k < 4; ++k) {
                                                for (int c = 0; c < 3; ++c) *out++ = forces.node[k][c][l];
                                              }
                                            }
                                          });
    const std::lock_guard lock(total_mutex);
    total.vector_iterations += part.vector_iterations;
    total.scalar_fallbacks += part.scalar_fallbacks;
    total.unconverged += part.unconverged;
  });
  linalg::parallel_chunks(elements.rows, threads, [&](Index row_begin, Index row_end) { scatter_rows(row_begin, row_end, right_hand_side); });
  return total;
}

template <typename Real>
Quaternion OpsplitElementPassOf<Real>::rotation(Index element) const {
  if (element < 0 || element >= element_count()) {
    throw std::out_of_range("OpsplitElementPass::rotation: element " + std::to_string(element) + " of " +
                            std::to_string(element_count()));
  }
  const std::size_t s = at(element);
  return {rotation_[0][s], rotation_[1][s], rotation_[2][s], rotation_[3][s]};
}

template class OpsplitElementPassOf<double>;
template class OpsplitElementPassOf<float>;

}  // namespace cholsim::fem
