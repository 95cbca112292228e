#include "fem/articulated/dense_qp.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "solvers/qp/active_set.hpp"

namespace cholsim::fem::articulated {

linalg::DenseMatrix stack_rows(const linalg::DenseMatrix& a, const linalg::DenseMatrix& b) {
  linalg::DenseMatrix c(a.rows() + b.rows(), std::max(a.cols(), b.cols()));
  for (Index j = 0; j < a.cols(); ++j) {
    for (Index i = 0; i < a.rows(); ++i) c(i, j) = a(i, j);
  }
  for (Index j = 0; j < b.cols(); ++j) {
    for (Index i = 0; i < b.rows(); ++i) c(a.rows() + i, j) = b(i, j);
  }
  return c;
}

linalg::CscMatrix nonzeros_as_csc(const linalg::DenseMatrix& dense) {
  linalg::Triplets entries;
  for (Index c = 0; c < dense.cols(); ++c) {
    for (Index r = 0; r < dense.rows(); ++r) {
      if (dense(r, c) != 0.0) entries.add(r, c, dense(r, c));
    }
  }
  return linalg::csc_from_triplets(dense.rows(), dense.cols(), entries);
}

namespace {
solvers::qp::QpProblem with_constraints(linalg::SymmetricCscMatrix hessian, const linalg::DenseMatrix& equality,
                                        std::span<const double> equality_rhs, const linalg::DenseMatrix& inequality,
                                        std::span<const double> inequality_rhs) {
  solvers::qp::QpProblem problem;
  problem.linear.assign(static_cast<std::size_t>(hessian.size()), 0.0);
  problem.hessian = std::move(hessian);
  problem.equality = nonzeros_as_csc(equality);
  problem.equality_rhs.assign(equality_rhs.begin(), equality_rhs.end());
  problem.inequality = nonzeros_as_csc(inequality);
  problem.inequality_rhs.assign(inequality_rhs.begin(), inequality_rhs.end());
  return problem;
}
}  // namespace

solvers::qp::QpProblem dense_qp(const linalg::DenseMatrix& hessian_lower, const linalg::DenseMatrix& equality,
                                std::span<const double> equality_rhs, const linalg::DenseMatrix& inequality,
                                std::span<const double> inequality_rhs) {
  linalg::Triplets entries;
  for (Index c = 0; c < hessian_lower.cols(); ++c) {
    for (Index r = c; r < hessian_lower.rows(); ++r) entries.add(r, c, hessian_lower(r, c));
  }
  return with_constraints(linalg::symmetric_from_triplets(hessian_lower.rows(), entries), equality, equality_rhs,
                          inequality, inequality_rhs);
}

solvers::qp::QpProblem diagonal_qp(std::span<const double> diagonal, const linalg::DenseMatrix& equality,
                                   std::span<const double> equality_rhs, const linalg::DenseMatrix& inequality,
                                   std::span<const double> inequality_rhs) {
  linalg::Triplets entries;
  for (std::size_t k = 0; k < diagonal.size(); ++k) entries.add(static_cast<Index>(k), static_cast<Index>(k), diagonal[k]);
  return with_constraints(linalg::symmetric_from_triplets(static_cast<Index>(diagonal.size()), entries), equality,
                          equality_rhs, inequality, inequality_rhs);
}

solvers::qp::QpSolution solve_dense_qp(const solvers::qp::QpProblem& problem, const char* what,
                                       solvers::qp::ActiveSetWarmStart* warm_start) {
  solvers::qp::ActiveSetStats stats;
  const bool usable = warm_start != nullptr && std::all_of(warm_start->active_inequalities.begin(),
                                                           warm_start->active_inequalities.end(), [&](Index row) {
                                                             return row < problem.inequality_count();
                                                           });
  solvers::qp::QpSolution solution =
      solvers::qp::solve_active_set(problem, {}, usable ? warm_start : nullptr, &stats);
  if (warm_start != nullptr) *warm_start = stats.final_active_set;
  if (solution.status != solvers::qp::QpStatus::optimal) {
    throw std::runtime_error(std::string(what) + ": the QP ended " + std::string(solvers::qp::to_string(solution.status)) +
                             ": " + solution.message);
  }
  return solution;
}

}  // namespace cholsim::fem::articulated
