#include "solvers/qp/changing_columns_factor.hpp"

#include <utility>

#include "factor/update/changed_supernodes.hpp"
#include "solvers/qp/qp_problem.hpp"

namespace cholsim::solvers::qp {

ChangingColumnsFactor::ChangingColumnsFactor(std::shared_ptr<const factor::Symbolic>& analysis,
                                             factor::OrderingMethod ordering, int threads)
    : analysis_(analysis), ordering_(ordering), threads_(threads) {}

factor::FactorOptions ChangingColumnsFactor::factor_options() const {
  factor::FactorOptions options;
  options.threads = threads_;
  options.retain_update_blocks = true;
  return options;
}

void ChangingColumnsFactor::make_factor(const linalg::SymmetricCscMatrix& matrix, FactorWork& work) {
  reused_analysis_ = analysis_ != nullptr && analysis_->matches_pattern(matrix);
  if (!reused_analysis_) {
    const auto start = Clock::now();
    factor::AnalyzeOptions options;
    options.ordering = ordering_;
    analysis_ = factor::analyze(matrix, options);
    work.analyze_seconds = seconds_since(start);
  }
  factor_ = std::make_unique<factor::Factor>(analysis_);
}

FactorWork ChangingColumnsFactor::update(const linalg::SymmetricCscMatrix& matrix, std::vector<Index> changed) {
  FactorWork work;
  if (factor_ == nullptr) make_factor(matrix, work);
  const auto start = Clock::now();
  if (!factor_->ok() || !factor_->retains_update_blocks()) {
    factor_->factorize(matrix, factor_options());
  } else if (!changed.empty()) {
    work.changed_columns = static_cast<Index>(changed.size());
    factor_->refactorize(factor::ChangedEntries::columns(std::move(changed)), matrix, factor_options());
  }
  work.factor_seconds = seconds_since(start);
  return work;
}

FactorWork ChangingColumnsFactor::factorize(const linalg::SymmetricCscMatrix& matrix) {
  FactorWork work;
  if (factor_ == nullptr) make_factor(matrix, work);
  const auto start = Clock::now();
  factor_->factorize(matrix, factor_options());
  work.factor_seconds = seconds_since(start);
  return work;
}

}  // namespace cholsim::solvers::qp
