#include "fem/pd/pd_global_solvers.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/schur/schur_complement.hpp"
#include "factor/schur/schur_low_rank.hpp"
#include "solvers/cg/conjugate_gradient.hpp"

namespace cholsim::fem {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void require_factored(const factor::FactorStatus& status, const char* what) {
  if (!status.ok()) {
    throw std::runtime_error(std::string("projective dynamics: ") + what + " is not positive definite (column " +
                             std::to_string(status.column) +
                             "); a quasistatic body needs fixed nodes or bone attachments");
  }
}

// The global step's linear algebra: the outer right-hand side once per outer iteration, the
// collision-prone part and the springs once per inner iteration, the rest of x at the end.

// §4.3–4.4: partial factorization once, forward / dense Schur / backward per iteration.
class SchurGlobalSolver final : public PdGlobalSolver {
 public:
  SchurGlobalSolver(const PdModel& model, std::span<const Index> prone_nodes, const PdOptions& options,
                    PdSetupStats& setup)
      : model_(&model), threads_(options.model.threads), update_(options.schur_update) {
    factor::AnalyzeOptions analyze_options;
    for (Index node : prone_nodes) analyze_options.schur_set.push_back(model.free_index(node));
    auto start = Clock::now();
    partial_ = std::make_unique<factor::SchurComplementFactor>(factor::analyze(model.matrix(), analyze_options));
    setup.analyze_seconds = seconds_since(start);
    start = Clock::now();
    factor::FactorOptions factor_options;
    factor_options.threads = threads_;
    require_factored(partial_->factorize(model.matrix(), factor_options), "K (partial factorization)");
    setup.factorize_seconds = seconds_since(start);
    setup.nnz_l = partial_->symbolic().stats().nnz_l;
    setup.fill_increase = partial_->symbolic().stats().fill_increase;
    factor::SchurSystemOptions schur_options;
    schur_options.device = options.device;
    schur_options.threads = threads_;
    schur_options.precision = options.schur_precision;
    schur_ = std::make_unique<factor::SchurSystem>(partial_->schur_complement(), partial_->schur_set(), schur_options);
    setup.device_note = schur_->device_note();
    schur_row_.assign(static_cast<std::size_t>(model.free_count()), -1);
    const auto set = partial_->schur_set();
    for (std::size_t i = 0; i < set.size(); ++i) schur_row_[static_cast<std::size_t>(set[i])] = static_cast<Index>(i);
    y_ = linalg::DenseMatrix(model.free_count(), 3);
    rhs_ = linalg::DenseMatrix(partial_->schur_size(), 3);
    reduced_base_ = linalg::DenseMatrix(partial_->schur_size(), 3);
  }

  void begin_outer(linalg::ConstDenseView b_outer, PdPhaseTimes& times) override {
    const auto start = Clock::now();
    partial_->forward(b_outer, y_.view());  // y₁ = L11⁻¹b₁, b̃₂ = b₂ − L21·y₁ (eq. 16)
    const linalg::DenseView reduced = partial_->schur_rows(y_.view());
    for (Index c = 0; c < 3; ++c) {
      for (Index i = 0; i < reduced.rows; ++i) reduced_base_(i, c) = reduced(i, c);
    }
    times.forward += seconds_since(start);
  }

  void solve_inner(linalg::ConstDenseView b_inner, std::span<const SpringRow> springs, linalg::DenseView x,
                   PdFrameStats& stats) override {
    const auto start = Clock::now();
    const auto set = partial_->schur_set();
    const Index m = partial_->schur_size();
    for (Index c = 0; c < 3; ++c) {
      for (Index i = 0; i < m; ++i) rhs_(i, c) = reduced_base_(i, c) + b_inner(set[static_cast<std::size_t>(i)], c);
    }
    if (m > 0) {
      std::vector<double> stiffness;
      const linalg::CscMatrix w = spring_columns(springs, stiffness);
      if (use_low_rank(w)) {
        if (!low_rank_) low_rank_ = std::make_unique<factor::SchurLowRankSolver>(partial_->schur_complement(), threads_);
        require_factored(low_rank_->refactor_and_solve(w, stiffness, rhs_.view()), "C⁻¹ + WᵀS⁻¹W");
        ++stats.low_rank_solves;
      } else {
        schur_->clear_updates();
        if (!springs.empty()) schur_->add_low_rank(w, stiffness);
        require_factored(schur_->refactor(), "S + WᵀCW");
        schur_->solve(rhs_.view());
      }
    }
    for (Index c = 0; c < 3; ++c) {
      for (Index i = 0; i < m; ++i) x(set[static_cast<std::size_t>(i)], c) = rhs_(i, c);
    }
    stats.times.schur += seconds_since(start);
  }

  void end_outer(linalg::DenseView x, PdPhaseTimes& times) override {
    const auto start = Clock::now();
    const linalg::DenseView reduced = partial_->schur_rows(y_.view());
    for (Index c = 0; c < 3; ++c) {
      for (Index i = 0; i < reduced.rows; ++i) reduced(i, c) = rhs_(i, c);
    }
    partial_->backward(y_.view(), x);  // x₁ = L11⁻ᵀ(y₁ − L21ᵀx₂) (eq. 18)
    times.backward += seconds_since(start);
  }

 private:
  // W of ΔS = W·C·Wᵀ (eq. 19): one column per spring, its weights on the Schur rows.
  linalg::CscMatrix spring_columns(std::span<const SpringRow> springs, std::vector<double>& stiffness) const {
    linalg::Triplets triplets;
    stiffness.reserve(springs.size());
    for (std::size_t s = 0; s < springs.size(); ++s) {
      const SpringRow& spring = springs[s];
      for (int i = 0; i < spring.terms; ++i) {
        const Index free = model_->free_index(spring.nodes[static_cast<std::size_t>(i)]);
        if (free < 0) continue;  // a Dirichlet node: part of the target
        const Index row = schur_row_[static_cast<std::size_t>(free)];
        if (row < 0) {
          throw std::logic_error("projective dynamics: a collision spring reaches node " +
                                 std::to_string(spring.nodes[static_cast<std::size_t>(i)]) +
                                 " outside the collision-prone set");
        }
        triplets.add(row, static_cast<Index>(s), spring.weights[static_cast<std::size_t>(i)]);
      }
      stiffness.push_back(spring.stiffness);
    }
    return linalg::csc_from_triplets(partial_->schur_size(), static_cast<Index>(springs.size()), triplets);
  }

  // The Woodbury route (factor/schur/schur_low_rank) where it is faster than seed 004's dense
  // refactorization, on the CPU; the GPU keeps the paper's dense path.
  bool use_low_rank(const linalg::CscMatrix& w) const {
    if (update_ == PdSchurUpdate::dense || schur_->device() != factor::SchurDevice::cpu) return false;
    if (update_ == PdSchurUpdate::low_rank) return true;
    return factor::SchurLowRankSolver::prefer_low_rank(w.rows, w.cols);
  }

  const PdModel* model_;
  int threads_;
  std::unique_ptr<factor::SchurComplementFactor> partial_;
  std::unique_ptr<factor::SchurSystem> schur_;
  std::unique_ptr<factor::SchurLowRankSolver> low_rank_;  ///< made on first use: S⁻¹ costs m³
  PdSchurUpdate update_;
  std::vector<Index> schur_row_;
  linalg::DenseMatrix y_;
  linalg::DenseMatrix reduced_base_;
  linalg::DenseMatrix rhs_;
};

// The baselines: the whole polluted system K + ΔK solved each inner iteration.
class SparseGlobalSolver final : public PdGlobalSolver {
 public:
  SparseGlobalSolver(const PdModel& model, PdSolver kind, const PdOptions& options, PdSetupStats& setup)
      : model_(&model), kind_(kind), options_(options) {
    if (kind_ == PdSolver::pcg) return;
    auto start = Clock::now();
    symbolic_ = factor::analyze(model.matrix());
    setup.analyze_seconds = seconds_since(start);
    setup.nnz_l = symbolic_->stats().nnz_l;
    if (kind_ == PdSolver::factor_pcg) {
      start = Clock::now();
      preconditioner_ = std::make_unique<factor::Factor>(symbolic_);
      require_factored(preconditioner_->factorize(model.matrix(), factor_options()), "K");
      setup.factorize_seconds = seconds_since(start);
    }
  }

  void begin_outer(linalg::ConstDenseView b_outer, PdPhaseTimes&) override {
    b_outer_ = linalg::DenseMatrix(b_outer.rows, 3);
    for (Index c = 0; c < 3; ++c) {
      for (Index i = 0; i < b_outer.rows; ++i) b_outer_(i, c) = b_outer(i, c);
    }
  }

  void solve_inner(linalg::ConstDenseView b_inner, std::span<const SpringRow> springs, linalg::DenseView x,
                   PdFrameStats& stats) override {
    const auto start = Clock::now();
    linalg::DenseMatrix b = b_outer_;
    for (Index c = 0; c < 3; ++c) {
      for (Index i = 0; i < b.rows(); ++i) b(i, c) += b_inner(i, c);
    }
    if (kind_ == PdSolver::full) {
      refactor_and_solve(springs, b, x, stats);
    } else {
      iterate(springs, b, x, stats);
    }
    stats.times.full_solve += seconds_since(start);
  }

  void end_outer(linalg::DenseView, PdPhaseTimes&) override {}

 private:
  factor::FactorOptions factor_options() const {
    factor::FactorOptions options;
    options.threads = options_.model.threads;
    return options;
  }

  // K + ΔK in K's pattern when every spring coupling is already there (contact against
  // obstacles: a proxy's four nodes share its tet); otherwise assembled and analysed anew.
  void refactor_and_solve(std::span<const SpringRow> springs, linalg::DenseMatrix& b, linalg::DenseView x,
                          PdFrameStats& stats) {
    linalg::SymmetricCscMatrix polluted = model_->matrix();
    bool in_pattern = true;
    linalg::Triplets triplets;
    model_->add_spring_triplets(springs, triplets);
    const linalg::CscMatrix& lower = polluted.lower;
    for (std::size_t t = 0; t < triplets.values.size() && in_pattern; ++t) {
      const auto column_begin = lower.row_idx.begin() + lower.col_ptr[static_cast<std::size_t>(triplets.cols[t])];
      const auto column_end = lower.row_idx.begin() + lower.col_ptr[static_cast<std::size_t>(triplets.cols[t]) + 1];
      const auto found = std::lower_bound(column_begin, column_end, triplets.rows[t]);
      if (found == column_end || *found != triplets.rows[t]) {
        in_pattern = false;
        break;
      }
      polluted.lower.values[static_cast<std::size_t>(found - lower.row_idx.begin())] += triplets.values[t];
    }
    std::shared_ptr<const factor::Symbolic> symbolic = symbolic_;
    if (!in_pattern) {
      linalg::Triplets all = triplets;
      const linalg::CscMatrix& k = model_->matrix().lower;
      for (Index col = 0; col < k.cols; ++col) {
        for (auto p = k.col_ptr[static_cast<std::size_t>(col)]; p < k.col_ptr[static_cast<std::size_t>(col) + 1]; ++p) {
          all.add(k.row_idx[static_cast<std::size_t>(p)], col, k.values[static_cast<std::size_t>(p)]);
        }
      }
      polluted = linalg::symmetric_from_triplets(model_->free_count(), all);
      symbolic = factor::analyze(polluted);
      ++stats.reanalyses;
    }
    factor::Factor factor(symbolic);
    require_factored(factor.factorize(polluted, factor_options()), "K + WᵀCW");
    factor.solve(b.view());
    for (Index c = 0; c < 3; ++c) {
      for (Index i = 0; i < b.rows(); ++i) x(i, c) = b(i, c);
    }
  }

  // CG on K + ΔK per coordinate, warm-started from the current x.
  void iterate(std::span<const SpringRow> springs, const linalg::DenseMatrix& b, linalg::DenseView x,
               PdFrameStats& stats) {
    const linalg::SymmetricCscMatrix& k = model_->matrix();
    const Index n = model_->free_count();
    const solvers::LinearOperator polluted = [&](std::span<const double> v, std::span<double> out) {
      linalg::symmetric_multiply(k, v, out);
      for (const SpringRow& spring : springs) {
        double projection = 0.0;
        for (int i = 0; i < spring.terms; ++i) {
          const Index row = model_->free_index(spring.nodes[static_cast<std::size_t>(i)]);
          if (row >= 0) projection += spring.weights[static_cast<std::size_t>(i)] * v[static_cast<std::size_t>(row)];
        }
        for (int i = 0; i < spring.terms; ++i) {
          const Index row = model_->free_index(spring.nodes[static_cast<std::size_t>(i)]);
          if (row >= 0) out[static_cast<std::size_t>(row)] += spring.stiffness * spring.weights[static_cast<std::size_t>(i)] * projection;
        }
      }
    };
    solvers::Preconditioner preconditioner;
    if (kind_ == PdSolver::factor_pcg) {
      preconditioner = [this](std::span<const double> r, std::span<double> z) {
        std::copy(r.begin(), r.end(), z.begin());
        preconditioner_->solve(z);
      };
    } else {
      linalg::Triplets diagonal;
      model_->add_spring_triplets(springs, diagonal);
      std::vector<double> inverse(static_cast<std::size_t>(n), 0.0);
      const linalg::CscMatrix& lower = k.lower;
      for (Index col = 0; col < n; ++col) {
        inverse[static_cast<std::size_t>(col)] = lower.values[static_cast<std::size_t>(lower.col_ptr[static_cast<std::size_t>(col)])];
      }
      for (std::size_t t = 0; t < diagonal.values.size(); ++t) {
        if (diagonal.rows[t] == diagonal.cols[t]) inverse[static_cast<std::size_t>(diagonal.rows[t])] += diagonal.values[t];
      }
      for (double& d : inverse) d = 1.0 / d;
      preconditioner = [inverse = std::move(inverse)](std::span<const double> r, std::span<double> z) {
        for (std::size_t i = 0; i < r.size(); ++i) z[i] = inverse[i] * r[i];
      };
    }
    solvers::ConjugateGradientOptions cg;
    cg.relative_tolerance = options_.pcg_tolerance;
    cg.max_iterations = options_.pcg_max_iterations;
    std::vector<double> rhs(static_cast<std::size_t>(n));
    std::vector<double> solution(static_cast<std::size_t>(n));
    for (Index c = 0; c < 3; ++c) {
      for (Index i = 0; i < n; ++i) {
        rhs[static_cast<std::size_t>(i)] = b(i, c);
        solution[static_cast<std::size_t>(i)] = x(i, c);
      }
      stats.cg_iterations += solvers::conjugate_gradient(polluted, preconditioner, rhs, solution, cg).iterations;
      for (Index i = 0; i < n; ++i) x(i, c) = solution[static_cast<std::size_t>(i)];
    }
  }

  const PdModel* model_;
  PdSolver kind_;
  PdOptions options_;
  std::shared_ptr<const factor::Symbolic> symbolic_;
  std::unique_ptr<factor::Factor> preconditioner_;
  linalg::DenseMatrix b_outer_;
};

}  // namespace

std::unique_ptr<PdGlobalSolver> make_pd_global_solver(const PdModel& model, std::span<const Index> prone_nodes,
                                                      const PdOptions& options, PdSetupStats& setup) {
  if (options.solver == PdSolver::schur) return std::make_unique<SchurGlobalSolver>(model, prone_nodes, options, setup);
  return std::make_unique<SparseGlobalSolver>(model, options.solver, options, setup);
}

}  // namespace cholsim::fem
