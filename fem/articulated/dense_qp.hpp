#pragma once
// The small dense QPs of the articulated simulators in the form solvers/qp takes.
#include <span>

#include "linalg/dense_matrix.hpp"
#include "solvers/qp/active_set.hpp"
#include "solvers/qp/qp_problem.hpp"

namespace cholsim::fem::articulated {

using linalg::Index;

/// The rows of `b` below those of `a` (same column count).
linalg::DenseMatrix stack_rows(const linalg::DenseMatrix& a, const linalg::DenseMatrix& b);
/// The nonzeros of a dense matrix in CSC form.
linalg::CscMatrix nonzeros_as_csc(const linalg::DenseMatrix& dense);
/// ½xᵀHx − bᵀx s.t. E x = e, C x ≥ c, with H given by its lower triangle (n×n dense).
solvers::qp::QpProblem dense_qp(const linalg::DenseMatrix& hessian_lower, const linalg::DenseMatrix& equality,
                                std::span<const double> equality_rhs, const linalg::DenseMatrix& inequality,
                                std::span<const double> inequality_rhs);
/// The same with a diagonal H.
solvers::qp::QpProblem diagonal_qp(std::span<const double> diagonal, const linalg::DenseMatrix& equality,
                                   std::span<const double> equality_rhs, const linalg::DenseMatrix& inequality,
                                   std::span<const double> inequality_rhs);
/// Solves by the Goldfarb–Idnani active-set method, starting from `warm_start`'s active set when
/// given (and leaving the final one there); throws std::runtime_error with `what` and the
/// solver's message unless optimal.
solvers::qp::QpSolution solve_dense_qp(const solvers::qp::QpProblem& problem, const char* what,
                                       solvers::qp::ActiveSetWarmStart* warm_start = nullptr);

}  // namespace cholsim::fem::articulated
