#include "factor_derivative_report.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "factor/derivative/factor_derivative.hpp"
#include "linalg/matrix_market.hpp"
#include "timing.hpp"

namespace cholsim::apps {
namespace {

using linalg::Index;


}  // namespace

linalg::SymmetricCscMatrix smooth_value_perturbation(const linalg::SymmetricCscMatrix& a) {
  linalg::SymmetricCscMatrix a_dot = a;
  const linalg::CscMatrix& lower = a.lower;
  const double frequency = std::numbers::pi / std::max<double>(1.0, static_cast<double>(a.size()));
  for (Index j = 0; j < lower.cols; ++j) {
    for (linalg::Offset p = lower.col_ptr[j]; p < lower.col_ptr[j + 1]; ++p) {
      a_dot.lower.values[p] *= std::cos(frequency * static_cast<double>(lower.row_idx[p] + j));
    }
  }
  return a_dot;
}

factor::FactorStatus add_derivative_report(Report& report, const linalg::SymmetricCscMatrix& a,
                                           const std::shared_ptr<const factor::Symbolic>& symbolic,
                                           const factor::FactorOptions& factor_options,
                                           const DerivativeCommandOptions& options, int repeat,
                                           double factor_seconds,
                                           const std::function<void(const std::string&)>& progress) {
  linalg::SymmetricCscMatrix a_dot;
  if (options.file.empty()) {
    a_dot = smooth_value_perturbation(a);
  } else {
    progress("reading the derivative " + options.file + "...");
    a_dot = linalg::read_symmetric_matrix_market(options.file);
  }

  factor::FactorDerivative ldot(symbolic);
  std::vector<double> seconds;
  for (int run = 1; run <= repeat; ++run) {
    progress("factorizing with derivative " + std::to_string(run) + "/" + std::to_string(repeat) + "...");
    const factor::FactorStatus& status = ldot.factorize_with_derivative(a, a_dot, factor_options);
    if (!status.ok()) return status;
    seconds.push_back(ldot.stats().seconds);
  }
  progress("finite differences and the identity residual...");
  factor::FiniteDifferenceOptions forward_options;
  forward_options.scheme = factor::FiniteDifferenceScheme::forward;
  forward_options.factor_options = factor_options;
  factor::FiniteDifferenceOptions central_options;
  central_options.factor_options = factor_options;
  const auto forward = factor::finite_difference_derivative(symbolic, a, a_dot, forward_options);
  if (!forward.status.ok()) return forward.status;
  const auto central = factor::finite_difference_derivative(symbolic, a, a_dot, central_options);
  if (!central.status.ok()) return central.status;
  const double residual = factor::derivative_identity_residual(*symbolic, ldot.factor().values(),
                                                               ldot.derivative_values(), a_dot);

  const factor::DerivativeFactorStats& stats = ldot.stats();
  const double derivative_median = median(seconds);
  const double ratio = factor_seconds > 0.0 ? derivative_median / factor_seconds : 0.0;
  report.section("factor derivative (median of " + std::to_string(repeat) + ", seed 002 ch. 5)");
  report.add_text("derivative_source", "A dot", options.file.empty() ? "A(i,j)*cos(pi*(i+j)/n)" : options.file);
  report.add_seconds("derivative_factor_s", "L and Ldot time", derivative_median);
  report.add("derivative_factor_s_runs", "", seconds, "");
  report.add("derivative_ratio", "ratio to L alone", ratio, format_fixed(ratio, 2));
  report.add_seconds("derivative_kernel_s", "Ldot kernels (summed)", stats.derivative_kernel_seconds);
  report.add_seconds("derivative_factor_kernel_s", "L kernels (summed)", stats.factor_kernel_seconds);
  report.add_real("derivative_flops", "Ldot flops", stats.derivative_flops);
  report.add_bytes("derivative_bytes", "Ldot bytes", stats.derivative_bytes);
  report.add_bytes("peak_derivative_update_bytes", "peak Udot bytes", stats.peak_derivative_update_bytes);
  report.add_real("identity_residual", "identity |Ldot L^T + L Ldot^T - Adot|/|Adot|", residual);
  report.add_seconds("forward_difference_s", "forward difference time", forward.seconds);
  report.add_real("forward_difference_epsilon", "forward difference epsilon", forward.epsilon);
  report.add_real("forward_difference_error", "forward difference error",
                  factor::relative_difference(forward.values, ldot.derivative_values()));
  report.add_seconds("central_difference_s", "central difference time", central.seconds);
  report.add_real("central_difference_epsilon", "central difference epsilon", central.epsilon);
  report.add_real("central_difference_error", "central difference error",
                  factor::relative_difference(central.values, ldot.derivative_values()));
  return central.status;
}

}  // namespace cholsim::apps
