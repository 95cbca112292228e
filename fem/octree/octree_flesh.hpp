#pragma once
// Character flesh on an octree (seed 001): corotated stabilized hexahedra on the surface-refined
// octree, attached to rigid bones by zero-rest-length springs at embedded points (§8), pushed
// by obstacles through frictional penalty springs at the embedded render surface (§8), stepped
// by backward Euler with lumped masses (the paper does not name its integrator) and Newton's
// method capped as the paper runs it: at most 10 Newton steps a frame and 3 solver iterations a
// Newton step (§10.2), each linear solve by MGPCG (§7) — or MG, plain CG, or cholsim's direct
// Cholesky on the assembled matrix, for the comparisons of the benchmark.
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fem/contact/obstacles.hpp"
#include "fem/octree/octree_hierarchy.hpp"

namespace cholsim::fem::octree {

enum class OctreeLinearSolver { mgpcg, mg, cg, direct };
OctreeLinearSolver parse_octree_solver(const std::string& name);
const char* to_string(OctreeLinearSolver solver);

struct OctreeFleshOptions {
  double young_modulus = 5e4;    ///< Pa — soft flesh
  double poisson_ratio = 0.3;
  double density = 1000.0;       ///< kg/m³
  double time_step = 1.0 / 24.0; ///< one frame of film
  linalg::Vec3 gravity{0.0, -9.81, 0.0};
  int max_newton_steps = 10;     ///< §10.2
  int max_solver_iterations = 3; ///< per Newton step, §10.2
  /// A frame stops early once ‖residual‖ ≤ newton_tolerance·(‖M·g‖ + ‖bone and contact forces‖ at the start).
  double newton_tolerance = 1e-4;
  double solver_tolerance = 1e-6;  ///< relative residual of each linear solve (within the iteration cap)
  OctreeLinearSolver solver = OctreeLinearSolver::mgpcg;
  OctreeLevelsOptions levels;
  double bone_stiffness = 0.0;   ///< N/m per bone point; 0: 1e2·E·h (stiff against the finest elements)
  double contact_stiffness = 0.0;  ///< N/m per surface point in the normal direction; 0: 1e2·E·h
  double tangential_ratio = 0.1;   ///< tangential spring / normal spring (§8: "lower in the tangential direction")
  double friction = 0.5;           ///< Coulomb bound on the tangential spring force
  int threads = 0;
};

/// What one frame (time step) did.
struct OctreeFrameStats {
  int newton_steps = 0;
  int solver_iterations = 0;       ///< summed over the Newton steps
  double initial_residual = 0.0;   ///< ‖g‖ of backward Euler before the first Newton step
  double final_residual = 0.0;     ///< after the last
  double last_linear_residual = 0.0;  ///< relative residual of the last linear solve
  int contacts = 0;                ///< surface points in contact at the end
  /// MGPCG's smoother damping at the end of the frame, and how often this frame halved it
  /// after finding the cycle indefinite (the halving is kept for the following frames).
  double damping = 0.0;
  int damping_halvings = 0;
  double seconds = 0.0;
  double solve_seconds = 0.0;      ///< linear solves (with the hierarchy's preparation)
};

class OctreeFlesh {
 public:
  /// How often one linear solve may halve the damping before the indefinite cycle is an error.
  static constexpr int kMaxDampingHalvings = 4;

  /// The body of `tree` at rest, with bone points and render-surface points embedded (world,
  /// rest). Throws std::invalid_argument naming a point outside the body.
  OctreeFlesh(const BalancedOctree& tree, std::vector<linalg::Vec3> bone_points,
              std::vector<linalg::Vec3> surface_points, const OctreeFleshOptions& options);
  ~OctreeFlesh();

  void set_obstacles(std::vector<Obstacle> obstacles) { obstacles_ = std::move(obstacles); }
  /// One backward Euler step from `time`, the bone points moved to `bone_targets` at its end.
  const OctreeFrameStats& step(double time, std::span<const linalg::Vec3> bone_targets);

  [[nodiscard]] const OctreeMesh& mesh() const { return hierarchy_->mesh(0); }
  [[nodiscard]] const OctreeHierarchy& hierarchy() const { return *hierarchy_; }
  /// The hierarchy. After a step its finest level holds the springs and linearization of the
  /// step's last residual, the other levels and the smoothers those of the last Newton solve:
  /// call prepare_hierarchy() before solving with it.
  [[nodiscard]] OctreeHierarchy& hierarchy() { return *hierarchy_; }
  /// Readies every level for the current positions — the system a next Newton step would
  /// solve (benchmarks solve other right-hand sides with it). Before stop 47 the benchmark
  /// solved with a finest level newer than its smoothers and coarse levels: the indefinite
  /// cycles it reported at 128–256 cells came from that mismatch.
  void prepare_hierarchy();
  [[nodiscard]] std::span<const double> positions() const { return x_; }
  [[nodiscard]] std::span<const double> velocities() const { return v_; }
  /// The finest level's node positions at rest (3 per node), computed from the mesh.
  [[nodiscard]] std::vector<double> rest_positions() const;
  /// Deformed render-surface points (3 per point).
  [[nodiscard]] std::vector<double> surface_positions() const;
  /// ‖F − R‖ (the Green-like strain magnitude) per finest element at the current positions.
  [[nodiscard]] std::vector<double> element_strain() const;
  [[nodiscard]] double elastic_energy() const;
  [[nodiscard]] double kinetic_energy() const;
  [[nodiscard]] std::size_t memory_bytes() const;
  [[nodiscard]] const OctreeFleshOptions& options() const { return options_; }

 private:
  /// springs_ = the bone and contact springs at positions x (contact anchors are the previous step's).
  void update_springs(std::span<const double> x, double time, std::span<const linalg::Vec3> bone_targets);
  /// g = M(x − x̂)/Δt² − f(x), returning ‖g‖; linearizes the finest level at x on the way.
  double residual(std::span<const double> x, std::span<double> g);
  /// Solves A·dx = rhs with the chosen solver within the caps; returns iterations.
  int solve(std::span<const double> rhs, std::span<double> dx, double& relative_residual);
  void update_contact_anchors();

  OctreeFleshOptions options_;
  std::unique_ptr<OctreeHierarchy> hierarchy_;
  linalg::Index bone_count_ = 0;
  std::vector<double> x_, v_;
  std::vector<Obstacle> obstacles_;
  linalg::Index surface_count_ = 0;  ///< surface points, embedded after the bone points
  /// The surface points in contact at the end of the last step, by point, each with its
  /// tangential anchor as target (only these: a surface has far more points than touch).
  struct ContactAnchor {
    linalg::Index point = 0;
    linalg::Vec3 target;
  };
  std::vector<ContactAnchor> contact_anchors_;
  std::vector<EmbeddedSpring> springs_;
  std::vector<std::uint8_t> touching_;  ///< per surface point: 1 when inside an obstacle (update_springs)
  /// A step's vectors (3 values per node), kept so that a time step allocates none of them.
  struct StepWork {
    std::vector<double> iterate;     ///< Newton's x
    std::vector<double> residual;    ///< g, then −g as the right-hand side
    std::vector<double> correction;  ///< dx
  } work_;
  std::unique_ptr<solvers::DirectCoarseSolver> direct_;  ///< the `direct` solver's factor
  double bone_stiffness_ = 0.0, contact_stiffness_ = 0.0;
  OctreeFrameStats stats_;
};

/// Lamé parameters (μ, λ) of Young's modulus and Poisson's ratio.
Lame lame_parameters(double young_modulus, double poisson_ratio);

}  // namespace cholsim::fem::octree
