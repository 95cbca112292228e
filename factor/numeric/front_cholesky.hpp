#pragma once
// The dense step of a supernode (seed 000 §4.3): the Cholesky factorization of a front's
// pivot columns, [F11; F21] → [L11; L21] with F11 = L11·L11ᵀ and L21 = F21·L11⁻ᵀ.
//
// Why not potrf + trsm: OpenBLAS's dtrsm (right side, lower, transposed) runs at 14–28
// GFLOP/s on one core of the development machine where its dgemm reaches 92–97, and the
// trsm of L21 is 16 % of an elasticity box's flops (docs/benchmarks.md, issue 23 item 2).
// Recursing on the columns instead — factor the left half, update the right half with one
// syrk and one gemm, factor the right half — puts all but a leaf's worth of those flops
// into gemm, the way recursive Cholesky (Gustavson 1997; Toledo 1997) does for potrf. Fronts
// of 512 columns and more go right-looking by 256-column panels with a lookahead of one
// panel instead, so that threads share a wide front (front_cholesky.cpp says why).
#include "linalg/dense_matrix.hpp"

namespace cholsim::factor {

/// Column blocks up to this width are factored by potrf + trsm directly: below it the gemm
/// of a recursion step is too thin to beat them.
inline constexpr linalg::Index kFrontLeafColumns = 64;

/// Factors the first front.cols columns of `front` in place: the top front.cols × front.cols
/// block becomes L11 (lower triangle; the strict upper part is not referenced) and the rows
/// below become L21. Returns 0, or the 1-based column whose pivot was not positive (the
/// columns before it are factored, the rest are left partly updated).
int factor_front_columns(linalg::DenseView front);

}  // namespace cholsim::factor
