#include "qp_test_problems.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cholsim::solvers::qp::test_problems {
namespace {

using linalg::CscMatrix;
using linalg::SymmetricCscMatrix;
using linalg::Triplets;
using Rng = std::mt19937_64;

double uniform(Rng& rng, double low, double high) {
  return std::uniform_real_distribution<double>(low, high)(rng);
}

Index uniform_index(Rng& rng, Index count) {
  return std::uniform_int_distribution<Index>(0, count - 1)(rng);
}

std::vector<Index> shuffled_range(Index count, Rng& rng) {
  std::vector<Index> indices(static_cast<std::size_t>(count));
  std::iota(indices.begin(), indices.end(), Index{0});
  std::shuffle(indices.begin(), indices.end(), rng);
  return indices;
}

/// A KKT point and the slacks s = Cx − c it was built with.
struct KktPoint {
  std::vector<double> x, y, z, slack;
};

/// The problem with the given matrices for which `point` is a KKT point (file comment).
TestQp from_kkt_point(SymmetricCscMatrix hessian, CscMatrix equality, CscMatrix inequality,
                      const KktPoint& point) {
  const auto n = static_cast<std::size_t>(hessian.size());
  TestQp result;
  QpProblem& problem = result.problem;
  problem.linear.assign(n, 0.0);
  linalg::symmetric_multiply(hessian, point.x, problem.linear);
  problem.equality_rhs.assign(point.y.size(), 0.0);
  problem.inequality_rhs.assign(point.z.size(), 0.0);
  linalg::multiply(equality, point.x, problem.equality_rhs);
  linalg::multiply(inequality, point.x, problem.inequality_rhs);
  for (std::size_t i = 0; i < point.slack.size(); ++i) problem.inequality_rhs[i] -= point.slack[i];
  // b = Hx − Eᵀy − Cᵀz, the stationarity condition solved for b.
  std::vector<double> transposed(n);
  linalg::multiply(linalg::transpose(equality), point.y, transposed);
  for (std::size_t i = 0; i < n; ++i) problem.linear[i] -= transposed[i];
  linalg::multiply(linalg::transpose(inequality), point.z, transposed);
  for (std::size_t i = 0; i < n; ++i) problem.linear[i] -= transposed[i];
  problem.hessian = std::move(hessian);
  problem.equality = std::move(equality);
  problem.inequality = std::move(inequality);
  result.reference.status = QpStatus::optimal;
  result.reference.x = point.x;
  result.reference.equality_multipliers = point.y;
  result.reference.inequality_multipliers = point.z;
  return result;
}

/// Banded, strictly diagonally dominant H; rows and columns marked in `zeroed` are left out
/// (their diagonal stored as an explicit zero), which keeps the rest dominant.
SymmetricCscMatrix banded_hessian(Index n, Index bandwidth, const std::vector<char>& zeroed, Rng& rng) {
  Triplets entries;
  std::vector<double> off_diagonal_sum(static_cast<std::size_t>(n), 0.0);
  for (Index j = 0; j < n; ++j) {
    for (Index i = j + 1; i <= std::min(n - 1, j + bandwidth); ++i) {
      if (zeroed[static_cast<std::size_t>(i)] || zeroed[static_cast<std::size_t>(j)]) continue;
      const double value = uniform(rng, -1.0, 1.0);
      entries.add(i, j, value);
      off_diagonal_sum[static_cast<std::size_t>(i)] += std::abs(value);
      off_diagonal_sum[static_cast<std::size_t>(j)] += std::abs(value);
    }
  }
  for (Index j = 0; j < n; ++j) {
    const auto k = static_cast<std::size_t>(j);
    entries.add(j, j, zeroed[k] ? 0.0 : off_diagonal_sum[k] + uniform(rng, 0.5, 1.5));
  }
  return linalg::symmetric_from_triplets(n, entries);
}

/// How the random generator lays out one constraint row.
struct RowLayout {
  Index pivot = -1;  ///< its own dominant column (-1: none)
};

/// Adds row `row` with `count` entries on distinct columns of `columns`: with a pivot, the
/// pivot gets |value| ∈ [1, 2] and the others share less than ½ (row-wise diagonal
/// dominance on the pivot columns, hence full row rank of the pivoted rows); without one,
/// values in [−1, 1].
void add_random_row(Triplets& entries, Index row, Index count, const std::vector<Index>& columns,
                    RowLayout layout, Rng& rng) {
  std::vector<Index> chosen;
  if (layout.pivot >= 0) {
    chosen.push_back(layout.pivot);
    entries.add(row, layout.pivot, (uniform(rng, 0.0, 1.0) < 0.5 ? -1.0 : 1.0) * uniform(rng, 1.0, 2.0));
  }
  const double off_scale = layout.pivot >= 0 ? 0.5 / static_cast<double>(count) : 1.0;
  const auto available = static_cast<Index>(columns.size());
  while (static_cast<Index>(chosen.size()) < std::min(count, available)) {
    const Index column = columns[static_cast<std::size_t>(uniform_index(rng, available))];
    if (std::find(chosen.begin(), chosen.end(), column) != chosen.end()) continue;
    chosen.push_back(column);
    entries.add(row, column, off_scale * uniform(rng, -1.0, 1.0));
  }
}

enum class RowRole { inactive, strictly_active, weakly_active };

/// The parts of random_qp before the right-hand sides are derived from the KKT point.
struct RandomParts {
  SymmetricCscMatrix hessian;
  Triplets equality, inequality;
  KktPoint point;
  std::vector<RowRole> roles;  ///< of the inequality rows
};

std::vector<RowRole> inequality_roles(Index q, const RandomQpOptions& options, Rng& rng) {
  std::vector<RowRole> roles(static_cast<std::size_t>(q), RowRole::inactive);
  for (auto& role : roles) {
    if (uniform(rng, 0.0, 1.0) >= options.active_fraction) continue;
    role = uniform(rng, 0.0, 1.0) < options.weakly_active_fraction ? RowRole::weakly_active
                                                                    : RowRole::strictly_active;
  }
  return roles;
}

void check_sizes(Index n, Index p, Index q, Index constrained) {
  if (n < 1 || p < 0 || q < 0) {
    throw std::invalid_argument("random_qp: expected n ≥ 1, p ≥ 0, q ≥ 0, got n = " + std::to_string(n) +
                                ", p = " + std::to_string(p) + ", q = " + std::to_string(q));
  }
  if (constrained < 0 || constrained > n || p > constrained) {
    throw std::invalid_argument("random_qp: expected p ≤ constrained_count ≤ n, got p = " + std::to_string(p) +
                                ", constrained_count = " + std::to_string(constrained) + ", n = " +
                                std::to_string(n));
  }
}

RandomParts random_parts(Index n, Index p, Index q, Rng& rng, const RandomQpOptions& options) {
  const Index constrained = options.constrained_count == 0 ? n : options.constrained_count;
  check_sizes(n, p, q, constrained);
  std::vector<Index> columns = shuffled_range(n, rng);
  columns.resize(static_cast<std::size_t>(constrained));
  // Pivots, in the order of `columns`: the equality rows first, then the active inequalities
  // while columns last — the active constraint Jacobian then has full row rank (LICQ).
  RandomParts parts;
  parts.roles = inequality_roles(q, options, rng);
  std::size_t next_pivot = 0;
  std::vector<Index> fixing_pivots;  // pivots of rows with nonzero multipliers
  for (Index row = 0; row < p; ++row) {
    fixing_pivots.push_back(columns[next_pivot]);
    add_random_row(parts.equality, row, options.entries_per_row, columns, {columns[next_pivot++]}, rng);
  }
  for (Index row = 0; row < q; ++row) {
    const RowRole role = parts.roles[static_cast<std::size_t>(row)];
    RowLayout layout;
    if (role != RowRole::inactive && next_pivot < columns.size()) {
      layout.pivot = columns[next_pivot++];
      if (role == RowRole::strictly_active) fixing_pivots.push_back(layout.pivot);
    }
    add_random_row(parts.inequality, row, options.entries_per_row, columns, layout, rng);
  }
  std::vector<char> zeroed(static_cast<std::size_t>(n), 0);
  if (options.hessian == HessianShape::semidefinite) {
    const auto null_count = std::min(fixing_pivots.size(), static_cast<std::size_t>(std::max<Index>(1, constrained / 4)));
    for (std::size_t k = 0; k < null_count; ++k) zeroed[static_cast<std::size_t>(fixing_pivots[k])] = 1;
  }
  parts.hessian = banded_hessian(n, options.bandwidth, zeroed, rng);
  KktPoint& point = parts.point;
  for (Index j = 0; j < n; ++j) point.x.push_back(uniform(rng, -1.0, 1.0));
  for (Index row = 0; row < p; ++row) point.y.push_back(uniform(rng, -1.0, 1.0));
  for (const RowRole role : parts.roles) {
    point.z.push_back(role == RowRole::strictly_active ? uniform(rng, 0.5, 1.5) : 0.0);
    point.slack.push_back(role == RowRole::inactive ? uniform(rng, 0.1, 1.0) : 0.0);
  }
  return parts;
}

TestQp assemble(RandomParts parts, Index n) {
  auto equality = linalg::csc_from_triplets(static_cast<Index>(parts.point.y.size()), n, parts.equality);
  auto inequality = linalg::csc_from_triplets(static_cast<Index>(parts.point.z.size()), n, parts.inequality);
  return from_kkt_point(std::move(parts.hessian), std::move(equality), std::move(inequality), parts.point);
}

/// Appends row `row` of `source` (triplets) as a new row `target` scaled by `scale`.
void copy_row(Triplets& entries, Index row, Index target, double scale) {
  const std::size_t count = entries.size();
  for (std::size_t k = 0; k < count; ++k) {
    if (entries.rows[k] == row) entries.add(target, entries.cols[k], scale * entries.values[k]);
  }
}

/// Appends one row to a CSC matrix.
CscMatrix with_row(const CscMatrix& matrix, const std::vector<std::pair<Index, double>>& row) {
  Triplets entries;
  for (Index j = 0; j < matrix.cols; ++j) {
    for (auto k = matrix.col_ptr[static_cast<std::size_t>(j)]; k < matrix.col_ptr[static_cast<std::size_t>(j) + 1]; ++k) {
      entries.add(matrix.row_idx[static_cast<std::size_t>(k)], j, matrix.values[static_cast<std::size_t>(k)]);
    }
  }
  for (const auto& [column, value] : row) entries.add(matrix.rows, column, value);
  return linalg::csc_from_triplets(matrix.rows + 1, matrix.cols, entries);
}

/// H with row and column j removed from its pattern except for an explicit zero diagonal.
SymmetricCscMatrix without_row_and_column(const SymmetricCscMatrix& hessian, Index j) {
  Triplets entries;
  const CscMatrix& lower = hessian.lower;
  for (Index column = 0; column < lower.cols; ++column) {
    for (auto k = lower.col_ptr[static_cast<std::size_t>(column)]; k < lower.col_ptr[static_cast<std::size_t>(column) + 1]; ++k) {
      const Index row = lower.row_idx[static_cast<std::size_t>(k)];
      const bool touches_j = row == j || column == j;
      entries.add(row, column, touches_j ? 0.0 : lower.values[static_cast<std::size_t>(k)]);
    }
  }
  return linalg::symmetric_from_triplets(hessian.size(), entries);
}

}  // namespace

TestQp random_qp(Index n, Index p, Index q, std::uint64_t seed, const RandomQpOptions& options) {
  Rng rng(seed);
  return assemble(random_parts(n, p, q, rng, options), n);
}

TestQp degenerate_qp(Index n, Index p, Index q, std::uint64_t seed) {
  Rng rng(seed);
  RandomQpOptions options;
  options.active_fraction = 0.6;
  options.weakly_active_fraction = 0.5;
  RandomParts parts = random_parts(n, p, q, rng, options);
  std::vector<Index> active;
  for (Index row = 0; row < q; ++row) {
    if (parts.roles[static_cast<std::size_t>(row)] != RowRole::inactive) active.push_back(row);
  }
  // Redundant active rows: copies of (up to) two active rows, a scaled copy, and their sum.
  Index next_row = q;
  const auto add_redundant = [&](const std::vector<std::pair<Index, double>>& combination) {
    for (const auto& [row, scale] : combination) copy_row(parts.inequality, row, next_row, scale);
    ++next_row;
    parts.point.z.push_back(0.0);
    parts.point.slack.push_back(0.0);
  };
  for (std::size_t k = 0; k < std::min<std::size_t>(2, active.size()); ++k) add_redundant({{active[k], 1.0}});
  if (!active.empty()) add_redundant({{active[0], 2.5}});
  if (active.size() >= 2) add_redundant({{active[0], 1.0}, {active[1], 1.0}});
  return assemble(std::move(parts), n);
}

TestQp infeasible_qp(Index n, std::uint64_t seed, InfeasibleKind kind) {
  if (n < 4) throw std::invalid_argument("infeasible_qp: expected n ≥ 4, got " + std::to_string(n));
  TestQp result = random_qp(n, 1, n / 2, seed, {.constrained_count = n / 2});
  QpProblem& problem = result.problem;
  const Index j = constrained_columns(problem).front();
  const auto add_inequality = [&](double coefficient, double rhs) {
    problem.inequality = with_row(problem.inequality, {{j, coefficient}});
    problem.inequality_rhs.push_back(rhs);
  };
  switch (kind) {
    case InfeasibleKind::inequalities:
      add_inequality(1.0, 1.0);
      add_inequality(-1.0, 0.0);
      break;
    case InfeasibleKind::equalities: {  // row 0 of E again, with e₀ + 1
      std::vector<std::pair<Index, double>> row;
      const CscMatrix& equality = problem.equality;
      for (Index column = 0; column < n; ++column) {
        for (auto k = equality.col_ptr[static_cast<std::size_t>(column)];
             k < equality.col_ptr[static_cast<std::size_t>(column) + 1]; ++k) {
          if (equality.row_idx[static_cast<std::size_t>(k)] == 0) {
            row.emplace_back(column, equality.values[static_cast<std::size_t>(k)]);
          }
        }
      }
      problem.equality = with_row(equality, row);
      problem.equality_rhs.push_back(problem.equality_rhs.front() + 1.0);
      break;
    }
    case InfeasibleKind::mixed:
      problem.equality = with_row(problem.equality, {{j, 1.0}});
      problem.equality_rhs.push_back(0.0);
      add_inequality(1.0, 1.0);
      break;
  }
  result.reference = {};
  result.reference.status = QpStatus::infeasible;
  return result;
}

TestQp unbounded_qp(Index n, std::uint64_t seed) {
  if (n < 4) throw std::invalid_argument("unbounded_qp: expected n ≥ 4, got " + std::to_string(n));
  TestQp result = random_qp(n, 1, n / 2, seed, {.constrained_count = n / 2});
  QpProblem& problem = result.problem;
  const std::vector<Index> constrained = constrained_columns(problem);
  Index j = 0;
  while (std::binary_search(constrained.begin(), constrained.end(), j)) ++j;
  problem.hessian = without_row_and_column(problem.hessian, j);
  problem.linear[static_cast<std::size_t>(j)] = 1.0;
  problem.inequality = with_row(problem.inequality, {{j, 1.0}});
  problem.inequality_rhs.push_back(-1.0);
  result.reference = {};
  result.reference.status = QpStatus::unbounded;
  return result;
}

namespace {

/// H = M + h²K for a triangulated nx × ny grid (unit lumped masses, springs of stiffness
/// 1000 along the edges with Hessian k(ddᵀ + 0.1·I) ⊗ [1 −1; −1 1], d the edge direction).
SymmetricCscMatrix cloth_hessian(Index nx, Index ny, double time_step, Rng& rng) {
  const Index nodes = nx * ny;
  std::vector<std::array<double, 3>> position(static_cast<std::size_t>(nodes));
  for (Index node = 0; node < nodes; ++node) {
    position[static_cast<std::size_t>(node)] = {static_cast<double>(node % nx), static_cast<double>(node / nx),
                                                uniform(rng, -0.2, 0.2)};
  }
  Triplets entries;
  const double stiffness = 1000.0 * time_step * time_step;
  const auto add_block = [&](Index a, Index b, const double (&block)[3][3], double sign) {
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) {
        const Index row = 3 * b + r, column = 3 * a + c;
        if (row >= column) entries.add(row, column, sign * block[r][c]);
      }
    }
  };
  const auto add_edge = [&](Index a, Index b) {  // a < b
    double d[3], length = 0.0;
    for (int k = 0; k < 3; ++k) {
      d[k] = position[static_cast<std::size_t>(b)][static_cast<std::size_t>(k)] -
             position[static_cast<std::size_t>(a)][static_cast<std::size_t>(k)];
      length += d[k] * d[k];
    }
    double block[3][3];
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) block[r][c] = stiffness * (d[r] * d[c] / length + (r == c ? 0.1 : 0.0));
    }
    add_block(a, a, block, 1.0);
    add_block(b, b, block, 1.0);
    add_block(a, b, block, -1.0);
  };
  for (Index node = 0; node < nodes; ++node) {
    const Index x = node % nx, y = node / nx;
    if (x + 1 < nx) add_edge(node, node + 1);
    if (y + 1 < ny) add_edge(node, node + nx);
    if (x + 1 < nx && y + 1 < ny) add_edge(node, node + nx + 1);
    for (int k = 0; k < 3; ++k) entries.add(3 * node + k, 3 * node + k, 1.0);  // M
  }
  return linalg::symmetric_from_triplets(3 * nodes, entries);
}

}  // namespace

TestQp cloth_like_qp(Index nx, Index ny, Index constrained_nodes, std::uint64_t seed,
                     const ClothQpOptions& options) {
  const Index nodes = nx * ny;
  if (nx < 1 || ny < 1 || constrained_nodes < 0 || constrained_nodes > nodes ||
      options.equality_nodes < 0 || options.equality_nodes > constrained_nodes) {
    throw std::invalid_argument("cloth_like_qp: expected nx, ny ≥ 1 and 0 ≤ equality_nodes ≤ constrained_nodes ≤ nx·ny, got nx = " +
                                std::to_string(nx) + ", ny = " + std::to_string(ny) + ", constrained_nodes = " +
                                std::to_string(constrained_nodes) + ", equality_nodes = " +
                                std::to_string(options.equality_nodes));
  }
  Rng rng(seed);
  SymmetricCscMatrix hessian = cloth_hessian(nx, ny, options.time_step, rng);
  std::vector<Index> chosen = shuffled_range(nodes, rng);
  chosen.resize(static_cast<std::size_t>(constrained_nodes));
  Triplets equality, inequality;
  KktPoint point;
  for (Index k = 0; k < constrained_nodes; ++k) {
    const Index node = chosen[static_cast<std::size_t>(k)];
    if (k < options.equality_nodes) {
      for (int d = 0; d < 3; ++d) {
        equality.add(static_cast<Index>(point.y.size()), 3 * node + d, 1.0);
        point.y.push_back(uniform(rng, -1.0, 1.0));
      }
      continue;
    }
    double normal[3], length = 0.0;
    for (double& component : normal) {
      component = uniform(rng, -1.0, 1.0);
      length += component * component;
    }
    for (int d = 0; d < 3; ++d) inequality.add(static_cast<Index>(point.z.size()), 3 * node + d, normal[d] / std::sqrt(length));
    const bool active = uniform(rng, 0.0, 1.0) < options.active_fraction;
    point.z.push_back(active ? uniform(rng, 0.5, 1.5) : 0.0);
    point.slack.push_back(active ? 0.0 : uniform(rng, 0.1, 1.0));
  }
  for (Index j = 0; j < 3 * nodes; ++j) point.x.push_back(uniform(rng, -1.0, 1.0));
  auto equality_matrix = linalg::csc_from_triplets(static_cast<Index>(point.y.size()), 3 * nodes, equality);
  auto inequality_matrix = linalg::csc_from_triplets(static_cast<Index>(point.z.size()), 3 * nodes, inequality);
  return from_kkt_point(std::move(hessian), std::move(equality_matrix), std::move(inequality_matrix), point);
}

QpProblem full_switch_cycle_qp() {
  const double h[3][3] = {{10, -11, -5}, {-11, 17, 11}, {-5, 11, 9}};
  QpProblem problem;
  linalg::Triplets lower;
  for (Index j = 0; j < 3; ++j) {
    for (Index i = j; i < 3; ++i) lower.add(i, j, h[i][j]);
  }
  problem.hessian = linalg::symmetric_from_triplets(3, lower);
  problem.linear = {5.0, -5.0, -1.0};
  linalg::Triplets bounds;
  for (Index i = 0; i < 3; ++i) bounds.add(i, i, 1.0);
  problem.inequality = linalg::csc_from_triplets(3, 3, bounds);
  problem.inequality_rhs = {0.0, 0.0, 0.0};
  problem.equality = linalg::csc_from_triplets(0, 3, {});
  return problem;
}

}  // namespace cholsim::solvers::qp::test_problems
