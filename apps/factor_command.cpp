#include "factor_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include <CLI/CLI.hpp>

#include "builtin_matrices.hpp"
#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/numeric/memory_estimate.hpp"
#include "factor/numeric/update_stack_profile.hpp"
#include "factor_derivative_report.hpp"
#include "factor_schur.hpp"
#include "linalg/blas_kernels.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/matrix_market.hpp"
#include "linalg/vector_norms.hpp"
#include "memory_admission.hpp"
#include "output_folder.hpp"
#include "plots/factor_plots.hpp"
#include "refactor_experiment.hpp"
#include "report.hpp"
#include "timing.hpp"

namespace cholsim::apps {
namespace factor_command {
namespace {

using linalg::Index;



/// Progress lines on stderr, so that stdout holds only the report.
void progress(const std::string& line) { std::cerr << "cholsim factor: " << line << std::endl; }

struct LoadedMatrix {
  linalg::SymmetricCscMatrix matrix;
  std::string source;          ///< the file path or the builtin spec
  Index default_dofs_per_node = 1;
  double seconds = 0.0;        ///< reading or generating
  std::optional<BuiltinMatrixSpec> elasticity;  ///< the spec of an elasticity builtin
};

// Memory admission (memory_admission.hpp): what each step is about to allocate.

std::int64_t matrix_bytes(const linalg::SymmetricCscMatrix& a) {
  return static_cast<std::int64_t>(sizeof(linalg::Offset)) * (a.size() + 1) +
         static_cast<std::int64_t>(sizeof(Index) + sizeof(double)) * a.nnz_lower();
}

/// The reader holds the file's text, then builds the lower CSC form through coordinate
/// triplets (row, column, value: 16 bytes) and the CSC arrays (12 bytes an entry).
std::int64_t predicted_reading_bytes(const std::string& path, const linalg::MatrixMarketHeader& header) {
  std::error_code ignored;
  const auto file_bytes = static_cast<std::int64_t>(std::filesystem::file_size(path, ignored));
  return std::max<std::int64_t>(file_bytes, 0) + static_cast<std::int64_t>(sizeof(linalg::Offset)) * (header.cols + 1) +
         28 * header.entries;
}

/// The analysis' peak beyond the matrix: 180 bytes a row and 24 a stored entry bound what was
/// measured on 2-D and 3-D Laplacians and chains of 10^6–4·10^6 rows (138–259 bytes a row;
/// CHOLMOD's cholmod_analyze took 154–323 on the same matrices, docs/benchmarks.md).
std::int64_t predicted_analysis_bytes(const linalg::SymmetricCscMatrix& a) {
  return 180 * static_cast<std::int64_t>(a.size()) + 24 * a.nnz_lower();
}

/// The factorizations this command will run: the main one (with retained blocks for
/// --refactor-fraction), and for --derivative a second one holding L and L̇ with their blocks.
/// A Schur experiment analyses and factors again, about the main factorization's size.
MemoryNeed factorization_need(const linalg::SymmetricCscMatrix& a, const factor::Symbolic& symbolic,
                              const factor::FactorOptions& factor_options, const FactorCommandOptions& options) {
  const factor::MemoryEstimate estimate = factor::estimate_factor_memory(symbolic, factor_options);
  MemoryNeed need{"the factorization",
                  {{"matrix", matrix_bytes(a)},
                   {"analysis", estimate.symbolic_bytes},
                   {"L", estimate.factor_bytes},
                   {"update blocks", estimate.update_block_memory_bytes()},
                   {"bookkeeping", estimate.bookkeeping_bytes}}};
  if (estimate.left_looking_workspace_bytes > 0) {
    need.items.emplace_back("pull workspace", estimate.left_looking_workspace_bytes);
  }
  // The experiments after it: L and its whole update blocks once more (the derivative
  // factorization has no left-looking top; for the partial one it is an upper bound).
  const auto one_more = [&] {
    factor::FactorOptions multifrontal = factor_options;
    multifrontal.left_looking_update_bytes = factor::kNoLeftLookingTop;
    const factor::MemoryEstimate whole = estimate.left_looking_supernodes == 0
                                             ? estimate
                                             : factor::estimate_factor_memory(symbolic, multifrontal);
    return whole.factor_bytes + whole.update_block_memory_bytes();
  };
  if (options.derivative || !options.derivative_file.empty()) need.items.emplace_back("L and L-dot", 2 * one_more());
  if (options.schur_fraction > 0.0 || !options.schur_set_file.empty()) {
    need.items.emplace_back("partial factorization", estimate.symbolic_bytes + one_more());
  }
  return need;
}

/// --left-looking-top given as "off" or a size: its FactorOptions::left_looking_update_bytes;
/// none for "auto". Throws for a malformed size.
std::optional<std::int64_t> fixed_left_looking_top(const std::string& value) {
  if (value == "auto") return std::nullopt;
  if (value == "off") return factor::kNoLeftLookingTop;
  const std::uint64_t bytes = parse_byte_size(value, "--left-looking-top");
  return static_cast<std::int64_t>(std::min<std::uint64_t>(bytes, factor::kNoLeftLookingTop));
}

/// --left-looking-top: the FactorOptions::left_looking_update_bytes to factor with. For "auto",
/// the library's default while it fits the limit; else the largest threshold below it
/// (halving: the fewest left-looking supernodes) whose prediction fits, or the one predicting
/// least if none does — admission then refuses with that figure.
std::int64_t choose_left_looking_top(const linalg::SymmetricCscMatrix& a, const factor::Symbolic& symbolic,
                                     factor::FactorOptions factor_options, const FactorCommandOptions& options,
                                     const MemoryLimit& limit) {
  if (const auto fixed = fixed_left_looking_top(options.left_looking_top)) return *fixed;
  const auto need_with = [&](std::int64_t min_bytes) {
    factor_options.left_looking_update_bytes = min_bytes;
    return static_cast<std::uint64_t>(factorization_need(a, symbolic, factor_options, options).total());
  };
  const bool can_look_left = factor::left_looking_top_allowed(symbolic, factor_options);
  std::int64_t best = factor::kDefaultLeftLookingUpdateBytes;
  std::uint64_t best_need = need_with(best);
  if (!can_look_left || best_need <= limit.bytes) return best;
  constexpr std::int64_t kSmallestWorthIt = 4096;  // a block below a page frees no memory
  for (std::int64_t min_bytes = best / 2; min_bytes >= kSmallestWorthIt; min_bytes /= 2) {
    const std::uint64_t need = need_with(min_bytes);
    if (need < best_need) {
      best = min_bytes;
      best_need = need;
    }
    if (need <= limit.bytes) break;
  }
  if (best != factor::kDefaultLeftLookingUpdateBytes) {
    progress("the update blocks would exceed the memory limit (" + limit.origin + "); supernodes with update "
             "blocks of at least " + format_bytes(best) + " and their ancestors are computed left-looking");
  }
  return best;
}

/// What admission predicted next to what the process used, so that the prediction can be
/// judged on every run (the peak resident memory also counts the libraries and the solves).
void add_memory_report(Report& report, const MemoryNeed& need, const MemoryLimit& limit) {
  report.section("memory");
  for (const auto& [item, bytes] : need.items) {
    std::string key = "predicted_" + item + "_bytes";
    std::replace(key.begin(), key.end(), ' ', '_');
    report.add_bytes(key, "predicted " + item, bytes);
  }
  report.add_bytes("predicted_memory_bytes", "predicted in all", need.total());
  report.add_bytes("peak_resident_bytes", "peak resident memory", peak_resident_bytes());
  report.add_text("memory_limit", "limit", limit.origin);
}

LoadedMatrix load_matrix(const FactorCommandOptions& options, const MemoryLimit& limit) {
  LoadedMatrix loaded;
  const Clock::time_point start = Clock::now();
  if (!options.file.empty()) {
    loaded.source = options.file;
    progress("reading " + options.file + "...");
    // The header alone can rule out an SPD matrix; checking it first keeps a file that
    // announces n = 10^8 with one entry from costing O(n) memory before the error.
    const linalg::MatrixMarketHeader header = linalg::read_matrix_market_info(options.file);
    linalg::require_header_allows_spd(options.file, header);
    admit({"reading " + options.file, {{"reading", predicted_reading_bytes(options.file, header)}}}, limit);
    loaded.matrix = linalg::read_symmetric_matrix_market(options.file);
  } else {
    const BuiltinMatrixSpec spec = parse_builtin_spec(
        options.builtin.empty() ? FactorCommandOptions::default_builtin : options.builtin);
    loaded.source = to_string(spec);
    loaded.default_dofs_per_node = dofs_per_node(spec);
    if (spec.kind == BuiltinKind::elasticity) loaded.elasticity = spec;
    admit({"building " + loaded.source, {{"matrix", predicted_matrix_bytes(spec)}}}, limit);
    progress("building " + loaded.source + "...");
    loaded.matrix = build_builtin_matrix(spec);
  }
  loaded.seconds = seconds_since(start);
  return loaded;
}

/// Stored entries of both triangles: every strictly-lower entry counts twice.
std::int64_t full_nnz(const linalg::SymmetricCscMatrix& a) {
  const linalg::CscMatrix& lower = a.lower;
  std::int64_t diagonal = 0;
  for (Index column = 0; column < lower.cols; ++column) {
    const linalg::Offset first = lower.col_ptr[column];
    if (first < lower.col_ptr[column + 1] && lower.row_idx[first] == column) ++diagonal;
  }
  return 2 * lower.nnz() - diagonal;
}

struct SolveOutcome {
  std::vector<double> seconds;  ///< one per repetition
  int refinement_steps = 0;     ///< of the last solve (--refine)
  double residual = 0.0;        ///< ‖b − A·x‖₂ / ‖b‖₂ of the last solve
  double max_error = 0.0;       ///< max |x_i − 1| of the last solve
};

/// Solves A·x = b with b = A·1 `repeat` times, so the exact solution is known (all ones).
SolveOutcome timed_solves(const factor::Factor& factor, const linalg::SymmetricCscMatrix& a,
                          const FactorCommandOptions& options) {
  const auto n = static_cast<std::size_t>(a.size());
  const std::vector<double> ones(n, 1.0);
  std::vector<double> b(n);
  linalg::symmetric_multiply(a, ones, b);

  SolveOutcome outcome;
  std::vector<double> x(n);
  for (int run = 1; run <= options.repeat; ++run) {
    progress("solving " + std::to_string(run) + "/" + std::to_string(options.repeat) + "...");
    std::copy(b.begin(), b.end(), x.begin());
    const Clock::time_point start = Clock::now();
    if (options.refine) {
      outcome.refinement_steps = factor.solve_refined(a, x).refinement_steps;
    } else {
      factor.solve(x);
    }
    outcome.seconds.push_back(seconds_since(start));
  }

  std::vector<double> residual(n);
  linalg::symmetric_multiply(a, x, residual);
  for (std::size_t i = 0; i < n; ++i) residual[i] = b[i] - residual[i];
  outcome.residual = linalg::relative_norm2(residual, b);
  for (double value : x) outcome.max_error = std::max(outcome.max_error, std::abs(value - 1.0));
  return outcome;
}

/// The status of a failed factorization on stderr; returns the exit code it maps to.
int report_factor_failure(const factor::FactorStatus& status) {
  using factor::FactorStatusCode;
  std::cerr << "cholsim factor: error: " << status.message << '\n';
  switch (status.code) {
    case FactorStatusCode::not_positive_definite:
      std::cerr << "cholsim factor: failing column: " << status.column
                << " (0-based, numbering of the input matrix)\n";
      return exit_numerical;
    case FactorStatusCode::non_finite_value:
      std::cerr << "cholsim factor: non-finite value at row " << status.row << ", column "
                << status.column << " (0-based, numbering of the input matrix)\n";
      return exit_numerical;
    default:
      return exit_failure;
  }
}

// Where the factorization ran and, for the GPU, the device part's share (issue 22).
void add_device_report(Report& report, const factor::FactorStats& stats) {
  report.add("device", "device", stats.device, stats.device);
  if (!stats.device_fallback.empty()) report.add("device_fallback", "fell back to the CPU", stats.device_fallback, stats.device_fallback);
  if (stats.gpu.supernodes == 0) return;
  const factor::GpuRunStats& gpu = stats.gpu;
  report.add_count("gpu_supernodes", "GPU supernodes", gpu.supernodes);
  report.add("gpu_flop_share", "GPU share of flops", stats.flops > 0 ? gpu.flops / stats.flops : 0.0,
             format_fixed(stats.flops > 0 ? 100.0 * gpu.flops / stats.flops : 0.0, 1) + " %");
  report.add_seconds("cpu_part_s", "CPU part time (last run)", stats.cpu_seconds);
  report.add_seconds("gpu_part_s", "GPU part time (last run)", gpu.seconds);
  const double tflops = gpu.seconds > 0 ? gpu.flops / gpu.seconds * 1e-12 : 0.0;
  report.add("gpu_tflops", "GPU part TFLOP/s", tflops, format_fixed(tflops, 2));
  report.add_bytes("gpu_bytes_to_device", "bytes to the GPU", gpu.bytes_to_device);
  report.add_bytes("gpu_bytes_from_device", "bytes from the GPU", gpu.bytes_from_device);
  report.add_bytes("gpu_peak_bytes", "GPU memory (peak)", gpu.peak_device_bytes);
  report.add_bytes("gpu_retained_bytes", "update blocks kept on the GPU", gpu.retained_device_bytes);
}

void add_histogram(Report& report, const factor::AnalyzeStats& stats) {
  const auto& histogram = stats.column_histogram;
  std::size_t used = histogram.size();
  while (used > 1 && histogram[used - 1] == 0) --used;

  nlohmann::ordered_json counts = nlohmann::ordered_json::array();
  nlohmann::ordered_json lower_bounds = nlohmann::ordered_json::array();
  for (std::size_t bucket = 0; bucket < histogram.size(); ++bucket) {
    counts.push_back(histogram[bucket]);
    lower_bounds.push_back(std::int64_t{1} << bucket);
  }
  // Bucket k holds widths [2^k, 2^(k+1)−1]; the last one is open-ended.
  report.add("column_histogram", "", counts, "");
  report.add("column_histogram_min_columns", "", lower_bounds, "");
  for (std::size_t bucket = 0; bucket < used; ++bucket) {
    const std::int64_t low = std::int64_t{1} << bucket;
    const std::int64_t high = (low << 1) - 1;
    std::string label = "width " + std::to_string(low);
    if (bucket + 1 == histogram.size()) {
      label += "+";
    } else if (high > low) {
      label += "-" + std::to_string(high);
    }
    report.add("", label, nullptr, format_count(histogram[bucket]));
  }
}

Report build_report(const FactorCommandOptions& options, const LoadedMatrix& loaded, Index dofs,
                    const factor::AnalyzeStats& analysis, const std::vector<double>& factor_seconds,
                    const factor::FactorStats& factor_stats, const SolveOutcome& solves) {
  Report report;
  report.section("matrix");
  report.add_text("source", "source", loaded.source);
  report.add_count("n", "n", analysis.n);
  report.add_count("nnz_A_lower", "nnz(A) lower", analysis.nnz_a_lower);
  report.add_count("nnz_A", "nnz(A) full", full_nnz(loaded.matrix));
  report.add_seconds("load_s", "load", loaded.seconds);

  report.section("analysis");
  report.add_text("ordering", "ordering", options.ordering);
  report.add_text("ordering_used", "ordering used", std::string(factor::to_string(analysis.ordering_used)));
  if (analysis.minimum_degree_flops > 0.0) {
    report.add_real("amd_flops_predicted", "amd predicted flops", analysis.minimum_degree_flops);
  }
  if (analysis.nested_dissection_flops > 0.0) {
    report.add_real("nd_camd_flops_predicted", "nd-camd predicted flops", analysis.nested_dissection_flops);
  }
  report.add_count("dofs_per_node", "dofs per node", dofs);
  report.add_count("nnz_L", "nnz(L)", analysis.nnz_l);
  report.add_count("nnz_L_exact", "nnz(L) exact", analysis.nnz_l_exact);
  const double fill_ratio = static_cast<double>(analysis.nnz_l) /
                            static_cast<double>(std::max<std::int64_t>(1, analysis.nnz_a_lower));
  report.add("fill_ratio", "fill nnz(L)/nnz(A) lower", fill_ratio, format_fixed(fill_ratio, 2));
  report.add_real("flops", "flops", analysis.flops);
  report.add_count("supernodes", "supernodes", analysis.supernodes);
  report.add_count("fundamental_supernodes", "fundamental supernodes", analysis.fundamental_supernodes);
  report.add_count("largest_front", "largest front", analysis.largest_front);
  report.add_count("largest_supernode_columns", "largest supernode columns", analysis.largest_supernode_columns);
  report.add_count("tree_levels", "tree levels", analysis.tree_levels);
  report.add_bytes("factor_bytes", "factor bytes", analysis.factor_bytes);
  report.add_seconds("ordering_s", "ordering time", analysis.ordering_seconds);
  report.add_seconds("symbolic_s", "symbolic time", analysis.symbolic_seconds);
  report.add_seconds("analyze_s", "analyze time", analysis.total_seconds);

  report.section("supernode widths (columns: supernodes)");
  add_histogram(report, analysis);

  const double factor_median = median(factor_seconds);
  report.section("factorization (median of " + std::to_string(options.repeat) + ")");
  report.add_count("threads", "threads", factor_stats.threads);
  report.add_text("blas_kernels", "BLAS kernels", linalg::blas_kernels());  // linalg/blas_kernels.hpp
  report.add_seconds("factor_s", "factor time", factor_median);
  report.add("factor_s_runs", "", factor_seconds, "");
  const double gflops = factor_median > 0.0 ? analysis.flops / factor_median / 1e9 : 0.0;
  report.add("gflops", "GFLOP/s", gflops, format_fixed(gflops, 2));
  report.add_bytes("peak_update_bytes", "peak update bytes", factor_stats.peak_update_bytes);
  report.add_bytes("update_arena_bytes", "update arena (high water)", factor_stats.update_arena_bytes);
  report.add_count("parallel_subtrees", "parallel subtrees", factor_stats.parallel_subtrees);
  report.add_count("top_supernodes", "top supernodes", factor_stats.top_supernodes);
  report.add_count("left_looking_supernodes", "left-looking supernodes", factor_stats.left_looking_supernodes);
  add_device_report(report, factor_stats);

  report.section("solve (median of " + std::to_string(options.repeat) + ", b = A*1)");
  report.add_seconds("solve_s", "solve time", median(solves.seconds));
  report.add("solve_s_runs", "", solves.seconds, "");
  report.add("refine", "refinement", options.refine, options.refine ? "on" : "off");
  if (options.refine) report.add_count("refinement_steps", "refinement steps", solves.refinement_steps);
  report.add_real("residual", "residual |b-Ax|/|b|", solves.residual);
  report.add_real("max_error", "max |x-1|", solves.max_error);
  report.add_count("repeat", "", options.repeat);
  return report;
}

/// The --refactor-fraction experiment, appended to `report`; false when it failed (reported).
/// With `plots`, also draws which supernodes were recomputed.
bool run_refactor(factor::Factor& factor, const LoadedMatrix& loaded, double full_seconds,
                  const FactorCommandOptions& options, Report& report, plots::PlotDirectory* plots) {
  progress("refactorizing " + std::string(options.refactor_shape) + " of fraction " +
           format_fixed(options.refactor_fraction, 4) + "...");
  const RefactorExperimentOptions experiment{options.refactor_fraction, options.refactor_shape,
                                             options.threads, options.repeat};
  const auto outcome = run_refactor_experiment(factor, loaded.matrix, loaded.elasticity, full_seconds, experiment);
  if (!outcome) {
    report_factor_failure(factor.status());
    return false;
  }
  add_refactor_report(report, experiment, *outcome);
  constexpr double tolerance = 1e-10;
  if (outcome->max_relative_difference > tolerance) {
    std::cerr << "cholsim factor: error: the incremental refactorization differs from a fresh "
                 "factorization by "
              << outcome->max_relative_difference << " (relative), more than " << tolerance << '\n';
    return false;
  }
  if (plots) {
    const std::string change = format_fixed(100.0 * options.refactor_fraction, 1) + " % of the " + outcome->unit +
                               " changed, " + options.refactor_shape + " shape";
    plots::write_refactor_plot(*plots, factor.symbolic(), outcome->recomputed, loaded.source, change);
  }
  return true;
}

int run_factor(const FactorCommandOptions& options, const MemoryLimit& limit) {
  // Created first, so that a folder that cannot be written is reported before any work.
  std::optional<plots::PlotDirectory> plots;
  if (!options.plot_dir.empty()) plots.emplace(options.plot_dir);
  fixed_left_looking_top(options.left_looking_top);  // a malformed size is reported before any work
  const LoadedMatrix loaded = load_matrix(options, limit);
  const Index dofs = options.dofs_per_node > 0 ? options.dofs_per_node : loaded.default_dofs_per_node;
  if (loaded.matrix.size() % dofs != 0) {
    std::cerr << "cholsim factor: error: --dofs-per-node " << dofs << " does not divide n = "
              << loaded.matrix.size() << '\n';
    return exit_bad_input;
  }

  admit({"the analysis", {{"matrix", matrix_bytes(loaded.matrix)}, {"analysis", predicted_analysis_bytes(loaded.matrix)}}},
        limit);
  progress("analyzing (" + options.ordering + ", n = " + format_count(loaded.matrix.size()) + ")...");
  factor::AnalyzeOptions analyze_options;
  analyze_options.ordering = factor::parse_ordering_method(options.ordering);
  analyze_options.dofs_per_node = dofs;
  const auto symbolic = factor::analyze(loaded.matrix, analyze_options);

  factor::Factor factor(symbolic);
  factor::FactorOptions factor_options;
  factor_options.threads = options.threads;
  factor_options.retain_update_blocks = options.refactor_fraction > 0.0;
  factor_options.device = options.device == "gpu"    ? factor::FactorDevice::gpu
                          : options.device == "auto" ? factor::FactorDevice::automatic
                                                     : factor::FactorDevice::cpu;
  factor_options.gpu_min_supernode_flops = options.gpu_min_flops;
  if (!options.gpu_memory_limit.empty()) {
    const std::uint64_t bytes = parse_byte_size(options.gpu_memory_limit, "--gpu-memory-limit");
    factor_options.gpu_memory_limit_bytes =
        static_cast<std::int64_t>(std::min<std::uint64_t>(bytes, std::numeric_limits<std::int64_t>::max()));
  }
  factor_options.left_looking_update_bytes =
      choose_left_looking_top(loaded.matrix, *symbolic, factor_options, options, limit);
  const MemoryNeed need = factorization_need(loaded.matrix, *symbolic, factor_options, options);
  admit(need, limit);
  std::vector<double> factor_seconds;
  for (int run = 1; run <= options.repeat; ++run) {
    progress("factorizing " + std::to_string(run) + "/" + std::to_string(options.repeat) + "...");
    const factor::FactorStatus& status = factor.factorize(loaded.matrix, factor_options);
    if (!status.ok()) return report_factor_failure(status);
    factor_seconds.push_back(factor.stats().seconds);
  }

  const SolveOutcome solves = timed_solves(factor, loaded.matrix, options);
  if (plots) {
    progress("writing plots to " + plots->path().string() + "...");
    const plots::RunUpdatePeaks peaks{factor.stats().peak_update_bytes,
                                      factor::estimate_factor_memory(*symbolic, factor_options).peak_update_bytes,
                                      factor.stats().threads, factor.retains_update_blocks(),
                                      factor::left_looking_top_for(*symbolic, factor_options)};
    plots::write_factor_plots(*plots, loaded.matrix, *symbolic, peaks, loaded.source);
  }
  Report report = build_report(options, loaded, dofs, symbolic->stats(), factor_seconds,
                               factor.stats(), solves);
  add_memory_report(report, need, limit);
  if (options.refactor_fraction > 0.0 && !run_refactor(factor, loaded, median(factor_seconds), options, report,
                                                       plots ? &*plots : nullptr)) {
    return exit_numerical;
  }
  const SchurCommandOptions schur{options.schur_fraction, options.schur_set_file, options.schur_device};
  if (schur.enabled()) {
    const SchurOutcome outcome = add_schur_report(report, loaded.matrix, analyze_options,
                                                  {.threads = options.threads}, schur, options.repeat,
                                                  median(factor_seconds), progress);
    if (!outcome.device_note.empty()) progress(outcome.device_note);
    if (!outcome.status.ok()) return report_factor_failure(outcome.status);
  }
  const DerivativeCommandOptions derivative{options.derivative, options.derivative_file};
  if (derivative.active()) {
    const factor::FactorStatus status = add_derivative_report(
        report, loaded.matrix, symbolic, {.threads = options.threads}, derivative, options.repeat,
        median(factor_seconds), progress);
    if (status.code == factor::FactorStatusCode::pattern_mismatch ||
        status.code == factor::FactorStatusCode::size_mismatch) {
      std::cerr << "cholsim factor: error: " << options.derivative_file << ": " << status.message << '\n';
      return exit_bad_input;
    }
    if (!status.ok()) return report_factor_failure(status);
  }
  if (plots) plots->write_index("cholsim factor " + loaded.source);
  if (options.json) {
    std::cout << report.to_json().dump(2) << std::endl;
  } else {
    report.print_text(std::cout);
  }
  return exit_success;
}

}  // namespace
}  // namespace factor_command

void add_factor_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<FactorCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "factor", "Analyze, factorize and solve one SPD matrix; report times, sizes and accuracy");
  command->footer(
      "Without FILE or --builtin it factors --builtin " + std::string(FactorCommandOptions::default_builtin) +
      " (107,811 DOF).\nThe solve uses b = A*1, so the error of x against the all-ones vector is known.\n"
      "Exit codes: 0 ok, 2 bad input (file:line reported), 3 not positive definite (failing\n"
      "column reported, 0-based, numbering of the input matrix).");

  CLI::Option* file = command->add_option("file", options->file, "Matrix Market file (.mtx), symmetric");
  command->add_option("--builtin", options->builtin,
                      "Generated matrix: elasticity:NX,NY,NZ (3 DOF per node) or laplacian:NX,NY,NZ")
      ->excludes(file);
  command->add_option("--ordering", options->ordering,
                      "Fill-reducing ordering (nd-camd: METIS's vertex separators with a constrained AMD inside them); "
                      "auto: amd, or nd-camd where amd's predicted flops are high "
                      "(flops/nnz(L) >= " + std::to_string(static_cast<int>(factor::kDissectionTrialFlopsPerEntry)) +
                          " and nnz(L)/nnz(A) >= " + std::to_string(static_cast<int>(factor::kDissectionTrialFillRatio)) +
                          ", or flops >= 1e" + std::to_string(static_cast<int>(std::lround(std::log10(factor::kDissectionTrialFlops)))) +
                          ") and nd-camd's are lower")
      ->check(CLI::IsMember({"auto", "amd", "metis", "nd-camd", "natural"}))
      ->capture_default_str();
  command->add_option("--dofs-per-node", options->dofs_per_node,
                      "DOFs per mesh node for the ordering (default: 3 for elasticity builtins, else 1)")
      ->check(CLI::PositiveNumber);
  command->add_option("--threads", options->threads, "Threads for the factorization (0: all hardware threads)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--repeat", options->repeat, "Factorizations and solves to time; medians are reported")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_flag("--json", options->json, "Write one JSON object to stdout instead of the text report");
  command->add_flag("--refine", options->refine, "Solve with iterative refinement against A");
  command->add_option("--refactor-fraction", options->refactor_fraction,
                      "After the factorization, change this fraction of the element blocks (elasticity "
                      "builtins) or columns, refactorize incrementally and check against a fresh factorization")
      ->check(CLI::Range(0.0, 1.0));
  command->add_option("--refactor-shape", options->refactor_shape,
                      "Where the changed blocks lie: a ball, or scattered at random")
      ->check(CLI::IsMember({"ball", "scattered"}))
      ->capture_default_str();
  CLI::Option* schur_fraction =
      command->add_option("--schur-fraction", options->schur_fraction,
                          "Also factor partially (seed 004): keep a connected patch of this fraction of the "
                          "nodes as a dense Schur complement; report fill, times and one inner iteration")
          ->check(CLI::Range(0.0, 1.0));
  command->add_option("--schur-set", options->schur_set_file,
                      "Like --schur-fraction with the Schur set read from FILE (0-based indices, '#' comments)")
      ->excludes(schur_fraction);
  command->add_option("--device", options->device,
                      "Where the factorization runs: gpu puts the top of the assembly tree on the CUDA GPU "
                      "(an error without one), auto the GPU when present and the flops are large")
      ->check(CLI::IsMember({"cpu", "gpu", "auto"}))
      ->capture_default_str();
  command->add_option("--gpu-min-flops", options->gpu_min_flops,
                      "With --device gpu/auto: supernodes of at least this many flops, and their ancestors, run "
                      "on the GPU")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--gpu-memory-limit", options->gpu_memory_limit,
                      "With --device gpu/auto: device memory the factorization may use (e.g. 8G); beyond it the "
                      "factorization falls back to the CPU");
  command->add_option("--left-looking-top", options->left_looking_top,
                      "auto, off or a size (e.g. 256M): supernodes whose multifrontal update block would take at "
                      "least that size, and their ancestors, are computed left-looking from L's columns, without "
                      "update blocks - less memory, and faster on large 3-D problems. auto: 32M, lower where the "
                      "factorization would exceed --max-memory")
      ->capture_default_str();
  command->add_option("--schur-device", options->schur_device,
                      "Where the dense Schur system is refactored and solved (gpu falls back to cpu with a message)")
      ->check(CLI::IsMember({"cpu", "gpu"}))
      ->capture_default_str();

  command->add_flag("--derivative", options->derivative,
                    "Also compute L and its time derivative L̇ together (seed 002 ch. 5) for Ȧ = "
                    "A(i,j)·cos(π(i+j)/n); report time, ratio, identity residual, finite-difference errors");
  command->add_option("--derivative-file", options->derivative_file,
                      "Like --derivative with Ȧ read from FILE (Matrix Market, the pattern of A)");
  add_max_memory_option(*command, options->max_memory);
  command->add_option("--plot", options->plot_dir,
                      "Write SVG pictures to DIR (created if needed): spy plots of P·A·Pᵀ and L, the assembly tree, "
                      "flops and memory per tree level, the update-block stack, with --refactor-fraction the "
                      "recomputed supernodes; open DIR/index.html in a browser");

  command->callback([options, &action] { action = [options] { return run_factor_command(*options); }; });
}

int run_factor_command(const FactorCommandOptions& options) {
  return run_reporting_errors("factor", [&] { return factor_command::run_factor(options, resolve_memory_limit(options.max_memory)); });
}

}  // namespace cholsim::apps
