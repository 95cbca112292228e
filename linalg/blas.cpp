#include "linalg/blas.hpp"

#include <cblas.h>

#include <stdexcept>
#include <string>

// LAPACK's Fortran entry points, provided by OpenBLAS.
extern "C" {
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void spotrs_(const char* uplo, const int* n, const int* nrhs, const float* a, const int* lda, float* b,
             const int* ldb, int* info);
void dpotrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda,
             double* b, const int* ldb, int* info);
void dstev_(const char* jobz, const int* n, double* d, double* e, double* z, const int* ldz, double* work, int* info);
}

namespace cholsim::linalg::blas {
namespace {

CBLAS_TRANSPOSE to_cblas(Transpose t) { return t == Transpose::no ? CblasNoTrans : CblasTrans; }

void require(bool condition, const char* routine, const std::string& what) {
  if (!condition) throw std::invalid_argument(std::string(routine) + ": " + what);
}

template <typename View>
void require_leading_dimension(const View& v, const char* routine) {
  require(v.ld >= (v.rows > 0 ? v.rows : 1), routine, "leading dimension smaller than rows");
}

Index op_rows(ConstDenseView a, Transpose t) { return t == Transpose::no ? a.rows : a.cols; }
Index op_cols(ConstDenseView a, Transpose t) { return t == Transpose::no ? a.cols : a.rows; }

}  // namespace

void gemm(Transpose trans_a, Transpose trans_b, double alpha, ConstDenseView a, ConstDenseView b,
          double beta, DenseView c) {
  const Index m = op_rows(a, trans_a);
  const Index k = op_cols(a, trans_a);
  const Index n = op_cols(b, trans_b);
  require(op_rows(b, trans_b) == k, "gemm", "inner dimensions differ");
  require(c.rows == m && c.cols == n, "gemm", "C has the wrong shape");
  require_leading_dimension(a, "gemm");
  require_leading_dimension(b, "gemm");
  require_leading_dimension(c, "gemm");
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasColMajor, to_cblas(trans_a), to_cblas(trans_b), m, n, k, alpha, a.data, a.ld,
              b.data, b.ld, beta, c.data, c.ld);
}

void gemv(Transpose trans, double alpha, ConstDenseView a, const double* x, double beta,
          double* y) {
  require_leading_dimension(a, "gemv");
  if (a.rows == 0 || a.cols == 0) {
    const Index length = op_rows(a, trans);
    for (Index i = 0; i < length; ++i) y[i] = beta == 0.0 ? 0.0 : beta * y[i];
    return;
  }
  cblas_dgemv(CblasColMajor, to_cblas(trans), a.rows, a.cols, alpha, a.data, a.ld, x, 1, beta, y,
              1);
}

void syrk(Transpose trans, double alpha, ConstDenseView a, double beta, DenseView c) {
  const Index n = op_rows(a, trans);
  const Index k = op_cols(a, trans);
  require(c.rows == n && c.cols == n, "syrk", "C must be square with the rows of op(A)");
  require_leading_dimension(a, "syrk");
  require_leading_dimension(c, "syrk");
  if (n == 0) return;
  cblas_dsyrk(CblasColMajor, CblasLower, to_cblas(trans), n, k, alpha, a.data, a.ld, beta, c.data,
              c.ld);
}

void syr2k(double alpha, ConstDenseView a, ConstDenseView b, double beta, DenseView c) {
  require(a.rows == b.rows && a.cols == b.cols, "syr2k", "A and B differ in shape");
  require(c.rows == a.rows && c.cols == a.rows, "syr2k", "C must be square with the rows of A");
  require_leading_dimension(a, "syr2k");
  require_leading_dimension(b, "syr2k");
  require_leading_dimension(c, "syr2k");
  if (c.rows == 0) return;
  cblas_dsyr2k(CblasColMajor, CblasLower, CblasNoTrans, c.rows, a.cols, alpha, a.data, a.ld,
               b.data, b.ld, beta, c.data, c.ld);
}

namespace {

// The checks trsm and trmm share: a square lower-triangular L that matches B on `side`.
// Returns false when B is empty and there is nothing to compute.
bool check_triangular_operands(Side side, ConstDenseView lower, DenseView b, const char* name) {
  require(lower.rows == lower.cols, name, "L must be square");
  require(side == Side::left ? b.rows == lower.rows : b.cols == lower.rows, name,
          "B does not match L");
  require_leading_dimension(lower, name);
  require_leading_dimension(b, name);
  return b.rows != 0 && b.cols != 0;
}

}  // namespace

void trsm(Side side, Transpose trans, Diagonal diag, double alpha, ConstDenseView lower,
          DenseView b) {
  if (!check_triangular_operands(side, lower, b, "trsm")) return;
  cblas_dtrsm(CblasColMajor, side == Side::left ? CblasLeft : CblasRight, CblasLower,
              to_cblas(trans), diag == Diagonal::unit ? CblasUnit : CblasNonUnit, b.rows, b.cols,
              alpha, lower.data, lower.ld, b.data, b.ld);
}

void trmm(Side side, Transpose trans, Diagonal diag, double alpha, ConstDenseView lower,
          DenseView b) {
  if (!check_triangular_operands(side, lower, b, "trmm")) return;
  cblas_dtrmm(CblasColMajor, side == Side::left ? CblasLeft : CblasRight, CblasLower,
              to_cblas(trans), diag == Diagonal::unit ? CblasUnit : CblasNonUnit, b.rows, b.cols,
              alpha, lower.data, lower.ld, b.data, b.ld);
}

void trsv(Transpose trans, Diagonal diag, ConstDenseView lower, double* x, Index increment) {
  require(lower.rows == lower.cols, "trsv", "L must be square");
  require(increment != 0, "trsv", "zero increment");
  require_leading_dimension(lower, "trsv");
  if (lower.rows == 0) return;
  cblas_dtrsv(CblasColMajor, CblasLower, to_cblas(trans),
              diag == Diagonal::unit ? CblasUnit : CblasNonUnit, lower.rows, lower.data, lower.ld,
              x, increment);
}

namespace {

// LAPACK's xPOTRF on the lower triangle, for double and single alike.
template <typename T, typename Routine>
int lower_cholesky(BasicDenseView<T> a, const char* name, Routine routine) {
  require(a.rows == a.cols, name, "A must be square");
  require_leading_dimension(a, name);
  if (a.rows == 0) return 0;
  const char uplo = 'L';
  const int n = a.rows;
  const int lda = a.ld;
  int info = 0;
  routine(&uplo, &n, a.data, &lda, &info);
  require(info >= 0, name, "illegal argument " + std::to_string(-info));
  return info;
}

// LAPACK's xPOTRS with a lower factor, for double and single alike.
template <typename T, typename Routine>
void lower_cholesky_solve(BasicDenseView<const T> factor, BasicDenseView<T> b, const char* name, Routine routine) {
  require(factor.rows == factor.cols, name, "factor must be square");
  require(b.rows == factor.rows, name, "B does not match the factor");
  require_leading_dimension(factor, name);
  require_leading_dimension(b, name);
  if (b.rows == 0 || b.cols == 0) return;
  const char uplo = 'L';
  const int n = factor.rows;
  const int nrhs = b.cols;
  const int lda = factor.ld;
  const int ldb = b.ld;
  int info = 0;
  routine(&uplo, &n, &nrhs, factor.data, &lda, b.data, &ldb, &info);
  require(info == 0, name, "illegal argument " + std::to_string(-info));
}

}  // namespace

int potrf(DenseView a) { return lower_cholesky(a, "potrf", dpotrf_); }
int potrf(BasicDenseView<float> a) { return lower_cholesky(a, "spotrf", spotrf_); }
void potrs(ConstDenseView factor, DenseView b) { lower_cholesky_solve(factor, b, "potrs", dpotrs_); }
void potrs(BasicDenseView<const float> factor, BasicDenseView<float> b) {
  lower_cholesky_solve(factor, b, "spotrs", spotrs_);
}

void symm_lower(double alpha, ConstDenseView a, ConstDenseView b, double beta, DenseView c) {
  require(a.rows == a.cols && b.rows == a.rows && c.rows == a.rows && c.cols == b.cols, "symm", "shapes differ");
  require_leading_dimension(a, "symm");
  require_leading_dimension(b, "symm");
  require_leading_dimension(c, "symm");
  if (c.rows == 0 || c.cols == 0) return;
  cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, c.rows, c.cols, alpha, a.data, a.ld, b.data, b.ld, beta, c.data,
              c.ld);
}

void potri(DenseView factor) {
  require(factor.rows == factor.cols, "potri", "factor must be square");
  require_leading_dimension(factor, "potri");
  if (factor.rows == 0) return;
  const char uplo = 'L';
  const int n = factor.rows;
  const int lda = factor.ld;
  int info = 0;
  dpotri_(&uplo, &n, factor.data, &lda, &info);
  require(info == 0, "potri", info < 0 ? "illegal argument " + std::to_string(-info) : "the factor is singular");
}

std::vector<double> tridiagonal_eigenvalues(std::vector<double> diagonal, std::vector<double> off_diagonal) {
  require(off_diagonal.size() + 1 == diagonal.size() || (diagonal.empty() && off_diagonal.empty()), "stev",
          "a tridiagonal matrix of n diagonal values has n - 1 off-diagonal ones");
  if (diagonal.empty()) return diagonal;
  const char job = 'N';  // eigenvalues only: z and work are not referenced
  const int n = static_cast<int>(diagonal.size());
  const int ldz = 1;
  off_diagonal.push_back(0.0);  // dstev's e has n entries of workspace
  int info = 0;
  dstev_(&job, &n, diagonal.data(), off_diagonal.data(), nullptr, &ldz, nullptr, &info);
  require(info >= 0, "stev", "illegal argument " + std::to_string(-info));
  if (info > 0) throw std::runtime_error("stev: " + std::to_string(info) + " off-diagonal entries did not converge");
  return diagonal;
}

}  // namespace cholsim::linalg::blas
