#pragma once
// One articulated scene run by one method — what `cholsim joints` and the benchmark drive:
//   frictionless          REDMAX's linearly implicit step, no joint friction (eq. 3.6);
//   bisp                  bilateral staggered projections (Algorithm 3.2), reduced coordinates;
//   staggered_projections the baseline of Algorithm 3.1: free bodies in maximal coordinates,
//                         the joints as contact constraints with position stabilization, the
//                         contact QP and the friction QP alternated.
#include <memory>
#include <string_view>
#include <vector>

#include "fem/articulated/articulated_scenes.hpp"
#include "fem/articulated/bilateral_staggered_projections.hpp"

namespace cholsim::fem::articulated {

enum class JointMethod { frictionless, bisp, staggered_projections };

std::string_view to_string(JointMethod method);
/// "frictionless" | "bisp" | "sp"; throws std::invalid_argument naming the choices otherwise.
JointMethod parse_joint_method(std::string_view text);

class StaggeredProjections;

class JointSimulation {
 public:
  /// Takes the scene; `options.friction` defaults to the scene's μ when negative.
  /// `maximal_friction_rows` poses staggered projections' friction QP (per contact tangent by
  /// default, as the thesis' SP; per 1-DOF joint to match BISP's QP size).
  JointSimulation(ArticulatedScene scene, JointMethod method, JointFrictionOptions options = {.friction = -1.0},
                  FrictionRows maximal_friction_rows = FrictionRows::per_tangent);
  ~JointSimulation();
  JointSimulation(JointSimulation&&) noexcept;
  JointSimulation& operator=(JointSimulation&&) noexcept;

  /// Advances one time step of the scene.
  JointFrictionStepStats step();

  [[nodiscard]] double time() const { return time_; }
  [[nodiscard]] JointMethod method() const { return method_; }
  [[nodiscard]] const ArticulatedScene& scene() const { return scene_; }
  [[nodiscard]] int link_count() const { return scene_.system.link_count(); }
  /// The body's frame in the world (its centre; the cuboid's sides are scene().system.body(i).sides).
  [[nodiscard]] RigidTransform body_to_world(int link) const;
  /// Kinetic and potential energy now; the potential is measured from the start (REDMAX's H).
  [[nodiscard]] Energies energies() const;
  /// The joints' friction forces of the last step per reduced DOF (BISP), or per tangent row
  /// (staggered projections); empty for frictionless runs.
  [[nodiscard]] const std::vector<double>& joint_friction() const;
  /// The drivers' torques of the last step (scene().constraints.drivers order; BISP only).
  [[nodiscard]] std::vector<double> driver_torques() const;

 private:
  ArticulatedScene scene_;
  JointMethod method_;
  double time_ = 0.0;
  double initial_potential_ = 0.0;
  RedmaxStepTerms terms_;
  std::unique_ptr<BispStepper> bisp_;
  std::unique_ptr<StaggeredProjections> maximal_;
  std::vector<double> no_friction_;
};

}  // namespace cholsim::fem::articulated
