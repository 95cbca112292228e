// The Schur-reduced back end of the interior point method (issue 20): H is factored once with
// the constrained columns as the Schur set (seed 004 §4.3, eq. 14), the unconstrained
// unknowns x₁ are eliminated exactly, and the iterations run on the m-dimensional reduced QP
// whose Newton matrix S + C₂ᵀDC₂ + ρE₂ᵀE₂ + δI is a dense low-rank update of S (seed 004
// §4.4, eq. 19), refactored densely every iteration.
#include <algorithm>
#include <utility>

#include "factor/schur/schur_system.hpp"
#include "solvers/qp/interior_point_back_end.hpp"

namespace cholsim::solvers::qp {
namespace {

using linalg::CscMatrix;
using linalg::DenseMatrix;

/// The columns `columns` (sorted) of a constraint matrix, in that order; every other column
/// must be empty.
CscMatrix restrict_columns(const CscMatrix& a, std::span<const Index> columns) {
  CscMatrix result;
  result.rows = a.rows;
  result.cols = static_cast<Index>(columns.size());
  if (a.rows == 0) {
    result.col_ptr.assign(columns.size() + 1, 0);
    return result;
  }
  for (const Index j : columns) {
    for (auto k = a.col_ptr[static_cast<std::size_t>(j)]; k < a.col_ptr[static_cast<std::size_t>(j) + 1]; ++k) {
      result.row_idx.push_back(a.row_idx[static_cast<std::size_t>(k)]);
      result.values.push_back(a.values[static_cast<std::size_t>(k)]);
    }
    result.col_ptr.push_back(static_cast<linalg::Offset>(result.row_idx.size()));
  }
  return result;
}

/// The lower triangle of a dense symmetric matrix as a (dense) sparse one, every entry kept.
linalg::SymmetricCscMatrix lower_as_sparse(linalg::ConstDenseView dense) {
  linalg::SymmetricCscMatrix result;
  CscMatrix& lower = result.lower;
  lower.rows = lower.cols = dense.rows;
  for (Index j = 0; j < dense.cols; ++j) {
    for (Index i = j; i < dense.rows; ++i) {
      lower.row_idx.push_back(i);
      lower.values.push_back(dense(i, j));
    }
    lower.col_ptr.push_back(static_cast<linalg::Offset>(lower.row_idx.size()));
  }
  return result;
}

std::shared_ptr<const factor::Symbolic> analyze_with_schur_set(const QpProblem& problem,
                                                                std::vector<Index> schur_set, double& seconds) {
  const auto start = Clock::now();
  factor::AnalyzeOptions options;
  options.schur_set = std::move(schur_set);
  options.compare_unconstrained_fill = false;
  auto symbolic = factor::analyze(problem.hessian, options);
  seconds = seconds_since(start);
  return symbolic;
}

class SchurNewtonMatrix final : public NewtonMatrix {
 public:
  SchurNewtonMatrix(const QpProblem& reduced, std::span<const Index> schur_set, double equality_penalty, int threads)
      : size_(reduced.variable_count()), inequality_columns_(linalg::transpose(reduced.inequality)) {
    if (size_ == 0) return;
    // The constant part S + ρE₂ᵀE₂, dense, given to the SchurSystem once.
    DenseMatrix base(size_, size_);
    const auto add_lower = [&](const linalg::SymmetricCscMatrix& a) {
      for (Index j = 0; j < size_; ++j) {
        for (auto k = a.lower.col_ptr[static_cast<std::size_t>(j)]; k < a.lower.col_ptr[static_cast<std::size_t>(j) + 1]; ++k) {
          base(a.lower.row_idx[static_cast<std::size_t>(k)], j) += a.lower.values[static_cast<std::size_t>(k)];
        }
      }
    };
    add_lower(reduced.hessian);
    add_lower(equality_penalty_matrix(reduced.equality, equality_penalty, size_));
    factor::SchurSystemOptions options;
    options.threads = threads;
    system_ = std::make_unique<factor::SchurSystem>(base.view(), schur_set, options);
    diagonal_.lower.rows = diagonal_.lower.cols = size_;
    for (Index j = 0; j < size_; ++j) {
      diagonal_.lower.row_idx.push_back(j);
      diagonal_.lower.col_ptr.push_back(j + 1);
    }
  }

  factor::FactorStatus factorize(std::span<const double> scaling, double regularization) override {
    if (size_ == 0) return {factor::FactorStatusCode::ok, -1, -1, 0.0, {}};
    const auto start = Clock::now();
    system_->clear_updates();
    if (!scaling.empty()) system_->add_low_rank(inequality_columns_, scaling);
    diagonal_.lower.values.assign(static_cast<std::size_t>(size_), regularization);
    system_->add(diagonal_);
    const factor::FactorStatus status = system_->refactor();
    record_factorization(seconds_since(start));
    return status;
  }

  void solve(linalg::DenseView b) override {
    if (size_ == 0) return;
    const auto start = Clock::now();
    system_->solve(b);
    times_.solve_seconds += seconds_since(start);
  }

 private:
  Index size_;
  CscMatrix inequality_columns_;  ///< C₂ᵀ (m×q): W of the low-rank update W·D·Wᵀ
  linalg::SymmetricCscMatrix diagonal_;  ///< δI
  std::unique_ptr<factor::SchurSystem> system_;
};

}  // namespace

SchurReduction::SchurReduction(const QpProblem& problem, int threads)
    : schur_set_(constrained_columns(problem)),
      partial_(analyze_with_schur_set(problem, schur_set_, analyze_seconds_)) {
  const auto start = Clock::now();
  factor::FactorOptions options;
  options.threads = threads;
  partial_.factorize(problem.hessian, options);
  factorization_seconds_ = seconds_since(start);
  if (partial_.ok()) build_reduced_problem(problem);
}

void SchurReduction::build_reduced_problem(const QpProblem& problem) {
  const auto start = Clock::now();
  const Index n = problem.variable_count();
  DenseMatrix b(n, 1);
  std::copy(problem.linear.begin(), problem.linear.end(), b.data());
  forward_b_ = DenseMatrix(n, 1);
  partial_.forward(b.view(), forward_b_.view());
  const linalg::DenseView reduced_b = partial_.schur_rows(forward_b_.view());
  phase_seconds_ = seconds_since(start);

  const Index m = static_cast<Index>(schur_set_.size());
  reduced_.hessian = m > 0 ? lower_as_sparse(partial_.schur_complement()) : linalg::SymmetricCscMatrix{};
  reduced_.linear.assign(reduced_b.data, reduced_b.data + m);
  reduced_.equality = restrict_columns(problem.equality, schur_set_);
  reduced_.equality_rhs = problem.equality_rhs;
  reduced_.inequality = restrict_columns(problem.inequality, schur_set_);
  reduced_.inequality_rhs = problem.inequality_rhs;
}

std::unique_ptr<NewtonMatrix> SchurReduction::newton_matrix(double equality_penalty, int threads) const {
  return std::make_unique<SchurNewtonMatrix>(reduced_, schur_set_, equality_penalty, threads);
}

std::vector<double> SchurReduction::schur_part(std::span<const double> x) const {
  std::vector<double> x2;
  x2.reserve(schur_set_.size());
  for (const Index j : schur_set_) x2.push_back(x[static_cast<std::size_t>(j)]);
  return x2;
}

std::vector<double> SchurReduction::recover(std::span<const double> x2) {
  const auto start = Clock::now();
  DenseMatrix y = forward_b_;
  const linalg::DenseView schur_part = partial_.schur_rows(y.view());
  std::copy(x2.begin(), x2.end(), schur_part.data);
  DenseMatrix x(partial_.size(), 1);
  partial_.backward(y.view(), x.view());
  phase_seconds_ += seconds_since(start);
  return x.storage();
}

}  // namespace cholsim::solvers::qp
