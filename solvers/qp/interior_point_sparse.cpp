// The sparse back end of the interior point method: K_ρ = H + CᵀDC + ρEᵀE + δI as one sparse
// matrix whose pattern never changes, so that it is analyzed once and every iteration is a
// values-only incremental refactorization of the supernodes holding constrained columns and
// their ancestors (seed 000 §4.3).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "solvers/qp/interior_point_back_end.hpp"

namespace cholsim::solvers::qp {
namespace {

using linalg::CscMatrix;
using linalg::Offset;
using linalg::SymmetricCscMatrix;

/// Calls visit(i, j, product) for every pair of entries of column `column` of A (the row
/// `column` of the original matrix when A is a transpose) with i ≥ j: the lower-triangle
/// entries of the outer product aaᵀ.
template <typename Visit>
void for_each_outer_product_entry(const CscMatrix& a, Index column, Visit&& visit) {
  const auto begin = a.col_ptr[static_cast<std::size_t>(column)];
  const auto end = a.col_ptr[static_cast<std::size_t>(column) + 1];
  for (auto k = begin; k < end; ++k) {
    for (auto l = begin; l <= k; ++l) {
      visit(a.row_idx[static_cast<std::size_t>(k)], a.row_idx[static_cast<std::size_t>(l)],
            a.values[static_cast<std::size_t>(k)] * a.values[static_cast<std::size_t>(l)]);
    }
  }
}

class SparseNewtonMatrix final : public NewtonMatrix {
 public:
  SparseNewtonMatrix(const QpProblem& problem, double equality_penalty, int threads)
      : inequality_rows_(constraint_rows(problem.inequality, problem.variable_count())), threads_(threads) {
    const SymmetricCscMatrix penalty = equality_penalty_matrix(problem.equality, equality_penalty, problem.variable_count());
    build_pattern(problem.hessian, penalty);
    base_values_.assign(matrix_.lower.row_idx.size(), 0.0);
    scatter(problem.hessian, base_values_);
    scatter(penalty, base_values_);
    collect_inequality_products();
    for (Index j = 0; j < problem.variable_count(); ++j) {
      diagonal_.push_back(position(j, j));
      if (problem.inequality.rows > 0 && problem.inequality.col_ptr[static_cast<std::size_t>(j) + 1] >
                                             problem.inequality.col_ptr[static_cast<std::size_t>(j)]) {
        inequality_columns_.push_back(j);
      }
    }
  }

  factor::FactorStatus factorize(std::span<const double> scaling, double regularization) override {
    assemble(scaling, regularization);
    factor::FactorOptions options;
    options.threads = threads_;
    // Refactorizing only the supernodes the inequality columns reach pays while those are a
    // minority; when they are most of the matrix (cloth lying on a face) keeping the update
    // blocks costs more than it saves, and every iteration is a plain factorization.
    const bool incremental = 4 * inequality_columns_.size() <= static_cast<std::size_t>(matrix_.size());
    options.retain_update_blocks = incremental;
    const bool first = factor_ == nullptr;
    if (first) {
      const auto analyze_start = Clock::now();
      factor_ = std::make_unique<factor::Factor>(factor::analyze(matrix_));
      times_.analyze_seconds = seconds_since(analyze_start);
    }
    const auto start = Clock::now();
    if (first || !incremental) {
      factor_->factorize(matrix_, options);
    } else {
      // D changes only CᵀDC, on the inequality-constrained columns; δ changes the diagonal.
      const bool diagonal_changed = regularization != factored_regularization_;
      factor_->refactorize(diagonal_changed ? factor::ChangedEntries::all()
                                            : factor::ChangedEntries::columns(inequality_columns_),
                           matrix_, options);
    }
    factored_regularization_ = regularization;
    const double seconds = seconds_since(start);
    if (first) {
      times_.first_factorization_seconds += seconds;
    } else {
      record_factorization(seconds);
    }
    return factor_->status();
  }

  void solve(linalg::DenseView b) override {
    const auto start = Clock::now();
    factor_->solve(b);
    times_.solve_seconds += seconds_since(start);
  }

 private:
  /// H's pattern, the diagonal, EᵀE's and every CᵀC row product's.
  void build_pattern(const SymmetricCscMatrix& hessian, const SymmetricCscMatrix& penalty) {
    const Index n = hessian.size();
    linalg::Triplets pattern;
    const auto add_all = [&](const CscMatrix& lower) {
      for (Index j = 0; j < lower.cols; ++j) {
        for (auto k = lower.col_ptr[static_cast<std::size_t>(j)]; k < lower.col_ptr[static_cast<std::size_t>(j) + 1]; ++k) {
          pattern.add(lower.row_idx[static_cast<std::size_t>(k)], j, 0.0);
        }
      }
    };
    add_all(hessian.lower);
    add_all(penalty.lower);
    for (Index j = 0; j < n; ++j) pattern.add(j, j, 0.0);
    for (Index row = 0; row < inequality_rows_.cols; ++row) {
      for_each_outer_product_entry(inequality_rows_, row, [&](Index i, Index j, double) {
        pattern.add(std::max(i, j), std::min(i, j), 0.0);
      });
    }
    matrix_ = linalg::symmetric_from_triplets(n, pattern);
  }

  /// Where entry (i, j), i ≥ j, of the pattern is stored.
  [[nodiscard]] Offset position(Index i, Index j) const {
    const auto& lower = matrix_.lower;
    const auto begin = lower.row_idx.begin() + lower.col_ptr[static_cast<std::size_t>(j)];
    const auto end = lower.row_idx.begin() + lower.col_ptr[static_cast<std::size_t>(j) + 1];
    return std::lower_bound(begin, end, i) - lower.row_idx.begin();
  }

  void scatter(const SymmetricCscMatrix& a, std::vector<double>& values) const {
    for (Index j = 0; j < a.size(); ++j) {
      for (auto k = a.lower.col_ptr[static_cast<std::size_t>(j)]; k < a.lower.col_ptr[static_cast<std::size_t>(j) + 1]; ++k) {
        values[static_cast<std::size_t>(position(a.lower.row_idx[static_cast<std::size_t>(k)], j))] +=
            a.lower.values[static_cast<std::size_t>(k)];
      }
    }
  }

  /// For each inequality row r, the positions and values of c_r·c_rᵀ's lower entries.
  void collect_inequality_products() {
    product_start_.push_back(0);
    for (Index row = 0; row < inequality_rows_.cols; ++row) {
      for_each_outer_product_entry(inequality_rows_, row, [&](Index i, Index j, double product) {
        product_position_.push_back(position(std::max(i, j), std::min(i, j)));
        product_value_.push_back(product);
      });
      product_start_.push_back(static_cast<Offset>(product_position_.size()));
    }
  }

  void assemble(std::span<const double> scaling, double regularization) {
    auto& values = matrix_.lower.values;
    values = base_values_;
    for (const Offset k : diagonal_) values[static_cast<std::size_t>(k)] += regularization;
    for (std::size_t row = 0; row < scaling.size(); ++row) {
      for (auto k = product_start_[row]; k < product_start_[row + 1]; ++k) {
        values[static_cast<std::size_t>(product_position_[static_cast<std::size_t>(k)])] +=
            scaling[row] * product_value_[static_cast<std::size_t>(k)];
      }
    }
  }

  CscMatrix inequality_rows_;  ///< Cᵀ: column r is inequality row r
  int threads_;
  SymmetricCscMatrix matrix_;  ///< K_ρ: fixed pattern, values of the last assemble()
  std::vector<double> base_values_;  ///< H + ρEᵀE in K_ρ's pattern
  std::vector<Offset> diagonal_;
  std::vector<Offset> product_start_, product_position_;
  std::vector<double> product_value_;
  std::vector<Index> inequality_columns_;
  std::unique_ptr<factor::Factor> factor_;
  double factored_regularization_ = 0.0;
};

}  // namespace

void NewtonMatrix::record_factorization(double seconds) {
  times_.refactor_seconds += seconds;
  times_.max_refactor_seconds = std::max(times_.max_refactor_seconds, seconds);
  ++times_.refactorizations;
}

SymmetricCscMatrix equality_penalty_matrix(const CscMatrix& equality, double penalty, Index n) {
  const CscMatrix rows = constraint_rows(equality, n);
  linalg::Triplets entries;
  for (Index row = 0; row < rows.cols; ++row) {
    for_each_outer_product_entry(rows, row, [&](Index i, Index j, double product) {
      entries.add(std::max(i, j), std::min(i, j), penalty * product);
    });
  }
  return linalg::symmetric_from_triplets(n, entries);
}

std::unique_ptr<NewtonMatrix> make_sparse_newton_matrix(const QpProblem& problem, double equality_penalty,
                                                        int threads) {
  return std::make_unique<SparseNewtonMatrix>(problem, equality_penalty, threads);
}

}  // namespace cholsim::solvers::qp
