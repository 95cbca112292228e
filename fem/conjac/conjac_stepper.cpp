#include "fem/conjac/conjac_stepper.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include <tbb/parallel_invoke.h>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/blas.hpp"
#include "linalg/blas_threads.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::fem {
namespace {

using Clock = std::chrono::steady_clock;
namespace blas = linalg::blas;

double seconds_since(Clock::time_point& start) {
  const auto now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - start).count();
  start = now;
  return seconds;
}

void require_positive(double value, const char* name) {
  if (!(value > 0.0) || !std::isfinite(value)) {
    throw std::invalid_argument(std::string("CONJAC: ") + name + " must be positive and finite, got " +
                                std::to_string(value));
  }
}

void check_options(const ConjacOptions& options) {
  require_positive(options.time_step, "the time step");
  require_positive(options.beta, "beta");
  if (!(options.gamma >= 0.0 && options.gamma <= 1.0)) {
    throw std::invalid_argument("CONJAC: gamma must lie in [0, 1], got " + std::to_string(options.gamma));
  }
}

void check_state(const solvers::MechanicalSystem& system, const std::vector<double>& x, const std::vector<double>& v) {
  const auto n = static_cast<std::size_t>(system.size());
  if (x.size() != n || v.size() != n) {
    throw std::invalid_argument("CONJAC: the state has " + std::to_string(x.size()) + " positions and " +
                                std::to_string(v.size()) + " velocities for " + std::to_string(n) + " free DOFs");
  }
}

// Where each column's diagonal entry sits in a lower CSC pattern.
std::vector<linalg::Offset> diagonal_positions(const linalg::SymmetricCscMatrix& a) {
  std::vector<linalg::Offset> diagonal(static_cast<std::size_t>(a.size()));
  for (Index c = 0; c < a.size(); ++c) {
    const auto begin = a.lower.row_idx.begin() + a.lower.col_ptr[c];
    const auto end = a.lower.row_idx.begin() + a.lower.col_ptr[c + 1];
    const auto found = std::lower_bound(begin, end, c);
    if (found == end || *found != c) {
      throw std::invalid_argument("CONJAC: the system's pattern has no diagonal entry in column " + std::to_string(c));
    }
    diagonal[c] = found - a.lower.row_idx.begin();
  }
  return diagonal;
}

}  // namespace

LinearlyImplicitStepper::LinearlyImplicitStepper(solvers::MechanicalSystem& system, ConjacOptions options)
    : system_(system), options_(options), hessian_(system.pattern()), matrix_(system.pattern()) {
  check_options(options_);
  diagonal_ = diagonal_positions(matrix_);
  factor::AnalyzeOptions analyze_options;
  analyze_options.dofs_per_node = 3;
  factor_ = std::make_unique<factor::Factor>(factor::analyze(matrix_, analyze_options));
}

LinearlyImplicitStepper::~LinearlyImplicitStepper() = default;

void LinearlyImplicitStepper::step(double time, std::vector<double>& x, std::vector<double>& v) {
  check_state(system_, x, v);
  const double h = options_.time_step;
  auto clock = Clock::now();
  phases_ = {};
  system_.set_time(time + h);
  gradient_.resize(x.size());
  system_.potential_gradient(x, gradient_);
  system_.potential_hessian(x, hessian_);
  phases_.fill = seconds_since(clock);

  // (M + βh²H)·v = M·v⁰ + h·f (eq. 4.10, K = −H, f = −∇V).
  const double scale = options_.beta * h * h;
  for (std::size_t p = 0; p < matrix_.lower.values.size(); ++p) matrix_.lower.values[p] = scale * hessian_.lower.values[p];
  const auto masses = system_.masses();
  for (Index i = 0; i < matrix_.size(); ++i) matrix_.lower.values[diagonal_[i]] += masses[i];
  factor::FactorOptions factor_options;
  factor_options.threads = options_.threads;
  if (!factor_->factorize(matrix_, factor_options).ok()) {
    throw std::runtime_error("linearly implicit step: M + beta h^2 K is not positive definite: " +
                             factor_->status().message);
  }
  phases_.factor = seconds_since(clock);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = masses[i] * v[i] - h * gradient_[i];
  factor_->solve(std::span<double>(v));
  phases_.solves = seconds_since(clock);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += h * v[i];
  phases_.other = seconds_since(clock);
}

ConjacStepper::ConjacStepper(solvers::MechanicalSystem& system, std::vector<Index> dynamic_dofs, ConjacOptions options)
    : system_(system), dynamic_dofs_(std::move(dynamic_dofs)), options_(options), hessian_(system.pattern()) {
  check_options(options_);
  const Index n = system_.size();
  is_dynamic_.assign(static_cast<std::size_t>(n), 0);
  for (const Index dof : dynamic_dofs_) {
    if (dof < 0 || dof >= n) {
      throw std::invalid_argument("CONJAC: dynamic DOF " + std::to_string(dof) + " is outside the " +
                                  std::to_string(n) + " free DOFs");
    }
    if (is_dynamic_[dof]) throw std::invalid_argument("CONJAC: dynamic DOF " + std::to_string(dof) + " is listed twice");
    is_dynamic_[dof] = 1;
  }
  position_.assign(static_cast<std::size_t>(n), -1);
  for (std::size_t a = 0; a < dynamic_dofs_.size(); ++a) position_[dynamic_dofs_[a]] = static_cast<Index>(a);
  active_.assign(dynamic_dofs_.size(), 1);
  // The dynamic DOFs are the Schur set: ordered last, in their order (schur_ordering.hpp).
  factor::AnalyzeOptions analyze_options;
  analyze_options.dofs_per_node = 3;
  analyze_options.schur_set = dynamic_dofs_;
  partial_ = std::make_unique<factor::SchurComplementFactor>(factor::analyze(hessian_, analyze_options));
  force_.resize(static_cast<std::size_t>(n));
}

ConjacStepper::~ConjacStepper() = default;

void ConjacStepper::condense(std::span<const double> x) {
  const Index n = system_.size();
  auto clock = Clock::now();
  system_.potential_gradient(x, force_);
  for (double& f : force_) f = -f;
  system_.potential_hessian(x, hessian_);
  phases_.fill += seconds_since(clock);

  factor::FactorOptions factor_options;
  factor_options.threads = options_.threads;
  if (!partial_->factorize(hessian_, factor_options).ok()) {
    throw std::runtime_error("CONJAC: -K_qq is not positive definite (is the body held?): " +
                             partial_->status().message);
  }
  phases_.factor += seconds_since(clock);

  // The active dynamic DOFs A and the inactive ones I (adaptivity, seed 002 §4.4): all of them
  // are the Schur set R, so switching never re-analyses; I is condensed out of S densely.
  split_active();
  const auto active = static_cast<Index>(active_dofs_.size());
  const auto inactive = static_cast<Index>(inactive_dofs_.size());

  // Columns of J: y₁ = 0 and x₂ = C = [I_A; −S_II⁻¹S_IA] (Schur rows), so the backward phase
  // gives x₁ = −L₁₁⁻ᵀL₂₁ᵀ·C = J_qR·C — the Jacobian of the quasistatic DOFs q ∪ I on A, with C's
  // rows on R. The stabilization: [f_q; f_I; 0] forward gives f_I + J_qIᵀf_q on I's Schur rows;
  // x_I = S_II⁻¹ of that, x_A = 0, and back: x = H_{q'q'}⁻¹f_{q'} on q' = q ∪ I, 0 on A.
  // These are independent: the stabilization column's two passes over L run on one thread
  // beside J's blocked backward pass on the others, BLAS on one thread each.
  quasistatic_force_ = 0.0;
  stabilization_rhs_.assign(static_cast<std::size_t>(n), 0.0);
  for (Index i = 0; i < n; ++i) {
    if (is_dynamic_[i] && active_[position_[i]]) continue;
    stabilization_rhs_[i] = force_[i];
    if (!is_dynamic_[i]) quasistatic_force_ = std::max(quasistatic_force_, std::abs(force_[i]));
  }
  if (columns_.rows() != n || columns_.cols() != active + 1) columns_ = linalg::DenseMatrix(n, active + 1);
  const auto r = static_cast<Index>(dynamic_dofs_.size());
  linalg::DenseMatrix coupling(r, active);  // C, on the Schur rows
  for (Index k = 0; k < active; ++k) {
    coupling(active_dofs_[k], k) = 1.0;
    for (Index j = 0; j < inactive; ++j) coupling(inactive_dofs_[j], k) = inactive_coupling_(j, k);
  }
  const int threads = linalg::resolve_thread_count(options_.threads);
  const auto jacobian_columns = [&](Index first, Index last, int jacobian_threads) {
    if (last <= first) return;
    partial_->backward_from_schur(coupling.view().block(0, first, r, last - first),
                                  columns_.view().block(0, first, n, last - first), jacobian_threads);
  };
  // A blocked pass over L costs about as much as kColumnsPerPass more columns in it (62K-tet
  // model, bench_conjac), and the stabilization is two single-column passes: with many
  // columns, the stabilization's thread also takes `shared` of them so the threads balance.
  constexpr Index kColumnsPerPass = 8;
  const Index shared = threads > 1 ? std::max<Index>(0, active / 2 - kColumnsPerPass) : 0;
  const auto stabilization = [&] {
    stabilization_column_.resize(static_cast<std::size_t>(n));
    const linalg::DenseView column{stabilization_column_.data(), n, 1, std::max<Index>(n, 1)};
    // One thread each: the Jacobian's pass has the other (below).
    partial_->forward(linalg::ConstDenseView{stabilization_rhs_.data(), n, 1, std::max<Index>(n, 1)}, column, 1);
    const linalg::DenseView schur_part = partial_->schur_rows(column);
    std::vector<double> inactive_part(static_cast<std::size_t>(inactive));
    for (Index j = 0; j < inactive; ++j) inactive_part[j] = schur_part(inactive_dofs_[j], 0);
    if (inactive > 0) {
      blas::potrs(inactive_factor_.view(), linalg::DenseView{inactive_part.data(), inactive, 1, inactive});
    }
    for (Index a = 0; a < schur_part.rows; ++a) schur_part(a, 0) = 0.0;
    for (Index j = 0; j < inactive; ++j) schur_part(inactive_dofs_[j], 0) = inactive_part[j];
    partial_->backward(column, columns_.view().block(0, active, n, 1), 1);
    jacobian_columns(0, shared, 1);
  };
  if (threads == 1 || active == 0) {
    stabilization();
    jacobian_columns(shared, active, 1);
  } else {
    const linalg::ScopedBlasThreads one_blas_thread(1);
    linalg::thread_arena(threads).execute(
        [&] { tbb::parallel_invoke(stabilization, [&] { jacobian_columns(shared, active, threads - 1); }); });
  }
  phases_.solves += seconds_since(clock);
}

void ConjacStepper::set_active(std::span<const char> active) {
  if (active.size() != dynamic_dofs_.size()) {
    throw std::invalid_argument("CONJAC: " + std::to_string(active.size()) + " activity flags for " +
                                std::to_string(dynamic_dofs_.size()) + " dynamic DOFs");
  }
  active_.assign(active.begin(), active.end());
}

void ConjacStepper::split_active() {
  const auto r = static_cast<Index>(dynamic_dofs_.size());
  active_dofs_.clear();
  inactive_dofs_.clear();
  for (Index a = 0; a < r; ++a) (active_[a] ? active_dofs_ : inactive_dofs_).push_back(a);
  const auto active = static_cast<Index>(active_dofs_.size());
  const auto inactive = static_cast<Index>(inactive_dofs_.size());
  const linalg::DenseMatrix s = partial_->schur_complement_symmetric();
  // S on A after condensing I (eq. 4.21's split, densely): S_AA − S_AI·S_II⁻¹·S_IA, and the
  // coupling C_I = −S_II⁻¹S_IA that moves the inactive DOFs with the active ones.
  reduced_stiffness_ = linalg::DenseMatrix(active, active);
  for (Index k = 0; k < active; ++k) {
    for (Index l = 0; l < active; ++l) reduced_stiffness_(l, k) = s(active_dofs_[l], active_dofs_[k]);
  }
  inactive_coupling_ = linalg::DenseMatrix(inactive, active);
  if (inactive == 0) return;
  inactive_factor_ = linalg::DenseMatrix(inactive, inactive);
  for (Index j = 0; j < inactive; ++j) {
    for (Index i = 0; i < inactive; ++i) inactive_factor_(i, j) = s(inactive_dofs_[i], inactive_dofs_[j]);
    for (Index k = 0; k < active; ++k) inactive_coupling_(j, k) = -s(inactive_dofs_[j], active_dofs_[k]);
  }
  if (blas::potrf(inactive_factor_.view()) != 0) {
    throw std::runtime_error("CONJAC: the Schur complement of the inactive dynamic DOFs is not positive definite");
  }
  if (active == 0) return;
  blas::potrs(inactive_factor_.view(), inactive_coupling_.view());
  linalg::DenseMatrix s_ai(active, inactive);
  for (Index j = 0; j < inactive; ++j) {
    for (Index k = 0; k < active; ++k) s_ai(k, j) = s(active_dofs_[k], inactive_dofs_[j]);
  }
  blas::gemm(blas::Transpose::no, blas::Transpose::no, 1.0, s_ai.view(), inactive_coupling_.view(), 1.0,
             reduced_stiffness_.view());
}

ConjacStepper::Condensation ConjacStepper::condensation(std::span<const double> x) {
  condense(x);
  const Index n = system_.size();
  const auto dynamic = static_cast<Index>(active_dofs_.size());
  Condensation result{linalg::DenseMatrix(n, dynamic), reduced_stiffness_};
  for (Index a = 0; a < dynamic; ++a) {
    for (Index i = 0; i < n; ++i) result.jacobian(i, a) = columns_(i, a);
  }
  return result;
}

void ConjacStepper::step(double time, std::vector<double>& x, std::vector<double>& v) {
  check_state(system_, x, v);
  const double h = options_.time_step;
  const Index n = system_.size();
  phases_ = {};
  system_.set_time(time + h);
  condense(x);
  const auto dynamic = static_cast<Index>(active_dofs_.size());
  auto clock = Clock::now();

  const linalg::ConstDenseView jacobian = columns_.view().block(0, 0, n, dynamic);
  const auto masses = system_.masses();
  // p = M·v⁰ + h·f; the reduced system (JᵀMJ + βh²S)·v_d = Jᵀp (eq. 4.11, JᵀHJ = S).
  momentum_.resize(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) momentum_[i] = masses[i] * v[i] + h * force_[i];
  std::vector<double> velocity_d(static_cast<std::size_t>(dynamic), 0.0);
  if (dynamic > 0) {
    linalg::DenseMatrix reduced = reduced_stiffness_;
    const double scale = options_.beta * h * h;
    for (double& entry : reduced.storage()) entry *= scale;
    // JᵀMJ = (M^½J)ᵀ(M^½J) and Jᵀp in one pass over J, a tile of rows at a time: the tile's
    // M^½J stays in cache instead of making an n × |A| copy to read back. The roots are taken
    // once a row: std::sqrt sets errno, so inside the column loop it was a call per entry, not
    // a vector instruction. Together: this phase 6.4 → 4.1 ms at 10 dynamic nodes (bench_conjac).
    constexpr Index kTileRows = 256;
    weighted_.resize(static_cast<std::size_t>(kTileRows) * static_cast<std::size_t>(dynamic));
    root_masses_.resize(static_cast<std::size_t>(n));
    for (Index i = 0; i < n; ++i) root_masses_[i] = std::sqrt(masses[i]);
    const linalg::ScopedBlasThreads one_blas_thread(1);  // calls too small to share
    for (Index first = 0; first < n; first += kTileRows) {
      const Index rows = std::min(kTileRows, n - first);
      const linalg::DenseView tile{weighted_.data(), rows, dynamic, rows};
      for (Index a = 0; a < dynamic; ++a) {
        for (Index i = 0; i < rows; ++i) tile(i, a) = root_masses_[first + i] * jacobian(first + i, a);
      }
      blas::syrk(blas::Transpose::yes, 1.0, tile, 1.0, reduced.view());
      blas::gemv(blas::Transpose::yes, 1.0, jacobian.block(first, 0, rows, dynamic), momentum_.data() + first, 1.0,
                 velocity_d.data());
    }
    if (blas::potrf(reduced.view()) != 0) {
      throw std::runtime_error("CONJAC: the reduced system J^T (M - beta h^2 K) J is not positive definite");
    }
    linalg::DenseView solution{velocity_d.data(), dynamic, 1, std::max<Index>(dynamic, 1)};
    blas::potrs(reduced.view(), solution);
  }
  // v = J·v_d (v_q = J_qd·v_d, eq. 4.7); x += h·v and, on the quasistatic DOFs, h·γ·b_q =
  // γ·H_qq⁻¹f_q: a γ-scaled Newton step toward their balance (eq. 4.12–4.13).
  if (dynamic > 0) {
    blas::gemv(blas::Transpose::no, 1.0, jacobian, velocity_d.data(), 0.0, v.data());
  } else {
    std::fill(v.begin(), v.end(), 0.0);
  }
  for (Index i = 0; i < n; ++i) x[i] += h * v[i] + options_.gamma * columns_(i, dynamic);
  phases_.other = seconds_since(clock);
}

}  // namespace cholsim::fem
