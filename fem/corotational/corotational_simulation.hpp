#pragma once
// Corotational linear-tetrahedron elastodynamics (seed 000, Hecht et al. 2012) with the four
// solvers the paper compares, behind one interface:
//  * exact            — §3.1 eq. 1–3: per-element rotations Rₑ from the inversion-safe SVD,
//                       implicit Euler in velocity form (eq. 2), A = M + ΔtC + Δt²K
//                       reassembled and fully refactored every step (the reference);
//  * conjugate_gradient — the same exact system solved by Jacobi-PCG (§5.2 baseline);
//  * stiffness_warping  — §3.3 eq. 4: A assembled once at rest, bracketed by per-node
//                       rotations (Horn's quaternion fit on each node's one-ring);
//  * warp_canceling     — §4: element matrices of eq. 5 (per-element rotations that cancel
//                       the per-node ones), per-element error ‖f_e,cor − f_e,apx‖ (§4.2),
//                       supernode badness = max over its elements, target-quality /
//                       target-time / hybrid scheduling (§4.4) and incremental
//                       refactorization from retained update blocks (§4.3), selective
//                       damping of bad elements left stale (§4.4).
// Collisions are explicit penalty forces against fem::Obstacle shapes with Coulomb-like
// friction (seed 000 §5). One step() is one implicit Euler step of options.time_step.
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "fem/contact/obstacles.hpp"
#include "fem/elements/elastic_body.hpp"

namespace cholsim::fem {

enum class CorotationalMethod { exact, conjugate_gradient, stiffness_warping, warp_canceling };

/// Explicit penalty contact (seed 000 §5): a node at depth d inside an obstacle receives
/// k·d along the normal plus a damping force on the normal approach speed, and a tangential
/// friction force bounded by friction·(normal force).
struct PenaltyContact {
  /// N/m per node; 0 picks k = m_column/Δt², the mass of one node column of the body over Δt²
  /// (default_contact_stiffness in fem/contact/penalty_contact.hpp explains the choice): a resting
  /// body sinks g·Δt² (2.7 mm at 60 Hz), an impact at speed v about v·Δt.
  double stiffness = 0.0;
  double damping_ratio = 0.5;   ///< fraction of critical damping of a node's contact spring
  double friction = 0.5;        ///< Coulomb coefficient μ
  /// False: the paper's explicit springs, whose force enters the right-hand side only — cheap,
  /// but stable only while k·Δt² stays below a few times the mass moving with a node (so at
  /// 60 Hz a spring stiff enough to hold a piston's load on a 1 MPa body blows up, and a
  /// warp-canceled matrix, stale and wrapped in per-node rotations, narrows the margin further).
  /// True: each spring's stiffness k·nnᵀ also enters A at its node (integrated implicitly, as
  /// the elastic forces are), which lifts that limit; the columns of the nodes whose contact
  /// changes are then refactored every step (warp-canceling: with the marked supernodes, through
  /// the retained update blocks). Not for stiffness warping, whose factor never changes.
  bool implicit = false;
  /// Implicit contact under warp-canceling: a node's block in A is left as it is while it
  /// differs from the current Δt²·k·Rᵀnnᵀ R by at most this fraction of it (Frobenius norm) —
  /// a stale block, like a stale element matrix, only slows the contact's implicit response, the
  /// force itself is exact. Resting contacts then cost no refactorization. 0: always update.
  double implicit_block_tolerance = 1e-3;
};

/// What happens to the elements left stale with a large error (seed 000 §4.4).
enum class SelectiveDamping { none, velocity_scaling, shape_matching };

struct WarpCancelingOptions {
  /// Target-quality threshold τ on supernode badness; every supernode above it is updated
  /// (with its ancestors). τ = 0 updates every supernode whose badness is nonzero, which
  /// reproduces the exact corotational step. Errors are the §4.2 ‖f_e,cor − f_e,apx‖ with
  /// f = R(M + ΔtC + Δt²K)Rᵀẋ, a momentum in kg·m/s, so τ is absolute (the paper's 5·10⁻³).
  /// The elements of a supernode are those whose first (home) supernode it is: every entry
  /// of an element lands in its home or an ancestor, so updating a marked supernode's elements
  /// never touches an unmarked supernode (fem/corotational/warp_canceling.hpp).
  double tau = 5e-3;
  /// Target-time budget as a fraction of the full factorization's cost (e.g. 0.33), or in
  /// seconds (seed 000 §4.4, Table IV's budget limits). With a budget, only supernodes whose
  /// badness exceeds `tau` are candidates, worst first, while their cost (with unmarked
  /// ancestors) fits: τ says what is worth updating, the budget caps what is spent. Set
  /// tau = 0 for pure target-time. With both budgets set, the tighter one applies. Costs are
  /// the factor's SupernodeCostModel seconds (Factor::scheduling_costs), seeded by a warm
  /// full factorization at setup and refined by every update.
  std::optional<double> budget_fraction;
  std::optional<double> budget_seconds;
  /// The hybrid schedule's must-update threshold (§4.4): supernodes above it are updated
  /// whatever the budget, so no extremely bad element is left stale. +∞ = off.
  double must_update_tau = std::numeric_limits<double>::infinity();
  /// Force every per-node rotation to the identity: thin sheets (§4.1).
  bool identity_node_rotations = false;
  SelectiveDamping damping = SelectiveDamping::shape_matching;
  /// Elements of stale supernodes whose error exceeds this (kg·m/s, like tau) are damped:
  /// velocity scaling by threshold/error, or shape matching with strength 1 − threshold/badness
  /// toward the supernode group's rigid motion (fem/corotational/selective_damping.hpp).
  double damping_threshold = 1.0;
};

struct CorotationalOptions {
  CorotationalMethod method = CorotationalMethod::warp_canceling;
  double time_step = 1.0 / 60.0;  ///< Δt, s
  double mass_damping = 0.0;      ///< Rayleigh α in C = αM + βK
  double stiffness_damping = 0.0; ///< Rayleigh β
  Vec3 gravity{0.0, -9.81, 0.0};
  std::vector<Obstacle> obstacles;
  PenaltyContact contact;
  double cg_tolerance = 1e-4;     ///< relative residual of the CG method (§5.2)
  std::int64_t cg_max_iterations = 10'000;
  WarpCancelingOptions warp_canceling;
  int threads = 0;                ///< factorization threads; 0 = hardware concurrency
};

/// Seconds spent in one step, the rows of seed 000 Table II.
struct StepTimings {
  double element_rotations = 0.0;
  double node_rotations = 0.0;
  double error_estimation = 0.0;  ///< §4.2 errors, the §4.4 schedule and selective damping
  double matrix_update = 0.0;   ///< assembling A (exact, CG) or its changed elements (WC)
  double factor_update = 0.0;   ///< full factorization (exact) or incremental update (WC)
  double right_hand_side = 0.0;
  double solve = 0.0;
  double collisions = 0.0;
  double total = 0.0;

  /// Adds another step's timings row by row (for means over frames).
  StepTimings& operator+=(const StepTimings& other);
};

struct StepStatistics {
  StepTimings timings;
  Index updated_elements = 0;       ///< elements whose matrix entries were reassembled
  Index updated_supernodes = 0;     ///< supernodes recomputed in the factor
  double recomputed_flop_fraction = 0.0;  ///< of a full factorization
  std::int64_t cg_iterations = 0;
  bool cg_converged = true;         ///< false when CG stopped at cg_max_iterations
  double max_element_error = 0.0;   ///< largest ‖f_e,cor − f_e,apx‖ before the update
  Index damped_elements = 0;
  Index contact_nodes = 0;

  /// Adds a later step of the same frame (several steps per output frame): times, work and
  /// counts add up; the largest element error and contact count are kept; CG has converged
  /// only if it did in every step.
  StepStatistics& operator+=(const StepStatistics& other);
};

/// Sizes of the direct solver's data, for reports.
struct FactorSummary {
  double full_factor_seconds = 0.0;  ///< the initial full factorization
  std::int64_t factor_bytes = 0;
  std::int64_t retained_update_bytes = 0;
  Index supernodes = 0;
  std::int64_t nnz_l = 0;
};

class CorotationalSimulation {
 public:
  /// Sets up the body at rest (positions = rest positions, zero velocities), the assembly
  /// pattern, and for the direct methods the symbolic analysis and first factorization.
  CorotationalSimulation(ElasticBody body, CorotationalOptions options);
  ~CorotationalSimulation();
  CorotationalSimulation(CorotationalSimulation&&) noexcept;
  CorotationalSimulation& operator=(CorotationalSimulation&&) noexcept;

  /// Advances one implicit Euler step of options().time_step.
  StepStatistics step();

  /// Replaces the state (3·nodes each), e.g. to start with a velocity or a rotated pose.
  /// Throws std::invalid_argument on a size mismatch or a non-finite value.
  void set_state(std::span<const double> positions, std::span<const double> velocities);

  [[nodiscard]] double time() const;
  [[nodiscard]] std::span<const double> positions() const;   ///< 3·nodes
  [[nodiscard]] std::span<const double> velocities() const;  ///< 3·nodes
  /// Per element, from the last step: the error ‖f_e,cor − f_e,apx‖ of §4.2 (0 for the exact
  /// methods), the badness of the supernode it was charged to, and whether its matrix entries
  /// were reassembled this step (1) or left stale (0).
  [[nodiscard]] std::span<const double> element_errors() const;
  [[nodiscard]] std::span<const double> element_badness() const;
  [[nodiscard]] std::span<const std::uint8_t> element_updated() const;
  [[nodiscard]] const ElasticBody& body() const;
  [[nodiscard]] const CorotationalOptions& options() const;
  /// Zero-filled for the CG method.
  [[nodiscard]] FactorSummary factor_summary() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cholsim::fem
