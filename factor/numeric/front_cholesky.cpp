#include "factor/numeric/front_cholesky.hpp"

#include <algorithm>

#include <tbb/task_group.h>

#include "factor/numeric/dense_tasks.hpp"
#include "linalg/blas.hpp"
#include "linalg/floating_point_mode.hpp"

namespace cholsim::factor {
namespace {

namespace blas = linalg::blas;
using linalg::ConstDenseView;
using linalg::DenseView;
using linalg::Index;

// Columns of a panel in the right-looking factorization of wide fronts.
constexpr Index kPanelColumns = 256;

// Recursive on the columns: factor the left half, update the right half, factor the right
// half (Gustavson 1997; Toledo 1997); every update is one lower_trapezoid_update.
int factor_recursively(DenseView front) {
  const Index k = front.cols;
  const Index rows = front.rows;
  if (k <= kFrontLeafColumns) {
    const int info = blas::potrf(front.block(0, 0, k, k));
    if (info != 0 || rows == k) return info;
    solve_rows_lower_transposed(front.block(0, 0, k, k), front.block(k, 0, rows - k, k));
    return 0;
  }
  // Split at a multiple of the leaf width so that every leaf but the last is full.
  const Index left = (k / 2 + kFrontLeafColumns - 1) / kFrontLeafColumns * kFrontLeafColumns;
  const Index right = k - left;
  if (const int info = factor_recursively(front.block(0, 0, rows, left)); info != 0) return info;
  // The right columns lose the left columns' contribution, F22 −= L21·L21ᵀ on the diagonal
  // block and every row below it.
  lower_trapezoid_update(1.0, front.block(left, 0, rows - left, left), front.block(left, left, rows - left, right));
  const int info = factor_recursively(front.block(left, left, rows - left, right));
  return info == 0 ? 0 : left + info;
}

// Right-looking by panels of kPanelColumns with a lookahead of one panel: after a panel is
// factored, the next panel gets its update at once and the rest of the trailing columns get
// theirs as a background task, so that the next panel's factorization — the critical path —
// runs while other threads take the pieces of that large update. In the recursion the
// factorization of the left half finishes before any thread can start on the right half: on
// the root front of a 32³ box (4,707 columns) two threads reached 84–96 GFLOP/s that way,
// 144–147 with the lookahead (OpenBLAS's threaded potrf: 126–140).
int factor_with_lookahead(DenseView front) {
  const Index k = front.cols;
  const Index rows = front.rows;
  tbb::task_group trailing;
  for (Index first = 0; first < k; first += kPanelColumns) {
    const Index width = std::min(kPanelColumns, k - first);
    const int info = factor_recursively(front.block(first, first, rows - first, width));
    // The previous panel's trailing update writes right of the next panel; it must end
    // before the next panel's update starts (and before returning).
    trailing.wait();
    if (info != 0) return first + info;
    const Index next = first + width;
    if (next == k) break;
    const Index next_width = std::min(kPanelColumns, k - next);
    lower_trapezoid_update(1.0, front.block(next, first, rows - next, width),
                           front.block(next, next, rows - next, next_width));
    const Index rest = next + next_width;
    if (rest < k) {
      trailing.run(linalg::in_current_mode([=] {
        lower_trapezoid_update(1.0, front.block(rest, first, rows - rest, width),
                               front.block(rest, rest, rows - rest, k - rest));
      }));
    }
  }
  return 0;
}

}  // namespace

int factor_front_columns(DenseView front) {
  return front.cols >= 2 * kPanelColumns ? factor_with_lookahead(front) : factor_recursively(front);
}

}  // namespace cholsim::factor
