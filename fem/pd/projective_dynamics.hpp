#pragma once
// Projective dynamics with localized collisions (seed 004, Wang et al. 2020): the
// simulation loop of §4.5, Algorithm 1, and the baselines it is measured against.
//
// Partition (§4.2): the collision-prone elements E_c are the tets holding a proxy, the
// collision-prone nodes N_c their free vertices, everything else collision-safe (E_s, N_s).
// The constant matrix K is partially factored once with N_c ordered last (§4.3), leaving the
// dense Schur complement S = K_cc − K_cs·K_ss⁻¹·K_sc. Collision springs touch N_c only, so
// they change S alone: S + W·C·Wᵀ (eq. 19), refactored densely per inner iteration.
//
// Algorithm 1 as reconstructed in the issue from §4.5's prose: per outer iteration the local
// step on E_s, the right-hand side and one forward substitution; then J inner iterations of
// {detect on x_c, local step on E_c, right-hand side on N_c, S + ΔS, dense solve}; then one
// backward substitution. With the rotations of E_s fixed, x_s is eliminated exactly, so the
// inner loop is block-coordinate descent on the whole energy; J = 1 is one whole-mesh PD
// iteration.
//
// The baselines run the same iteration with a different solve for the polluted system
// K + ΔK (so all of them follow one trajectory up to their tolerance): `full` refactors the
// sparse matrix each time (numerically only when the springs stay inside K's pattern, with a
// new analysis otherwise); `pcg` is Jacobi-preconditioned CG; `factor_pcg` is CG
// preconditioned by the collision-free factor of K.
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "factor/schur/schur_system.hpp"
#include "fem/pd/pd_collisions.hpp"
#include "fem/pd/pd_model.hpp"

namespace cholsim::fem {

class PdGlobalSolver;

enum class PdSolver { schur, full, pcg, factor_pcg };

std::string_view to_string(PdSolver solver);
/// Parses "schur", "full", "pcg" or "factor-pcg"; throws std::invalid_argument otherwise.
PdSolver parse_pd_solver(std::string_view name);

/// How the Schur path solves S + W·C·Wᵀ in an inner iteration.
enum class PdSchurUpdate {
  automatic,  ///< the faster for the iteration's springs: SchurLowRankSolver::prefer_low_rank
  dense,      ///< seed 004 §4.4: add ΔS to S and refactor densely (m³/3)
  low_rank,   ///< Woodbury with S⁻¹ computed once: p³/3 + O(m²) for p springs (CPU only)
};

struct PdOptions {
  PdModelOptions model;
  PdSolver solver = PdSolver::schur;
  int outer_iterations = 1;  ///< PD loops per frame (§5.1: one gives a smooth animation)
  int inner_iterations = 3;  ///< J of Algorithm 1 (§5.1: 1, 3 or 5)
  bool collisions = true;    ///< false: proxies never collide (the untangle test of Fig. 4)
  factor::SchurDevice device = factor::SchurDevice::cpu;
  PdSchurUpdate schur_update = PdSchurUpdate::automatic;
  /// The dense route's factorization on the CPU. Double by default: on the elbow's S + ΔS
  /// (stiff penalty springs) the single-precision factor's refinement stalls and falls back to
  /// dpotrf, so mixed took 2× the time there (docs/benchmarks.md, issue 18).
  factor::SchurPrecision schur_precision = factor::SchurPrecision::double_precision;
  double pcg_tolerance = 1e-8;            ///< relative residual per coordinate
  std::int64_t pcg_max_iterations = 20'000;
  PdCollisionOptions collision;
};

/// Seconds per phase of one frame, summed over its iterations (Algorithm 1's steps).
struct PdPhaseTimes {
  double local_step = 0.0;       ///< rotations, E_s and E_c
  double right_hand_side = 0.0;  ///< gathering B
  double forward = 0.0;          ///< Schur: forward substitution (eq. 16)
  double detection = 0.0;
  double schur = 0.0;            ///< Schur: ΔS, dense potrf and potrs (3 RHS)
  double backward = 0.0;         ///< Schur: backward substitution (eq. 18)
  double full_solve = 0.0;       ///< baselines: the whole polluted solve
  double inner = 0.0;            ///< the inner iterations, whole (detection to solve)
  double total = 0.0;
};

struct PdFrameStats {
  int frame = 0;
  PdPhaseTimes times;
  int outer_iterations = 0;
  int inner_iterations = 0;
  Index active_springs = 0;       ///< at the last detection
  PdDetectionStats detection;     ///< at the last detection
  std::int64_t cg_iterations = 0; ///< pcg/factor-pcg: summed over coordinates and solves
  Index reanalyses = 0;           ///< full: new analyses for springs outside K's pattern
  Index low_rank_solves = 0;      ///< schur: inner solves that took the Woodbury route
  bool excised = false;           ///< the scene's excision happened at the start of this frame
  double excision_seconds = 0.0;  ///< cutting the mesh, and assembling, analysing and factoring anew
};

struct PdSetupStats {
  Index nodes = 0;
  Index free_nodes = 0;
  Index elements = 0;
  Index prone_elements = 0;  ///< |E_c|
  Index prone_nodes = 0;     ///< |N_c| = m, the order of S
  std::int64_t matrix_nnz_lower = 0;
  std::int64_t nnz_l = 0;              ///< partial (schur) or full factor of K
  double fill_increase = 0.0;          ///< schur: nnz(L) constrained / unconstrained
  double assemble_seconds = 0.0;
  double analyze_seconds = 0.0;
  double factorize_seconds = 0.0;
  double collision_setup_seconds = 0.0;
  std::string device_note;
};

class PdSimulation {
 public:
  /// Builds the model, the partition and the solver's factorization. `scene` must outlive the
  /// simulation (an excision works on a copy). Throws std::invalid_argument for a bad scene or option and
  /// std::runtime_error when K is not positive definite (a quasistatic body held by nothing).
  PdSimulation(const PdScene& scene, PdOptions options);
  ~PdSimulation();
  PdSimulation(PdSimulation&&) noexcept;
  PdSimulation& operator=(PdSimulation&&) noexcept;

  /// Advances one frame: bones move to frame()+1, then outer × (1 + inner) iterations. At the
  /// scene's excision frame the excised tets (and the nodes only they used) are removed first,
  /// the state carried over to the new numbering, K assembled, analysed and partially
  /// factored again, and the sutures join the collision springs from then on (§5.3).
  PdFrameStats step();

  [[nodiscard]] int frame() const { return frame_; }
  /// The scene simulated now: the one given, or after an excision the cut copy (new numbering).
  [[nodiscard]] const PdScene& scene() const { return *scene_; }
  [[nodiscard]] const PdSetupStats& setup() const { return setup_; }
  [[nodiscard]] const PdModel& model() const { return *model_; }
  [[nodiscard]] std::span<const double> positions() const { return positions_; }
  [[nodiscard]] std::span<const double> velocities() const { return velocities_; }
  /// Replaces positions and velocities (3 per node); Dirichlet nodes keep their rest values.
  /// Throws std::invalid_argument on a size mismatch or a non-finite entry.
  void set_state(std::span<const double> positions, std::span<const double> velocities);
  /// Turns collision handling on or off from the next frame (Fig. 4's untangle test).
  void set_collisions(bool enabled) { options_.collisions = enabled; }

  [[nodiscard]] std::span<const Index> prone_elements() const { return prone_elements_; }
  [[nodiscard]] std::span<const Index> prone_nodes() const { return prone_nodes_; }
  /// Per proxy, its penetration depth at the last detection (0 when free).
  [[nodiscard]] std::span<const double> proxy_depths() const { return proxy_depths_; }
  /// The springs of the last detection.
  [[nodiscard]] std::span<const SpringRow> collision_springs() const { return collision_springs_; }
  /// E at the current positions with the current projections, attachments of the current
  /// frame and the last detection's springs.
  [[nodiscard]] double energy() const;

 private:
  void build();
  double excise();
  [[nodiscard]] std::vector<SpringRow> suture_springs() const;
  void run_outer_iteration(PdFrameStats& stats);
  void write_free_solution(linalg::ConstDenseView x);

  PdOptions options_;
  const PdScene* scene_;
  std::unique_ptr<PdScene> excised_scene_;  ///< the scene after its excision, owned here
  std::vector<Suture> sutures_;             ///< active after the excision (new numbering)
  double suture_stiffness_ = 0.0;
  std::unique_ptr<PdModel> model_;
  std::vector<Index> prone_elements_;
  std::vector<Index> safe_elements_;
  std::vector<Index> prone_nodes_;
  ElementIncidence safe_incidence_;
  ElementIncidence prone_incidence_;
  std::unique_ptr<PdCollisionDetector> detector_;
  std::unique_ptr<PdGlobalSolver> solver_;
  PdSetupStats setup_;
  std::vector<double> positions_;
  std::vector<double> velocities_;
  std::vector<double> inertia_target_;
  std::vector<SpringRow> attachments_;
  std::vector<SpringRow> collision_springs_;
  std::vector<double> proxy_depths_;
  // Work arrays of an outer iteration (free × 3), kept so a frame allocates nothing of size n.
  linalg::DenseMatrix b_outer_;
  linalg::DenseMatrix b_inner_;
  linalg::DenseMatrix x_;
  int frame_ = 0;
};

}  // namespace cholsim::fem
