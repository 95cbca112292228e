#include "fem/articulated/joint_simulation.hpp"

#include <stdexcept>
#include <string>

#include "fem/articulated/staggered_projections.hpp"

namespace cholsim::fem::articulated {

std::string_view to_string(JointMethod method) {
  switch (method) {
    case JointMethod::frictionless: return "frictionless";
    case JointMethod::bisp: return "bisp";
    case JointMethod::staggered_projections: return "sp";
  }
  return "?";
}

JointMethod parse_joint_method(std::string_view text) {
  for (JointMethod m : {JointMethod::frictionless, JointMethod::bisp, JointMethod::staggered_projections}) {
    if (text == to_string(m)) return m;
  }
  throw std::invalid_argument("unknown joint method '" + std::string(text) + "' (frictionless, bisp or sp)");
}

JointSimulation::JointSimulation(ArticulatedScene scene, JointMethod method, JointFrictionOptions options,
                                 FrictionRows maximal_friction_rows)
    : scene_(std::move(scene)), method_(method) {
  if (!(scene_.time_step > 0.0)) throw std::invalid_argument("joint simulation: the time step must be positive");
  if (options.friction < 0.0) options.friction = scene_.joint_friction_coefficient;
  initial_potential_ = scene_.system.energies(scene_.gravity).potential;
  if (method_ == JointMethod::frictionless && !scene_.constraints.empty()) {
    options.friction = 0.0;  // the constrained frictionless step is BISP's without friction
    bisp_ = std::make_unique<BispStepper>(scene_.system, options);
  }
  if (method_ == JointMethod::bisp) bisp_ = std::make_unique<BispStepper>(scene_.system, options);
  if (bisp_ && !scene_.constraints.empty()) bisp_->set_external_constraints(scene_.system, scene_.constraints);
  if (method_ == JointMethod::staggered_projections) {
    maximal_ = std::make_unique<StaggeredProjections>(
        scene_.system, StaggeredProjectionsOptions{.friction = options, .friction_rows = maximal_friction_rows});
    if (!scene_.constraints.empty()) maximal_->set_external_constraints(scene_.constraints);
  }
}

JointSimulation::~JointSimulation() = default;
JointSimulation::JointSimulation(JointSimulation&&) noexcept = default;
JointSimulation& JointSimulation::operator=(JointSimulation&&) noexcept = default;

JointFrictionStepStats JointSimulation::step() {
  JointFrictionStepStats stats;
  const double h = scene_.time_step;
  if (bisp_) {
    stats = bisp_->step(scene_.system, h, scene_.gravity);
  } else if (maximal_) {
    stats = maximal_->step(h, scene_.gravity);
  } else {
    redmax_step(scene_.system, h, scene_.gravity, terms_);
    stats.converged = true;
  }
  time_ += h;
  return stats;
}

RigidTransform JointSimulation::body_to_world(int link) const {
  return maximal_ ? maximal_->body_to_world(link) : scene_.system.body_to_world(link);
}

Energies JointSimulation::energies() const {
  Energies e = maximal_ ? maximal_->energies(scene_.gravity) : scene_.system.energies(scene_.gravity);
  e.potential -= initial_potential_;
  return e;
}

std::vector<double> JointSimulation::driver_torques() const {
  if (bisp_) return bisp_->driver_torques();
  return maximal_ ? maximal_->driver_torques() : std::vector<double>{};
}

const std::vector<double>& JointSimulation::joint_friction() const {
  if (bisp_) return bisp_->joint_friction();
  if (maximal_) return maximal_->friction_forces();
  return no_friction_;
}

}  // namespace cholsim::fem::articulated
