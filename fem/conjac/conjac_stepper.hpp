#pragma once
// CONJAC (seed 002 ch. 4, §4.3): a few *dynamic* degrees of freedom are integrated in time,
// every other one is moved quasistatically so that its net force stays zero, through the
// condensation Jacobian J_qd = −K_qq⁻¹K_qd (eq. 4.6), v = J·v_d with J = [I; J_qd] (eq. 4.7).
//
// It is a Schur complement in disguise. With H = −K (∇²V, SPD on the free DOFs of a held
// body) factored partially with the dynamic DOFs as the Schur set (factor/schur/),
// H = [L₁₁ 0; L₂₁ I]·[I 0; 0 S]·[L₁₁ᵀ L₂₁ᵀ; 0 I]:
//   * J_qd = −L₁₁⁻ᵀL₂₁ᵀ — the backward phase applied to [0; I], one blocked backward solve
//     with 3n_d columns (the thesis pays 3n_d full solves);
//   * JᵀHJ = H_dd − L₂₁L₂₁ᵀ = S, which the partial factorization returns;
//   * the stabilization b_q = −(1/h)·K_qq⁻¹f_q (eq. 4.12) — one more column, forward and back.
// A step (Alg. 4.1, linearly implicit Euler): solve the small dense system
// Jᵀ(M − βh²K)J·v_d = Jᵀ(M·v⁰ + h·f) (eq. 4.11), i.e. (JᵀMJ + βh²S)·v_d = Jᵀ(Mv⁰ + hf), then
// v_q = J_qd·v_d and x += h·v, x_q += h·γ·b_q (eq. 4.13). With no dynamic DOF every step is a
// γ-scaled Newton step toward equilibrium (quasistatic motion); with every DOF dynamic it is
// the full model.
//
// LinearlyImplicitStepper is that full model (VANILLA, eq. 4.10, Alg. 4.2): (M + βh²H)·v =
// M·v⁰ + h·f with a full factorization every step — the baseline of §4.5.
#include <memory>
#include <span>
#include <vector>

#include "factor/schur/schur_complement.hpp"
#include "linalg/dense_matrix.hpp"
#include "solvers/integrators/mechanical_system.hpp"

namespace cholsim::fem {

using linalg::Index;

struct ConjacOptions {
  double time_step = 5e-3;   ///< h, s
  double beta = 1.0;         ///< β of eq. 4.10: numerical damping on the h²K term
  double gamma = 1.0 / 3.0;  ///< γ of eq. 4.13: the stabilization's share of a Newton step
  int threads = 0;           ///< factorization threads (0: all)
};

/// Wall time of the phases of one step (Fig. 4.3's split).
struct StepPhases {
  double fill = 0.0;     ///< f and K (gradient and Hessian of the potential)
  double factor = 0.0;   ///< the (partial) factorization
  double solves = 0.0;   ///< triangular solves: J and b_q (CONJAC), v (the full model)
  double other = 0.0;    ///< the reduced dense system, J·v_d, position update
  [[nodiscard]] double total() const { return fill + factor + solves + other; }
};

/// The full model, linearly implicit Euler (VANILLA, seed 002 eq. 4.10).
class LinearlyImplicitStepper {
 public:
  LinearlyImplicitStepper(solvers::MechanicalSystem& system, ConjacOptions options);
  ~LinearlyImplicitStepper();

  /// One step from time `time` to time + h: the system is set to time + h (prescribed nodes
  /// in place), then x and v (free DOFs) advance. Throws std::runtime_error when M + βh²H is
  /// not positive definite.
  void step(double time, std::vector<double>& x, std::vector<double>& v);
  [[nodiscard]] const StepPhases& last_phases() const { return phases_; }

 private:
  solvers::MechanicalSystem& system_;
  ConjacOptions options_;
  linalg::SymmetricCscMatrix hessian_;
  linalg::SymmetricCscMatrix matrix_;  ///< M + βh²H
  std::vector<double> gradient_;       ///< ∇V, kept between steps
  std::vector<linalg::Offset> diagonal_;
  std::unique_ptr<factor::Factor> factor_;
  StepPhases phases_;
};

/// CONJAC (seed 002 §4.3) on a mechanical system whose free DOFs are held (−K_qq SPD).
class ConjacStepper {
 public:
  /// `dynamic_dofs`: the free DOFs integrated in time (usually the three of each dynamic
  /// node), in the order of v_d; may be empty (quasistatic motion) or all of them (the full
  /// model, through a dense n×n system: for tests). Analyses the pattern once with them last.
  ConjacStepper(solvers::MechanicalSystem& system, std::vector<Index> dynamic_dofs, ConjacOptions options);
  ~ConjacStepper();

  /// Adaptivity (seed 002 §4.4): which dynamic DOFs are integrated in time (1) and which move
  /// quasistatically for now (0), one flag per dynamic DOF in their order; all start active.
  /// The inactive ones stay in the Schur set and are condensed out of S densely each step, so
  /// switching costs no analysis.
  void set_active(std::span<const char> active);
  [[nodiscard]] std::span<const char> active() const { return active_; }

  /// One step (Alg. 4.1 lines 4–8) from `time` to time + h, like LinearlyImplicitStepper's.
  /// Throws std::runtime_error when H_qq is not positive definite.
  void step(double time, std::vector<double>& x, std::vector<double>& v);

  /// J = [I; J_qd] at `x` (free DOFs × active dynamic DOFs, user numbering: row i is free DOF
  /// i, column a the a-th active one), and S = JᵀHJ in the same order — for tests and tools.
  struct Condensation {
    linalg::DenseMatrix jacobian;
    linalg::DenseMatrix reduced_hessian;
  };
  [[nodiscard]] Condensation condensation(std::span<const double> x);

  [[nodiscard]] const StepPhases& last_phases() const { return phases_; }
  [[nodiscard]] std::span<const Index> dynamic_dofs() const { return dynamic_dofs_; }
  /// ‖f_q‖∞ at the start of the last step: how far the quasistatic DOFs were from balance.
  [[nodiscard]] double last_quasistatic_force() const { return quasistatic_force_; }

 private:
  // Evaluates f (into force_) and H at x and factors H partially; then the backward phase on
  // [0; C] and the forward + backward phase on [f_q'; 0] into columns_: J, then H_q'q'⁻¹f_q'
  // (q' the quasistatic DOFs and the inactive dynamic ones).
  void condense(std::span<const double> x);
  // From S and active_: the active and inactive positions, S_II's factor, C_I and S on A.
  void split_active();

  solvers::MechanicalSystem& system_;
  std::vector<Index> dynamic_dofs_;
  std::vector<char> is_dynamic_;
  std::vector<Index> position_;  ///< position_[i]: free DOF i's place among dynamic_dofs_, or −1
  std::vector<char> active_;     ///< per dynamic DOF
  std::vector<Index> active_dofs_, inactive_dofs_;  ///< places among dynamic_dofs_
  linalg::DenseMatrix reduced_stiffness_;  ///< S on A after condensing I
  linalg::DenseMatrix inactive_coupling_;  ///< C_I = −S_II⁻¹S_IA
  linalg::DenseMatrix inactive_factor_;    ///< Cholesky factor of S_II
  ConjacOptions options_;
  linalg::SymmetricCscMatrix hessian_;
  std::unique_ptr<factor::SchurComplementFactor> partial_;
  std::vector<double> force_;
  linalg::DenseMatrix columns_;  ///< n × (|A| + 1): J, then H_q'q'⁻¹f_q' (zero on active rows)
  std::vector<double> stabilization_rhs_;  ///< [f_q; 0]
  std::vector<double> weighted_;           ///< M^½·J on a tile of rows, for JᵀMJ
  std::vector<double> root_masses_;        ///< M^½
  std::vector<double> stabilization_column_;  ///< the forward phase's y for [f_q'; 0]
  std::vector<double> momentum_;           ///< M·v⁰ + h·f
  double quasistatic_force_ = 0.0;
  StepPhases phases_;
};

}  // namespace cholsim::fem
