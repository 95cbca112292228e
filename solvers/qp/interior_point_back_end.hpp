#pragma once
// The linear algebra behind solve_interior_point (interior_point.hpp): the matrix
//   K_ρ = H + CᵀDC + ρEᵀE + δI
// of the Newton systems of the problem the iterations run on — the original problem
// (sparse back end) or the Schur-reduced one (interior_point_schur.cpp).
#include <memory>
#include <span>
#include <vector>

#include "factor/numeric/factor_status.hpp"
#include "factor/schur/schur_complement.hpp"
#include "linalg/dense_matrix.hpp"
#include "solvers/qp/qp_problem.hpp"

namespace cholsim::solvers::qp {

/// Times of the per-iteration linear algebra.
struct NewtonMatrixTimes {
  double analyze_seconds = 0.0;              ///< sparse: the symbolic analysis of K_ρ's pattern
  double first_factorization_seconds = 0.0;  ///< sparse: the first factorization (retaining update blocks)
  double refactor_seconds = 0.0;             ///< every later one
  double max_refactor_seconds = 0.0;
  int refactorizations = 0;
  double solve_seconds = 0.0;
};

/// K_ρ of one working problem; ρ is fixed at construction, D and δ change every iteration.
class NewtonMatrix {
 public:
  virtual ~NewtonMatrix() = default;
  /// Factors K_ρ for D = diag(scaling) (size q) and δ = regularization; the status names the
  /// failing column in the original problem's numbering.
  virtual factor::FactorStatus factorize(std::span<const double> scaling, double regularization) = 0;
  /// Solves K_ρ·X = B in place (rows: the working problem's variables).
  virtual void solve(linalg::DenseView b) = 0;
  [[nodiscard]] const NewtonMatrixTimes& times() const { return times_; }

 protected:
  /// Adds a factorization's time to times_.
  void record_factorization(double seconds);
  NewtonMatrixTimes times_;
};

/// ρEᵀE (n×n, lower triangle), the part of K_ρ that does not change between iterations
/// besides H.
linalg::SymmetricCscMatrix equality_penalty_matrix(const linalg::CscMatrix& equality, double penalty, Index n);

/// The sparse back end on `problem` itself: K_ρ's pattern (H, CᵀC, EᵀE and the diagonal)
/// analyzed once, factored with retained update blocks, then refactorized with only the
/// inequality-constrained columns marked changed.
std::unique_ptr<NewtonMatrix> make_sparse_newton_matrix(const QpProblem& problem, double equality_penalty,
                                                        int threads);

/// The one-off reduction of the Schur-reduced back end: partial factorization of H with the
/// constrained columns as the Schur set, and the forward phase of b (seed 004 eqs. 14–16).
class SchurReduction {
 public:
  SchurReduction(const QpProblem& problem, int threads);

  /// The partial factorization's status: not ok when H11 is not positive definite.
  [[nodiscard]] const factor::FactorStatus& status() const { return partial_.status(); }
  /// min ½x₂ᵀSx₂ − b̃₂ᵀx₂ subject to E₂x₂ = e, C₂x₂ ≥ c (x₂: the Schur set, in its order).
  [[nodiscard]] const QpProblem& reduced() const { return reduced_; }
  /// K_ρ of the reduced problem: S + ρE₂ᵀE₂ once, C₂ᵀDC₂ + δI as SchurSystem updates.
  [[nodiscard]] std::unique_ptr<NewtonMatrix> newton_matrix(double equality_penalty, int threads) const;
  /// x₂ of a full x.
  [[nodiscard]] std::vector<double> schur_part(std::span<const double> x) const;
  /// The backward phase: the full x whose Schur part is x₂ and whose x₁ minimizes the
  /// objective for it, x₁ = H11⁻¹(b₁ − H12x₂) (seed 004 eq. 18).
  [[nodiscard]] std::vector<double> recover(std::span<const double> x2);

  [[nodiscard]] double analyze_seconds() const { return analyze_seconds_; }
  [[nodiscard]] double factorization_seconds() const { return factorization_seconds_; }
  [[nodiscard]] double phase_seconds() const { return phase_seconds_; }

 private:
  void build_reduced_problem(const QpProblem& problem);

  // The times first: the constructor's initializer list writes analyze_seconds_.
  double analyze_seconds_ = 0.0, factorization_seconds_ = 0.0, phase_seconds_ = 0.0;
  std::vector<Index> schur_set_;
  factor::SchurComplementFactor partial_;
  linalg::DenseMatrix forward_b_;  ///< the forward phase of b (elimination numbering)
  QpProblem reduced_;
};

}  // namespace cholsim::solvers::qp
