#include "factor/derivative/extrapolated_factor.hpp"

#include <sstream>
#include <stdexcept>

namespace cholsim::factor {

ExtrapolatedFactor::ExtrapolatedFactor(const FactorDerivative& source)
    : factor_(source.factor().symbolic_ptr()) {
  if (!source.ok()) {
    throw std::logic_error("ExtrapolatedFactor: the derivative factorization did not succeed (" +
                           source.status().message + ")");
  }
  const auto values = source.factor().values();
  const auto derivative = source.derivative_values();
  factor_values_.assign(values.begin(), values.end());
  derivative_.assign(derivative.begin(), derivative.end());
  factor_.values_.resize(factor_values_.size());
  factor_.stats_ = source.factor().stats();
}

const FactorStatus& ExtrapolatedFactor::extrapolate(double time_step) {
  time_step_ = time_step;
  auto& values = factor_.values_;
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = factor_values_[i] + time_step * derivative_[i];

  // Diagonal entries in elimination order: the first bad one is the column a solve would hit.
  const Symbolic& sym = factor_.symbolic();
  FactorStatus& status = factor_.status_;
  status = {FactorStatusCode::ok, -1, -1, 0.0, {}};
  for (Index s = 0; s < sym.supernode_count(); ++s) {
    const Index m = sym.row_count(s);
    const double* block = values.data() + sym.value_offset(s);
    for (Index j = 0; j < sym.column_count(s); ++j) {
      const double pivot = block[static_cast<std::int64_t>(j) * m + j];
      if (pivot > 0.0) continue;  // also refuses NaN
      const Index column = sym.permutation()[sym.first_column(s) + j];
      std::ostringstream message;
      message << "extrapolated factor L + " << time_step << "·L̇ has diagonal " << pivot
              << " at column " << column << " (not positive): refusing to use it";
      status.code = FactorStatusCode::not_positive_definite;
      status.column = column;
      status.value = pivot;
      status.message = message.str();
      return status;
    }
  }
  return status;
}

}  // namespace cholsim::factor
