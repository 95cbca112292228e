#include "simulation_health.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "fem/elements/corotational_element.hpp"
#include "fem/mesh/tet_mesh.hpp"

namespace cholsim::fem {
namespace {

Vec3 node_vector(std::span<const double> values, std::size_t node) {
  return {values[3 * node], values[3 * node + 1], values[3 * node + 2]};
}

void require_node_vectors(std::span<const double> values, const ElasticBody& body, const char* what) {
  if (values.size() != 3 * static_cast<std::size_t>(body.node_count())) {
    throw std::invalid_argument(std::string("SimulationHealth: ") + what + " has " + std::to_string(values.size()) +
                                " values; expected 3 per node (" + std::to_string(3 * body.node_count()) + ")");
  }
}

/// The larger of the two, or NaN if either is (std::max drops a NaN that comes second): a
/// state with NaN in it is broken, not healthy.
double max_keeping_nan(double a, double b) { return std::isnan(a) ? a : (std::isnan(b) || b > a ? b : a); }

double largest_node_norm(std::span<const double> values) {
  double largest = 0.0;
  for (std::size_t node = 0; node < values.size() / 3; ++node) largest = max_keeping_nan(largest, norm(node_vector(values, node)));
  return largest;
}

double count_inverted(const ElasticBody& body, std::span<const double> positions) {
  Index inverted = 0;
  for (Index element = 0; element < body.element_count(); ++element) {
    // A NaN determinant is no less broken than a negative one.
    if (!(linalg::determinant(deformation_gradient(body, element, positions)) > 0.0)) ++inverted;
  }
  return static_cast<double>(inverted);
}

double largest_displacement(std::span<const double> positions, const std::vector<double>& rest) {
  double largest = 0.0;
  for (std::size_t node = 0; node < positions.size() / 3; ++node) {
    largest = max_keeping_nan(largest, norm(node_vector(positions, node) - node_vector(rest, node)));
  }
  return largest;
}

double deepest_penetration(const std::vector<Obstacle>& obstacles, std::span<const double> positions, double time) {
  double deepest = 0.0;
  for (std::size_t node = 0; node < positions.size() / 3; ++node) {
    deepest = max_keeping_nan(deepest, -nearest_obstacle(obstacles, node_vector(positions, node), time).distance);
  }
  return deepest;
}

std::string printf_string(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

}  // namespace

const char* health_issue_key(HealthIssue issue) {
  switch (issue) {
    case HealthIssue::inverted_elements: return "inverted_elements";
    case HealthIssue::solver_not_converged: return "solver_not_converged";
    case HealthIssue::runaway_displacement: return "runaway_displacement";
    case HealthIssue::runaway_speed: return "runaway_speed";
    case HealthIssue::energy_growth: return "energy_growth";
    case HealthIssue::obstacle_penetration: return "obstacle_penetration";
  }
  return "unknown";
}

std::string HealthFinding::description() const {
  const std::string when = " in frame " + std::to_string(first_frame) + " (t = " + printf_string("%.4g", first_time) + " s)";
  const std::string figure = printf_string("%.3g", first_value);
  const std::string limit = printf_string("%.3g", threshold);
  switch (issue) {
    case HealthIssue::inverted_elements:
      return figure + " elements inverted (det F <= 0)" + when + "; more than " + limit + " is not physical";
    case HealthIssue::solver_not_converged:
      return "the iterative solver stopped before reaching its tolerance" + when;
    case HealthIssue::runaway_displacement:
      return "a node moved " + figure + " m from rest" + when + "; free fall plus the deformation allowance is " + limit + " m";
    case HealthIssue::runaway_speed:
      return "a node moves at " + figure + " m/s" + when + "; free fall plus the allowance's fall speed is " + limit +
             " m/s";
    case HealthIssue::energy_growth:
      return "kinetic + gravitational energy grew by " + figure + " J" + when + "; more than " + limit +
             " J cannot come from the scene";
    case HealthIssue::obstacle_penetration:
      return "a node is " + figure + " m deep inside an obstacle" + when + "; more than " + limit + " m means it went through";
  }
  return "unknown issue";
}

SimulationHealth::SimulationHealth(const ElasticBody& body, Vec3 gravity, std::vector<Obstacle> obstacles,
                                   std::span<const double> initial_velocities, HealthThresholds thresholds)
    : body_(&body), gravity_(gravity), obstacles_(std::move(obstacles)), thresholds_(thresholds) {
  require_node_vectors(initial_velocities, body, "the initial velocity");
  for (double setting : {thresholds.inverted_fraction, thresholds.runaway_model_sizes,
                         thresholds.energy_gain_model_sizes, thresholds.penetration_model_sizes}) {
    if (!(setting >= 0.0)) throw std::invalid_argument("SimulationHealth: thresholds must be non-negative");
  }
  const auto box = bounding_box(body.rest.positions);
  model_size_ = norm(Vec3{box[3] - box[0], box[4] - box[1], box[5] - box[2]});
  initial_speed_ = largest_node_norm(initial_velocities);
  initial_energy_ = mechanical_energy(body.rest.positions, initial_velocities);

  double mass = 0.0;
  double initial_kinetic = 0.0;
  for (std::size_t node = 0; node < body.node_masses.size(); ++node) {
    mass += body.node_masses[node];
    initial_kinetic += 0.5 * body.node_masses[node] * squared_norm(node_vector(initial_velocities, node));
  }
  energy_scale_ = thresholds.energy_gain_model_sizes * std::max(mass * norm(gravity) * model_size_, initial_kinetic);
}

double SimulationHealth::mechanical_energy(std::span<const double> positions, std::span<const double> velocities) const {
  double energy = 0.0;
  for (std::size_t node = 0; node < body_->node_masses.size(); ++node) {
    const double mass = body_->node_masses[node];
    energy += mass * (0.5 * squared_norm(node_vector(velocities, node)) - dot(gravity_, node_vector(positions, node)));
  }
  return energy;
}

bool SimulationHealth::record(HealthIssue issue, const HealthFrame& frame, double value, double threshold) {
  // NaN compares false both ways; a non-finite figure is trouble of that kind too.
  if (!(value > threshold) && std::isfinite(value)) return false;
  const auto known = std::find_if(findings_.begin(), findings_.end(),
                                  [issue](const HealthFinding& finding) { return finding.issue == issue; });
  if (known != findings_.end()) {
    known->worst_value = max_keeping_nan(known->worst_value, value);
    ++known->frames;
    return false;
  }
  findings_.push_back({issue, frame.frame, frame.time, value, threshold, value, 1});
  return true;
}

std::vector<HealthIssue> SimulationHealth::check(const HealthFrame& frame) {
  require_node_vectors(frame.positions, *body_, "the positions");
  require_node_vectors(frame.velocities, *body_, "the velocities");
  std::vector<HealthIssue> news;
  const auto check_one = [&](HealthIssue issue, double value, double threshold) {
    if (record(issue, frame, value, threshold)) news.push_back(issue);
  };

  check_one(HealthIssue::inverted_elements, count_inverted(*body_, frame.positions),
            thresholds_.inverted_fraction * static_cast<double>(body_->element_count()));
  check_one(HealthIssue::solver_not_converged, frame.solver_converged ? 0.0 : 1.0, 0.0);
  const double g = norm(gravity_);
  const double free_fall = 0.5 * g * frame.time * frame.time + initial_speed_ * frame.time;
  check_one(HealthIssue::runaway_displacement, largest_displacement(frame.positions, body_->rest.positions),
            free_fall + thresholds_.runaway_model_sizes * model_size_);
  if (g > 0.0) {
    check_one(HealthIssue::runaway_speed, largest_node_norm(frame.velocities),
              initial_speed_ + g * frame.time + std::sqrt(2.0 * g * thresholds_.runaway_model_sizes * model_size_));
  }
  if (energy_scale_ > 0.0) {
    check_one(HealthIssue::energy_growth, mechanical_energy(frame.positions, frame.velocities) - initial_energy_,
              energy_scale_);
  }
  if (!obstacles_.empty()) {
    check_one(HealthIssue::obstacle_penetration, deepest_penetration(obstacles_, frame.positions, frame.time),
              thresholds_.penetration_model_sizes * model_size_);
  }
  return news;
}

const HealthFinding& SimulationHealth::finding(HealthIssue issue) const {
  const auto found = std::find_if(findings_.begin(), findings_.end(),
                                  [issue](const HealthFinding& finding) { return finding.issue == issue; });
  if (found == findings_.end()) {
    throw std::invalid_argument(std::string("SimulationHealth: no finding of kind ") + health_issue_key(issue));
  }
  return *found;
}

}  // namespace cholsim::fem
