#pragma once
// The dense Schur system of seed 004 §4.4: S from a partial factorization plus changing
// additive terms ΔS, refactored densely every time they change.
//
//   factor::SchurSystem schur(partial.schur_complement(), partial.schur_set());
//   for (each inner iteration) {
//     schur.clear_updates();                       // back to S
//     schur.add_low_rank(w, stiffness);            // + W·C·Wᵀ, the collision springs (eq. 19)
//     if (!schur.refactor().ok()) { ... }          // potrf of S + ΔS
//     schur.solve(b2);                             // potrs
//   }
//
// Why this pays: S is m×m with m ≈ 1–3% of the unknowns, and ΔS only changes S, never L11 or
// L21 — the collision terms live on the Schur set alone (eq. 19) — so an iteration costs a
// dense m³/3 refactorization instead of a sparse refactorization of the whole matrix.
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "factor/numeric/factor_status.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::factor {

using linalg::Index;

class SchurDenseBackend;

enum class SchurDevice {
  cpu,  ///< LAPACK potrf / potrs (OpenBLAS)
  gpu,  ///< cuSOLVER potrf / potrs, as in seed 004 §4.4; needs a CUDA build and a device
};

/// How the CPU factors S + ΔS.
enum class SchurPrecision {
  double_precision,  ///< dpotrf
  /// spotrf of S + ΔS rounded to single — twice dpotrf's rate — then iterative refinement in
  /// double against S + ΔS, to double accuracy while κ(S + ΔS)·ε_single < 1; dpotrf when the
  /// single factor fails or the refinement stalls. The GPU path ignores it.
  mixed,
};

struct SchurSystemOptions {
  /// Where refactor() and solve() run. When the GPU is asked for but this build has no
  /// cuSOLVER path or no device is present, the CPU is used and device_note() says why.
  SchurDevice device = SchurDevice::cpu;
  /// BLAS threads for the dense refactorization and solve; 0 keeps the current setting.
  int threads = 0;
  SchurPrecision precision = SchurPrecision::double_precision;
};

class SchurSystem {
 public:
  /// Copies `schur_complement` (m×m; its lower triangle is used). `user_indices` (empty or size
  /// m) name S's rows in the caller's matrix, so that a failing pivot can be reported there.
  explicit SchurSystem(linalg::ConstDenseView schur_complement,
                       std::span<const Index> user_indices = {}, SchurSystemOptions options = {});
  ~SchurSystem();
  SchurSystem(SchurSystem&&) noexcept;
  SchurSystem& operator=(SchurSystem&&) noexcept;

  [[nodiscard]] Index size() const { return size_; }

  /// Drops every update: the system is S again. One copy of S's lower triangle.
  void clear_updates();
  /// S += ΔS for a dense m×m ΔS (lower triangle read).
  void add(linalg::ConstDenseView delta);
  /// S += ΔS for a sparse m×m ΔS in lower storage (Schur numbering). On the GPU it is
  /// expanded to a dense m×m update on the host first.
  void add(const linalg::SymmetricCscMatrix& delta);
  /// S += W·diag(c)·Wᵀ for a sparse m×p W (Schur numbering × terms) and c of size p: seed
  /// 004 eq. 19's collision springs, one column of W per proxy holding its embedding weights.
  /// On the GPU: W (dense) and c are uploaded, the product is one cuBLAS syrkx.
  void add_low_rank(const linalg::CscMatrix& w, std::span<const double> c);

  /// Cholesky factorization of S + ΔS. A pivot that is not positive comes back as
  /// not_positive_definite, a NaN or Inf one as non_finite_value (or not_positive_definite
  /// where the device's potrf stops at it, as cuSOLVER's does), with the failing row in
  /// `column` (user numbering when user_indices were given, else Schur numbering); solve()
  /// then refuses. Afterwards the system holds the factor: call clear_updates() before
  /// adding the next iteration's updates.
  const FactorStatus& refactor();
  [[nodiscard]] const FactorStatus& status() const { return status_; }

  /// Solves (S + ΔS)·X = B in place (m rows, any number of columns). Throws
  /// std::logic_error without a successful refactor().
  void solve(linalg::DenseView b) const;
  void solve(std::span<double> b) const;

  /// The device that refactor() and solve() run on, and why it differs from the one asked
  /// for (empty when it does not).
  [[nodiscard]] SchurDevice device() const { return device_; }
  [[nodiscard]] const std::string& device_note() const { return device_note_; }

 private:
  void require_assembled(const char* operation) const;

  Index size_ = 0;
  std::unique_ptr<SchurDenseBackend> backend_;  ///< holds S and S + ΔS (or its factor)
  bool holds_factor_ = false;  ///< S + ΔS was overwritten by a factorization (attempt)
  std::vector<Index> user_indices_;
  SchurSystemOptions options_;
  SchurDevice device_ = SchurDevice::cpu;
  std::string device_note_;
  FactorStatus status_;
};

std::string_view to_string(SchurDevice device);
/// Parses "cpu" or "gpu"; throws std::invalid_argument otherwise.
SchurDevice parse_schur_device(std::string_view name);

}  // namespace cholsim::factor
