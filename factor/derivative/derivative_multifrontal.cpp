#include "factor/derivative/derivative_multifrontal.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "linalg/blas.hpp"

namespace cholsim::factor {
namespace {

namespace blas = linalg::blas;
using linalg::ConstDenseView;
using linalg::DenseView;

// Columns whose derivative is taken by Φ directly; wider column blocks are split. 64, the
// update blocks' panel width, keeps the trsm/trmm of a panel at BLAS-3 speed while the work
// that grows with the panel width (Φ and the panel's trsm + gemm, ~3·rows·width² flops per
// panel) stays small next to the syr2k updates between panels.
constexpr Index leaf_columns = 64;

// The derivative of a panel of at most leaf_columns columns whose front is already updated by
// every column to its left (seed 002 app. C.1, steps (b) and (c)):
//   L̇11 = L11·Φ(L11⁻¹·Ḟ11·L11⁻ᵀ),   L̇21 = (Ḟ21 − L21·L̇11ᵀ)·L11⁻ᵀ.
double differentiate_panel(ConstDenseView factor, DenseView derivative) {
  const Index k = factor.cols;
  const Index below = factor.rows - k;
  std::array<double, leaf_columns * leaf_columns> storage;
  const DenseView x{storage.data(), k, k, k};
  // X = Ḟ11, symmetric: only its lower part is assembled.
  for (Index j = 0; j < k; ++j) {
    for (Index i = j; i < k; ++i) x(i, j) = x(j, i) = derivative(i, j);
  }
  const ConstDenseView l11 = factor.block(0, 0, k, k);
  blas::trsm(blas::Side::left, blas::Transpose::no, blas::Diagonal::non_unit, 1.0, l11, x);
  blas::trsm(blas::Side::right, blas::Transpose::yes, blas::Diagonal::non_unit, 1.0, l11, x);
  // Φ(X): the strictly lower part plus half the diagonal (app. C.1 `phifun`).
  for (Index j = 0; j < k; ++j) {
    for (Index i = 0; i < j; ++i) x(i, j) = 0.0;
    x(j, j) *= 0.5;
  }
  // L̇11 = L11·Φ(X), lower triangular like L11; x keeps exact zeros above the diagonal.
  blas::trmm(blas::Side::left, blas::Transpose::no, blas::Diagonal::non_unit, 1.0, l11, x);
  for (Index j = 0; j < k; ++j) {
    for (Index i = j; i < k; ++i) derivative(i, j) = x(i, j);
  }
  const double kd = k;
  double flops = 3.0 * kd * kd * kd;  // two trsm and one trmm on k×k
  if (below > 0) {
    const DenseView d21 = derivative.block(k, 0, below, k);
    blas::gemm(blas::Transpose::no, blas::Transpose::yes, -1.0, factor.block(k, 0, below, k), x, 1.0,
               d21);
    blas::trsm(blas::Side::right, blas::Transpose::yes, blas::Diagonal::non_unit, 1.0, l11, d21);
    flops += 3.0 * below * kd * kd;
  }
  return flops;
}

// The derivative of the columns of a block whose top k×k part is diagonal (rows below it
// included), recursive over its columns: the left half's derivative first, then the derivative
// of the right-looking update it makes to the right half (F22 −= L21·L21ᵀ gives
// Ḟ22 −= L̇21·L21ᵀ + L21·L̇21ᵀ: a syr2k on the diagonal block, two gemms below it), then the
// right half. The BLAS calls get the half widths as inner dimension, not the leaf width.
double differentiate_columns(ConstDenseView factor, DenseView derivative) {
  const Index k = factor.cols;
  if (k <= leaf_columns) return differentiate_panel(factor, derivative);
  // Split at a multiple of the leaf width so that every leaf but the last is full.
  const Index left = (k / 2 + leaf_columns - 1) / leaf_columns * leaf_columns;
  const Index right = k - left;
  const Index rows = factor.rows;
  const Index below = rows - k;
  double flops = differentiate_columns(factor.block(0, 0, rows, left), derivative.block(0, 0, rows, left));
  const ConstDenseView l_middle = factor.block(left, 0, right, left);
  const ConstDenseView d_middle = derivative.block(left, 0, right, left);
  blas::syr2k(-1.0, d_middle, l_middle, 1.0, derivative.block(left, left, right, right));
  flops += 2.0 * right * right * static_cast<double>(left);
  if (below > 0) {
    const DenseView target = derivative.block(k, left, below, right);
    blas::gemm(blas::Transpose::no, blas::Transpose::yes, -1.0, derivative.block(k, 0, below, left),
               l_middle, 1.0, target);
    blas::gemm(blas::Transpose::no, blas::Transpose::yes, -1.0, factor.block(k, 0, below, left),
               d_middle, 1.0, target);
    flops += 4.0 * below * right * static_cast<double>(left);
  }
  return flops + differentiate_columns(factor.block(left, left, rows - left, right),
                                       derivative.block(left, left, rows - left, right));
}

}  // namespace

double differentiate_front(ConstDenseView factor, DenseView front_derivative) {
  const Index k = factor.cols;
  const Index below = factor.rows - k;
  const ConstDenseView l11 = factor.block(0, 0, k, k);
  const DenseView l11_dot = front_derivative.block(0, 0, k, k);
  double flops = differentiate_columns(l11, l11_dot);
  if (below == 0) return flops;
  // L̇21 = (Ḟ21 − L21·L̇11ᵀ)·L11⁻ᵀ with L̇11 triangular: trmm on a copy of L21 and trsm, 2·r·k²
  // flops (a gemm with L̇11 as a full matrix would take 3·r·k²).
  thread_local std::vector<double> workspace;
  workspace.resize(static_cast<std::size_t>(below) * static_cast<std::size_t>(k));
  const DenseView product{workspace.data(), below, k, below};
  const ConstDenseView l21 = factor.block(k, 0, below, k);
  for (Index j = 0; j < k; ++j) std::copy_n(&l21(0, j), below, &product(0, j));
  blas::trmm(blas::Side::right, blas::Transpose::yes, blas::Diagonal::non_unit, 1.0, l11_dot, product);
  const DenseView l21_dot = front_derivative.block(k, 0, below, k);
  for (Index j = 0; j < k; ++j) {
    for (Index i = 0; i < below; ++i) l21_dot(i, j) -= product(i, j);
  }
  blas::trsm(blas::Side::right, blas::Transpose::yes, blas::Diagonal::non_unit, 1.0, l11, l21_dot);
  return flops + 2.0 * below * static_cast<double>(k) * k;
}

double compute_supernode_derivative(const Symbolic& symbolic, Index s,
                                    std::span<const double> a_derivative_values,
                                    std::span<const double> factor_values,
                                    std::span<double> derivative_values,
                                    UpdateBlockStore& derivative_updates) {
  const Index k = symbolic.column_count(s);
  const Index m = symbolic.row_count(s);
  const Index update_size = m - k;
  double* block = derivative_values.data() + symbolic.value_offset(s);

  const std::vector<Index> splits =
      assemble_front(symbolic, s, a_derivative_values, derivative_updates, block);
  const ConstDenseView factor{factor_values.data() + symbolic.value_offset(s), m, k, m};
  const DenseView front{block, m, k, m};
  double flops = differentiate_front(factor, front);

  if (update_size > 0) {
    const PanelLowerLayout layout = update_layout(symbolic, s);
    double* update = derivative_updates.allocate(s, layout.entries());
    compute_update_block(factor.block(k, 0, update_size, k), front.block(k, 0, update_size, k),
                         update, layout);
    flops += 2.0 * update_size * static_cast<double>(update_size) * k;
    extend_add_children_below(symbolic, s, derivative_updates, splits, update);
  }
  return flops;
}

}  // namespace cholsim::factor
