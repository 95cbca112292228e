#include "solvers/multigrid/jacobi_smoother.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "linalg/parallel_loops.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::solvers {

namespace {

using linalg::Index;

// y = B⁻¹·r for one 3×3 block B (row-major), by linalg's adjugate inverse: cheaper than keeping
// inverted blocks, and never stale when a Newton step changes the level's blocks in place.
std::array<double, 3> solve_block(const double* block, const std::array<double, 3>& r) {
  linalg::Mat3 b;
  std::copy(block, block + 9, b.entries.begin());
  const linalg::Vec3 y = linalg::inverse(b) * linalg::Vec3{r[0], r[1], r[2]};
  return {y.x, y.y, y.z};
}

// x ← (accumulate ? x : 0) + damping·B⁻¹·residual(i), the one loop both sweeps share. It
// divides by D (solves with the block) on the fly instead of keeping inverses: a Newton step
// that rewrites a level's diagonal in place (VCycle::level) is then used at once, never stale,
// and the sweep's cost is the operator application beside it anyway.
template <typename Residual>
void damped_update(Smoother smoother, const MultigridLevel& level, double damping, bool accumulate,
                   std::span<double> x, int threads, const Residual& residual) {
  if (smoother == Smoother::damped_jacobi) {
    const std::span<const double> diagonal = level.diagonal;
    linalg::parallel_chunks(level.unknowns, threads, [&](Index begin, Index end) {
      for (Index i = begin; i < end; ++i) {
        const double step = damping * residual(i) / diagonal[static_cast<std::size_t>(i)];
        x[static_cast<std::size_t>(i)] = (accumulate ? x[static_cast<std::size_t>(i)] : 0.0) + step;
      }
    });
    return;
  }
  const Index nodes = level.unknowns / 3;
  linalg::parallel_chunks(nodes, threads, [&](Index begin, Index end) {
    for (Index node = begin; node < end; ++node) {
      const Index first = 3 * node;
      const std::array<double, 3> step =
          solve_block(level.block_diagonal.data() + 9 * static_cast<std::size_t>(node),
                      {residual(first), residual(first + 1), residual(first + 2)});
      for (Index k = 0; k < 3; ++k) {
        double& value = x[static_cast<std::size_t>(first + k)];
        value = (accumulate ? value : 0.0) + damping * step[static_cast<std::size_t>(k)];
      }
    }
  });
}

[[noreturn]] void bad_level(int level_index, const std::string& what) {
  throw std::invalid_argument("multigrid level " + std::to_string(level_index) + ": " + what);
}

void check_diagonal(const MultigridLevel& level, int level_index) {
  if (level.diagonal.size() != static_cast<std::size_t>(level.unknowns)) {
    bad_level(level_index, "diagonal has " + std::to_string(level.diagonal.size()) + " values for " +
                               std::to_string(level.unknowns) + " unknowns (damped Jacobi needs diag(A))");
  }
  for (std::size_t i = 0; i < level.diagonal.size(); ++i) {
    if (!(level.diagonal[i] > 0.0)) {
      bad_level(level_index, "diagonal entry " + std::to_string(i) + " is " + std::to_string(level.diagonal[i]) +
                                 "; expected positive (A must be SPD)");
    }
  }
}

// Positive leading minors: the block is SPD, so its solve exists and keeps the sweep symmetric.
bool symmetric_positive_definite(const double* b) {
  const bool symmetric = b[1] == b[3] && b[2] == b[6] && b[5] == b[7];
  const double minor2 = b[0] * b[4] - b[1] * b[3];
  const double determinant = b[0] * (b[4] * b[8] - b[5] * b[7]) - b[1] * (b[3] * b[8] - b[5] * b[6]) +
                             b[2] * (b[3] * b[7] - b[4] * b[6]);
  return symmetric && b[0] > 0.0 && minor2 > 0.0 && determinant > 0.0;
}

void check_block_diagonal(const MultigridLevel& level, int level_index) {
  if (level.unknowns % 3 != 0) {
    bad_level(level_index, std::to_string(level.unknowns) + " unknowns are not whole 3-unknown nodes (block Jacobi)");
  }
  if (level.block_diagonal.size() != 3 * static_cast<std::size_t>(level.unknowns)) {
    bad_level(level_index, "block_diagonal has " + std::to_string(level.block_diagonal.size()) +
                               " values; block Jacobi needs 9 per node, " +
                               std::to_string(3 * static_cast<std::size_t>(level.unknowns)));
  }
  for (std::size_t node = 0; node < level.block_diagonal.size() / 9; ++node) {
    if (!symmetric_positive_definite(level.block_diagonal.data() + 9 * node)) {
      bad_level(level_index, "diagonal block of node " + std::to_string(node) +
                                 " is not symmetric positive definite");
    }
  }
}

}  // namespace

void jacobi_correction(Smoother smoother, const MultigridLevel& level, double damping,
                       std::span<const double> b, std::span<const double> a_times_x,
                       std::span<double> x, int threads) {
  damped_update(smoother, level, damping, true, x, threads, [&](Index i) {
    return b[static_cast<std::size_t>(i)] - a_times_x[static_cast<std::size_t>(i)];
  });
}

void jacobi_from_zero(Smoother smoother, const MultigridLevel& level, double damping,
                      std::span<const double> b, std::span<double> x, int threads) {
  damped_update(smoother, level, damping, false, x, threads,
                [&](Index i) { return b[static_cast<std::size_t>(i)]; });
}

bool has_smoother_data(Smoother smoother, const MultigridLevel& level) {
  const auto unknowns = static_cast<std::size_t>(level.unknowns);
  if (smoother == Smoother::damped_jacobi) return level.diagonal.size() == unknowns;
  return unknowns % 3 == 0 && level.block_diagonal.size() == 3 * unknowns;
}

void check_smoother_data(Smoother smoother, const MultigridLevel& level, int level_index) {
  if (smoother == Smoother::damped_jacobi) {
    check_diagonal(level, level_index);
  } else {
    check_block_diagonal(level, level_index);
  }
}

}  // namespace cholsim::solvers
