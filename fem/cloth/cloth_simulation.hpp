#pragma once
// The EOL cloth time stepper, seed 002 Algorithm 2.1: detect collisions, remesh conformally to
// the sharp features they found (§2.6), build the constraints (§2.5), and take one
// linearly implicit step as the QP of eq. 2.12 — solved by our own primal–dual active set
// method started from the previous step's active rows, and where that does not settle by the
// interior point method on the Schur complement of the constrained DOFs (solvers/qp/).
//
// The three methods of §2.7 share the loop: `lagrangian_regular` keeps the mesh and sees only
// box faces; `lagrangian_conformal` remeshes at features with averaged normals (or the cone);
// `eol` makes the feature vertices Eulerian-on-Lagrangian.
#include <array>
#include <chrono>
#include <compare>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "fem/cloth/cloth_collisions.hpp"
#include "fem/cloth/cloth_constraints.hpp"
#include "fem/cloth/cloth_dofs.hpp"
#include "fem/cloth/cloth_mesh.hpp"
#include "fem/cloth/cloth_obstacles.hpp"
#include "fem/cloth/cloth_step_system.hpp"
#include "fem/cloth/conformal_remesher.hpp"
#include "solvers/qp/augmented_lagrangian.hpp"
#include "solvers/qp/interior_point.hpp"
#include "solvers/qp/primal_dual_active_set.hpp"

namespace cholsim::fem::cloth {

/// A cloth vertex moved by script in a time window, found by its material coordinates (which
/// remeshing keeps: scripted vertices are cloth corners, never collapsed or made Eulerian).
struct ScriptedMotion {
  double material_u = 0.0, material_v = 0.0;
  Vec3 velocity;  ///< zero: held fixed
  double from = 0.0;
  double until = 1e300;
};

struct ClothSimulationOptions {
  double time_step = 5e-3;
  Vec3 gravity{0.0, 0.0, -9.8};
  ClothMaterial material;
  ConstraintOptions constraints;
  CollisionOptions collisions;
  RemeshOptions remesh;
  /// The velocity QP's solver. A velocity within 1e-6 (scaled KKT residual) is accepted when
  /// the iterations go no further: the WIRE scene's QP at step 124 reached 2e-7 and then
  /// diverged (solvers/qp/interior_point.hpp, acceptable_tolerance).
  solvers::qp::InteriorPointOptions qp{.acceptable_tolerance = 1e-6};
  /// Try the primal–dual active set method first, its guess the rows active in the previous
  /// step (matched by vertex, kind, obstacle and normal): the contact set changes little from
  /// step to step, and a settled guess costs one factorization and a few partial
  /// refactorizations against the interior point method's 12–17 factorizations. When it does
  /// not settle within twice as many guesses as the last interior point solve took iterations
  /// (10 to active_set.max_iterations), the interior point method solves the QP. Off: the
  /// interior point method always.
  bool active_set_first = true;
  solvers::qp::PrimalDualActiveSetOptions active_set{.max_iterations = 30, .acceptable_tolerance = 1e-6};
  /// The last resort when the interior point method fails too (solvers/qp/augmented_lagrangian.hpp),
  /// started from the velocities at the step's start.
  solvers::qp::AugmentedLagrangianOptions augmented_lagrangian{.acceptable_tolerance = 1e-6};
  /// The augmented Lagrangian method before the interior point method, not after it: replayed
  /// alone it is 1.5–3× faster on the QPs the active set method leaves, but the steps after its
  /// answers failed the active set method more often (docs/benchmarks.md, issue 20).
  bool lagrangian_before_interior_point = false;
  /// ε of a proximal term ½Σⱼ εHⱼⱼ(q̇ⱼ − q̇ⱼᵏ)² about the velocities at the step's start: EOL
  /// makes H only semi-definite (a vertex's material velocity along its feature carries no
  /// inertia), and on such a QP both methods can fail where the strictly convex one is easy —
  /// WIRE at one thread, step 242: the interior point method stalled at a residual of 1.4e-4 and
  /// the active set cycled on one contact row. It also makes the answer unique. Relative to
  /// each column's own diagonal: EOL maps stiffness through F (eq. 2.10), and on WIRE, where
  /// thin material triangles wrap the wire, H's largest entry reached 2e5–2e8 by step 80 (the
  /// vertex masses are ~3e-5 kg). About q̇ᵏ, not zero: a term about zero damps every velocity
  /// by δ/(m + δ) a step — with δ = 1e-12·max|H|, as it was, the WIRE cloth lost most of its
  /// velocity each step from step 80 on. About q̇ᵏ it dissipates nothing; it adds εHⱼⱼ of
  /// inertia to a column, a relative change of ε(1 + h²Kⱼⱼ/mⱼ) ≈ 30ε on the scenes' cloth.
  /// 0: off.
  double proximal_term = 1e-9;
  /// Solve the QP in per-vertex contact frames with single-vertex equalities eliminated
  /// (fem/cloth/velocity_coordinates.hpp); off: the QP as built, for comparison.
  bool reduce_coordinates = true;
  /// Coulomb friction coefficient of Bridson's velocity filter (§2.7 FRICTION); 0: none.
  double friction = 0.0;
  /// An EOL or conformal vertex whose normal velocity would carry it further than this (m) off
  /// its feature in one step leaves the feature (lift-off, §2.6.2); a smaller lift is put
  /// back onto the feature. The hysteresis keeps a fluttering contact from being released and
  /// re-inserted (remeshing both times) every step. Default: a tenth of the detection
  /// threshold.
  double release_distance = 5e-4;
  /// How many times a step may solve its QP again with the face contacts of the free vertices
  /// its solution would carry into a box (vertices beyond the detection reach at the step's
  /// start that the step accelerated); 0: never, detection at the step's start only.
  int late_contact_passes = 3;
};

/// One step's work in the phases of Table 2.1, and what the step looked like.
struct ClothStepStats {
  double collision_seconds = 0.0;  ///< %CD
  double remesh_seconds = 0.0;     ///< %RM
  double fill_seconds = 0.0;       ///< %MF: forces, stiffness, inertia, constraints
  double qp_seconds = 0.0;         ///< %VI: the velocity QP
  double total_seconds = 0.0;
  Index faces = 0, vertices = 0, eol_vertices = 0, conformal_vertices = 0;
  Index equality_rows = 0, inequality_rows = 0, active_rows = 0;
  Index schur_size = 0;  ///< constrained DOFs: the QP's Schur complement size
  int qp_iterations = 0;  ///< the active set guesses and the interior point iterations, summed
  int active_set_solves = 0;      ///< QPs the active set method solved (late-contact passes each count)
  int augmented_lagrangian_solves = 0;  ///< QPs the augmented Lagrangian method solved (where the others failed)
  int interior_point_solves = 0;  ///< QPs the interior point method solved (the active set's fallback)
  std::string qp_status;
  std::string qp_message;  ///< the QP solver's explanation (why it failed, or at which residual it accepted)
  Index released = 0;           ///< feature vertices that lifted off this step
  /// Face contacts the QP's velocities revealed (vertices out of detection reach at the step's
  /// start that the step would have carried into a box); each pass re-solves the QP.
  Index late_contacts = 0;
  double kinetic_energy = 0.0;  ///< ½ q̇ᵀMq̇ at the start of the step
  double potential_energy = 0.0;
  double min_gap = 0.0;  ///< the least signed distance of a free vertex to a box (penetration < 0)
  bool ok = true;        ///< false when the QP did not reach optimality (status says why)
  bool remesh_converged = true;  ///< the remesher's loop ended before its iteration cap
};

class ClothSimulation {
 public:
  ClothSimulation(ClothMesh cloth, ClothObstacles obstacles, std::vector<ScriptedMotion> scripted,
                  ClothSimulationOptions options);

  /// One step of Algorithm 2.1.
  ClothStepStats step();

  [[nodiscard]] const ClothMesh& cloth() const { return cloth_; }
  [[nodiscard]] const ClothObstacles& obstacles() const { return obstacles_; }
  [[nodiscard]] const ClothSimulationOptions& options() const { return options_; }
  [[nodiscard]] double time() const { return time_; }
  /// Per vertex: the world velocity ẋʷ = ẋ − FẊ (eq. 2.2), 3 per vertex.
  [[nodiscard]] std::vector<double> world_velocities() const;
  /// The last step's velocity QP as solved (in the reduced coordinates when they are on), for
  /// replaying QPs in the benchmark.
  [[nodiscard]] const solvers::qp::QpProblem& last_problem() const { return last_problem_; }
  /// The last step's constraint rows and the QP's generalized velocities q̇ (before the
  /// friction filter), numbered as the mesh was during that step — for checks.
  [[nodiscard]] const ClothConstraints& last_constraints() const { return last_constraints_; }
  [[nodiscard]] const std::vector<double>& last_velocities() const { return last_velocities_; }
  /// Per vertex: the contact force of the last step (N), 3 per vertex.
  [[nodiscard]] const std::vector<double>& contact_forces() const { return contact_forces_; }

 private:
  std::vector<ScriptedVertex> active_scripts() const;
  void remesh(ClothStepStats& stats);
  /// The QP of eq. 2.12 for `system` and `rows` (in per-vertex contact frames when
  /// reduce_coordinates is on; the solution in q̇ either way); `solved` receives the QP as solved.
  [[nodiscard]] solvers::qp::InteriorPointResult solve_velocity_qp(const ClothStepSystem& system,
                                                                   const ClothConstraints& rows,
                                                                   solvers::qp::QpProblem& solved,
                                                                   ClothStepStats& stats);
  /// Adds the proximal term (options) about `centre` (q̇ at the step's start) to the QP.
  void add_proximal_term(solvers::qp::QpProblem& problem, std::span<const double> centre) const;
  /// `current` in the QP's coordinates, computed only when a method asks for a starting point.
  using StartingPoint = std::function<std::vector<double>()>;
  /// solve_velocity_qp's solver choice on the QP as it is solved: the active set method from
  /// the previous step's active rows, the interior point method when it does not settle, the
  /// augmented Lagrangian method from `start` when that fails.
  [[nodiscard]] solvers::qp::InteriorPointResult solve_qp(const solvers::qp::QpProblem& problem,
                                                          const ClothConstraints& rows, std::span<const double> current,
                                                          const StartingPoint& start, ClothStepStats& stats);
  /// The augmented Lagrangian method on `problem` from `start`: true, and its answer in
  /// `result`, when it is optimal; otherwise its reason is added to result's message.
  bool solve_by_augmented_lagrangian(const solvers::qp::QpProblem& problem, const StartingPoint& start,
                                     solvers::qp::InteriorPointResult& result, ClothStepStats& stats);
  void apply_friction(const ClothConstraints& rows, const solvers::qp::QpSolution& solution, const ClothDofs& dofs,
                      std::vector<double>& velocities) const;
  void record_contact_forces(const ClothConstraints& rows, const solvers::qp::QpSolution& solution);
  Index settle_feature_vertices(const ClothConstraints& rows, std::span<const double> velocities);
  void advance_material_coordinates();
  void clamp_into_domain();
  /// ẋʷ (eq. 2.2) of every vertex for generalized velocities q̇ numbered by `dofs`.
  [[nodiscard]] std::vector<double> world_velocities_of(std::span<const double> velocities, const ClothDofs& dofs) const;

  /// What a contact row is, apart from its vertex: kind, obstacle, world normal.
  struct RowType {
    RowKind kind;
    int obstacle;
    std::array<int, 3> normal;  ///< the world normal in thousandths
    auto operator<=>(const RowType&) const = default;
  };
  /// What identifies a constraint row of a Lagrangian vertex from one step to the next, for
  /// the active set's guess: its vertex by material coordinates (remeshing renumbers vertices;
  /// a Lagrangian vertex's material coordinates never change) and its type.
  struct RowKey {
    std::array<double, 2> vertex;
    RowType type;
    auto operator<=>(const RowKey&) const = default;
  };
  /// An active row by its vertex's world position at the end of its step: an EOL vertex
  /// slides in material space but stays on its feature in the world.
  struct PlacedRow {
    RowType type;
    Index vertex;  ///< numbered as in its step (remeshing renumbers)
    Vec3 position;
  };
  [[nodiscard]] RowKey key_of(const ClothConstraints& rows, std::size_t row) const;
  /// The active set method's guess for `rows`: the contact rows active in the last solved QP
  /// and those the velocities `current` (q̇ at the step's start) violate.
  [[nodiscard]] std::vector<char> guess_active_rows(const ClothConstraints& rows, std::span<const double> current) const;
  void remember_active_rows(const ClothConstraints& rows, const solvers::qp::QpSolution& solution);

  ClothStepAssembler assembler_;  ///< keeps the matrix pattern while the mesh does not change
  solvers::qp::PrimalDualActiveSetSolver active_set_solver_;  ///< keeps H's analysis while the mesh does not change
  solvers::qp::AugmentedLagrangianSolver augmented_lagrangian_solver_;  ///< the last resort (keeps its analysis)
  std::vector<RowKey> previous_active_rows_;     ///< sorted: the rows active in the last solved QP
  std::vector<PlacedRow> previous_active_places_;  ///< the same rows by their vertices' world positions
  int interior_point_iterations_ = 0;  ///< of the last interior point solve (the active set's guess budget)
  solvers::qp::QpProblem last_problem_;
  ClothConstraints last_constraints_;
  std::vector<double> last_velocities_;
  ClothMesh cloth_;
  ClothObstacles obstacles_;
  std::vector<ScriptedMotion> scripted_;
  ClothSimulationOptions options_;
  double time_ = 0.0;
  std::vector<double> contact_forces_;
};

std::string_view to_string(ClothMethod method);
/// "lagrangian-regular", "lagrangian-conformal" or "eol"; throws std::invalid_argument.
ClothMethod parse_cloth_method(std::string_view name);

}  // namespace cholsim::fem::cloth
