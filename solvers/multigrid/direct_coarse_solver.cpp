#include "solvers/multigrid/direct_coarse_solver.hpp"

#include <algorithm>
#include <string>

#include "factor/analysis/symbolic.hpp"

namespace cholsim::solvers {

namespace {

std::string describe(const factor::FactorStatus& status) {
  std::string text = "DirectCoarseSolver: the coarse matrix could not be factored: ";
  if (status.code == factor::FactorStatusCode::not_positive_definite) {
    text += "not positive definite, the pivot of column " + std::to_string(status.column) +
            " is not positive (the coarse operator must be SPD; seed 001 §7 makes it so by the "
            "indefiniteness correction)";
  } else {
    text += status.message;
  }
  return text;
}

std::shared_ptr<const factor::Symbolic> analyze_coarse_pattern(const linalg::SymmetricCscMatrix& a,
                                                               linalg::Index dofs_per_node) {
  factor::AnalyzeOptions options;
  options.ordering = factor::OrderingMethod::automatic;
  options.dofs_per_node = dofs_per_node;
  return factor::analyze(a, options);
}

}  // namespace

CoarseFactorizationError::CoarseFactorizationError(factor::FactorStatus status)
    : std::runtime_error(describe(status)), status_(std::move(status)) {}

DirectCoarseSolver::DirectCoarseSolver(const linalg::SymmetricCscMatrix& a, int threads,
                                       linalg::Index dofs_per_node)
    : factor_(analyze_coarse_pattern(a, dofs_per_node)), threads_(threads) {
  factorize(a);
}

void DirectCoarseSolver::refactor(const linalg::SymmetricCscMatrix& a) { factorize(a); }

void DirectCoarseSolver::factorize(const linalg::SymmetricCscMatrix& a) {
  factor::FactorOptions options;
  options.threads = threads_;
  if (!factor_.factorize(a, options).ok()) throw CoarseFactorizationError(factor_.status());
}

void DirectCoarseSolver::solve(std::span<const double> b, std::span<double> x) const {
  if (b.size() != x.size() || x.size() != static_cast<std::size_t>(size())) {
    throw std::invalid_argument("DirectCoarseSolver::solve: b has " + std::to_string(b.size()) + ", x " +
                                std::to_string(x.size()) + " entries for a coarse matrix of size " +
                                std::to_string(size()));
  }
  if (b.data() != x.data()) std::copy(b.begin(), b.end(), x.begin());
  factor_.solve(x);
}

std::size_t DirectCoarseSolver::factor_bytes() const {
  return static_cast<std::size_t>(factor_.stats().factor_bytes);
}

}  // namespace cholsim::solvers
