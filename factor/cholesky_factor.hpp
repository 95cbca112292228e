#pragma once
// The numeric supernodal Cholesky factor P·A·Pᵀ = L·Lᵀ and its solves.
//
//   auto symbolic = factor::analyze(A);          // pattern only, reusable
//   factor::Factor L(symbolic);
//   if (!L.factorize(A).ok()) { ... L.status().column ... }
//   L.solve(b);                                   // in place, user numbering
//
// The factorization is multifrontal (seed 000 §4.3): each supernode assembles A's columns and
// its children's update blocks into its m×k factor block and an (m−k)×(m−k) update block,
// then runs potrf / trsm / syrk; update blocks are freed as soon as the parent has consumed
// them. Supernodes run tree-parallel (tree_scheduler.hpp).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "factor/factor_status.hpp"
#include "factor/symbolic.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::factor {

struct FactorOptions {
  /// Threads used in all, tree tasks and BLAS together; 0 means all hardware threads.
  int threads = 0;
  /// Check the values for NaN/Inf before factorizing (one pass over A).
  bool check_finite = true;
};

struct FactorStats {
  double seconds = 0.0;          ///< wall time of the whole factorize call
  double flops = 0.0;            ///< flops of the dense kernels (the analysis' count)
  double gflops = 0.0;           ///< flops / seconds / 1e9
  int threads = 1;
  std::int64_t factor_bytes = 0;         ///< L's values
  std::int64_t peak_update_bytes = 0;    ///< most bytes held in update blocks at once
  Index parallel_subtrees = 0;   ///< subtrees run tree-parallel (phase 1)
  Index top_supernodes = 0;      ///< supernodes run with threaded BLAS (phase 2)
};

struct SolveStats {
  double seconds = 0.0;
  int refinement_steps = 0;
  double residual = 0.0;  ///< ‖b − A·x‖∞ / ‖b‖∞ after refinement (when refinement ran)
};

class Factor {
 public:
  explicit Factor(std::shared_ptr<const Symbolic> symbolic);

  /// Numeric factorization of `a`, which must have the analysed pattern. Repeatable with new
  /// values. Returns the status (also kept in status()); never throws for bad values.
  const FactorStatus& factorize(const linalg::SymmetricCscMatrix& a, const FactorOptions& options = {});

  [[nodiscard]] const FactorStatus& status() const { return status_; }
  [[nodiscard]] bool ok() const { return status_.ok(); }
  [[nodiscard]] const Symbolic& symbolic() const { return *symbolic_; }
  [[nodiscard]] const std::shared_ptr<const Symbolic>& symbolic_ptr() const { return symbolic_; }
  [[nodiscard]] const FactorStats& stats() const { return stats_; }

  /// Solves A·x = b in place (user numbering). Throws std::logic_error if not factored.
  void solve(std::span<double> b) const;
  /// Solves A·X = B in place for every column of B (n rows, any number of columns).
  void solve(linalg::DenseView b) const;
  /// Solves A·x = b with iterative refinement against `a` until the relative residual drops
  /// below `tolerance` or `max_steps` corrections were applied.
  SolveStats solve_refined(const linalg::SymmetricCscMatrix& a, std::span<double> b,
                           int max_steps = 2, double tolerance = 1e-15) const;

  /// The supernodal values: supernode s's m×k column-major block starts at
  /// symbolic().value_offset(s); rows are symbolic().rows(s) in elimination numbering.
  [[nodiscard]] std::span<const double> values() const { return values_; }
  /// L as a CSC matrix in elimination numbering (explicit zeros of amalgamation kept).
  [[nodiscard]] linalg::CscMatrix factor_matrix() const;

 private:
  void require_factored(const char* operation) const;
  void forward_substitution(linalg::DenseView y) const;
  void backward_substitution(linalg::DenseView y) const;

  std::shared_ptr<const Symbolic> symbolic_;
  std::vector<double> values_;
  FactorStatus status_;
  FactorStats stats_;
};

}  // namespace cholsim::factor
