#pragma once
// The derivative of the per-supernode step of the multifrontal factorization (seed 002 ch. 5.4.2.2
// and app. C.1, "Ldot"): with A(t) = L(t)·L(t)ᵀ and Ȧ given, L̇ solves L̇·Lᵀ + L·L̇ᵀ = Ȧ. Every
// dense kernel of multifrontal.hpp gets its derivative by the product rule:
//
//   assemble:  Ḟ ← Ȧ's columns of s  +  extend-add of the children's derivative update blocks U̇
//              (the same index maps as F);
//   factor:    L̇11 = L11·Φ(L11⁻¹·Ḟ11·L11⁻ᵀ), Φ(X) = strictly lower part of X + half its diagonal
//              (app. C.1 `dcholphi`);  L̇21 = (Ḟ21 − L21·L̇11ᵀ)·L11⁻ᵀ;
//   update:    U̇ = −(L̇21·L21ᵀ + L21·L̇21ᵀ) (one syr2k)  +  extend-add of the children's U̇ below.
//
// Φ is applied to narrow column panels only: the diagonal block's columns are split
// recursively and the left half's derivative updates the right half's front by a syr2k; the
// rows below take L̇21 = (Ḟ21 − L21·L̇11ᵀ)·L11⁻ᵀ with triangular kernels (trmm, trsm); U̇'s
// rectangles are one gemm of inner dimension 2k. Almost all the work is in large BLAS-3 calls
// and L̇ costs about twice L's flops — the thesis found its CHOLMOD extension slower than two
// factorizations (§5.4.2.2), this is the way around that.
#include <span>

#include "factor/numeric/multifrontal.hpp"
#include "linalg/dense_matrix.hpp"

namespace cholsim::factor {

/// Overwrites the m×k derivative front `front_derivative` (Ḟ, assembled; only its lower part
/// is read) with L̇ for the m×k factor block `factor` (L, already computed: L11 on top, L21
/// below, both in the same row order). The strictly upper part of the top k×k block of
/// `front_derivative` is left as it is. Returns the flops spent (multiplications and additions
/// counted, as Symbolic::supernode_flops counts).
double differentiate_front(linalg::ConstDenseView factor, linalg::DenseView front_derivative);

/// The derivative step for supernode s, after compute_supernode has put L's block of s in
/// `factor_values`: assembles Ḟ from Ȧ's values (`a_derivative_values`, the analysed pattern's
/// order) and the children's derivative update blocks in `derivative_updates`, writes L̇'s
/// block of s at symbolic.value_offset(s) in `derivative_values` and U̇ of s into
/// `derivative_updates`; the children's U̇ stay (the caller frees them by its retention policy,
/// update_block_retention.hpp). Returns the flops of the derivative kernels.
double compute_supernode_derivative(const Symbolic& symbolic, Index s,
                                    std::span<const double> a_derivative_values,
                                    std::span<const double> factor_values,
                                    std::span<double> derivative_values,
                                    UpdateBlockStore& derivative_updates);

}  // namespace cholsim::factor
