#include "solvers/qp/ipopt_reference.hpp"

#include <IpIpoptApplication.hpp>
#include <IpSolveStatistics.hpp>
#include <IpTNLP.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cholsim::solvers::qp::reference {

namespace {

using IpoptIndex = Ipopt::Index;
using Ipopt::Number;

// Ipopt reads "no bound" as any value beyond ±nlp_{lower,upper}_bound_inf (default ±1e19).
constexpr Number no_upper_bound = 2e19;
constexpr Number no_lower_bound = -2e19;

/// Calls visit(row, column, value) for each stored entry of `matrix`, rows shifted by
/// `row_offset` (E's rows come first in Ipopt's constraint vector g = [Ex; Cx]).
template <typename Visitor>
void for_each_entry(const linalg::CscMatrix& matrix, Index row_offset, Visitor&& visit) {
  for (Index column = 0; column < matrix.cols; ++column) {
    for (auto k = matrix.col_ptr[static_cast<std::size_t>(column)];
         k < matrix.col_ptr[static_cast<std::size_t>(column) + 1]; ++k) {
      visit(row_offset + matrix.row_idx[static_cast<std::size_t>(k)], column,
            matrix.values[static_cast<std::size_t>(k)]);
    }
  }
}

// The QP as Ipopt's TNLP: f(x) = ½xᵀHx − bᵀx, g(x) = [Ex; Cx] with bounds [e, e] and [c, ∞).
class QpTnlp : public Ipopt::TNLP {
 public:
  explicit QpTnlp(const QpProblem& problem) : problem_(problem) {}

  bool get_nlp_info(IpoptIndex& n, IpoptIndex& m, IpoptIndex& nnz_jac_g, IpoptIndex& nnz_h_lag,
                    IndexStyleEnum& index_style) override {
    n = problem_.variable_count();
    m = constraint_count();
    nnz_jac_g = static_cast<IpoptIndex>(problem_.equality.values.size() + problem_.inequality.values.size());
    nnz_h_lag = static_cast<IpoptIndex>(problem_.hessian.lower.values.size());
    index_style = C_STYLE;
    return true;
  }

  bool get_bounds_info(IpoptIndex n, Number* x_l, Number* x_u, IpoptIndex, Number* g_l,
                       Number* g_u) override {
    std::fill(x_l, x_l + n, no_lower_bound);
    std::fill(x_u, x_u + n, no_upper_bound);
    const std::size_t p = problem_.equality_rhs.size();
    for (std::size_t i = 0; i < p; ++i) g_l[i] = g_u[i] = problem_.equality_rhs[i];
    for (std::size_t i = 0; i < problem_.inequality_rhs.size(); ++i) {
      g_l[p + i] = problem_.inequality_rhs[i];
      g_u[p + i] = no_upper_bound;
    }
    return true;
  }

  bool get_starting_point(IpoptIndex n, bool, Number* x, bool, Number*, Number*, IpoptIndex, bool,
                          Number*) override {
    std::fill(x, x + n, 0.0);
    return true;
  }

  bool eval_f(IpoptIndex n, const Number* x, bool, Number& value) override {
    value = objective(problem_, std::span<const double>(x, static_cast<std::size_t>(n)));
    return true;
  }

  bool eval_grad_f(IpoptIndex n, const Number* x, bool, Number* gradient) override {
    const auto size = static_cast<std::size_t>(n);
    std::span<double> g(gradient, size);
    linalg::symmetric_multiply(problem_.hessian, std::span<const double>(x, size), g);
    for (std::size_t i = 0; i < size; ++i) g[i] -= problem_.linear[i];
    return true;
  }

  bool eval_g(IpoptIndex, const Number* x, bool, IpoptIndex m, Number* g) override {
    std::fill(g, g + m, 0.0);
    const auto accumulate = [&](Index row, Index column, double value) { g[row] += value * x[column]; };
    for_each_entry(problem_.equality, 0, accumulate);
    for_each_entry(problem_.inequality, problem_.equality_count(), accumulate);
    return true;
  }

  bool eval_jac_g(IpoptIndex, const Number*, bool, IpoptIndex, IpoptIndex, IpoptIndex* rows,
                  IpoptIndex* columns, Number* values) override {
    std::size_t entry = 0;
    const auto record = [&](Index row, Index column, double value) {
      if (values == nullptr) {
        rows[entry] = row;
        columns[entry] = column;
      } else {
        values[entry] = value;
      }
      ++entry;
    };
    for_each_entry(problem_.equality, 0, record);
    for_each_entry(problem_.inequality, problem_.equality_count(), record);
    return true;
  }

  // The Lagrangian's Hessian is obj_factor·H: the constraints are linear.
  bool eval_h(IpoptIndex, const Number*, bool, Number obj_factor, IpoptIndex, const Number*, bool,
              IpoptIndex, IpoptIndex* rows, IpoptIndex* columns, Number* values) override {
    std::size_t entry = 0;
    for_each_entry(problem_.hessian.lower, 0, [&](Index row, Index column, double value) {
      if (values == nullptr) {
        rows[entry] = row;
        columns[entry] = column;
      } else {
        values[entry] = obj_factor * value;
      }
      ++entry;
    });
    return true;
  }

  // Ipopt's stationarity is ∇f + Jᵀλ − z_L + z_U = 0; ours is ∇f − Eᵀy − Cᵀz = 0, so (y, z) = −λ.
  void finalize_solution(Ipopt::SolverReturn, IpoptIndex n, const Number* x, const Number*,
                         const Number*, IpoptIndex, const Number*, const Number* lambda, Number,
                         const Ipopt::IpoptData*, Ipopt::IpoptCalculatedQuantities*) override {
    solution_.x.assign(x, x + n);
    const std::size_t p = problem_.equality_rhs.size();
    solution_.equality_multipliers.resize(p);
    solution_.inequality_multipliers.resize(problem_.inequality_rhs.size());
    for (std::size_t i = 0; i < p; ++i) solution_.equality_multipliers[i] = -lambda[i];
    for (std::size_t i = 0; i < solution_.inequality_multipliers.size(); ++i) {
      solution_.inequality_multipliers[i] = -lambda[p + i];
    }
  }

  [[nodiscard]] QpSolution take_solution() { return std::move(solution_); }

 private:
  [[nodiscard]] IpoptIndex constraint_count() const {
    return problem_.equality_count() + problem_.inequality_count();
  }

  const QpProblem& problem_;
  QpSolution solution_;
};

QpStatus status_of(Ipopt::ApplicationReturnStatus status) {
  switch (status) {
    case Ipopt::Solve_Succeeded:
    case Ipopt::Solved_To_Acceptable_Level: return QpStatus::optimal;
    case Ipopt::Infeasible_Problem_Detected: return QpStatus::infeasible;
    case Ipopt::Diverging_Iterates: return QpStatus::unbounded;
    case Ipopt::Maximum_Iterations_Exceeded: return QpStatus::iteration_limit;
    default: return QpStatus::numerical_failure;
  }
}

void set_options(Ipopt::OptionsList& list, const IpoptReferenceOptions& options) {
  list.SetNumericValue("tol", options.tolerance);
  list.SetIntegerValue("max_iter", options.max_iterations);
  list.SetIntegerValue("print_level", 0);
  list.SetStringValue("sb", "yes");  // no banner in the test output
  list.SetStringValue("mu_strategy", "adaptive");
  // The constraints exactly as given (Ipopt relaxes bounds by 1e-8 relative by default).
  list.SetNumericValue("bound_relax_factor", 0.0);
  list.SetStringValue("hessian_constant", "yes");
  list.SetStringValue("jac_c_constant", "yes");
  list.SetStringValue("jac_d_constant", "yes");
}

}  // namespace

QpSolution solve_with_ipopt(const QpProblem& problem, const IpoptReferenceOptions& options) {
  check_problem(problem);
  const Ipopt::SmartPtr<Ipopt::IpoptApplication> application = IpoptApplicationFactory();
  set_options(*application->Options(), options);
  QpSolution failed;
  failed.status = QpStatus::numerical_failure;
  if (application->Initialize() != Ipopt::Solve_Succeeded) {
    failed.message = "Ipopt failed to initialize";
    return failed;
  }
  const Ipopt::SmartPtr<QpTnlp> tnlp = new QpTnlp(problem);
  const Ipopt::ApplicationReturnStatus status = application->OptimizeTNLP(GetRawPtr(tnlp));
  QpSolution solution = tnlp->take_solution();
  solution.status = status_of(status);
  solution.message = "Ipopt returned " + std::to_string(static_cast<int>(status));
  if (Ipopt::SmartPtr<Ipopt::SolveStatistics> statistics = application->Statistics(); IsValid(statistics)) {
    solution.iterations = statistics->IterationCount();
  }
  return solution;
}

double max_relative_difference(std::span<const double> value, std::span<const double> reference) {
  if (value.size() != reference.size()) {
    throw std::invalid_argument("max_relative_difference: " + std::to_string(value.size()) +
                                " values against " + std::to_string(reference.size()) +
                                " reference entries; expected equal sizes");
  }
  double largest_difference = 0.0;
  double largest_reference = 0.0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    largest_difference = std::max(largest_difference, std::abs(value[i] - reference[i]));
    largest_reference = std::max(largest_reference, std::abs(reference[i]));
  }
  return largest_difference / (1.0 + largest_reference);
}

}  // namespace cholsim::solvers::qp::reference
