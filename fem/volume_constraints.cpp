#include "fem/volume_constraints.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "fem/parallel_loops.hpp"

namespace cholsim::fem {
namespace {

using linalg::Vec3;

Vec3 node_position(std::span<const double> positions, Index node) {
  const auto i = static_cast<std::size_t>(3 * node);
  return {positions[i], positions[i + 1], positions[i + 2]};
}

/// Greedy colouring of the elements: no two elements sharing a node get the same colour.
/// Returns the colour of each element.
std::vector<Index> color_elements(const TetMesh& mesh) {
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

}  // namespace

VolumeConstraints::VolumeConstraints(const ElasticBody& body, double time_step) : node_count_(body.node_count()) {
  if (!(time_step > 0.0) || !std::isfinite(time_step)) {
    throw std::invalid_argument("VolumeConstraints: time step must be positive and finite, got " +
                                std::to_string(time_step));
  }
  const Index elements = body.element_count();
  const std::vector<Index> color = color_elements(body.rest);
  const Index colors = elements == 0 ? 0 : *std::max_element(color.begin(), color.end()) + 1;
  color_begin_.assign(static_cast<std::size_t>(colors) + 1, 0);
  for (Index c : color) ++color_begin_[static_cast<std::size_t>(c) + 1];
  for (std::size_t c = 0; c < static_cast<std::size_t>(colors); ++c) color_begin_[c + 1] += color_begin_[c];
  std::vector<Index> slot(color_begin_.begin(), color_begin_.end() - 1);

  nodes_.resize(4 * static_cast<std::size_t>(elements));
  inverse_six_volume_.resize(static_cast<std::size_t>(elements));
  compliance_.resize(static_cast<std::size_t>(elements));
  multipliers_.assign(static_cast<std::size_t>(elements), 0.0);
  for (Index e = 0; e < elements; ++e) {
    const auto c = static_cast<std::size_t>(slot[static_cast<std::size_t>(color[static_cast<std::size_t>(e)])]++);
    const auto nodes = body.element_nodes(e);
    std::copy(nodes.begin(), nodes.end(), nodes_.begin() + static_cast<std::ptrdiff_t>(4 * c));
    const double volume = body.rest_volumes[static_cast<std::size_t>(e)];
    inverse_six_volume_[c] = 1.0 / (6.0 * volume);
    // seed 003 eq. 13: α⁻¹ = λ·V·Δt².
    compliance_[c] = 1.0 / (body.lame[static_cast<std::size_t>(e)].lambda * volume * time_step * time_step);
  }
}

void VolumeConstraints::project(std::span<double> positions, std::span<const double> inverse_masses, int iterations,
                                int threads) {
  if (positions.size() != 3 * static_cast<std::size_t>(node_count_) ||
      inverse_masses.size() != static_cast<std::size_t>(node_count_)) {
    throw std::invalid_argument("VolumeConstraints::project: expected " + std::to_string(3 * node_count_) +
                                " coordinates and " + std::to_string(node_count_) + " inverse masses, got " +
                                std::to_string(positions.size()) + " and " + std::to_string(inverse_masses.size()));
  }
  std::fill(multipliers_.begin(), multipliers_.end(), 0.0);  // κ = 0 at the start of a step
  for (int sweep = 0; sweep < iterations; ++sweep) {
    for (std::size_t k = 0; k + 1 < color_begin_.size(); ++k) {
      const Index begin = color_begin_[k];
      parallel_chunks(color_begin_[k + 1] - begin, threads, [&](Index first, Index last) {
        project_range(positions, inverse_masses, begin + first, begin + last);
      });
    }
  }
}

void VolumeConstraints::project_range(std::span<double> positions, std::span<const double> inverse_masses,
                                      Index begin, Index end) {
  for (Index c = begin; c < end; ++c) {
    const auto i = static_cast<std::size_t>(c);
    const Index* nodes = nodes_.data() + 4 * i;
    const Vec3 x0 = node_position(positions, nodes[0]);
    const Vec3 e1 = node_position(positions, nodes[1]) - x0;
    const Vec3 e2 = node_position(positions, nodes[2]) - x0;
    const Vec3 e3 = node_position(positions, nodes[3]) - x0;
    const double scale = inverse_six_volume_[i];
    const double constraint = dot(cross(e1, e2), e3) * scale - 1.0;  // eq. 14
    // ∇C of eq. 14 (the supplemental document's gradients): cofactor columns / 6V.
    const std::array<Vec3, 4> gradient = [&] {
      const Vec3 g1 = scale * cross(e2, e3);
      const Vec3 g2 = scale * cross(e3, e1);
      const Vec3 g3 = scale * cross(e1, e2);
      return std::array<Vec3, 4>{-(g1 + g2 + g3), g1, g2, g3};
    }();
    double weighted_norm = 0.0;
    std::array<double, 4> w{};
    for (std::size_t k = 0; k < 4; ++k) {
      w[k] = inverse_masses[static_cast<std::size_t>(nodes[k])];
      weighted_norm += w[k] * squared_norm(gradient[k]);
    }
    const double alpha = compliance_[i];
    // Eq. 15–16 in the sign convention of Macklin et al. (XPBD), which lowers C: printed
    // literally (Δκ ∝ +C with x += w∇CΔκ) the update would push C away from zero.
    const double delta = (-constraint - alpha * multipliers_[i]) / (weighted_norm + alpha);
    multipliers_[i] += delta;
    for (std::size_t k = 0; k < 4; ++k) {
      const auto p = static_cast<std::size_t>(3 * nodes[k]);
      const Vec3 move = (w[k] * delta) * gradient[k];
      positions[p] += move.x;
      positions[p + 1] += move.y;
      positions[p + 2] += move.z;
    }
  }
}

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
