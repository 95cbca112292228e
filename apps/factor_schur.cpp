#include "factor_schur.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "factor/schur/schur_complement.hpp"
#include "factor/schur/schur_ordering.hpp"
#include "factor/schur/schur_system.hpp"
#include "linalg/vector_norms.hpp"
#include "timing.hpp"

namespace cholsim::apps {
namespace {

using linalg::Index;


// ΔS of one inner iteration: a penalty spring on every fifth Schur unknown (seed 004 §4.4:
// about a fifth of the collision-prone nodes in contact), W's columns unit vectors, C the
// largest diagonal entry of A — stiff enough to matter, SPD by construction.
struct SpringUpdate {
  linalg::CscMatrix w;
  std::vector<double> stiffness;
};

SpringUpdate spring_update(const linalg::SymmetricCscMatrix& a, Index schur_size) {
  double diagonal = 0.0;
  for (Index c = 0; c < a.size(); ++c) {
    for (linalg::Offset p = a.lower.col_ptr[c]; p < a.lower.col_ptr[c + 1]; ++p) {
      if (a.lower.row_idx[p] == c) diagonal = std::max(diagonal, a.lower.values[p]);
    }
  }
  SpringUpdate update;
  linalg::Triplets t;
  Index springs = 0;
  for (Index i = 0; i < schur_size; i += 5) {
    t.add(i, springs++, 1.0);
    update.stiffness.push_back(diagonal);
  }
  update.w = linalg::csc_from_triplets(schur_size, springs, t);
  return update;
}

}  // namespace

std::vector<Index> read_schur_set(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot open the Schur set file");
  std::vector<Index> indices;
  std::string line;
  for (std::int64_t number = 1; std::getline(in, line); ++number) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string word;
    while (words >> word) {
      std::size_t used = 0;
      long long value = -1;
      try {
        value = std::stoll(word, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != word.size() || value < 0 || value > std::numeric_limits<Index>::max()) {
        throw std::invalid_argument(path + ":" + std::to_string(number) + ": '" + word +
                                    "' is not a 0-based index (expected non-negative integers)");
      }
      indices.push_back(static_cast<Index>(value));
    }
  }
  if (indices.empty()) throw std::invalid_argument(path + ": the Schur set file holds no indices");
  return indices;
}

SchurOutcome add_schur_report(Report& report, const linalg::SymmetricCscMatrix& a,
                              const factor::AnalyzeOptions& base, const factor::FactorOptions& factor_options,
                              const SchurCommandOptions& options, int repeat, double full_factor_seconds,
                              const std::function<void(const std::string&)>& progress) {
  SchurOutcome outcome;
  factor::AnalyzeOptions analyze_options = base;
  std::string source;
  if (!options.set_file.empty()) {
    analyze_options.schur_set = read_schur_set(options.set_file);
    source = options.set_file;
  } else {
    // A breadth-first ball of whole nodes around node 0: connected, as seed 004's patches are.
    const Index nodes = a.size() / base.dofs_per_node;
    const auto count = std::clamp<Index>(static_cast<Index>(std::lround(options.fraction * nodes)), 1, nodes);
    analyze_options.schur_set = factor::connected_patch(a, base.dofs_per_node, 0, count);
    source = "connected patch around node 0";
  }
  const std::vector<Index>& schur = analyze_options.schur_set;
  const auto m = static_cast<Index>(schur.size());
  progress("analyzing with a Schur set of " + std::to_string(m) + " unknowns...");
  const auto symbolic = factor::analyze(a, analyze_options);

  factor::SchurComplementFactor partial(symbolic);
  std::vector<double> partial_seconds;
  for (int run = 1; run <= repeat; ++run) {
    progress("partial factorization " + std::to_string(run) + "/" + std::to_string(repeat) + "...");
    outcome.status = partial.factorize(a, factor_options);
    if (!outcome.status.ok()) return outcome;
    partial_seconds.push_back(partial.stats().seconds);
  }

  factor::SchurSystem system(partial.schur_complement(), schur,
                             {.device = factor::parse_schur_device(options.device), .threads = factor_options.threads});
  outcome.device_note = system.device_note();
  const SpringUpdate springs = spring_update(a, m);

  // b = A·1 as in the full solve; the three phases solve (A + [0 0; 0 ΔS])·x = b.
  const Index n = a.size();
  const std::vector<double> ones(static_cast<std::size_t>(n), 1.0);
  std::vector<double> b(static_cast<std::size_t>(n));
  linalg::symmetric_multiply(a, ones, b);
  linalg::DenseMatrix y(n, 1);
  std::vector<double> x(static_cast<std::size_t>(n));
  std::vector<double> forward_seconds, inner_seconds, backward_seconds;
  for (int run = 1; run <= repeat; ++run) {
    progress("three-phase solve " + std::to_string(run) + "/" + std::to_string(repeat) + "...");
    Clock::time_point start = Clock::now();
    partial.forward(linalg::ConstDenseView{b.data(), n, 1, std::max<Index>(1, n)}, y.view());
    forward_seconds.push_back(seconds_since(start));
    start = Clock::now();
    system.clear_updates();
    system.add_low_rank(springs.w, springs.stiffness);
    outcome.status = system.refactor();
    if (!outcome.status.ok()) return outcome;
    system.solve(partial.schur_rows(y.view()));
    inner_seconds.push_back(seconds_since(start));
    start = Clock::now();
    partial.backward(y.view(), linalg::DenseView{x.data(), n, 1, std::max<Index>(1, n)});
    backward_seconds.push_back(seconds_since(start));
  }

  std::vector<double> residual(static_cast<std::size_t>(n));
  linalg::symmetric_multiply(a, x, residual);
  for (Index q = 0; q < springs.w.cols; ++q) {
    const Index u = schur[springs.w.row_idx[springs.w.col_ptr[q]]];
    residual[u] += springs.stiffness[q] * x[u];
  }
  for (Index i = 0; i < n; ++i) residual[i] = b[i] - residual[i];
  const double relative_residual = linalg::relative_norm2(residual, b);

  const factor::AnalyzeStats& stats = symbolic->stats();
  report.section("Schur complement (seed 004; median of " + std::to_string(repeat) + ")");
  report.add_text("schur_set_source", "Schur set", source);
  report.add_count("schur_size", "Schur size", m);
  report.add_count("nnz_L_constrained", "nnz(L) exact, Schur set last", stats.nnz_l_exact);
  report.add_count("nnz_L_unconstrained", "nnz(L) exact, unconstrained", stats.nnz_l_unconstrained);
  report.add("fill_increase", "fill increase", stats.fill_increase, format_fixed(100.0 * stats.fill_increase, 2) + " %");
  report.add_seconds("partial_factor_s", "partial factor time", median(partial_seconds));
  report.add_seconds("full_factor_s", "full factor time", full_factor_seconds);
  report.add_text("schur_device", "dense device", std::string(factor::to_string(system.device())));
  report.add_count("schur_springs", "springs in dS", springs.w.cols);
  report.add_seconds("inner_iteration_s", "inner iteration (dS + potrf + potrs)", median(inner_seconds));
  report.add_seconds("phases_s", "forward + backward", median(forward_seconds) + median(backward_seconds));
  report.add_real("schur_residual", "residual |b-(A+dS)x|/|b|", relative_residual);
  return outcome;
}

}  // namespace cholsim::apps
