#pragma once
// Whether a simulated body is still physical, judged frame by frame from its state alone, so
// that a run which blew up says so instead of exiting quietly with garbage frames (issue 23,
// D5: a stiff body under stiffness warping flying to 1e32 m with half its tets inverted, an
// implicit step of 10 s launching a box 76 km up, operator splitting ending with det F < 0).
// The checks need no method internals: elements turned inside out (det F <= 0), a linear
// solver that stopped before converging (as the method reports it), nodes running away
// further or faster than free fall can explain, kinetic + gravitational energy growing although
// nothing in the scene can supply it, and nodes sunk deep into an obstacle.
#include <span>
#include <string>
#include <vector>

#include "fem/contact/obstacles.hpp"
#include "fem/elements/elastic_body.hpp"

namespace cholsim::fem {

enum class HealthIssue {
  inverted_elements,
  solver_not_converged,
  runaway_displacement,
  runaway_speed,
  energy_growth,
  obstacle_penetration,
};

/// "inverted_elements", "solver_not_converged", ...: the issue's key in reports.
const char* health_issue_key(HealthIssue issue);

/// When each check fires. Lengths are in model sizes (the rest shape's bounding-box diagonal
/// L), so one setting serves a 5 cm bunny and a 2 m bar. The defaults stay silent on every
/// bundled scene and default run (tests/apps check it) and fire by orders of magnitude on the
/// blown-up runs of issue 23 D5.
struct HealthThresholds {
  /// More than this fraction of the elements with det F <= 0. Contact and large steps may
  /// squash a few tets through for a frame or two; corotated forces push them back.
  double inverted_fraction = 0.01;
  /// A node farther from rest than free fall plus the initial velocity can carry it in the
  /// elapsed time, plus this many model sizes; or faster than free fall and the initial speed
  /// plus the speed of a fall through this many model sizes, √(2·g·100 L) — a blow-up shows in
  /// the speeds frames before the distances (issue 19, stop 53: an armadillo whose nodes reached
  /// 41 m/s after 0.1 s and 535 m/s after 0.15 s, only 12 m from rest). Without
  /// gravity the speed has no scale and is not checked.
  double runaway_model_sizes = 100.0;
  /// Kinetic + gravitational energy above its initial value by more than lifting the whole
  /// body this many model sizes against gravity (or this many times the initial kinetic
  /// energy, whichever is larger). Implicit Euler only loses energy and the bundled
  /// pistons supply far less; a scene without gravity or initial velocity has no scale and
  /// is not checked.
  double energy_gain_model_sizes = 10.0;
  /// A node deeper inside an obstacle than this many model sizes: penalty contact lets nodes
  /// in by millimetres, a body that tunnelled through the ground is far below it.
  double penetration_model_sizes = 0.5;
};

/// What a frame's state says, besides the positions and velocities.
struct HealthFrame {
  int frame = 0;
  double time = 0.0;  ///< s since the start
  std::span<const double> positions;   ///< 3 per node
  std::span<const double> velocities;  ///< 3 per node
  bool solver_converged = true;        ///< as the method reports its iterative solver
};

/// One kind of trouble over the run: when it first appeared, with its figure against the
/// threshold then, and the worst figure and number of frames since.
struct HealthFinding {
  HealthIssue issue;
  int first_frame = 0;
  double first_time = 0.0;
  double first_value = 0.0;
  double threshold = 0.0;
  double worst_value = 0.0;
  int frames = 0;

  /// One line for people: what, in which frame, the figure and the threshold.
  [[nodiscard]] std::string description() const;
};

class SimulationHealth {
 public:
  /// `initial_velocities` (3 per node) and the body's rest positions are the state the energy
  /// and displacement checks measure from; `obstacles` are those the body should stay out of.
  /// Throws std::invalid_argument for a velocity array of the wrong size or a negative
  /// threshold.
  SimulationHealth(const ElasticBody& body, Vec3 gravity, std::vector<Obstacle> obstacles,
                   std::span<const double> initial_velocities, HealthThresholds thresholds = {});

  /// Evaluates one frame; returns the issues seen in it for the first time (each kind is
  /// news once), which findings() then holds. Throws std::invalid_argument on wrong sizes.
  std::vector<HealthIssue> check(const HealthFrame& frame);

  /// Every issue seen so far, in the order they first appeared.
  [[nodiscard]] const std::vector<HealthFinding>& findings() const { return findings_; }
  [[nodiscard]] const HealthFinding& finding(HealthIssue issue) const;
  [[nodiscard]] const HealthThresholds& thresholds() const { return thresholds_; }
  /// L, the rest shape's bounding-box diagonal in m.
  [[nodiscard]] double model_size() const { return model_size_; }

 private:
  /// Records `value` for `issue` when it exceeds `threshold`; true when that is news.
  bool record(HealthIssue issue, const HealthFrame& frame, double value, double threshold);
  [[nodiscard]] double mechanical_energy(std::span<const double> positions,
                                         std::span<const double> velocities) const;

  const ElasticBody* body_;
  Vec3 gravity_;
  std::vector<Obstacle> obstacles_;
  HealthThresholds thresholds_;
  double model_size_ = 0.0;
  double initial_energy_ = 0.0;
  double energy_scale_ = 0.0;     ///< J of the energy check's threshold; 0: not checked
  double initial_speed_ = 0.0;    ///< largest initial node speed, m/s
  std::vector<HealthFinding> findings_;
};

}  // namespace cholsim::fem
