#pragma once
// The factor of a matrix whose pattern stays while its values change a few columns at a time:
// the Newton matrices of the primal–dual active set method (rows held and released fix and free
// columns) and of the augmented Lagrangian method (penalties on the diagonal). The analysis is
// the caller's when its pattern matches — the cloth keeps one from step to step, the augmented
// Lagrangian method hands its own to its polisher — and made once otherwise (the ordering is
// most of it); after the first factorization only the changed columns and their ancestors are
// refactorized, from the retained update blocks (seed 000 §4).
#include <memory>
#include <vector>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/csc_matrix.hpp"

namespace cholsim::solvers::qp {

using linalg::Index;

/// What one call cost.
struct FactorWork {
  double analyze_seconds = 0.0;
  double factor_seconds = 0.0;
  Index changed_columns = 0;  ///< refactorized columns (0 for a full factorization)
};

class ChangingColumnsFactor {
 public:
  /// `analysis` is the caller's, reused when it matches the first matrix's pattern and replaced
  /// by a new one when not; it must outlive this object.
  ChangingColumnsFactor(std::shared_ptr<const factor::Symbolic>& analysis, factor::OrderingMethod ordering,
                        int threads);

  /// Brings the factor to `matrix`: a full factorization the first time or after a failure,
  /// else a refactorization of the `changed` columns (nothing to do when there are none).
  FactorWork update(const linalg::SymmetricCscMatrix& matrix, std::vector<Index> changed);
  /// A full factorization of `matrix`, whose values changed everywhere.
  FactorWork factorize(const linalg::SymmetricCscMatrix& matrix);

  /// False before the first call, and when the last one met a pivot that was not positive.
  [[nodiscard]] bool ok() const { return factor_ != nullptr && factor_->ok(); }
  /// The factor (after a first call).
  [[nodiscard]] const factor::Factor& factor() const { return *factor_; }
  /// Whether the first call found the caller's analysis matching.
  [[nodiscard]] bool reused_analysis() const { return reused_analysis_; }

 private:
  /// The factor object on the caller's analysis, analysing `matrix` when it does not match.
  void make_factor(const linalg::SymmetricCscMatrix& matrix, FactorWork& work);
  [[nodiscard]] factor::FactorOptions factor_options() const;

  std::shared_ptr<const factor::Symbolic>& analysis_;
  factor::OrderingMethod ordering_;
  int threads_;
  std::unique_ptr<factor::Factor> factor_;
  bool reused_analysis_ = false;
};

}  // namespace cholsim::solvers::qp
