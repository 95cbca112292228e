#include "factor/derivative/factor_derivative.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "factor/derivative/derivative_multifrontal.hpp"
#include "factor/numeric/multifrontal.hpp"
#include "factor/update/update_block_retention.hpp"
#include "linalg/blas.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::factor {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double max_abs(std::span<const double> values) {
  double largest = 0.0;
  for (double v : values) largest = std::max(largest, std::abs(v));
  return largest;
}

// A with values a + scale·ȧ (same pattern).
linalg::SymmetricCscMatrix shifted(const linalg::SymmetricCscMatrix& a,
                                   const linalg::SymmetricCscMatrix& a_derivative, double scale) {
  linalg::SymmetricCscMatrix result = a;
  for (std::size_t p = 0; p < result.lower.values.size(); ++p) {
    result.lower.values[p] += scale * a_derivative.lower.values[p];
  }
  return result;
}

}  // namespace

FactorDerivative::FactorDerivative(std::shared_ptr<const Symbolic> symbolic) : factor_(std::move(symbolic)) {}

FactorDerivative::~FactorDerivative() = default;
FactorDerivative::FactorDerivative(FactorDerivative&&) noexcept = default;
FactorDerivative& FactorDerivative::operator=(FactorDerivative&&) noexcept = default;

const FactorStatus& FactorDerivative::factorize_with_derivative(
    const linalg::SymmetricCscMatrix& a, const linalg::SymmetricCscMatrix& a_derivative,
    const FactorOptions& options) {
  const auto start = Clock::now();
  if (!accept_matrices(a, a_derivative, options.check_finite)) return status();
  const Index count = symbolic().supernode_count();
  derivative_.resize(static_cast<std::size_t>(symbolic().factor_value_count()));
  // U̇ is kept exactly when U is, and released by the same policy (derivative_step).
  UpdateBlockStore transient(symbolic(), BlockLifetime::one_call);
  UpdateBlockStore& derivative_updates =
      update_blocks_for_call(retained_derivative_, options.retain_update_blocks, transient, symbolic());
  DerivativeWork work(count);
  // L̇ costs about twice L in every supernode, so L's flops still balance the schedule.
  const std::vector<double> factor_seconds =
      factor_.compute_all_supernodes(a, options, derivative_step(a_derivative, derivative_updates, work));
  finish_stats(start, factor_seconds, derivative_updates, work);
  return status();
}

const FactorStatus& FactorDerivative::refactorize_with_derivative(const ChangedEntries& changed,
                                                                  const linalg::SymmetricCscMatrix& a,
                                                                  const linalg::SymmetricCscMatrix& a_derivative,
                                                                  const FactorOptions& options) {
  const auto start = Clock::now();
  // The supernodes holding a changed entry of A or Ȧ need both L and L̇ again; L̇'s step reads
  // L's block of its own supernode only, so L's recomputed set serves both.
  const std::vector<char> marked = factor_.begin_refactorization(changed, "refactorize_with_derivative");
  if (!accept_matrices(a, a_derivative, options.check_finite)) return status();
  const Index count = symbolic().supernode_count();
  DerivativeWork work(count);
  const std::vector<double> factor_seconds =
      factor_.recompute_marked(a, marked, options, derivative_step(a_derivative, *retained_derivative_, work));
  finish_stats(start, factor_seconds, *retained_derivative_, work);
  return status();
}

bool FactorDerivative::accept_matrices(const linalg::SymmetricCscMatrix& a,
                                       const linalg::SymmetricCscMatrix& a_derivative, bool check_finite) {
  stats_ = {};
  factor_.stats_ = {};
  FactorStatus& status = factor_.status_;
  status = check_matrix(symbolic(), a, check_finite);
  if (!status.ok()) return false;
  status = check_matrix(symbolic(), a_derivative, check_finite);
  if (!status.ok()) status.message = "derivative: " + status.message;
  return status.ok();
}

Factor::SupernodeFollowUp FactorDerivative::derivative_step(const linalg::SymmetricCscMatrix& a_derivative,
                                                            UpdateBlockStore& derivative_updates,
                                                            DerivativeWork& work) {
  return [this, a_derivative_values = std::span<const double>(a_derivative.lower.values),
          updates = &derivative_updates, record = &work](Index s) {
    const Symbolic& sym = symbolic();
    const auto start = Clock::now();
    // L̇'s step needs L's block of s and the children's U̇ only (seed 002 app. C.1).
    record->flops[s] = compute_supernode_derivative(sym, s, a_derivative_values, factor_.values_, derivative_,
                                                    *updates);
    // U̇ follows U's retention policy, so both stores hold the same supernodes' blocks.
    release_consumed_children(sym, s, factor_.keeps_block_, *updates);
    record->seconds[s] = seconds_since(start);
  };
}

void FactorDerivative::finish_stats(Clock::time_point start, std::span<const double> factor_seconds,
                                    const UpdateBlockStore& derivative_updates, const DerivativeWork& work) {
  const Symbolic& sym = symbolic();
  for (Index s = 0; s < sym.supernode_count(); ++s) {
    stats_.factor_kernel_seconds += factor_seconds[s];
    stats_.derivative_kernel_seconds += work.seconds[s];
    stats_.derivative_flops += work.flops[s];
  }
  // L's own statistics, as a plain factorize or refactorize reports them, over the whole call.
  factor_.finish_timing(start);
  const FactorStats& factor_stats = factor_.stats_;
  stats_.seconds = factor_stats.seconds;
  stats_.factor_flops = factor_stats.flops;
  stats_.threads = factor_stats.threads;
  stats_.factor_bytes = sym.stats().factor_bytes;
  stats_.derivative_bytes = static_cast<std::int64_t>(derivative_.size() * sizeof(double));
  stats_.peak_update_bytes = factor_stats.peak_update_bytes;
  stats_.peak_derivative_update_bytes = derivative_updates.peak_bytes();
  stats_.retained_update_bytes = factor_stats.retained_update_bytes;
  stats_.retained_derivative_update_bytes = retained_derivative_ ? retained_derivative_->bytes() : 0;
  stats_.recomputed_supernodes = factor_stats.recomputed_supernodes;
  stats_.recomputed_flop_fraction = sym.stats().flops > 0 ? factor_stats.recomputed_flops / sym.stats().flops : 0.0;
}

std::span<const double> FactorDerivative::derivative_values() const {
  if (!ok()) throw std::logic_error("derivative_values: no successful factorize_with_derivative");
  return derivative_;
}

linalg::CscMatrix FactorDerivative::derivative_matrix() const {
  return supernodal_matrix(symbolic(), derivative_values());
}

double default_finite_difference_step(const linalg::SymmetricCscMatrix& a,
                                      const linalg::SymmetricCscMatrix& a_derivative,
                                      FiniteDifferenceScheme scheme) {
  const double derivative_scale = max_abs(a_derivative.lower.values);
  if (derivative_scale == 0.0) return 1.0;
  const double u = std::numeric_limits<double>::epsilon();
  const double relative = scheme == FiniteDifferenceScheme::forward ? std::sqrt(u) : std::cbrt(u);
  return relative * max_abs(a.lower.values) / derivative_scale;
}

FiniteDifferenceDerivative finite_difference_derivative(std::shared_ptr<const Symbolic> symbolic,
                                                        const linalg::SymmetricCscMatrix& a,
                                                        const linalg::SymmetricCscMatrix& a_derivative,
                                                        const FiniteDifferenceOptions& options) {
  const auto start = Clock::now();
  FiniteDifferenceDerivative result;
  result.epsilon = options.epsilon > 0.0
                       ? options.epsilon
                       : default_finite_difference_step(a, a_derivative, options.scheme);
  result.status = check_matrix(*symbolic, a_derivative, options.factor_options.check_finite);
  if (!result.status.ok()) {
    result.status.message = "derivative: " + result.status.message;
    return result;
  }
  const bool central = options.scheme == FiniteDifferenceScheme::central;
  const double h = result.epsilon;
  // The two factorizations share the symbolic analysis (thesis §5.4.2.2: the pattern reuse
  // the analytic route has, the finite difference has too).
  Factor plus(symbolic);    // A + εȦ
  Factor second(symbolic);  // A − εȦ (central) or A (forward)
  if (!plus.factorize(shifted(a, a_derivative, h), options.factor_options).ok()) {
    result.status = plus.status();
    return result;
  }
  const FactorStatus& base = central ? second.factorize(shifted(a, a_derivative, -h), options.factor_options)
                                     : second.factorize(a, options.factor_options);
  if (!base.ok()) {
    result.status = base;
    return result;
  }
  const double scale = 1.0 / (central ? 2.0 * h : h);
  const auto upper = plus.values();
  const auto lower = second.values();
  result.values.resize(upper.size());
  for (std::size_t i = 0; i < upper.size(); ++i) result.values[i] = (upper[i] - lower[i]) * scale;
  result.status = base;
  result.seconds = seconds_since(start);
  return result;
}

double derivative_identity_residual(const Symbolic& symbolic, std::span<const double> factor_values,
                                    std::span<const double> derivative,
                                    const linalg::SymmetricCscMatrix& a_derivative) {
  if (!symbolic.matches_pattern(a_derivative) || !a_derivative.lower.has_values()) {
    throw std::invalid_argument("derivative_identity_residual: Ȧ does not have the analysed pattern");
  }
  const auto count = static_cast<std::size_t>(symbolic.factor_value_count());
  if (factor_values.size() != count || derivative.size() != count) {
    throw std::invalid_argument("derivative_identity_residual: values do not match the analysis");
  }
  // P·Ȧ·Pᵀ in elimination numbering; the residual starts as −Ȧ on its pattern.
  const linalg::SymmetricCscMatrix permuted =
      linalg::permute_symmetric(a_derivative, symbolic.permutation());
  const linalg::CscMatrix& pattern = permuted.lower;
  std::vector<double> residual(pattern.values.size());
  for (std::size_t p = 0; p < residual.size(); ++p) residual[p] = -pattern.values[p];

  // Supernode s contributes (L̇_s·L_sᵀ + L_s·L̇_sᵀ)(i, j) to every entry whose row and column
  // are both among rows(s); summed over s this is (L̇·Lᵀ + L·L̇ᵀ)(i, j).
  const Index n = symbolic.size();
  std::vector<Index> position(static_cast<std::size_t>(n), -1);
  std::vector<double> product;
  for (Index s = 0; s < symbolic.supernode_count(); ++s) {
    const Index k = symbolic.column_count(s);
    const Index m = symbolic.row_count(s);
    const auto rows = symbolic.rows(s);
    const linalg::ConstDenseView l{factor_values.data() + symbolic.value_offset(s), m, k, m};
    const linalg::ConstDenseView l_dot{derivative.data() + symbolic.value_offset(s), m, k, m};
    product.assign(static_cast<std::size_t>(m) * static_cast<std::size_t>(m), 0.0);
    const linalg::DenseView p{product.data(), m, m, m};
    linalg::blas::syr2k(1.0, l_dot, l, 0.0, p);
    for (Index r = 0; r < m; ++r) position[rows[r]] = r;
    for (Index b = 0; b < m; ++b) {
      const Index j = rows[b];
      for (linalg::Offset e = pattern.col_ptr[j]; e < pattern.col_ptr[j + 1]; ++e) {
        const Index a_row = position[pattern.row_idx[e]];
        if (a_row >= b) residual[e] += p(a_row, b);
      }
    }
    for (Index r = 0; r < m; ++r) position[rows[r]] = -1;
  }

  // Frobenius norms of the symmetric matrices: off-diagonal entries count twice.
  double residual_sum = 0.0;
  double reference_sum = 0.0;
  for (Index j = 0; j < n; ++j) {
    for (linalg::Offset e = pattern.col_ptr[j]; e < pattern.col_ptr[j + 1]; ++e) {
      const double weight = pattern.row_idx[e] == j ? 1.0 : 2.0;
      residual_sum += weight * residual[e] * residual[e];
      reference_sum += weight * pattern.values[e] * pattern.values[e];
    }
  }
  return reference_sum > 0.0 ? std::sqrt(residual_sum / reference_sum) : std::sqrt(residual_sum);
}

double relative_difference(std::span<const double> x, std::span<const double> reference) {
  if (x.size() != reference.size()) throw std::invalid_argument("relative_difference: sizes differ");
  double difference = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    difference += (x[i] - reference[i]) * (x[i] - reference[i]);
    norm += reference[i] * reference[i];
  }
  return norm > 0.0 ? std::sqrt(difference / norm) : std::sqrt(difference);
}

}  // namespace cholsim::factor
