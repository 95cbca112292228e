#pragma once
// Ipopt (Wächter & Biegler 2006, a primal-dual interior-point method) as the independent
// reference of the QP back ends of solvers/qp/: tests only — no library links Ipopt
// (DESIGN.md "Layers").
#include <span>

#include "solvers/qp/qp_problem.hpp"

namespace cholsim::solvers::qp::reference {

struct IpoptReferenceOptions {
  double tolerance = 1e-12;   ///< Ipopt's `tol` (scaled NLP error of the returned point)
  int max_iterations = 3000;  ///< Ipopt's `max_iter`
};

/// Solves `problem` with Ipopt (exact Hessian, constraints unrelaxed: bound_relax_factor 0) from
/// x = 0 and returns x with the multipliers in qp_problem.hpp's sign convention
/// (Hx − b − Eᵀy − Cᵀz = 0, z ≥ 0), which is the negative of Ipopt's λ (its Lagrangian is
/// f + λᵀg). Ipopt's outcome maps to a QpStatus: solved (also "to acceptable level") →
/// optimal, infeasible problem detected → infeasible, diverging iterates → unbounded, iteration
/// limit → iteration_limit, anything else → numerical_failure; `message` names Ipopt's return
/// code and `iterations` holds Ipopt's iteration count.
QpSolution solve_with_ipopt(const QpProblem& problem, const IpoptReferenceOptions& options = {});

/// maxᵢ |valueᵢ − referenceᵢ| / (1 + maxᵢ |referenceᵢ|): how the tests compare a solver's x or
/// multipliers with a reference's. Throws std::invalid_argument when the sizes differ.
double max_relative_difference(std::span<const double> value, std::span<const double> reference);

}  // namespace cholsim::solvers::qp::reference
