#include "fem/conjac/liveliness.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "fem/mesh/tet_mesh.hpp"
#include "linalg/parallel_loops.hpp"
#include "linalg/svd3.hpp"

namespace cholsim::fem {
namespace {

using linalg::Mat3;
using linalg::Vec3;

// D = [x₁ − x₀, x₂ − x₀, x₃ − x₀] of an element over `values` (positions or velocities).
Mat3 edge_matrix(const ElasticBody& body, Index element, std::span<const double> values) {
  const auto nodes = body.element_nodes(element);
  const Vec3 origin = node_position(values, nodes[0]);
  return Mat3::from_columns(node_position(values, nodes[1]) - origin, node_position(values, nodes[2]) - origin,
                            node_position(values, nodes[3]) - origin);
}

}  // namespace

Mat3 stretch_rate(const Mat3& f, const Mat3& f_dot) {
  const linalg::Svd3 svd = linalg::svd3(f);
  const Mat3 rotation = svd.u * transpose(svd.v);
  const Mat3 stretch = svd.v * Mat3::diagonal(svd.singular_values) * transpose(svd.v);
  const Mat3 m = transpose(svd.u) * f_dot * svd.v;
  const double sigma[3] = {svd.singular_values.x, svd.singular_values.y, svd.singular_values.z};
  Mat3 x = Mat3::zero();
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const double denominator = sigma[i] + sigma[j];
      if (i != j && std::abs(denominator) > 1e-12) x(i, j) = (m(i, j) - m(j, i)) / denominator;
    }
  }
  const Mat3 rotation_rate = svd.u * x * transpose(svd.v);
  Mat3 difference = f_dot;
  difference -= rotation_rate * stretch;
  return transpose(rotation) * difference;
}

LivelinessMetric::LivelinessMetric(const ElasticBody& body, std::vector<Index> representatives,
                                   LivelinessOptions options)
    : body_(body), representatives_(std::move(representatives)), options_(options), threads_(options.threads) {
  if (options_.window < 1) throw std::invalid_argument("liveliness: the window must be at least one step");
  if (!(options_.deactivate >= 0.0 && options_.deactivate <= options_.activate)) {
    throw std::invalid_argument("liveliness: the thresholds must satisfy 0 <= deactivate <= activate");
  }
  for (Index r : representatives_) {
    if (r < 0 || r >= body_.node_count()) {
      throw std::invalid_argument("liveliness: representative node " + std::to_string(r) + " is outside the mesh");
    }
  }
  const std::vector<double>& rest = body_.rest.positions;
  region_.assign(static_cast<std::size_t>(body_.element_count()), -1);
  region_volume_.assign(representatives_.size(), 0.0);
  for (Index e = 0; e < body_.element_count() && !representatives_.empty(); ++e) {
    Vec3 centroid{0.0, 0.0, 0.0};
    for (Index v : body_.element_nodes(e)) centroid = centroid + 0.25 * node_position(rest, v);
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < representatives_.size(); ++r) {
      const Vec3 d = centroid - node_position(rest, representatives_[r]);
      const double distance = dot(d, d);
      if (distance < best) {
        best = distance;
        region_[e] = static_cast<Index>(r);
      }
    }
    region_volume_[region_[e]] += body_.rest_volumes[e];
  }
  averaged_.assign(representatives_.size(), 0.0);
}

std::span<const double> LivelinessMetric::update(std::span<const double> positions, std::span<const double> velocities) {
  // Per element the volume-weighted mean of |Ṡ|'s entries; an element whose nodes do not move
  // relative to each other (Ḟ = 0, e.g. every region quasistatic and at rest) needs no SVD.
  element_metric_.resize(static_cast<std::size_t>(body_.element_count()));
  linalg::parallel_chunks(body_.element_count(), threads_, [&](Index begin, Index end) {
    for (Index e = begin; e < end; ++e) {
      const Mat3& inverse = body_.rest_shape_inverse[e];
      const Mat3 f_dot = edge_matrix(body_, e, velocities) * inverse;
      double mean = 0.0;
      if (std::any_of(f_dot.entries.begin(), f_dot.entries.end(), [](double x) { return x != 0.0; })) {
        const Mat3 rate = stretch_rate(edge_matrix(body_, e, positions) * inverse, f_dot);
        for (double entry : rate.entries) mean += std::abs(entry);
      }
      element_metric_[e] = body_.rest_volumes[e] * mean / 9.0;
    }
  });
  std::vector<double> frame(representatives_.size(), 0.0);
  for (Index e = 0; e < body_.element_count() && !representatives_.empty(); ++e) frame[region_[e]] += element_metric_[e];
  for (std::size_t r = 0; r < frame.size(); ++r) frame[r] /= std::max(region_volume_[r], 1e-300);
  history_.push_back(std::move(frame));
  if (static_cast<int>(history_.size()) > options_.window) history_.pop_front();
  std::fill(averaged_.begin(), averaged_.end(), 0.0);
  for (const std::vector<double>& past : history_) {
    for (std::size_t r = 0; r < averaged_.size(); ++r) averaged_[r] += past[r] / static_cast<double>(history_.size());
  }
  return averaged_;
}

bool LivelinessMetric::switch_states(std::vector<char>& active) const {
  if (active.size() != averaged_.size()) throw std::invalid_argument("liveliness: one state per representative");
  bool changed = false;
  for (std::size_t r = 0; r < active.size(); ++r) {
    const char next = averaged_[r] > options_.activate ? 1 : averaged_[r] < options_.deactivate ? 0 : active[r];
    changed = changed || next != active[r];
    active[r] = next;
  }
  return changed;
}

}  // namespace cholsim::fem
