// The Mehrotra predictor–corrector iterations, written once against a working problem (the
// original QP or its Schur reduction) and the NewtonMatrix K_ρ of a back end.
//
// Notation (qp_problem.hpp's sign convention): slacks s = Cx − c ≥ 0, and the residuals
//   r_d = Hx − b − Eᵀy − Cᵀz,   r_e = Ex − e,   r_i = Cx − s − c,   μ = sᵀz/q.
// The Newton system for a complementarity target S·Z·1 + S·dz + Z·ds = −r_sz eliminates
// ds = C·dx + r_i and dz = −S⁻¹(r_sz + Z·ds), leaving (Nocedal & Wright §16.6)
//   K·dx − Eᵀ·dy = −r_d − CᵀS⁻¹(r_sz + Z·r_i),   E·dx = −r_e,   K = H + CᵀDC, D = Z·S⁻¹.
#include "solvers/qp/interior_point.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "factor/analysis/symbolic.hpp"
#include "linalg/blas.hpp"
#include "solvers/qp/interior_point_back_end.hpp"

namespace cholsim::solvers::qp {
namespace {

using linalg::DenseMatrix;

double max_abs(std::span<const double> v) {
  double largest = 0.0;
  for (const double value : v) largest = std::max(largest, std::abs(value));
  return largest;
}

bool all_finite(std::span<const double> v) {
  return std::all_of(v.begin(), v.end(), [](double value) { return std::isfinite(value); });
}

double dot(std::span<const double> a, std::span<const double> b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

/// y += alpha·x
void add_scaled(double alpha, std::span<const double> x, std::span<double> y) {
  for (std::size_t i = 0; i < x.size(); ++i) y[i] += alpha * x[i];
}

/// The problem the iterations run on, its products and the scales of its data.
struct WorkingProblem {
  explicit WorkingProblem(const QpProblem& qp)
      : problem(qp),
        variables(static_cast<std::size_t>(qp.variable_count())),
        equalities(static_cast<std::size_t>(qp.equality_count())),
        inequalities(static_cast<std::size_t>(qp.inequality_count())),
        hessian_scale(max_abs(qp.hessian.lower.values)),
        equality_scale(max_abs(qp.equality.values)),
        inequality_scale(max_abs(qp.inequality.values)),
        linear_scale(max_abs(qp.linear)),
        rhs_scale(std::max(max_abs(qp.equality_rhs), max_abs(qp.inequality_rhs))) {}

  void hessian(std::span<const double> x, std::span<double> out) const {
    linalg::symmetric_multiply(problem.hessian, x, out);
  }
  void equality(std::span<const double> x, std::span<double> out) const {
    constraint_multiply(problem.equality, x, out);
  }
  void equality_transposed(std::span<const double> y, std::span<double> out) const {
    constraint_multiply_transposed(problem.equality, y, out);
  }
  void inequality(std::span<const double> x, std::span<double> out) const {
    constraint_multiply(problem.inequality, x, out);
  }
  void inequality_transposed(std::span<const double> z, std::span<double> out) const {
    constraint_multiply_transposed(problem.inequality, z, out);
  }

  const QpProblem& problem;
  std::size_t variables, equalities, inequalities;
  double hessian_scale, equality_scale, inequality_scale, linear_scale, rhs_scale;
};

/// An iterate, or a direction: primal x, slacks s, multipliers y and z.
struct PrimalDual {
  explicit PrimalDual(const WorkingProblem& working)
      : x(working.variables), y(working.equalities), z(working.inequalities), s(working.inequalities) {}
  void add(double alpha, const PrimalDual& step) {
    add_scaled(alpha, step.x, x);
    add_scaled(alpha, step.y, y);
    add_scaled(alpha, step.z, z);
    add_scaled(alpha, step.s, s);
  }
  std::vector<double> x, y, z, s;
};

struct Residuals {
  explicit Residuals(const WorkingProblem& working)
      : dual(working.variables), equality(working.equalities), inequality(working.inequalities) {}
  std::vector<double> dual;        ///< r_d
  std::vector<double> equality;    ///< r_e
  std::vector<double> inequality;  ///< r_i
  double complementarity = 0.0;    ///< μ
};

/// Solves the Newton systems [K −Eᵀ; E 0]·[dx; dy] = [r₁; r₂] of one iteration through K_ρ:
/// adding ρEᵀ times the second row to the first gives K_ρ·dx − Eᵀdy = r₁ + ρEᵀr₂, so
/// dy solves (E·K_ρ⁻¹·Eᵀ)·dy = r₂ − E·K_ρ⁻¹(r₁ + ρEᵀr₂) and dx = K_ρ⁻¹(r₁ + ρEᵀr₂ + Eᵀdy).
/// The regularizations (δ in K_ρ, δ_d on the p×p system) are removed by iterative
/// refinement against the exact system.
class NewtonSolver {
 public:
  NewtonSolver(const WorkingProblem& working, NewtonMatrix& matrix, double equality_penalty)
      : working_(working),
        matrix_(matrix),
        equality_penalty_(equality_penalty),
        base_regularization_(1e-12 * (working.hessian_scale > 0.0 ? working.hessian_scale : 1.0)),
        work_n_(working.variables),
        work_q_(working.inequalities),
        residual_x_(working.variables),
        residual_y_(working.equalities),
        correction_x_(working.variables),
        correction_y_(working.equalities) {}

  /// Factors K_ρ for D = diag(scaling), growing δ 100-fold from 1e-12 (relative to H) while
  /// the factorization fails, up to 1e-4; then E·K_ρ⁻¹·Eᵀ. False with failure() set when
  /// either cannot be factored.
  bool factorize(std::span<const double> scaling) {
    scaling_.assign(scaling.begin(), scaling.end());
    const double largest = 1e8 * base_regularization_;
    for (regularization_ = base_regularization_;; regularization_ *= 100.0) {
      const factor::FactorStatus status = matrix_.factorize(scaling_, regularization_);
      if (status.ok()) break;
      if (regularization_ >= largest) {
        failure_ = "the Newton matrix H + CᵀDC + ρEᵀE + δI cannot be factored even with δ = " +
                   std::to_string(regularization_) + ": " + status.message;
        return false;
      }
    }
    return working_.equalities == 0 || factor_equality_system();
  }

  /// Solves the system for (dx, dy); returns the refinement steps taken.
  int solve(std::span<const double> r1, std::span<const double> r2, std::span<double> dx, std::span<double> dy) {
    solve_regularized(r1, r2, dx, dy);
    const double target = 1e-15 * std::max({max_abs(r1), max_abs(r2), 1e-300});
    double previous = exact_residual(r1, r2, dx, dy, residual_x_, residual_y_);
    int steps = 0;
    for (; steps < max_refinement_steps && previous > target; ++steps) {
      solve_regularized(residual_x_, residual_y_, correction_x_, correction_y_);
      add_scaled(1.0, correction_x_, dx);
      add_scaled(1.0, correction_y_, dy);
      const double norm = exact_residual(r1, r2, dx, dy, residual_x_, residual_y_);
      if (!(norm < 0.5 * previous)) {  // stagnating or diverging: take the correction back
        add_scaled(-1.0, correction_x_, dx);
        add_scaled(-1.0, correction_y_, dy);
        break;
      }
      previous = norm;
    }
    return steps;
  }

  [[nodiscard]] double regularization() const { return regularization_; }
  [[nodiscard]] const std::string& failure() const { return failure_; }

 private:
  static constexpr int max_refinement_steps = 5;

  /// W = K_ρ⁻¹Eᵀ and the Cholesky factor of E·W + δ_d·I, δ_d growing from 1e-14 (relative
  /// to the diagonal) while it fails — E may lack full row rank.
  bool factor_equality_system() {
    const Index n = static_cast<Index>(working_.variables), p = static_cast<Index>(working_.equalities);
    k_inverse_et_ = DenseMatrix(n, p);
    const auto& equality = working_.problem.equality;
    for (Index j = 0; j < n; ++j) {
      for (auto k = equality.col_ptr[static_cast<std::size_t>(j)]; k < equality.col_ptr[static_cast<std::size_t>(j) + 1]; ++k) {
        k_inverse_et_(j, equality.row_idx[static_cast<std::size_t>(k)]) = equality.values[static_cast<std::size_t>(k)];
      }
    }
    matrix_.solve(k_inverse_et_.view());
    DenseMatrix product(p, p);
    for (Index j = 0; j < p; ++j) {
      const std::span<const double> column(&k_inverse_et_(0, j), static_cast<std::size_t>(n));
      working_.equality(column, std::span<double>(&product(0, j), static_cast<std::size_t>(p)));
    }
    double diagonal = 0.0;
    for (Index j = 0; j < p; ++j) diagonal = std::max(diagonal, product(j, j));
    if (!(diagonal > 0.0)) diagonal = 1.0;
    for (double shift = 1e-14 * diagonal; shift <= 1e-2 * diagonal; shift *= 100.0) {
      equality_factor_ = product;
      for (Index j = 0; j < p; ++j) {
        for (Index i = j; i < p; ++i) equality_factor_(i, j) = 0.5 * (product(i, j) + product(j, i));
        equality_factor_(j, j) += shift;
      }
      if (linalg::blas::potrf(equality_factor_.view()) == 0) return true;
    }
    failure_ = "the equality system E·K⁻¹·Eᵀ cannot be factored (E far from full row rank)";
    return false;
  }

  void solve_regularized(std::span<const double> r1, std::span<const double> r2, std::span<double> dx,
                         std::span<double> dy) {
    working_.equality_transposed(r2, work_n_);
    for (std::size_t i = 0; i < dx.size(); ++i) dx[i] = r1[i] + equality_penalty_ * work_n_[i];
    matrix_.solve({dx.data(), static_cast<Index>(dx.size()), 1, std::max<Index>(1, static_cast<Index>(dx.size()))});
    if (working_.equalities == 0) return;
    working_.equality(dx, dy);
    for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = r2[i] - dy[i];
    const auto p = static_cast<Index>(dy.size());
    linalg::blas::potrs(equality_factor_.view(), {dy.data(), p, 1, p});
    linalg::blas::gemv(linalg::blas::Transpose::no, 1.0, k_inverse_et_.view(), dy.data(), 1.0, dx.data());
  }

  /// r − [K −Eᵀ; E 0]·[dx; dy] into (out1, out2); returns its ∞-norm.
  double exact_residual(std::span<const double> r1, std::span<const double> r2, std::span<const double> dx,
                        std::span<const double> dy, std::span<double> out1, std::span<double> out2) {
    working_.inequality(dx, work_q_);
    for (std::size_t i = 0; i < work_q_.size(); ++i) work_q_[i] *= scaling_[i];
    working_.inequality_transposed(work_q_, out1);
    working_.hessian(dx, work_n_);
    add_scaled(1.0, work_n_, out1);
    working_.equality_transposed(dy, work_n_);
    for (std::size_t i = 0; i < out1.size(); ++i) out1[i] = r1[i] - (out1[i] - work_n_[i]);
    working_.equality(dx, out2);
    for (std::size_t i = 0; i < out2.size(); ++i) out2[i] = r2[i] - out2[i];
    return std::max(max_abs(out1), max_abs(out2));
  }

  const WorkingProblem& working_;
  NewtonMatrix& matrix_;
  double equality_penalty_;
  double base_regularization_;
  double regularization_ = 0.0;
  std::vector<double> scaling_;
  DenseMatrix k_inverse_et_;    ///< W = K_ρ⁻¹Eᵀ
  DenseMatrix equality_factor_;  ///< Cholesky factor of E·W + δ_d·I
  std::vector<double> work_n_, work_q_;
  std::vector<double> residual_x_, residual_y_, correction_x_, correction_y_;  ///< of the refinement
  std::string failure_;
};

/// (y, z) proves that no x satisfies the constraints (Farkas): with z ≥ 0 and
/// Eᵀy + Cᵀz = 0, every feasible x would give 0 = yᵀEx + zᵀCx ≥ eᵀy + cᵀz > 0. Checked
/// on (y, z)/‖(y, z)‖∞ against the data's scales.
bool proves_infeasibility(const WorkingProblem& working, std::span<const double> y, std::span<const double> z,
                          double tolerance, std::vector<double>& work_n) {
  const double scale = std::max(max_abs(y), max_abs(z));
  if (!(scale > 0.0) || !std::isfinite(scale)) return false;
  if (!z.empty() && *std::min_element(z.begin(), z.end()) < -tolerance * scale) return false;
  const double gap = (dot(working.problem.equality_rhs, y) + dot(working.problem.inequality_rhs, z)) / scale;
  if (!(gap > std::sqrt(tolerance) * working.rhs_scale)) return false;
  std::vector<double> combination(work_n.size());
  working.equality_transposed(y, work_n);
  working.inequality_transposed(z, combination);
  add_scaled(1.0, work_n, combination);
  return max_abs(combination) <= tolerance * scale * std::max(working.equality_scale, working.inequality_scale);
}

/// d proves that the objective is unbounded below on a nonempty feasible set: x + t·d stays
/// feasible (Ed = 0, Cd ≥ 0) while ½(x + td)ᵀH(x + td) − bᵀ(x + td) falls linearly (Hd = 0,
/// bᵀd > 0). Checked on d/‖d‖∞ against the data's scales.
bool proves_unboundedness(const WorkingProblem& working, std::span<const double> d, double tolerance) {
  const double scale = max_abs(d);
  if (!(scale > 0.0) || !std::isfinite(scale)) return false;
  if (!(dot(working.problem.linear, d) / scale > std::sqrt(tolerance) * working.linear_scale)) return false;
  std::vector<double> product(working.variables);
  working.hessian(d, product);
  if (max_abs(product) > tolerance * scale * working.hessian_scale) return false;
  product.resize(working.equalities);
  working.equality(d, product);
  if (max_abs(product) > tolerance * scale * working.equality_scale) return false;
  product.resize(working.inequalities);
  working.inequality(d, product);
  return product.empty() ||
         *std::min_element(product.begin(), product.end()) >= -tolerance * scale * working.inequality_scale;
}

struct LoopOutcome {
  QpStatus status = QpStatus::numerical_failure;
  std::string message;
};

/// The iterations of Mehrotra's predictor–corrector method on one working problem.
class MehrotraIterations {
 public:
  MehrotraIterations(const WorkingProblem& working, NewtonMatrix& matrix, double equality_penalty,
                     const InteriorPointOptions& options, InteriorPointStats& stats)
      : working_(working),
        options_(options),
        stats_(stats),
        solver_(working, matrix, equality_penalty),
        point_(working),
        step_(working),
        affine_(working),
        residuals_(working),
        target_(working.inequalities),
        rhs_x_(working.variables),
        rhs_y_(working.equalities),
        work_n_(working.variables),
        work_q_(working.inequalities) {}

  LoopOutcome run(std::span<const double> warm_x) {
    if (!start(warm_x)) return {QpStatus::numerical_failure, "at the starting point: " + solver_.failure()};
    if (!finite_point()) return {QpStatus::numerical_failure, "the starting point is not finite (NaN or Inf)"};
    for (int iteration = 0;; ++iteration) {
      evaluate_residuals();
      const KktResiduals kkt = kkt_residuals(working_.problem, point_.x, point_.y, point_.z);
      stats_.history.push_back({residuals_.complementarity, kkt.worst(), 0.0, 0.0, 0});
      stats_.iterations = iteration;
      if (kkt.worst() <= options_.tolerance) return {QpStatus::optimal, {}};
      remember_if_acceptable(kkt.worst());
      if (best_residual_ < 1e-3 * kkt.worst()) {
        return accept_best("the next iterate's worst scaled residual rose to " + scientific(kkt.worst(), 1));
      }
      if (const auto certificate = certified_outcome(kkt, iteration)) return *certificate;
      if (iteration == options_.max_iterations) {
        const std::string why = "no KKT point within tolerance " + scientific(options_.tolerance, 1) + " after " +
                                std::to_string(iteration) + " iterations; worst scaled residual " +
                                scientific(kkt.worst(), 1);
        if (best_point_) return accept_best(why);
        return {QpStatus::iteration_limit, why};
      }
      if (!take_step()) return best_point_ ? accept_best(failure_) : LoopOutcome{QpStatus::numerical_failure, failure_};
    }
  }

  [[nodiscard]] const PrimalDual& point() const { return point_; }
  [[nodiscard]] double regularization() const { return solver_.regularization(); }

 private:
  void evaluate_residuals() {
    const QpProblem& problem = working_.problem;
    working_.hessian(point_.x, residuals_.dual);
    add_scaled(-1.0, problem.linear, residuals_.dual);
    working_.equality_transposed(point_.y, work_n_);
    add_scaled(-1.0, work_n_, residuals_.dual);
    working_.inequality_transposed(point_.z, work_n_);
    add_scaled(-1.0, work_n_, residuals_.dual);
    working_.equality(point_.x, residuals_.equality);
    add_scaled(-1.0, problem.equality_rhs, residuals_.equality);
    working_.inequality(point_.x, residuals_.inequality);
    add_scaled(-1.0, problem.inequality_rhs, residuals_.inequality);
    add_scaled(-1.0, point_.s, residuals_.inequality);
    const double q = static_cast<double>(working_.inequalities);
    residuals_.complementarity = q > 0 ? dot(point_.s, point_.z) / q : 0.0;
  }

  /// The Newton direction for the complementarity target r_sz (file comment); returns the
  /// refinement steps of its solve.
  int newton_direction(std::span<const double> complementarity_target, PrimalDual& direction) {
    for (std::size_t i = 0; i < work_q_.size(); ++i) {
      work_q_[i] = (complementarity_target[i] + point_.z[i] * residuals_.inequality[i]) / point_.s[i];
    }
    working_.inequality_transposed(work_q_, rhs_x_);
    for (std::size_t i = 0; i < rhs_x_.size(); ++i) rhs_x_[i] = -residuals_.dual[i] - rhs_x_[i];
    for (std::size_t i = 0; i < rhs_y_.size(); ++i) rhs_y_[i] = -residuals_.equality[i];
    const int steps = solver_.solve(rhs_x_, rhs_y_, direction.x, direction.y);
    working_.inequality(direction.x, direction.s);
    add_scaled(1.0, residuals_.inequality, direction.s);
    for (std::size_t i = 0; i < direction.z.size(); ++i) {
      direction.z[i] = -(complementarity_target[i] + point_.z[i] * direction.s[i]) / point_.s[i];
    }
    return steps;
  }

  /// The largest α ≤ 1 with s + α·ds ≥ 0 and z + α·dz ≥ 0.
  [[nodiscard]] double step_to_boundary(const PrimalDual& direction) const {
    double alpha = 1.0;
    for (std::size_t i = 0; i < point_.s.size(); ++i) {
      if (direction.s[i] < 0.0) alpha = std::min(alpha, -point_.s[i] / direction.s[i]);
      if (direction.z[i] < 0.0) alpha = std::min(alpha, -point_.z[i] / direction.z[i]);
    }
    return alpha;
  }

  std::vector<double> scaling() const {
    std::vector<double> d(working_.inequalities);
    for (std::size_t i = 0; i < d.size(); ++i) d[i] = point_.z[i] / point_.s[i];
    return d;
  }

  /// Mehrotra's starting point (Mehrotra 1992; Nocedal & Wright §14.2 for the shifts):
  /// the full Newton step from (x₀, y = 0, s = z = 1), then s and z shifted to be positive
  /// and balanced.
  bool start(std::span<const double> warm_x) {
    if (!warm_x.empty()) point_.x.assign(warm_x.begin(), warm_x.end());
    std::fill(point_.s.begin(), point_.s.end(), 1.0);
    std::fill(point_.z.begin(), point_.z.end(), 1.0);
    if (!solver_.factorize(scaling())) return false;
    evaluate_residuals();
    const std::vector<double> complementarity(point_.s.size(), 1.0);
    newton_direction(complementarity, step_);
    point_.add(1.0, step_);
    if (working_.inequalities == 0) return true;
    const auto shift_positive = [](std::vector<double>& v) {
      const double shift = std::max(0.0, -1.5 * *std::min_element(v.begin(), v.end()));
      for (double& value : v) value += shift;
    };
    shift_positive(point_.s);
    shift_positive(point_.z);
    const double product = dot(point_.s, point_.z);
    double sum_s = 0.0, sum_z = 0.0;
    for (std::size_t i = 0; i < point_.s.size(); ++i) {
      sum_s += point_.s[i];
      sum_z += point_.z[i];
    }
    const double shift_s = sum_z > 0.0 ? 0.5 * product / sum_z : 0.0;
    const double shift_z = sum_s > 0.0 ? 0.5 * product / sum_s : 0.0;
    // A start on the boundary (s∘z = 0, e.g. a Newton step that lands exactly on every
    // constraint) would stall: it is moved inside by 1.
    const double floor = product > 0.0 && std::isfinite(product) ? 0.0 : 1.0;
    for (std::size_t i = 0; i < point_.s.size(); ++i) {
      point_.s[i] += shift_s + floor;
      point_.z[i] += shift_z + floor;
    }
    return true;
  }

  /// One predictor–corrector step (Mehrotra 1992; Nocedal & Wright Alg. 16.4).
  bool take_step() {
    if (!solver_.factorize(scaling())) {
      failure_ = solver_.failure();
      return false;
    }
    const std::size_t q = working_.inequalities;
    for (std::size_t i = 0; i < q; ++i) target_[i] = point_.s[i] * point_.z[i];
    newton_direction(target_, affine_);
    double centering = 0.0;
    if (q > 0) {
      const double alpha = step_to_boundary(affine_);
      double affine_complementarity = 0.0;
      for (std::size_t i = 0; i < q; ++i) {
        affine_complementarity += (point_.s[i] + alpha * affine_.s[i]) * (point_.z[i] + alpha * affine_.z[i]);
      }
      const double mu = residuals_.complementarity;
      centering = std::pow(affine_complementarity / static_cast<double>(q) / mu, 3);
      for (std::size_t i = 0; i < q; ++i) target_[i] += affine_.s[i] * affine_.z[i] - centering * mu;
    }
    const int refinement = newton_direction(target_, step_);
    const double alpha = q > 0 ? std::min(1.0, fraction_to_boundary * step_to_boundary(step_)) : 1.0;
    point_.add(alpha, step_);
    auto& record = stats_.history.back();
    record.centering = centering;
    record.step = alpha;
    record.refinement_steps = refinement;
    if (!(alpha > min_step)) {
      if (++short_steps_ >= max_short_steps) {
        failure_ = "the step length stayed below " + std::to_string(min_step) + " for " +
                   std::to_string(max_short_steps) + " iterations (the iterates stopped improving)";
        return false;
      }
    } else {
      short_steps_ = 0;
    }
    if (!finite_point()) {
      failure_ = "the iterates became infinite or NaN";
      return false;
    }
    return true;
  }

  /// Keeps the iterate with the least worst residual once it is within acceptable_tolerance.
  void remember_if_acceptable(double residual) {
    if (!(residual <= options_.acceptable_tolerance) || residual >= best_residual_) return;
    best_residual_ = residual;
    best_point_ = point_;
  }

  /// The remembered iterate, as optimal within acceptable_tolerance.
  LoopOutcome accept_best(const std::string& why) {
    point_ = *best_point_;
    return {QpStatus::optimal, "accepted the iterate with worst scaled residual " + scientific(best_residual_, 1) +
                                   " (acceptable tolerance " + scientific(options_.acceptable_tolerance, 1) +
                                   "): " + why};
  }

  [[nodiscard]] bool finite_point() const {
    return all_finite(point_.x) && all_finite(point_.y) && all_finite(point_.z) && all_finite(point_.s);
  }

  /// Infeasibility or unboundedness when an iterate or the last step is a certificate — only
  /// while the residuals the certificate says cannot vanish have not vanished.
  std::optional<LoopOutcome> certified_outcome(const KktResiduals& kkt, int iteration) {
    const double tolerance = options_.certificate_tolerance;
    const bool primal_converged = std::max(kkt.equality, kkt.inequality) <= options_.tolerance;
    const bool has_step = iteration > 0;
    if (!primal_converged &&
        (proves_infeasibility(working_, point_.y, point_.z, tolerance, work_n_) ||
         (has_step && proves_infeasibility(working_, step_.y, step_.z, tolerance, work_n_)))) {
      return LoopOutcome{QpStatus::infeasible,
                         "infeasible: multipliers (y, z ≥ 0) with Eᵀy + Cᵀz ≈ 0 and eᵀy + cᵀz > 0 (a Farkas "
                         "certificate) after " + std::to_string(iteration) + " iterations"};
    }
    if (kkt.stationarity > options_.tolerance &&
        (proves_unboundedness(working_, point_.x, tolerance) ||
         (has_step && proves_unboundedness(working_, step_.x, tolerance)))) {
      return LoopOutcome{QpStatus::unbounded,
                         "unbounded: a direction d with Hd ≈ 0, Ed ≈ 0, Cd ≥ 0 and bᵀd > 0 after " +
                             std::to_string(iteration) + " iterations"};
    }
    return std::nullopt;
  }

  static constexpr double fraction_to_boundary = 0.995;
  static constexpr double min_step = 1e-12;
  static constexpr int max_short_steps = 5;

  const WorkingProblem& working_;
  const InteriorPointOptions& options_;
  InteriorPointStats& stats_;
  NewtonSolver solver_;
  PrimalDual point_, step_, affine_;
  Residuals residuals_;
  std::vector<double> target_;        ///< r_sz
  std::vector<double> rhs_x_, rhs_y_;  ///< r₁ and r₂ of the Newton system
  std::vector<double> work_n_, work_q_;
  int short_steps_ = 0;
  std::optional<PrimalDual> best_point_;  ///< none until an iterate is within acceptable_tolerance
  double best_residual_ = std::numeric_limits<double>::infinity();
  std::string failure_;
};

/// Up to this many constrained columns the dense S is cheap enough that the automatic rule
/// does not analyze H to compare costs.
constexpr Index kAlwaysSchurSize = 200;

/// ρ of K_ρ = K + ρEᵀE: comparable to H's entries relative to E's, so that EᵀE neither
/// drowns H nor vanishes in it.
double equality_penalty(const WorkingProblem& working) {
  if (working.equalities == 0 || working.equality_scale == 0.0) return 0.0;
  const double hessian = working.hessian_scale > 0.0 ? working.hessian_scale : 1.0;
  return hessian / (working.equality_scale * working.equality_scale);
}

/// The automatic rule (file comment). Between the clear cases the two per-iteration costs are
/// compared: the dense refactorization of S + C₂ᵀDC₂ (m³/3 flops) against the sparse
/// refactorization of K (about the flops F of factoring H, from an analysis of H). Measured on
/// this machine, one thread: dense potrf runs at 20–30 GFlop/s, the small sparse
/// refactorization with its solves at about a sixth of that, hence Schur-reduced when
/// m³/3 ≤ 6·F. (EOL cloth on a box face at 3K faces: m = 1,158, F ≈ 4 MFlop → sparse, 3×
/// faster there; a 30K-DOF cloth-like QP with m = 999: Schur-reduced, 1.7–5× faster.)
QpBackend choose_backend(const QpProblem& problem, const InteriorPointOptions& options, Index m) {
  if (options.backend != QpBackend::automatic) return options.backend;
  const Index n = problem.variable_count();
  if (m > options.automatic_schur_limit || 2 * m > n) return QpBackend::sparse;
  if (m <= kAlwaysSchurSize) return QpBackend::schur_reduced;
  const double dense_flops = static_cast<double>(m) * static_cast<double>(m) * static_cast<double>(m) / 3.0;
  const double sparse_flops = factor::analyze(problem.hessian)->stats().flops;
  return dense_flops <= 6.0 * sparse_flops ? QpBackend::schur_reduced : QpBackend::sparse;
}

void check_warm_start(const InteriorPointOptions& options, Index n) {
  const auto& warm = options.warm_start;
  if (!warm.empty() && static_cast<Index>(warm.size()) != n) {
    throw std::invalid_argument("solve_interior_point: the warm start has " + std::to_string(warm.size()) +
                                " entries, expected " + std::to_string(n) + " (or none)");
  }
  if (!all_finite(warm)) {
    throw std::invalid_argument("solve_interior_point: the warm start holds NaN or Inf");
  }
}

/// Runs the iterations on `working` with the back end's K_ρ; fills the multipliers, status
/// and the linear-algebra figures, and returns the working problem's x.
std::vector<double> iterate(const WorkingProblem& working, NewtonMatrix& matrix, std::span<const double> warm_x,
                            const InteriorPointOptions& options, InteriorPointResult& result) {
  const double penalty = equality_penalty(working);
  MehrotraIterations iterations(working, matrix, penalty, options, result.stats);
  const LoopOutcome outcome = iterations.run(warm_x);
  QpSolution& solution = result.solution;
  solution.status = outcome.status;
  solution.message = outcome.message;
  solution.iterations = result.stats.iterations;
  solution.equality_multipliers = iterations.point().y;
  solution.inequality_multipliers = iterations.point().z;
  InteriorPointStats& stats = result.stats;
  stats.equality_penalty = penalty;
  stats.regularization = iterations.regularization();
  const NewtonMatrixTimes& times = matrix.times();
  stats.analyze_seconds += times.analyze_seconds;
  stats.setup_factorization_seconds += times.first_factorization_seconds;
  stats.refactor_seconds = times.refactor_seconds;
  stats.max_refactor_seconds = times.max_refactor_seconds;
  stats.refactorizations = times.refactorizations;
  stats.solve_seconds = times.solve_seconds;
  return iterations.point().x;
}

/// Returns false, with the failure in `result`, when the unconstrained block H11 cannot be
/// factored (the reduction's precondition), before any iteration.
bool solve_schur_reduced(const QpProblem& problem, const InteriorPointOptions& options, InteriorPointResult& result) {
  SchurReduction reduction(problem, options.threads);
  InteriorPointStats& stats = result.stats;
  stats.analyze_seconds = reduction.analyze_seconds();
  stats.setup_factorization_seconds = reduction.factorization_seconds();
  if (!reduction.status().ok()) {
    result.solution.status = QpStatus::numerical_failure;
    result.solution.message =
        "the Schur-reduced back end needs the unconstrained block H11 positive definite, but column " +
        std::to_string(reduction.status().column) + " (a column no constraint touches) fails: " +
        reduction.status().message;
    return false;
  }
  const WorkingProblem working(reduction.reduced());
  const auto matrix = reduction.newton_matrix(equality_penalty(working), options.threads);
  const std::vector<double> warm_x =
      options.warm_start.empty() ? std::vector<double>{} : reduction.schur_part(options.warm_start);
  const std::vector<double> x2 = iterate(working, *matrix, warm_x, options, result);
  result.solution.x = reduction.recover(x2);
  stats.phase_seconds = reduction.phase_seconds();
  return true;
}

void solve_sparse(const QpProblem& problem, const InteriorPointOptions& options, InteriorPointResult& result) {
  const WorkingProblem working(problem);
  const auto matrix = make_sparse_newton_matrix(problem, equality_penalty(working), options.threads);
  result.solution.x = iterate(working, *matrix, options.warm_start, options, result);
}

}  // namespace

std::string_view to_string(QpBackend backend) {
  switch (backend) {
    case QpBackend::automatic: return "automatic";
    case QpBackend::schur_reduced: return "schur_reduced";
    case QpBackend::sparse: return "sparse";
  }
  return "unknown";
}

InteriorPointResult solve_interior_point(const QpProblem& problem, const InteriorPointOptions& options) {
  const auto start = Clock::now();
  check_problem(problem);
  const Index n = problem.variable_count();
  check_warm_start(options, n);
  InteriorPointResult result;
  InteriorPointStats& stats = result.stats;
  stats.variables = n;
  const auto schur_size = static_cast<Index>(constrained_columns(problem).size());
  stats.backend = choose_backend(problem, options, schur_size);
  if (stats.backend == QpBackend::schur_reduced) {
    stats.schur_size = schur_size;
    // Chosen for speed, the reduction needs H11 positive definite; a merely semidefinite H
    // (an EOL cloth vertex whose material velocity carries no inertia) is the sparse back end's
    // to solve, whose Newton matrix H + CᵀDC + δI is regularized.
    if (!solve_schur_reduced(problem, options, result) && options.backend == QpBackend::automatic) {
      result = {};
      stats.variables = n;
      stats.backend = QpBackend::sparse;
    }
  }
  if (stats.backend == QpBackend::sparse) solve_sparse(problem, options, result);
  QpSolution& solution = result.solution;
  // A failed reduction leaves no iterate: zeros of the right sizes, so the figures are defined.
  solution.x.resize(static_cast<std::size_t>(n), 0.0);
  solution.equality_multipliers.resize(static_cast<std::size_t>(problem.equality_count()), 0.0);
  solution.inequality_multipliers.resize(static_cast<std::size_t>(problem.inequality_count()), 0.0);
  stats.residuals = kkt_residuals(problem, solution);
  stats.total_seconds = seconds_since(start);
  return result;
}

}  // namespace cholsim::solvers::qp
