#pragma once
// Where a SchurSystem keeps S and S + ΔS and runs the dense kernels (seed 004 §4.4: the
// paper refactors on the GPU with cuSOLVER; LAPACK on the CPU is the default). Internal to
// schur_system.cpp; SchurSystem checks every argument before it reaches a backend.
#include <memory>
#include <span>
#include <string>

#include "factor/schur/schur_system.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::factor {

using linalg::Index;

class SchurDenseBackend {
 public:
  virtual ~SchurDenseBackend() = default;
  /// S + ΔS ← S.
  virtual void reset() = 0;
  /// += ΔS, lower triangle of a dense m×m matrix.
  virtual void add_dense(linalg::ConstDenseView delta) = 0;
  /// += ΔS in lower storage.
  virtual void add_sparse(const linalg::SymmetricCscMatrix& delta) = 0;
  /// += W·diag(c)·Wᵀ.
  virtual void add_low_rank(const linalg::CscMatrix& w, std::span<const double> c) = 0;
  /// Cholesky factorization of S + ΔS in place: 0, or LAPACK's info (failing 1-based row).
  virtual int factor() = 0;
  /// After factor() returned 0: the first row whose pivot is NaN or Inf, or -1. LAPACK's potrf
  /// (OpenBLAS's included) lets NaN through — NaN ≤ 0 is false — and a NaN anywhere in row i
  /// of S + ΔS reaches pivot i, so the pivots decide whether the factor is usable.
  virtual Index first_non_finite_pivot() = 0;
  /// Solves with the factor, in place of b (host memory).
  virtual void solve(linalg::DenseView b) = 0;
};

/// LAPACK / OpenBLAS.
std::unique_ptr<SchurDenseBackend> make_cpu_schur_backend(linalg::ConstDenseView schur_complement,
                                                          SchurPrecision precision = SchurPrecision::double_precision);

/// cuSOLVER / cuBLAS on the current CUDA device, S uploaded once. Null, with `why_not`
/// set, when this build has no cuSOLVER path or no device is present.
std::unique_ptr<SchurDenseBackend> make_gpu_schur_backend(linalg::ConstDenseView schur_complement,
                                                          std::string& why_not);

}  // namespace cholsim::factor
