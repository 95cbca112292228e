#pragma once
// Thin checked wrappers over the BLAS/LAPACK routines cholsim uses (OpenBLAS underneath).
//
// Each wrapper checks operand shapes and throws std::invalid_argument on a mismatch, so a
// wrong call fails loudly instead of reading out of bounds. Numerical outcomes (a pivot that
// is not positive in potrf) are returned, never thrown: they are results, not misuse.
#include <vector>

#include "linalg/dense_matrix.hpp"

namespace cholsim::linalg::blas {

enum class Transpose { no, yes };
enum class Side { left, right };
enum class Diagonal { non_unit, unit };

/// C = alpha·op(A)·op(B) + beta·C.
void gemm(Transpose trans_a, Transpose trans_b, double alpha, ConstDenseView a, ConstDenseView b,
          double beta, DenseView c);

/// y = alpha·op(A)·x + beta·y for contiguous vectors x and y.
void gemv(Transpose trans, double alpha, ConstDenseView a, const double* x, double beta, double* y);

/// Lower triangle of C = alpha·A·Aᵀ + beta·C (trans = no) or alpha·Aᵀ·A + beta·C (trans = yes).
void syrk(Transpose trans, double alpha, ConstDenseView a, double beta, DenseView c);

/// Lower triangle of C = alpha·(A·Bᵀ + B·Aᵀ) + beta·C.
void syr2k(double alpha, ConstDenseView a, ConstDenseView b, double beta, DenseView c);

/// Solves op(L)·X = alpha·B (side left) or X·op(L) = alpha·B (side right) in place of B, with
/// L lower triangular.
void trsm(Side side, Transpose trans, Diagonal diag, double alpha, ConstDenseView lower,
          DenseView b);

/// B = alpha·op(L)·B (side left) or B = alpha·B·op(L) (side right) in place, with L lower
/// triangular.
void trmm(Side side, Transpose trans, Diagonal diag, double alpha, ConstDenseView lower,
          DenseView b);

/// Solves op(L)·x = b in place for one vector with stride `increment`.
void trsv(Transpose trans, Diagonal diag, ConstDenseView lower, double* x, Index increment = 1);

/// Cholesky factorization of the lower triangle of `a` in place (upper part untouched).
/// Returns 0 on success, or k ≥ 1 when the leading minor of order k is not positive definite
/// (LAPACK's info).
int potrf(DenseView a);

/// The same in single precision (spotrf / spotrs): half the bytes and twice the flop rate, for
/// a factor that iterative refinement in double then corrects.
int potrf(BasicDenseView<float> a);
void potrs(BasicDenseView<const float> factor, BasicDenseView<float> b);

/// C = alpha·A·B + beta·C for a symmetric A of which only the lower triangle is read.
void symm_lower(double alpha, ConstDenseView a, ConstDenseView b, double beta, DenseView c);

/// A⁻¹ from the factor of potrf, in place: its lower triangle becomes that of A⁻¹ (the strict
/// upper part is untouched). Throws std::invalid_argument for a singular factor.
void potri(DenseView factor);

/// Solves A·X = B with the factor from potrf, in place of B.
void potrs(ConstDenseView factor, DenseView b);

/// The eigenvalues, ascending, of the symmetric tridiagonal matrix with `diagonal` (n values)
/// and `off_diagonal` (n − 1 values) (LAPACK dstev, values only). Throws
/// std::invalid_argument on sizes and std::runtime_error when dstev does not converge.
std::vector<double> tridiagonal_eigenvalues(std::vector<double> diagonal, std::vector<double> off_diagonal);

}  // namespace cholsim::linalg::blas
