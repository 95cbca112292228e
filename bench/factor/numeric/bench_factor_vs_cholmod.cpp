// cholsim's supernodal factorization against CHOLMOD and MUMPS, in one process, same
// permutation, same thread count.
//
// For every matrix (built-in elasticity boxes, --mtx files, and every *.mtx under
// shared/data/matrices/ when that folder exists) the program computes one METIS ordering with
// cholsim, then for each thread count runs, --repeat times and alternating the three libraries:
//   analyze:  cholsim analyze(ordering = given) vs cholmod_l_analyze_p(CHOLMOD_GIVEN) vs MUMPS
//             JOB = 1 with ICNTL(7) = 1 (the same permutation);
//   factor:   Factor::factorize vs cholmod_l_factorize (supernodal) vs MUMPS JOB = 2 (SPD mode);
//   solve:    one right-hand side, Factor::solve vs cholmod_l_solve(CHOLMOD_A) vs MUMPS JOB = 3.
// It prints the medians and the cholsim/CHOLMOD and cholsim/MUMPS ratios as Markdown tables
// (stdout), progress on stderr, and with --json FILE the same numbers as JSON.
//
// What is measured, exactly:
//  * times are wall-clock around the single library call (steady_clock);
//  * GFLOP/s of BOTH libraries use the same numerator, CHOLMOD's Common->fl (the flops of a
//    simplicial LL' from the exact column counts), so the rate ratio is the time ratio;
//    cholsim's own count (supernodal, amalgamation zeros included) is listed separately;
//  * residual = ‖b − A·x‖₂ / ‖b‖₂ with b = A·(1, 2, …, n);
//  * memory: cholsim = FactorStats::factor_bytes + peak_update_bytes (L's values plus the most
//    bytes held in update blocks at once; symbolic structure not counted); CHOLMOD = peak of
//    Common->memory_usage during cholmod_l_factorize, after resetting it to memory_inuse
//    (L's values and integer structure, workspace and its update buffer; A is wrapped, not
//    allocated by CHOLMOD, so it is not counted).
// CHOLMOD calls OpenBLAS with however many threads OpenBLAS has; all libraries are given the
// same count through linalg::set_blas_threads. MUMPS is the sequential build (no OpenMP): its
// only threads are those of the same OpenBLAS (bench/mumps_reference.hpp). Its memory is its
// own report, INFOG(22) (MB effectively used by the factorization).
#include <cholmod.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "bench/bench_statistics.hpp"
#include "bench/cholmod_reference.hpp"
#include "bench/mumps_reference.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/blas.hpp"
#include "linalg/blas_threads.hpp"
#include "linalg/generators.hpp"
#include "linalg/matrix_market.hpp"

namespace {

using cholsim::linalg::Index;
using cholsim::linalg::SymmetricCscMatrix;
namespace factor = cholsim::factor;
namespace linalg = cholsim::linalg;

constexpr const char* kUsage = R"(usage: bench_factor_vs_cholmod [options]

Factorizes each matrix with cholsim, CHOLMOD and MUMPS (same METIS permutation, same thread
count) and prints median analyze / factor / solve times, their ratios, nnz(L), flops,
GFLOP/s, residuals and peak memory as Markdown tables.

Matrices (default: elasticity boxes of 20^3, 32^3, 46^3 cells = 27,783 / 107,811 /
311,469 DOF, plus every *.mtx in shared/data/matrices/ if that folder exists):
  --box N             an N^3-cell elasticity box instead of the default boxes (repeatable)
  --large             also the 69^3-cell box (1,029,000 DOF)
  --mtx FILE          a Matrix Market file (repeatable)
  --mtx-dofs-per-node K  DOFs per node for ordering --mtx files (default 1)
  --no-shared-data    skip shared/data/matrices/
Runs:
  --threads LIST      thread counts, comma separated or repeated (default 1,2)
  --repeat R          repetitions per measurement, the median is reported (default 5)
  --json FILE         also write the results as JSON
  --help              this text
)";

struct Options {
  std::vector<Index> boxes;
  bool large = false;
  std::vector<std::string> mtx_files;
  Index mtx_dofs_per_node = 1;
  bool shared_data = true;
  std::vector<int> threads;
  int repeat = 5;
  std::string json_file;
};

using cholsim::bench::exit_with_usage;
using cholsim::bench::is_help_flag;
using cholsim::bench::parse_command_line;
using cholsim::bench::parse_positive;

/// The options of the command line; --help prints kUsage and exits.
Options parse_options(int argc, char** argv) {
  Options options;
  for (cholsim::bench::ArgumentCursor arguments(argc, argv); arguments.next();) {
    const std::string& flag = arguments.flag();
    const auto value = [&arguments] { return arguments.value(); };
    if (is_help_flag(flag)) {
      exit_with_usage(kUsage);
    } else if (flag == "--box") {
      options.boxes.push_back(parse_positive(flag, value()));
    } else if (flag == "--large") {
      options.large = true;
    } else if (flag == "--mtx") {
      options.mtx_files.push_back(value());
    } else if (flag == "--mtx-dofs-per-node") {
      options.mtx_dofs_per_node = parse_positive(flag, value());
    } else if (flag == "--no-shared-data") {
      options.shared_data = false;
    } else if (flag == "--threads") {
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ',');) {
        options.threads.push_back(parse_positive(flag, item));
      }
    } else if (flag == "--repeat") {
      options.repeat = parse_positive(flag, value());
    } else if (flag == "--json") {
      options.json_file = value();
    } else {
      throw std::invalid_argument("unknown option '" + flag + "' (see --help)");
    }
  }
  if (options.threads.empty()) options.threads = {1, 2};
  if (options.boxes.empty()) options.boxes = {20, 32, 46};
  if (options.large) options.boxes.push_back(69);
  return options;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

using cholsim::bench::median;

/// ‖b − A·x‖₂ / ‖b‖₂.
double relative_residual(const SymmetricCscMatrix& a, std::span<const double> x,
                         std::span<const double> b) {
  std::vector<double> ax(b.size());
  linalg::symmetric_multiply(a, x, ax);
  double residual = 0.0;
  double norm_b = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    residual += (b[i] - ax[i]) * (b[i] - ax[i]);
    norm_b += b[i] * b[i];
  }
  return std::sqrt(residual / norm_b);
}

struct BenchMatrix {
  std::string name;
  SymmetricCscMatrix matrix;
  Index dofs_per_node = 1;
};

/// One library's medians for one matrix and thread count.
struct LibraryRun {
  double analyze_seconds = 0.0;
  double factor_seconds = 0.0;
  double solve_seconds = 0.0;
  double residual = 0.0;      ///< of the last repetition
  double peak_bytes = 0.0;    ///< largest over repetitions
  bool ok = true;
  std::string failure;
};

struct ThreadRun {
  int threads = 1;
  LibraryRun cholsim;
  LibraryRun cholmod;
  LibraryRun mumps;
  Index parallel_subtrees = 0;
  Index top_supernodes = 0;
};

/// Everything measured for one matrix.
struct MatrixResult {
  std::string name;
  Index n = 0;
  std::int64_t nnz_a_lower = 0;
  double ordering_seconds = 0.0;  ///< METIS through cholsim (shared by both libraries)
  std::int64_t cholsim_nnz_l_exact = 0;
  std::int64_t cholsim_stored = 0;  ///< factor_value_count()
  double cholsim_flops = 0.0;       ///< supernodal count, amalgamation zeros included
  double cholmod_lnz = 0.0;
  double cholmod_stored = 0.0;      ///< L->xsize
  double cholmod_flops = 0.0;       ///< Common->fl
  double mumps_factor_entries = 0.0;  ///< INFOG(29)
  double mumps_flops = 0.0;           ///< RINFOG(3)
  std::vector<ThreadRun> runs;
};

/// A cholmod_common per repetition, so that memory counters start from zero, set up for a
/// supernodal factorization with the permutation given.
struct GivenOrderingCholmod : cholsim::reference::CholmodCommon {
  GivenOrderingCholmod() {
    cholmod_common* common = get();
    common->nmethods = 1;
    common->method[0].ordering = CHOLMOD_GIVEN;
    common->postorder = 1;
    common->supernodal = CHOLMOD_SUPERNODAL;
  }
};

using cholsim::reference::CholmodMatrix;

/// One repetition of CHOLMOD: analyze_p, factorize, solve. Returns false on failure.
bool run_cholmod_once(const SymmetricCscMatrix& a, CholmodMatrix& matrix,
                      std::vector<SuiteSparse_long>& permutation, std::vector<double>& b,
                      MatrixResult& result, LibraryRun& run, std::vector<double>& analyze,
                      std::vector<double>& factorize, std::vector<double>& solve) {
  GivenOrderingCholmod common;
  cholmod_common* c = common.get();
  auto start = std::chrono::steady_clock::now();
  cholmod_factor* l = cholmod_l_analyze_p(&matrix.sparse, permutation.data(), nullptr, 0, c);
  analyze.push_back(seconds_since(start));
  if (l == nullptr) {
    run.failure = "cholmod_l_analyze_p failed, status " + std::to_string(c->status);
    return false;
  }
  result.cholmod_lnz = c->lnz;
  result.cholmod_flops = c->fl;
  c->memory_usage = c->memory_inuse;
  start = std::chrono::steady_clock::now();
  const int factored = cholmod_l_factorize(&matrix.sparse, l, c);
  factorize.push_back(seconds_since(start));
  run.peak_bytes = std::max(run.peak_bytes, static_cast<double>(c->memory_usage));
  result.cholmod_stored = static_cast<double>(l->xsize);
  if (!factored || c->status != CHOLMOD_OK || l->minor < l->n) {
    run.failure = "cholmod_l_factorize: status " + std::to_string(c->status) + ", minor " +
                  std::to_string(l->minor);
    cholmod_l_free_factor(&l, c);
    return false;
  }
  cholmod_dense rhs{};
  rhs.nrow = b.size();
  rhs.ncol = 1;
  rhs.nzmax = b.size();
  rhs.d = b.size();
  rhs.x = b.data();
  rhs.xtype = CHOLMOD_REAL;
  rhs.dtype = CHOLMOD_DOUBLE;
  start = std::chrono::steady_clock::now();
  cholmod_dense* x = cholmod_l_solve(CHOLMOD_A, l, &rhs, c);
  solve.push_back(seconds_since(start));
  if (x == nullptr) {
    run.failure = "cholmod_l_solve failed, status " + std::to_string(c->status);
    cholmod_l_free_factor(&l, c);
    return false;
  }
  run.residual = relative_residual(a, {static_cast<const double*>(x->x), b.size()}, b);
  cholmod_l_free_dense(&x, c);
  cholmod_l_free_factor(&l, c);
  return true;
}

/// One repetition of MUMPS with the same permutation: analysis, factorization, solve. Returns
/// false on failure.
bool run_mumps_once(const SymmetricCscMatrix& a, std::span<const Index> permutation, const std::vector<double>& b,
                    MatrixResult& result, LibraryRun& run, std::vector<double>& analyze,
                    std::vector<double>& factorize, std::vector<double>& solve) {
  try {
    cholsim::reference::MumpsSolver mumps(a);
    mumps.analyze({.permutation = permutation});
    mumps.factorize();
    std::vector<double> x = b;
    mumps.solve(x);
    const cholsim::reference::MumpsStats& stats = mumps.stats();
    analyze.push_back(stats.analyze_seconds);
    factorize.push_back(stats.factor_seconds);
    solve.push_back(stats.solve_seconds);
    result.mumps_factor_entries = stats.factor_entries;
    result.mumps_flops = stats.flops;
    run.peak_bytes = std::max(run.peak_bytes, stats.peak_bytes);
    run.residual = relative_residual(a, x, b);
    return true;
  } catch (const std::exception& error) {
    run.failure = error.what();
    return false;
  }
}

ThreadRun run_threads(const BenchMatrix& bench, std::span<const Index> permutation, int threads,
                      int repeat, MatrixResult& result) {
  const SymmetricCscMatrix& a = bench.matrix;
  ThreadRun run;
  run.threads = threads;
  std::vector<double> b(static_cast<std::size_t>(a.size()));
  {
    std::vector<double> ramp(b.size());
    std::iota(ramp.begin(), ramp.end(), 1.0);
    linalg::symmetric_multiply(a, ramp, b);
  }
  factor::AnalyzeOptions analyze_options;
  analyze_options.ordering = factor::OrderingMethod::given;
  analyze_options.given_permutation.assign(permutation.begin(), permutation.end());
  CholmodMatrix cholmod_matrix(a);
  std::vector<SuiteSparse_long> cholmod_permutation(permutation.begin(), permutation.end());

  std::vector<double> ours_analyze, ours_factor, ours_solve;
  std::vector<double> theirs_analyze, theirs_factor, theirs_solve;
  std::vector<double> mumps_analyze, mumps_factor, mumps_solve;
  for (int r = 0; r < repeat; ++r) {
    std::fprintf(stderr, "  %s threads=%d repetition %d/%d\n", bench.name.c_str(), threads, r + 1,
                 repeat);
    if (run.cholsim.ok) {
      linalg::set_blas_threads(threads);
      auto start = std::chrono::steady_clock::now();
      const auto symbolic = factor::analyze(a, analyze_options);
      ours_analyze.push_back(seconds_since(start));
      result.cholsim_nnz_l_exact = symbolic->stats().nnz_l_exact;
      result.cholsim_stored = symbolic->factor_value_count();
      result.cholsim_flops = symbolic->stats().flops;
      factor::Factor l(symbolic);
      start = std::chrono::steady_clock::now();
      const factor::FactorStatus& status = l.factorize(a, {.threads = threads});
      ours_factor.push_back(seconds_since(start));
      if (!status.ok()) {
        run.cholsim.ok = false;
        run.cholsim.failure = status.message;
      } else {
        const factor::FactorStats& stats = l.stats();
        run.cholsim.peak_bytes = std::max(
            run.cholsim.peak_bytes, static_cast<double>(stats.factor_bytes + stats.peak_update_bytes));
        run.parallel_subtrees = stats.parallel_subtrees;
        run.top_supernodes = stats.top_supernodes;
        linalg::set_blas_threads(threads);
        std::vector<double> x = b;
        start = std::chrono::steady_clock::now();
        l.solve(std::span<double>(x));
        ours_solve.push_back(seconds_since(start));
        run.cholsim.residual = relative_residual(a, x, b);
      }
    }
    if (run.cholmod.ok) {
      linalg::set_blas_threads(threads);
      run.cholmod.ok = run_cholmod_once(a, cholmod_matrix, cholmod_permutation, b, result,
                                        run.cholmod, theirs_analyze, theirs_factor, theirs_solve);
    }
    if (run.mumps.ok) {
      linalg::set_blas_threads(threads);
      run.mumps.ok = run_mumps_once(a, permutation, b, result, run.mumps, mumps_analyze, mumps_factor, mumps_solve);
    }
  }
  run.cholsim.analyze_seconds = median(ours_analyze);
  run.cholsim.factor_seconds = median(ours_factor);
  run.cholsim.solve_seconds = median(ours_solve);
  run.cholmod.analyze_seconds = median(theirs_analyze);
  run.cholmod.factor_seconds = median(theirs_factor);
  run.cholmod.solve_seconds = median(theirs_solve);
  run.mumps.analyze_seconds = median(mumps_analyze);
  run.mumps.factor_seconds = median(mumps_factor);
  run.mumps.solve_seconds = median(mumps_solve);
  for (const LibraryRun* library : {&run.cholsim, &run.cholmod, &run.mumps}) {
    if (!library->ok) std::fprintf(stderr, "  FAILED: %s\n", library->failure.c_str());
  }
  return run;
}

MatrixResult run_matrix(const BenchMatrix& bench, const Options& options) {
  MatrixResult result;
  result.name = bench.name;
  result.n = bench.matrix.size();
  result.nnz_a_lower = bench.matrix.nnz_lower();
  std::fprintf(stderr, "%s: n = %d, nnz(A lower) = %lld, ordering (METIS)...\n", bench.name.c_str(),
               result.n, static_cast<long long>(result.nnz_a_lower));
  factor::AnalyzeOptions ordering_options;
  ordering_options.ordering = factor::OrderingMethod::nested_dissection;
  ordering_options.dofs_per_node = bench.dofs_per_node;
  const auto ordered = factor::analyze(bench.matrix, ordering_options);
  result.ordering_seconds = ordered->stats().ordering_seconds;
  const std::vector<Index> permutation(ordered->permutation().begin(), ordered->permutation().end());
  for (const int threads : options.threads) {
    result.runs.push_back(run_threads(bench, permutation, threads, options.repeat, result));
  }
  return result;
}

double dgemm_gflops(int threads) {
  constexpr Index size = 2000;
  linalg::ScopedBlasThreads scoped(threads);
  linalg::DenseMatrix a(size, size), b(size, size), c(size, size);
  for (Index j = 0; j < size; ++j) {
    for (Index i = 0; i < size; ++i) {
      a(i, j) = 1.0 / (1.0 + i + j);
      b(i, j) = 1.0 / (2.0 + i + 2 * j);
    }
  }
  using linalg::blas::Transpose;
  linalg::blas::gemm(Transpose::no, Transpose::no, 1.0, a.view(), b.view(), 0.0, c.view());  // warm-up
  std::vector<double> seconds;
  for (int r = 0; r < 3; ++r) {
    const auto start = std::chrono::steady_clock::now();
    linalg::blas::gemm(Transpose::no, Transpose::no, 1.0, a.view(), b.view(), 0.0, c.view());
    seconds.push_back(seconds_since(start));
  }
  return 2.0 * size * size * static_cast<double>(size) / median(seconds) / 1e9;
}

std::string format(const char* pattern, double value) {
  if (!std::isfinite(value)) return "–";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

std::string ratio(double ours, double theirs) {
  return theirs > 0 ? format("%.2f", ours / theirs) : "–";
}

/// MUMPS beside cholsim (same permutation, same BLAS threads), with MUMPS's own counts: its
/// factor holds its amalgamation's zeros, and RINFOG(3) counts the flops of what it did.
void print_mumps_table(const std::vector<MatrixResult>& results) {
  std::printf("\nMUMPS (sequential build, SPD mode, the same permutation; its threads are OpenBLAS's; ratio = "
              "cholsim / MUMPS, < 1 means cholsim is faster):\n\n");
  std::printf("| matrix | n | thr | analyze ms MUMPS | factor s cholsim | MUMPS | ratio | solve ms cholsim | MUMPS | "
              "ratio | residual MUMPS | peak MB MUMPS | factor entries MUMPS | GFlop MUMPS |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const MatrixResult& m : results) {
    for (const ThreadRun& run : m.runs) {
      const LibraryRun& ours = run.cholsim;
      const LibraryRun& mumps = run.mumps;
      std::printf("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f | %.1f |\n", m.name.c_str(), m.n,
                  run.threads, format("%.1f", 1e3 * mumps.analyze_seconds).c_str(),
                  format("%.3f", ours.factor_seconds).c_str(), format("%.3f", mumps.factor_seconds).c_str(),
                  ratio(ours.factor_seconds, mumps.factor_seconds).c_str(),
                  format("%.2f", 1e3 * ours.solve_seconds).c_str(), format("%.2f", 1e3 * mumps.solve_seconds).c_str(),
                  ratio(ours.solve_seconds, mumps.solve_seconds).c_str(),
                  mumps.ok ? format("%.1e", mumps.residual).c_str() : "FAILED",
                  format("%.0f", mumps.peak_bytes / 1e6).c_str(), m.mumps_factor_entries, 1e-9 * m.mumps_flops);
    }
  }
}

void print_tables(const std::vector<MatrixResult>& results,
                  const std::vector<std::pair<int, double>>& dgemm) {
  std::printf("\nOpenBLAS dgemm ceiling (2000×2000, median of 3):");
  for (const auto& [threads, gflops] : dgemm) std::printf(" %d thread(s) %.1f GFLOP/s;", threads, gflops);
  std::printf("\n\nMedian times (analyze = symbolic with the given permutation; ratio = cholsim / "
              "CHOLMOD, < 1 means cholsim is faster):\n\n");
  std::printf("| matrix | n | thr | analyze ms cholsim | CHOLMOD | ratio | factor s cholsim | CHOLMOD | "
              "ratio | solve ms cholsim | CHOLMOD | ratio | GFLOP/s cholsim | CHOLMOD | residual "
              "cholsim | CHOLMOD | peak MB cholsim | CHOLMOD |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
              "---:|\n");
  for (const MatrixResult& m : results) {
    for (const ThreadRun& run : m.runs) {
      const LibraryRun& ours = run.cholsim;
      const LibraryRun& theirs = run.cholmod;
      std::printf("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | "
                  "%s | %s |\n",
                  m.name.c_str(), m.n, run.threads, format("%.1f", 1e3 * ours.analyze_seconds).c_str(),
                  format("%.1f", 1e3 * theirs.analyze_seconds).c_str(),
                  ratio(ours.analyze_seconds, theirs.analyze_seconds).c_str(),
                  format("%.3f", ours.factor_seconds).c_str(), format("%.3f", theirs.factor_seconds).c_str(),
                  ratio(ours.factor_seconds, theirs.factor_seconds).c_str(),
                  format("%.2f", 1e3 * ours.solve_seconds).c_str(),
                  format("%.2f", 1e3 * theirs.solve_seconds).c_str(),
                  ratio(ours.solve_seconds, theirs.solve_seconds).c_str(),
                  format("%.1f", m.cholmod_flops / ours.factor_seconds / 1e9).c_str(),
                  format("%.1f", m.cholmod_flops / theirs.factor_seconds / 1e9).c_str(),
                  ours.ok ? format("%.1e", ours.residual).c_str() : "FAILED",
                  theirs.ok ? format("%.1e", theirs.residual).c_str() : "FAILED",
                  format("%.0f", ours.peak_bytes / 1e6).c_str(),
                  format("%.0f", theirs.peak_bytes / 1e6).c_str());
    }
  }
  print_mumps_table(results);
  std::printf("\nSizes (same permutation; stored = supernodal values incl. amalgamation zeros; "
              "GFLOP/s above use CHOLMOD's exact flop count for both):\n\n");
  std::printf("| matrix | n | nnz(A) lower | METIS s | nnz(L) cholsim | CHOLMOD lnz | stored L cholsim | "
              "CHOLMOD xsize | flops exact (CHOLMOD fl) | cholsim supernodal flops |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const MatrixResult& m : results) {
    std::printf("| %s | %d | %lld | %.2f | %lld | %.0f | %lld | %.0f | %.3g | %.3g |\n", m.name.c_str(),
                m.n, static_cast<long long>(m.nnz_a_lower), m.ordering_seconds,
                static_cast<long long>(m.cholsim_nnz_l_exact), m.cholmod_lnz,
                static_cast<long long>(m.cholsim_stored), m.cholmod_stored, m.cholmod_flops,
                m.cholsim_flops);
  }
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", ch);
      out += buffer;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

std::string json_library(const LibraryRun& run) {
  std::string out = "{\"ok\": " + std::string(run.ok ? "true" : "false");
  out += ", \"analyze_seconds\": " + json_number(run.analyze_seconds);
  out += ", \"factor_seconds\": " + json_number(run.factor_seconds);
  out += ", \"solve_seconds\": " + json_number(run.solve_seconds);
  out += ", \"residual\": " + json_number(run.residual);
  out += ", \"peak_bytes\": " + json_number(run.peak_bytes);
  if (!run.ok) out += ", \"failure\": " + json_string(run.failure);
  return out + "}";
}

void write_json(const std::string& path, const Options& options, const std::vector<MatrixResult>& results,
                const std::vector<std::pair<int, double>>& dgemm) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << "{\n  \"repeat\": " << options.repeat << ",\n  \"dgemm_gflops\": {";
  for (std::size_t i = 0; i < dgemm.size(); ++i) {
    out << (i ? ", " : "") << "\"" << dgemm[i].first << "\": " << json_number(dgemm[i].second);
  }
  out << "},\n  \"matrices\": [";
  for (std::size_t k = 0; k < results.size(); ++k) {
    const MatrixResult& m = results[k];
    out << (k ? "," : "") << "\n    {\"name\": " << json_string(m.name) << ", \"n\": " << m.n
        << ", \"nnz_a_lower\": " << m.nnz_a_lower
        << ", \"ordering_seconds\": " << json_number(m.ordering_seconds)
        << ", \"cholsim_nnz_l_exact\": " << m.cholsim_nnz_l_exact
        << ", \"cholsim_stored_values\": " << m.cholsim_stored
        << ", \"cholsim_flops\": " << json_number(m.cholsim_flops)
        << ", \"cholmod_lnz\": " << json_number(m.cholmod_lnz)
        << ", \"cholmod_xsize\": " << json_number(m.cholmod_stored)
        << ", \"cholmod_flops\": " << json_number(m.cholmod_flops)
        << ", \"mumps_factor_entries\": " << json_number(m.mumps_factor_entries)
        << ", \"mumps_flops\": " << json_number(m.mumps_flops) << ",\n     \"runs\": [";
    for (std::size_t r = 0; r < m.runs.size(); ++r) {
      const ThreadRun& run = m.runs[r];
      out << (r ? "," : "") << "\n       {\"threads\": " << run.threads
          << ", \"parallel_subtrees\": " << run.parallel_subtrees
          << ", \"top_supernodes\": " << run.top_supernodes
          << ",\n        \"cholsim\": " << json_library(run.cholsim)
          << ",\n        \"cholmod\": " << json_library(run.cholmod)
          << ",\n        \"mumps\": " << json_library(run.mumps)
          << ",\n        \"factor_ratio\": "
          << json_number(run.cholsim.factor_seconds / run.cholmod.factor_seconds)
          << ", \"factor_ratio_mumps\": " << json_number(run.cholsim.factor_seconds / run.mumps.factor_seconds) << "}";
    }
    out << "]}";
  }
  out << "\n  ]\n}\n";
}

std::vector<BenchMatrix> load_matrices(const Options& options) {
  std::vector<BenchMatrix> matrices;
  for (const Index cells : options.boxes) {
    const Index dofs = 3 * (cells + 1) * (cells + 1) * (cells + 1);
    std::fprintf(stderr, "building elasticity box %d^3 (%d DOF)...\n", cells, dofs);
    matrices.push_back({"elasticity " + std::to_string(cells) + "³",
                        linalg::elasticity_matrix({.nx = cells, .ny = cells, .nz = cells}), 3});
  }
  std::vector<std::string> files = options.mtx_files;
  const std::filesystem::path shared = std::filesystem::path(CHOLSIM_SHARED_DATA_DIR) / "matrices";
  if (options.shared_data && std::filesystem::is_directory(shared)) {
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(shared)) {
      if (entry.is_regular_file() && entry.path().extension() == ".mtx") found.push_back(entry.path().string());
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  for (const std::string& file : files) {
    std::fprintf(stderr, "reading %s...\n", file.c_str());
    matrices.push_back({std::filesystem::path(file).stem().string(),
                        linalg::read_symmetric_matrix_market(file), options.mtx_dofs_per_node});
  }
  return matrices;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_command_line("bench_factor_vs_cholmod", [&] { return parse_options(argc, argv); });
  try {
    std::vector<std::pair<int, double>> dgemm;
    for (const int threads : options.threads) {
      std::fprintf(stderr, "dgemm ceiling, %d thread(s)...\n", threads);
      dgemm.emplace_back(threads, dgemm_gflops(threads));
    }
    std::vector<MatrixResult> results;
    for (const BenchMatrix& bench : load_matrices(options)) results.push_back(run_matrix(bench, options));
    print_tables(results, dgemm);
    if (!options.json_file.empty()) write_json(options.json_file, options, results, dgemm);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_factor_vs_cholmod: %s\n", error.what());
    return 1;
  }
}
