#pragma once
// The fixed-corotated material (Stomakhin et al. 2012, the volume term seed 003 §3.2 takes
// over) and implicit Euler with it solved exactly by Newton's method — the accurate,
// expensive reference the operator-splitting method approximates:
//   Ψ(F) = μ‖F − R‖² + λ/2·(det F − 1)²,   R = polar rotation of F (inversion-safe SVD),
//   x(t+Δt) = argmin_x 1/(2Δt²)·‖x − x̃‖²_M + Σ_t V_t Ψ(F_t(x))          (seed 003 eq. 1).
// Each Newton iteration assembles the Hessian with every element's ∂P/∂F projected onto the
// positive semidefinite cone (definiteness fix, so every step is a descent direction),
// refactors it on the fixed pattern analysed once (factor::Factor::factorize with the same
// Symbolic), and takes a backtracking (Armijo) line search step.
#include <memory>
#include <span>
#include <vector>

#include "fem/elements/elastic_body.hpp"
#include "fem/materials/hyperelastic.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

/// Ψ(F) above: energy_density of HyperelasticModel::fixed_corotated.
double fixed_corotated_energy_density(const Mat3& f, linalg::LameParameters material);
/// P = ∂Ψ/∂F = 2μ(F − R) + λ(det F − 1)·cof F: first_piola_stress of the same model.
Mat3 fixed_corotated_stress(const Mat3& f, linalg::LameParameters material);
/// ∂P/∂F (stress_derivative of the same model); with project_to_psd its negative eigenvalues
/// are set to zero (the definiteness fix).
StressDerivative fixed_corotated_stress_derivative(const Mat3& f, linalg::LameParameters material,
                                                   bool project_to_psd);

struct FixedCorotatedNewtonOptions {
  double time_step = 0.01;        ///< Δt, s
  Vec3 gravity{0.0, -9.81, 0.0};
  std::vector<Index> fixed_nodes;
  /// Stop when ‖∇E‖ ≤ relative_tolerance·‖∇E at the predictor x̃‖.
  double relative_tolerance = 1e-9;
  int max_iterations = 30;
  /// Project each element's ∂P/∂F onto the PSD cone. The corotated term is indefinite under
  /// compression (twist modes with σᵢ + σⱼ < 2), where the fix trades Newton's quadratic
  /// convergence for guaranteed descent; false uses the exact Hessian (which then has to be
  /// positive definite as a whole: M/Δt² usually dominates at small Δt).
  bool definiteness_fix = true;
  int threads = 2;                ///< element loops and the factorization
};

struct FixedCorotatedNewtonStatistics {
  int iterations = 0;                   ///< Newton iterations (factorizations) this step
  std::vector<double> gradient_norms;   ///< ‖∇E‖ before each iteration and at the end
  int line_search_halvings = 0;
  /// The gradient reached the tolerance. False also when the line search could not lower
  /// the energy any more (rounding floor reached first).
  bool converged = false;
  double assemble_seconds = 0.0;
  double factorize_seconds = 0.0;
  double total_seconds = 0.0;
};

class FixedCorotatedNewtonSimulation {
 public:
  /// Builds the pattern and its analysis. Throws std::invalid_argument for Δt ≤ 0 or a fixed
  /// node out of range.
  FixedCorotatedNewtonSimulation(ElasticBody body, FixedCorotatedNewtonOptions options);
  ~FixedCorotatedNewtonSimulation();
  FixedCorotatedNewtonSimulation(FixedCorotatedNewtonSimulation&&) noexcept;
  FixedCorotatedNewtonSimulation& operator=(FixedCorotatedNewtonSimulation&&) noexcept;

  /// One implicit Euler step. Throws std::runtime_error if a Hessian cannot be factored.
  FixedCorotatedNewtonStatistics step();
  /// Replaces positions and velocities (3·nodes each); std::invalid_argument on a size
  /// mismatch or a non-finite value.
  void set_state(std::span<const double> positions, std::span<const double> velocities);

  /// The incremental potential E(x) of the next step (x̃ from the current state) and its
  /// gradient (fixed nodes' entries zero) — exposed for derivative checks.
  [[nodiscard]] double incremental_potential(std::span<const double> x) const;
  [[nodiscard]] std::vector<double> incremental_potential_gradient(std::span<const double> x) const;

  [[nodiscard]] double time() const;
  [[nodiscard]] std::span<const double> positions() const;
  [[nodiscard]] std::span<const double> velocities() const;
  [[nodiscard]] const ElasticBody& body() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cholsim::fem
