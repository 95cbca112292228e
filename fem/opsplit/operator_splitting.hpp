#pragma once
// Operator-splitting corotated FEM (seed 003, Kugelstadt, Koschier, Bender 2018, §3.1–3.2,
// Algorithms 1 and 2). Implicit Euler as minimization (eq. 1) of the corotated energy (eq. 3)
// is split in two:
//  * the stretching term μ‖F − R‖² is a weighted linear least-squares problem once the
//    per-element rotations R_t are fixed for the step (eq. 10). Its normal equations (eq. 12)
//        (M + DᵀKD)·Δx = DᵀK·(r − D·x̃),   K = diag(2μV_tΔt²·I₉),  Δx = x − x̃
//    have a matrix that never changes and is the same n×n matrix for x, y and z, so it is
//    analysed and factored once (factor::Factor) and each step is one solve with three
//    right-hand sides, on a copy of L laid out for repeated solves (factor::TiledSolveFactor).
//    Fixed nodes have Δx = 0: their rows and columns are removed (eq. 12 and the remark after
//    it), so they stay exactly where they are.
//  * the volume term is replaced by the fixed-corotated λ/2·V(det F − 1)² as compliant
//    constraints (eq. 13–16), a few Gauss–Seidel sweeps per step (fem/volume_constraints).
// Rotations come from the analytic polar decomposition (seed 003 §3.3) of F(x̃), warm-started
// from the previous step's quaternion, vectorized over elements
// (linalg/polar_decomposition_batch), in the same pass over the elements as F(x̃) and the
// right-hand side (fem/opsplit_element_pass). Collisions are position projection onto obstacles
// (fem/position_projection). Element loops use `threads` threads.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "factor/numeric/cholesky_factor.hpp"
#include "factor/solve/supernodal_solve_tiled.hpp"
#include "fem/contact/obstacles.hpp"
#include "fem/elements/elastic_body.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

/// The arithmetic of the passes over the elements: F, the APD and the right-hand side (lines
/// 4–8), and the volume constraints (lines 10–14). Positions, velocities, the right-hand side's
/// sums and the solve stay in double either way.
enum class ElementPrecision {
  double_values,  ///< 8 elements per 64-byte vector
  /// 16 elements per vector, as seed 003's own code computes (float AVX). Edges x_k − x₀ are
  /// formed in double and rounded, and nodes move by float displacements added to double
  /// positions, so rounding perturbs each step's motion (by ~10⁻⁶ of it over ten steps of the
  /// tests), not the positions.
  single_values,
};

/// Where each step's APD starts an element's rotation (seed 003 §3.3 warm-starts it).
enum class RotationWarmStart {
  previous,      ///< at the previous step's rotation q_n, as seed 003 does
  /// At q_n ∘ (q_{n−1}⁻¹ ∘ q_n): the last step's rotation taken once more. For a body turning
  /// at a steady rate the APD then starts within the rate's change instead of one step's
  /// rotation from its answer, and most element blocks stop after one Newton step instead of
  /// two (same stopping rule, same accuracy; results differ from `previous` by the APD's
  /// tolerance squared).
  extrapolated,
};

struct OperatorSplittingOptions {
  double time_step = 0.01;             ///< Δt, s (seed 003 Table 1: 10 ms)
  Vec3 gravity{0.0, -9.81, 0.0};       ///< m/s²
  /// Gauss–Seidel sweeps over the volume constraints per step (seed 003 Table 1: one).
  /// 0 leaves out the volume term.
  int volume_iterations = 1;
  /// The APD stops a lane after a step ‖Δω‖ below this (radians). Newton converges
  /// quadratically, so the rotation after that last step is off by about τ² — 1e-3 rad gives
  /// ≈ 1e-6 rad ≈ 6e-5°, far below seed 003 §4's 0.05° bar, in two iterations per step for
  /// the usual per-step rotation (one to move, one to see the move is done).
  double rotation_tolerance = 1e-3;
  int rotation_max_iterations = 20;    ///< per element and step
  RotationWarmStart rotation_warm_start = RotationWarmStart::previous;
  /// False keeps every element's rotation at its current value (no APD): the linear model
  /// of eq. 11 with frozen r, for comparisons against a direct solve of eq. 11.
  bool update_rotations = true;
  std::vector<Index> fixed_nodes;      ///< kept exactly at their positions
  std::vector<Obstacle> obstacles;     ///< collided with by position projection
  int threads = 2;                     ///< element loops and the factorization
  /// How the copy of L solved every step stores its values (factor::TiledSolveFactor). The
  /// step solves for Δx = x − x̃, the correction to the predicted positions (eq. 12), so L's
  /// entries rounded to single precision perturb Δx by about κ·10⁻⁷ of itself, not the
  /// positions: on the 55K bar 5·10⁻¹² m after one step and 2·10⁻⁹ m after 60, against
  /// centimetres of motion per step. Single precision halves the bytes the solve streams; the
  /// default, `automatic`, keeps double where L fits in a core's L2 cache anyway (small meshes,
  /// where converting the entries would cost more than the bytes save).
  factor::TiledSolveFactor::Precision solve_precision = factor::TiledSolveFactor::Precision::automatic;
  /// Where the step's solve runs: `cpu` (the tiled copy above), `gpu` (factor::GpuSolveFactor:
  /// L copied to the GPU once, in double precision; the constructor throws std::runtime_error
  /// with the reason when no GPU is usable), or `automatic` (the GPU when one is usable).
  factor::FactorDevice solve_device = factor::FactorDevice::cpu;
  /// The element passes' arithmetic (see ElementPrecision). Double keeps results independent
  /// of vector width; single takes half the instructions per element.
  ElementPrecision element_precision = ElementPrecision::double_values;
};

/// Seconds spent in one step, by phase of Algorithm 2.
struct OperatorSplittingTimings {
  /// F(x̃), the APD and DᵀK(r − Dx̃) (lines 4–8): one fused pass over the elements
  /// (fem/opsplit_element_pass), so the right-hand side's share is counted here.
  double rotations = 0.0;
  double right_hand_side = 0.0;     ///< 0: lines 7–8 are part of `rotations`
  double solve = 0.0;               ///< the prefactored three-column solve (line 9)
  double volume_constraints = 0.0;  ///< lines 10–14
  double collisions = 0.0;
  double total = 0.0;
};

struct OperatorSplittingStepStatistics {
  OperatorSplittingTimings timings;
  /// Vector APD iterations, summed over element blocks (8 elements a block in double, 16 in single).
  std::int64_t rotation_iterations = 0;
  Index rotation_fallbacks = 0;          ///< elements the scalar APD recomputed (inverted, far off)
  Index collision_nodes = 0;             ///< nodes projected out of obstacles
};

/// The one-time work of Algorithm 1.
struct OperatorSplittingSetup {
  Index free_nodes = 0;     ///< unknowns per coordinate system
  Index fixed_nodes = 0;
  Index elements = 0;
  std::int64_t matrix_nnz_lower = 0;
  std::int64_t nnz_l = 0;
  double assemble_seconds = 0.0;
  double analyze_seconds = 0.0;
  double factorize_seconds = 0.0;
  std::string solve_device = "cpu";  ///< where the step's solve runs: "cpu" or "gpu (<device name>)"
  std::string solve_precision = "double";  ///< how the solved copy of L is stored: "single" or "double"
};

class OperatorSplittingSimulation {
 public:
  /// Assembles M + DᵀKD over the free nodes, analyses and factors it (Algorithm 1). Throws
  /// std::invalid_argument for a bad option (Δt ≤ 0, a fixed node out of range, negative
  /// iterations) and std::runtime_error if the matrix is not positive definite (no free node
  /// has mass, which validated meshes exclude).
  OperatorSplittingSimulation(ElasticBody body, OperatorSplittingOptions options);
  /// Another body of the same scene: the copy starts in `other`'s state and shares its setup —
  /// the body, the node numbering, the matrix and its factor, the element and constraint data —
  /// so that a copy costs its state only (positions, velocities, rotations, multipliers and the
  /// step's work arrays), and all copies step with one L in the cache.
  /// The shared factor's solve keeps work arrays: copies must not step at the same time.
  OperatorSplittingSimulation(const OperatorSplittingSimulation& other);
  OperatorSplittingSimulation& operator=(const OperatorSplittingSimulation&) = delete;
  ~OperatorSplittingSimulation();
  OperatorSplittingSimulation(OperatorSplittingSimulation&&) noexcept;
  OperatorSplittingSimulation& operator=(OperatorSplittingSimulation&&) noexcept;

  /// One time step (Algorithm 2).
  OperatorSplittingStepStatistics step();

  /// Replaces positions and velocities (3·nodes each). Fixed nodes take the given positions
  /// and zero velocity. Rotations keep their warm starts. Throws std::invalid_argument on a
  /// size mismatch or a non-finite value (naming the entry).
  void set_state(std::span<const double> positions, std::span<const double> velocities);

  [[nodiscard]] double time() const;
  [[nodiscard]] std::span<const double> positions() const;   ///< 3·nodes
  [[nodiscard]] std::span<const double> velocities() const;  ///< 3·nodes
  /// det F of each element at the current positions (V/V_rest; < 0 when inverted).
  [[nodiscard]] std::vector<double> volume_ratios() const;
  /// Each element's rotation from the last step (identity before the first).
  [[nodiscard]] std::vector<linalg::Quaternion> element_rotations() const;
  /// The prefactored matrix M + DᵀKD restricted to the free nodes, lower triangle; row i is
  /// node system_nodes()[i].
  [[nodiscard]] const linalg::SymmetricCscMatrix& system_matrix() const;
  [[nodiscard]] std::span<const Index> system_nodes() const;
  [[nodiscard]] const OperatorSplittingSetup& setup() const;
  [[nodiscard]] const ElasticBody& body() const;
  [[nodiscard]] const OperatorSplittingOptions& options() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Many bodies stepped by one call, as in seed 003's scenes (§4, Fig. 1: 105 and 320 solids of a
/// few meshes). Copies of a body (add_copy) share its setup — L, the element and constraint
/// data — so that a scene of many copies streams one L and one set of element constants
/// from the cache instead of one per body, which is where stepping separate simulations of the
/// same mesh loses time (seed 003's code keeps a factor per body). A step steps every body once,
/// in order, each exactly as it would step alone.
class OperatorSplittingBatch {
 public:
  /// Adds a body of its own; returns its index.
  Index add(OperatorSplittingSimulation simulation);
  /// Adds a copy of body `body` (its current state, its shared setup; set_state places it);
  /// returns its index. std::out_of_range for a bad index.
  Index add_copy(Index body);
  /// Steps every body once. The statistics are summed over the bodies.
  OperatorSplittingStepStatistics step();
  [[nodiscard]] Index size() const { return static_cast<Index>(bodies_.size()); }
  /// std::out_of_range for a bad index.
  [[nodiscard]] OperatorSplittingSimulation& body(Index index);

 private:
  std::vector<OperatorSplittingSimulation> bodies_;
};

/// The nodes whose coordinate along `axis` (0 = x, 1 = y, 2 = z) lies within `fraction` of
/// the mesh's extent from its maximum: e.g. the top 2% by height for (1, 0.02). At least one
/// node (the highest) is returned. Throws std::invalid_argument for axis ∉ {0,1,2} or a
/// fraction outside [0, 1].
std::vector<Index> nodes_near_top(const TetMesh& mesh, int axis, double fraction);

}  // namespace cholsim::fem
