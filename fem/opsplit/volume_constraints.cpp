#include "fem/opsplit/volume_constraints.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "fem/opsplit/opsplit_color_loops.hpp"
#include "fem/mesh/tet_mesh.hpp"
#include "linalg/unaligned_vector.hpp"

namespace cholsim::fem {
namespace {

using linalg::Vec3;

template <typename Real>
constexpr int kLanesOf = static_cast<int>(VolumeConstraintsOf<Real>::kLanes);

/// kLanes constraints of one colour, gathered: no two share a node, so they are independent and
/// a block of them is exactly the sequential Gauss–Seidel update of each.
template <typename Real>
struct ConstraintBlock {
  alignas(64) Real edge[3][3][kLanesOf<Real>];  ///< x_{k+1} − x₀, coordinate r, lane l (formed in double)
  alignas(64) Real move[4][3][kLanesOf<Real>];  ///< eq. 16's displacement of node k
};

/// The per-constraint arrays (colour order, padded with kLanes zero entries), read and written
/// by the kernel in place: contiguous lanes, so plain vector loads.
template <typename Real>
struct ConstraintArrays {
  std::array<const Real*, 4> inverse_mass;  ///< w of each local node
  const Real* inverse_six_volume;
  const Real* stiffness;  ///< α⁻¹
  Real* multiplier;       ///< κ in, κ + Δκ out
};

// AVX-512 and AVX2 clones picked at load time, as in linalg/polar_decomposition_batch.cpp; the
// kernel is a template inlined into one clone set per precision.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define CHOLSIM_VOLUME_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CHOLSIM_VOLUME_CLONES
#endif

/// Eq. 14–16 on lanes [0, lanes) of the block starting at constraint `first`. The other lanes
/// are computed on whatever they hold but change nothing: their displacements are not applied
/// and their multipliers (the next colour's) get + 0.
template <typename Real>
[[gnu::always_inline]] inline void project_block_of(ConstraintBlock<Real>& __restrict b, const ConstraintArrays<Real>& d,
                                                    std::size_t first, int lanes) {
  const Real* __restrict inverse_mass[4] = {d.inverse_mass[0] + first, d.inverse_mass[1] + first,
                                            d.inverse_mass[2] + first, d.inverse_mass[3] + first};
  const Real* __restrict inverse_six_volume = d.inverse_six_volume + first;
  const Real* __restrict stiffness_of = d.stiffness + first;
  Real* __restrict multiplier = d.multiplier + first;
  for (int l = 0; l < kLanesOf<Real>; ++l) {
    Real e[3][3];  // e[k][r]: edge x_{k+1} − x₀
    for (int k = 0; k < 3; ++k) {
      for (int r = 0; r < 3; ++r) e[k][r] = b.edge[k][r][l];
    }
    const auto cross = [](const Real* a, const Real* c, Real* out) {
      out[0] = a[1] * c[2] - a[2] * c[1];
      out[1] = a[2] * c[0] - a[0] * c[2];
      out[2] = a[0] * c[1] - a[1] * c[0];
    };
    // ∇C of eq. 14 (the supplemental document's gradients): cofactor columns / 6V.
    Real g[4][3];
    cross(e[1], e[2], g[1]);
    cross(e[2], e[0], g[2]);
    cross(e[0], e[1], g[3]);
    const Real scale = inverse_six_volume[l];
    const Real constraint = (g[3][0] * e[2][0] + g[3][1] * e[2][1] + g[3][2] * e[2][2]) * scale - Real(1);  // eq. 14
    Real weighted_norm = 0;
    for (int r = 0; r < 3; ++r) {
      for (int k = 1; k < 4; ++k) g[k][r] *= scale;
      g[0][r] = -(g[1][r] + g[2][r] + g[3][r]);
    }
    for (int k = 0; k < 4; ++k) {
      weighted_norm += inverse_mass[k][l] * (g[k][0] * g[k][0] + g[k][1] * g[k][1] + g[k][2] * g[k][2]);
    }
    // Eq. 15 with numerator and denominator times α⁻¹, so that λ = 0 (ν = 0: no volume term,
    // α = ∞) gives Δκ = 0 instead of ∞/∞. Sign convention of Macklin et al. (XPBD), which
    // lowers C: printed literally (Δκ ∝ +C with x += w∇CΔκ) the update would push C away from 0.
    const Real stiffness = stiffness_of[l];
    const Real delta = (-constraint * stiffness - multiplier[l]) / (weighted_norm * stiffness + Real(1));
    multiplier[l] += l < lanes ? delta : Real(0);
    for (int k = 0; k < 4; ++k) {
      const Real step = inverse_mass[k][l] * delta;
      for (int r = 0; r < 3; ++r) b.move[k][r][l] = step * g[k][r];
    }
  }
}

/// The edges of constraints [first, first + lanes), formed in double and rounded to Real.
template <typename Real>
[[gnu::always_inline]] inline void gather_constraint_edges_of(ConstraintBlock<Real>& block, const Index* node_of, Index first,
                                                   int lanes, const double* positions) {
  for (int l = 0; l < lanes; ++l) {
    const auto c = static_cast<std::size_t>(first + l);
    const double* x0 = positions + 3 * static_cast<std::size_t>(node_of[4 * c]);
    for (std::size_t k = 0; k < 3; ++k) {
      const double* x = positions + 3 * static_cast<std::size_t>(node_of[4 * c + k + 1]);
      for (std::size_t r = 0; r < 3; ++r) block.edge[k][r][l] = static_cast<Real>(x[r] - x0[r]);
    }
  }
}

/// Two coordinates of a node as one GCC vector, which may alias the doubles and need not be
/// aligned: (x, y) moves with one add and z with another — a four-wide add would read and
/// write the next node's x, which another thread may be moving.
CHOLSIM_UNALIGNED_VECTOR(CoordinatePair, double, 2, may_alias);

/// Adds eq. 16's displacements of constraints [first, first + lanes) to their nodes. A plain
/// update: no other constraint of the colour touches these nodes.
template <typename Real>
[[gnu::always_inline]] inline void apply_moves_of(const ConstraintBlock<Real>& block, const Index* node_of, Index first,
                                                  int lanes, double* positions) {
  for (int l = 0; l < lanes; ++l) {
    const auto c = static_cast<std::size_t>(first + l);
    for (std::size_t k = 0; k < 4; ++k) {
      double* x = positions + 3 * static_cast<std::size_t>(node_of[4 * c + k]);
      *reinterpret_cast<CoordinatePair*>(x) += CoordinatePair{block.move[k][0][l], block.move[k][1][l]};
      x[2] += block.move[k][2][l];
    }
  }
}

CHOLSIM_VOLUME_CLONES void gather_constraint_edges(ConstraintBlock<double>& block, const Index* node_of, Index first, int lanes,
                                        const double* positions) {
  gather_constraint_edges_of(block, node_of, first, lanes, positions);
}
CHOLSIM_VOLUME_CLONES void gather_constraint_edges(ConstraintBlock<float>& block, const Index* node_of, Index first, int lanes,
                                        const double* positions) {
  gather_constraint_edges_of(block, node_of, first, lanes, positions);
}
CHOLSIM_VOLUME_CLONES void apply_moves(const ConstraintBlock<double>& block, const Index* node_of, Index first, int lanes,
                                       double* positions) {
  apply_moves_of(block, node_of, first, lanes, positions);
}
CHOLSIM_VOLUME_CLONES void apply_moves(const ConstraintBlock<float>& block, const Index* node_of, Index first, int lanes,
                                       double* positions) {
  apply_moves_of(block, node_of, first, lanes, positions);
}

CHOLSIM_VOLUME_CLONES void project_block(ConstraintBlock<double>& __restrict b, const ConstraintArrays<double>& d,
                                         std::size_t first, int lanes) {
  project_block_of(b, d, first, lanes);
}
CHOLSIM_VOLUME_CLONES void project_block(ConstraintBlock<float>& __restrict b, const ConstraintArrays<float>& d,
                                         std::size_t first, int lanes) {
  project_block_of(b, d, first, lanes);
}

}  // namespace

std::vector<Index> greedy_element_colors(const TetMesh& mesh) {
  const Index nodes = mesh.node_count();
  const Index elements = mesh.tet_count();
  // Node → incident elements (CSR).
  std::vector<Index> incident_begin(static_cast<std::size_t>(nodes) + 1, 0);
  for (Index v : mesh.tets) ++incident_begin[static_cast<std::size_t>(v) + 1];
  for (std::size_t v = 0; v < static_cast<std::size_t>(nodes); ++v) incident_begin[v + 1] += incident_begin[v];
  std::vector<Index> incident(mesh.tets.size());
  std::vector<Index> fill(incident_begin.begin(), incident_begin.end() - 1);
  for (Index e = 0; e < elements; ++e) {
    for (Index k = 0; k < 4; ++k) {
      const auto v = static_cast<std::size_t>(mesh.tets[static_cast<std::size_t>(4 * e + k)]);
      incident[static_cast<std::size_t>(fill[v]++)] = e;
    }
  }
  std::vector<Index> color(static_cast<std::size_t>(elements), -1);
  std::vector<Index> forbidden_by;  // forbidden_by[c] == e: colour c is taken next to element e
  for (Index e = 0; e < elements; ++e) {
    for (Index k = 0; k < 4; ++k) {
      const auto v = static_cast<std::size_t>(mesh.tets[static_cast<std::size_t>(4 * e + k)]);
      for (Index p = incident_begin[v]; p < incident_begin[v + 1]; ++p) {
        const Index c = color[static_cast<std::size_t>(incident[static_cast<std::size_t>(p)])];
        if (c < 0) continue;
        if (static_cast<std::size_t>(c) >= forbidden_by.size()) forbidden_by.resize(static_cast<std::size_t>(c) + 1, -1);
        forbidden_by[static_cast<std::size_t>(c)] = e;
      }
    }
    Index c = 0;
    while (static_cast<std::size_t>(c) < forbidden_by.size() && forbidden_by[static_cast<std::size_t>(c)] == e) ++c;
    color[static_cast<std::size_t>(e)] = c;
  }
  return color;
}

template <typename Real>
VolumeConstraintsOf<Real>::VolumeConstraintsOf(const ElasticBody& body, double time_step,
                                               std::span<const double> inverse_masses) {
  if (!(time_step > 0.0) || !std::isfinite(time_step)) {
    throw std::invalid_argument("VolumeConstraints: time step must be positive and finite, got " +
                                std::to_string(time_step));
  }
  if (inverse_masses.size() != static_cast<std::size_t>(body.node_count())) {
    throw std::invalid_argument("VolumeConstraints: " + std::to_string(inverse_masses.size()) +
                                " inverse masses for " + std::to_string(body.node_count()) + " nodes");
  }
  auto constraints = std::make_shared<Constraints>();
  Constraints& c = *constraints;
  c.node_count = body.node_count();
  const Index elements = body.element_count();
  const std::vector<Index> color = greedy_element_colors(body.rest);
  const Index colors = elements == 0 ? 0 : *std::max_element(color.begin(), color.end()) + 1;
  c.color_begin.assign(static_cast<std::size_t>(colors) + 1, 0);
  for (Index k : color) ++c.color_begin[static_cast<std::size_t>(k) + 1];
  for (std::size_t k = 0; k < static_cast<std::size_t>(colors); ++k) c.color_begin[k + 1] += c.color_begin[k];
  std::vector<Index> slot(c.color_begin.begin(), c.color_begin.end() - 1);

  // kLanes zero entries past the end: a colour's last block reads whole vectors.
  const auto padded = static_cast<std::size_t>(elements + kLanes);
  c.nodes.resize(4 * static_cast<std::size_t>(elements));
  c.inverse_six_volume.assign(padded, Real(0));
  c.stiffness.assign(padded, Real(0));
  for (auto& masses : c.inverse_masses) masses.assign(padded, Real(0));
  multipliers_.assign(padded, Real(0));
  for (Index e = 0; e < elements; ++e) {
    const auto s = static_cast<std::size_t>(slot[static_cast<std::size_t>(color[static_cast<std::size_t>(e)])]++);
    const auto nodes = body.element_nodes(e);
    std::copy(nodes.begin(), nodes.end(), c.nodes.begin() + static_cast<std::ptrdiff_t>(4 * s));
    for (std::size_t k = 0; k < 4; ++k) c.inverse_masses[k][s] = static_cast<Real>(inverse_masses[static_cast<std::size_t>(nodes[k])]);
    const double volume = body.rest_volumes[static_cast<std::size_t>(e)];
    c.inverse_six_volume[s] = static_cast<Real>(1.0 / (6.0 * volume));
    c.stiffness[s] = static_cast<Real>(body.lame[static_cast<std::size_t>(e)].lambda * volume * time_step * time_step);  // eq. 13
  }
  constraints_ = std::move(constraints);
}

template <typename Real>
void VolumeConstraintsOf<Real>::project(std::span<double> positions, int iterations, int threads) {
  const Index nodes = constraints_->node_count;
  if (positions.size() != 3 * static_cast<std::size_t>(nodes)) {
    throw std::invalid_argument("VolumeConstraints::project: expected " + std::to_string(3 * nodes) +
                                " coordinates, got " + std::to_string(positions.size()));
  }
  std::fill(multipliers_.begin(), multipliers_.end(), Real(0));  // κ = 0 at the start of a step
  for (int sweep = 0; sweep < iterations; ++sweep) {
    parallel_colors(constraints_->color_begin, kLanes, threads, [&](Index, Index begin, Index end) {
      project_range(positions, begin, end);
    });
  }
}

template <typename Real>
void VolumeConstraintsOf<Real>::project_range(std::span<double> positions, Index begin, Index end) {
  const Constraints& constraints = *constraints_;
  ConstraintArrays<Real> arrays{};
  for (std::size_t k = 0; k < 4; ++k) arrays.inverse_mass[k] = constraints.inverse_masses[k].data();
  arrays.inverse_six_volume = constraints.inverse_six_volume.data();
  arrays.stiffness = constraints.stiffness.data();
  arrays.multiplier = multipliers_.data();
  const Index* node_of = constraints.nodes.data();
  // Two blocks at a time, both gathered before either is projected, so that project_block's
  // vector loads find the gathers' scalar stores already in the cache. The constraints of a
  // colour are independent, so the order of gathers and scatters among them does not matter.
  // Lanes past a colour's end hold an earlier block's edges (zeros at first) and read the
  // next colour's constants or the zero padding: see project_block.
  std::array<ConstraintBlock<Real>, 2> blocks{};
  std::array<int, 2> lanes{};
  for (Index pair = begin; pair < end; pair += 2 * kLanes) {
    for (std::size_t b = 0; b < 2; ++b) {
      const Index first = pair + static_cast<Index>(b) * kLanes;
      lanes[b] = static_cast<int>(std::clamp<Index>(end - first, 0, kLanes));
      if (lanes[b] > 0) gather_constraint_edges(blocks[b], node_of, first, lanes[b], positions.data());
    }
    for (std::size_t b = 0; b < 2; ++b) {
      if (lanes[b] > 0) project_block(blocks[b], arrays, static_cast<std::size_t>(pair + static_cast<Index>(b) * kLanes), lanes[b]);
    }
    for (std::size_t b = 0; b < 2; ++b) apply_moves(blocks[b], node_of, pair + static_cast<Index>(b) * kLanes, lanes[b], positions.data());
  }
}

template class VolumeConstraintsOf<double>;
template class VolumeConstraintsOf<float>;

void volume_ratios(const ElasticBody& body, std::span<const double> positions, std::span<double> ratios) {
  if (positions.size() != 3 * static_cast<std::size_t>(body.node_count()) ||
      ratios.size() != static_cast<std::size_t>(body.element_count())) {
    throw std::invalid_argument("volume_ratios: positions or ratios have the wrong length");
  }
  for (Index e = 0; e < body.element_count(); ++e) {
    const auto nodes = body.element_nodes(e);
    const Vec3 x0 = node_position(positions, nodes[0]);
    const double six_volume = dot(cross(node_position(positions, nodes[1]) - x0, node_position(positions, nodes[2]) - x0),
                                  node_position(positions, nodes[3]) - x0);
    ratios[static_cast<std::size_t>(e)] = six_volume / (6.0 * body.rest_volumes[static_cast<std::size_t>(e)]);
  }
}

double max_volume_error(const ElasticBody& body, std::span<const double> positions) {
  std::vector<double> ratios(static_cast<std::size_t>(body.element_count()));
  volume_ratios(body, positions, ratios);
  double worst = 0.0;
  for (double r : ratios) worst = std::max(worst, std::abs(r - 1.0));
  return worst;
}

}  // namespace cholsim::fem
