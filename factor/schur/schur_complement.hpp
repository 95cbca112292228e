#pragma once
// Partial factorization with a dense Schur complement, and the three-phase solve
// (seed 004 §4.3–4.4; also the condensation of seed 002 ch. 4 and the contact QP's dual).
//
// With the Schur set ordered last, P·A·Pᵀ = [A11 A12; A21 A22] = [L11 0; L21 I]·[I 0; 0 S]·
// [L11ᵀ L21ᵀ; 0 I] with S = A22 − L21·L21ᵀ (eq. 14). The multifrontal factorization computes
// L11 and L21 and stops at the Schur supernode, whose assembled front *is* S.
//
//   factor::AnalyzeOptions options;
//   options.schur_set = collision_prone_unknowns;           // user numbering; S's order
//   factor::SchurComplementFactor partial(factor::analyze(A, options));
//   partial.factorize(A);                                   // L11, L21 and S
//   factor::SchurSystem schur(partial.schur_complement(), partial.schur_set());
//   schur.refactor();
//   partial.solve(schur, b);                                // forward, Schur solve, backward
//
// or phase by phase, as seed 004's Algorithm 1 does to iterate on the Schur part alone:
//
//   DenseMatrix y(n, r);
//   partial.forward(b, y.view());                  // y₁ = L11⁻¹b₁, b̃₂ = b₂ − L21·y₁ (eq. 16)
//   auto b2 = partial.schur_rows(y.view());        // b̃₂, Schur numbering: any number of
//   schur.solve(b2);                               //   updates, refactorizations and solves
//   partial.backward(y.view(), x);                 // x₁ = L11⁻ᵀ(y₁ − L21ᵀx₂) (eq. 18)
//
// Changing only A22's values changes S, never L11 or L21; with retained update blocks
// (Factor::refactorize) only the Schur supernode — a reassembly — is recomputed.
#include <memory>
#include <span>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/schur/schur_system.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::factor {

class SchurComplementFactor {
 public:
  /// `symbolic` comes from analyze() with AnalyzeOptions::schur_set (an empty set gives a full
  /// factorization and a 0×0 S; everything in the set gives S = A).
  explicit SchurComplementFactor(std::shared_ptr<const Symbolic> symbolic);

  /// Computes L11, L21 and S from `a` (the analysed pattern). A pivot of A11 that is not
  /// positive is reported like Factor::factorize; S itself is not factored here.
  const FactorStatus& factorize(const linalg::SymmetricCscMatrix& a, const FactorOptions& options = {});
  /// Factor::refactorize after a factorize with retain_update_blocks: when only entries of
  /// A22 changed, only the Schur supernode is recomputed — S is reassembled from A22 and the
  /// retained update blocks, L11 and L21 are not touched.
  const FactorStatus& refactorize(const ChangedEntries& changed, const linalg::SymmetricCscMatrix& a,
                                  const FactorOptions& options = {});

  [[nodiscard]] const FactorStatus& status() const { return factor_.status(); }
  [[nodiscard]] bool ok() const { return factor_.ok(); }
  [[nodiscard]] const FactorStats& stats() const { return factor_.stats(); }
  [[nodiscard]] const Symbolic& symbolic() const { return factor_.symbolic(); }

  [[nodiscard]] Index size() const { return symbolic().size(); }
  [[nodiscard]] Index schur_size() const { return symbolic().schur_size(); }
  [[nodiscard]] Index eliminated_size() const { return size() - schur_size(); }
  /// The Schur set in S's numbering: row i of S is unknown schur_set()[i] of the matrix.
  [[nodiscard]] std::span<const Index> schur_set() const;
  /// S (m×m, column-major), a view into the factor's storage: the lower triangle holds S,
  /// the strictly upper part is unspecified. Throws std::logic_error if not factorized.
  [[nodiscard]] linalg::ConstDenseView schur_complement() const;
  /// S as a new symmetric matrix (both triangles), for callers that need a full matrix.
  [[nodiscard]] linalg::DenseMatrix schur_complement_symmetric() const;

  /// Phase 1 (eq. 16): from B (n×r, user numbering) writes Y (n×r, elimination numbering):
  /// rows [0, eliminated_size()) y₁ = L11⁻¹b₁, the rest b̃₂ = b₂ − L21·y₁ (schur_rows(Y)).
  /// `threads`: 0 the factorization's (a pass split over the tree on them), else that many.
  void forward(linalg::ConstDenseView b, linalg::DenseView y, int threads = 0) const;
  /// Phase 3 (eq. 18): Y holds y₁ and, in schur_rows(Y), x₂; writes X (n×r, user
  /// numbering) with x₁ = L11⁻ᵀ(y₁ − L21ᵀx₂). Y is overwritten. X may not alias Y.
  /// With `threads` > 1, groups of many columns run on threads of their own (condensation
  /// Jacobians: fem/conjac/).
  void backward(linalg::DenseView y, linalg::DenseView x, int threads = 0) const;
  /// Phase 3 when y₁ = 0: from X₂ (m×r, S's numbering) writes X (n×r, user numbering) with
  /// x₁ = −L11⁻ᵀL21ᵀX₂ and x₂ = X₂ — e.g. the condensation Jacobian −A11⁻¹A12·X₂ (fem/conjac/),
  /// without the n×r input of zeros backward() would read. `threads` as for backward().
  void backward_from_schur(linalg::ConstDenseView x2, linalg::DenseView x, int threads = 0) const;
  /// The Schur part of an elimination-numbered Y: its last schur_size() rows, S's numbering.
  [[nodiscard]] linalg::DenseView schur_rows(linalg::DenseView y) const {
    return y.block(eliminated_size(), 0, schur_size(), y.cols);
  }
  /// All three phases: solves (A + [0 0; 0 ΔS])·X = B in place (user numbering) with the
  /// refactored `schur` (S + ΔS).
  void solve(const SchurSystem& schur, linalg::DenseView b) const;
  void solve(const SchurSystem& schur, std::span<double> b) const;

  /// The underlying factor (its last supernode holds S, not a factor: Factor::solve refuses).
  [[nodiscard]] const Factor& factor() const { return factor_; }

 private:
  void require_shape(const char* operation, linalg::ConstDenseView v, const char* name) const;

  Factor factor_;
};

}  // namespace cholsim::factor
