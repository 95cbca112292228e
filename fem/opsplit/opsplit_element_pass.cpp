#include "fem/opsplit/opsplit_element_pass.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <string>

#include "linalg/parallel_loops.hpp"

namespace cholsim::fem {
namespace {

using linalg::ApdBatchStats;
using linalg::ApdBlock;
using linalg::kApdBatchLanes;
using linalg::Quaternion;

constexpr int kLanes = static_cast<int>(kApdBatchLanes);

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

// As in linalg/polar_decomposition_batch.cpp: AVX-512 and AVX2 clones picked at load time,
// since the library is built without -march=native.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define CHOLSIM_OPSPLIT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CHOLSIM_OPSPLIT_CLONES
#endif

/// Read-only per-slot arrays, as raw pointers so the kernels below see plain loads.
struct SlotData {
  std::array<const Index*, 4> nodes;
  std::array<const double*, 9> rest_inverse;
  const double* stretch_weight;
  std::array<const double*, 4> rotation;
};

/// DₜᵀKₜ·(vec R − vec F) of a block at local node k, coordinate c, lane l.
struct BlockForces {
  alignas(64) double node[4][3][kLanes];
};

/// The predicted positions of a block's nodes, x[k][r][l]: node k, coordinate r, lane l.
struct BlockPositions {
  alignas(64) double x[4][3][kLanes];
};

/// Copies the block's node positions into lanes with plain loads: GCC makes a slow mix of
/// partial vector loads and lane extracts of the indexed loads when it meets them inside the
/// vectorized loop of load_block.
void gather_positions(const SlotData& d, std::size_t first, const double* predicted, BlockPositions& out) {
  for (int l = 0; l < kLanes; ++l) {
    const std::size_t s = first + static_cast<std::size_t>(l);
    for (std::size_t k = 0; k < 4; ++k) {
      const double* x = predicted + 3 * at(d.nodes[k][s]);
      for (int r = 0; r < 3; ++r) out.x[k][r][l] = x[r];
    }
  }
}

/// F(x̃) = Dₛ·Dₘ⁻¹ (eq. 4–5) and the current rotations of slots [first, first + kLanes).
CHOLSIM_OPSPLIT_CLONES void load_block(const SlotData& d, std::size_t first, const BlockPositions& __restrict p,
                                       ApdBlock& __restrict block) {
  for (int l = 0; l < kLanes; ++l) {
    const std::size_t s = first + static_cast<std::size_t>(l);
    for (int r = 0; r < 3; ++r) {
      const double x0 = p.x[0][r][l];  // row r of Dₛ: the edges from node 0
      const double e1 = p.x[1][r][l] - x0, e2 = p.x[2][r][l] - x0, e3 = p.x[3][r][l] - x0;
      for (int c = 0; c < 3; ++c) {
        block.f[3 * r + c][l] = e1 * d.rest_inverse[at(c)][s] + e2 * d.rest_inverse[at(3 + c)][s] +
                                e3 * d.rest_inverse[at(6 + c)][s];
      }
    }
    for (int k = 0; k < 4; ++k) block.q[k][l] = d.rotation[at(k)][s];
  }
}

/// Algorithm 2 lines 7–8 for a block: P = 2μVΔt²·(R − F), then P·gₖ at local nodes 1..3
/// (gₖ = row k−1 of Dₘ⁻¹) and minus their sum at node 0.
CHOLSIM_OPSPLIT_CLONES void block_forces(const SlotData& d, std::size_t first, const ApdBlock& __restrict block,
                                         BlockForces& __restrict out) {
  for (int l = 0; l < kLanes; ++l) {
    const std::size_t s = first + static_cast<std::size_t>(l);
    const double w = block.q[0][l], x = block.q[1][l], y = block.q[2][l], z = block.q[3][l];
    // linalg::to_rotation_matrix, spelt out for the vectorizer.
    const double xx = x * x, yy = y * y, zz = z * z, xy = x * y, xz = x * z, yz = y * z;
    const double wx = w * x, wy = w * y, wz = w * z;
    const double r[9] = {1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz),       2.0 * (xz + wy),
                         2.0 * (xy + wz),       1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx),
                         2.0 * (xz - wy),       2.0 * (yz + wx),       1.0 - 2.0 * (xx + yy)};
    const double weight = d.stretch_weight[s];
    for (int row = 0; row < 3; ++row) {
      double p[3];
      for (int c = 0; c < 3; ++c) p[c] = weight * (r[3 * row + c] - block.f[3 * row + c][l]);
      double sum = 0.0;
      for (int k = 0; k < 3; ++k) {
        const double force = p[0] * d.rest_inverse[at(3 * k)][s] + p[1] * d.rest_inverse[at(3 * k + 1)][s] +
                             p[2] * d.rest_inverse[at(3 * k + 2)][s];
        out.node[k + 1][row][l] = force;
        sum += force;
      }
      out.node[0][row][l] = -sum;
    }
  }
}

}  // namespace

OpsplitElementPass::OpsplitElementPass(const ElasticBody& body, std::span<const Index> system_row, Index rows,
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
  const std::size_t slots = at((element_count + kApdBatchLanes - 1) / kApdBatchLanes * kApdBatchLanes);
  for (auto& a : c->nodes) a.assign(slots, 0);
  for (auto& a : c->rows_of_nodes) a.assign(slots, -1);
  for (auto& a : c->rest_inverse) a.assign(slots, 0.0);
  c->stretch_weight.assign(slots, 0.0);
  rotation_[0].assign(slots, 1.0);
  for (std::size_t k = 1; k < 4; ++k) rotation_[k].assign(slots, 0.0);
  for (Index e = 0; e < element_count; ++e) {
    const auto element_nodes = body.element_nodes(e);
    for (std::size_t k = 0; k < 4; ++k) {
      c->nodes[k][at(e)] = element_nodes[k];
      c->rows_of_nodes[k][at(e)] = system_row[at(element_nodes[k])];
    }
    for (std::size_t k = 0; k < 9; ++k) c->rest_inverse[k][at(e)] = body.rest_shape_inverse[at(e)].entries[k];
    c->stretch_weight[at(e)] = stretch_weight(body, e, time_step);
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

void OpsplitElementPass::scatter_rows(Index row_begin, Index row_end, std::span<double> right_hand_side) const {
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

template <typename Sink>
linalg::ApdBatchStats OpsplitElementPass::run_blocks(Index first_block, Index last_block,
                                                     std::span<const double> predicted,
                                                     const OpsplitElementPassOptions& options, Sink&& sink) {
  const Elements& elements = *elements_;
  SlotData d;
  for (std::size_t k = 0; k < 4; ++k) d.nodes[k] = elements.nodes[k].data();
  for (std::size_t k = 0; k < 9; ++k) d.rest_inverse[k] = elements.rest_inverse[k].data();
  d.stretch_weight = elements.stretch_weight.data();
  for (std::size_t k = 0; k < 4; ++k) d.rotation[k] = rotation_[k].data();
  ApdBatchStats stats;
  std::array<BlockPositions, linalg::kApdInterleavedBlocks> positions;
  std::array<ApdBlock, linalg::kApdInterleavedBlocks> blocks;
  std::array<int, linalg::kApdInterleavedBlocks> lanes{};
  BlockForces forces;
  for (Index group = first_block; group < last_block; group += linalg::kApdInterleavedBlocks) {
    const auto count = static_cast<std::size_t>(std::min(linalg::kApdInterleavedBlocks, last_block - group));
    // All gathers first: the vector loads of load_block then find the gathers' scalar stores
    // already written to the cache instead of waiting for them.
    for (std::size_t b = 0; b < count; ++b) {
      const Index first = (group + static_cast<Index>(b)) * kApdBatchLanes;
      lanes[b] = static_cast<int>(std::min<Index>(kApdBatchLanes, elements.element_count - first));
      gather_positions(d, at(first), predicted.data(), positions[b]);
    }
    for (std::size_t b = 0; b < count; ++b) {
      load_block(d, (group + static_cast<Index>(b)) * kApdBatchLanes, positions[b], blocks[b]);
    }
    if (options.update_rotations) {
      const ApdBatchStats apd = linalg::analytic_polar_decomposition_blocks(
          std::span(blocks).first(count), std::span<const int>(lanes).first(count), options.apd);
      stats.vector_iterations += apd.vector_iterations;
      stats.scalar_fallbacks += apd.scalar_fallbacks;
      stats.unconverged += apd.unconverged;
    }
    for (std::size_t b = 0; b < count; ++b) {
      const Index first = (group + static_cast<Index>(b)) * kApdBatchLanes;
      if (options.update_rotations) {
        for (std::size_t k = 0; k < 4; ++k) std::copy_n(blocks[b].q[k], lanes[b], rotation_[k].begin() + first);
      }
      block_forces(d, at(first), blocks[b], forces);
      sink(first, lanes[b], forces);
    }
  }
  return stats;
}

linalg::ApdBatchStats OpsplitElementPass::run(std::span<const double> predicted, std::span<double> right_hand_side,
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
  const Index blocks = slots / kApdBatchLanes;
  const int threads = slots < linalg::kMinParallelIterations ? 1 : linalg::resolve_thread_count(options.threads);
  std::fill(right_hand_side.begin(), right_hand_side.end(), 0.0);
  // The scatter stays scalar (the lanes of a block may share nodes) and runs in element order.
  const auto scatter = [&](Index first, int lanes, const auto& force) {
    for (int l = 0; l < lanes; ++l) {
      for (int k = 0; k < 4; ++k) {
        const Index row = elements.rows_of_nodes[at(k)][at(first + l)];
        if (row < 0) continue;  // fixed node: Δx = 0 (eq. 12)
        double* target = right_hand_side.data() + kRightHandSideStride * at(row);
        for (int c = 0; c < 3; ++c) target[c] += force(l, k, c);
      }
    }
  };
  if (threads == 1) {
    // Fused: each block's forces go to the right-hand side while still in cache.
    return run_blocks(0, blocks, predicted, options, [&](Index first, int lanes, const BlockForces& forces) {
      scatter(first, lanes, [&](int l, int k, int c) { return forces.node[k][c][l]; });
    });
  }
  // Threads: the blocks in parallel, keeping their forces; then the scatter, split by rows:
  // each thread adds, in element order, the forces on its rows only — the same additions in
  // the same order per row as the serial scatter, so the result does not depend on the thread
  // count. (Summing per row from a row → element list instead reads the 96 bytes of forces per
  // element at random and was slower on 55K tets.)
  element_forces_.resize(12 * at(slots));  // allocates on the first threaded run only
  ApdBatchStats total;
  std::mutex total_mutex;
  linalg::parallel_chunks(slots, threads, [&](Index begin, Index end) {
    const ApdBatchStats part = run_blocks(begin / kApdBatchLanes, end / kApdBatchLanes, predicted, options,
                                          [&](Index first, int, const BlockForces& forces) {
                                            double* out = element_forces_.data() + 12 * at(first);
                                            for (int l = 0; l < kLanes; ++l) {
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

Quaternion OpsplitElementPass::rotation(Index element) const {
  if (element < 0 || element >= element_count()) {
    throw std::out_of_range("OpsplitElementPass::rotation: element " + std::to_string(element) + " of " +
                            std::to_string(element_count()));
  }
  const std::size_t s = at(element);
  return {rotation_[0][s], rotation_[1][s], rotation_[2][s], rotation_[3][s]};
}

}  // namespace cholsim::fem
