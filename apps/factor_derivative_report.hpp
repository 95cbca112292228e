#pragma once
// `cholsim factor --derivative [--derivative-file FILE.mtx]`: the factor's time derivative of
// seed 002 ch. 5 beside the plain factorization — L and L̇ together (analytic, issue 6), how
// exactly L̇ satisfies L̇·Lᵀ + L·L̇ᵀ = Ȧ, and how far the forward and central finite
// differences of eq. 5.8 (default steps) are from it.
#include <functional>
#include <memory>
#include <string>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/csc_matrix.hpp"
#include "report.hpp"

namespace cholsim::apps {

struct DerivativeCommandOptions {
  bool enabled = false;        ///< --derivative (implied by --derivative-file)
  std::string file;            ///< Ȧ from this Matrix Market file (A's pattern); empty → built in
  [[nodiscard]] bool active() const { return enabled || !file.empty(); }
};

/// The built-in Ȧ: A's own values modulated smoothly along the index,
/// Ȧ(i, j) = A(i, j)·cos(π·(i + j)/n) — symmetric, on A's pattern, of A's size, not definite.
linalg::SymmetricCscMatrix smooth_value_perturbation(const linalg::SymmetricCscMatrix& a);

/// Runs the derivative part for `a` on `symbolic` (`repeat` timed calls, medians), adds a
/// "factor derivative" section to `report` and returns the status: a Ȧ whose size or pattern
/// differs from A's comes back as size_mismatch / pattern_mismatch (message "derivative: …"),
/// a failing factorization as its status; nothing is added then. `factor_seconds` is the
/// median plain factorization, the reference of derivative_ratio.
factor::FactorStatus add_derivative_report(Report& report, const linalg::SymmetricCscMatrix& a,
                                           const std::shared_ptr<const factor::Symbolic>& symbolic,
                                           const factor::FactorOptions& factor_options,
                                           const DerivativeCommandOptions& options, int repeat,
                                           double factor_seconds,
                                           const std::function<void(const std::string&)>& progress);

}  // namespace cholsim::apps
