// Factor::solve against cholmod_l_solve2 on the matrices whose solves dominate a time step:
//   * the scalar per-coordinate matrix M + DᵀKD of seed 003's operator splitting (issue 8),
//     taken from fem::OperatorSplittingSimulation::system_matrix() on the bars of
//     bench_opsplit (6k / 16k / 55k tets), solved with 1 and 3 right-hand sides (x, y, z);
//   * the 3-dof elasticity matrix M + Δt²K of the same bars (the corotational simulation's
//     single right-hand side), ordered with dofs_per_node = 3 as fem/ does.
// cholsim is timed three times: Factor::solve on the factor's own storage, and
// factor::TiledSolveFactor, the copy of L laid out for repeated solves, in double and in single
// precision (the operator-splitting step's default; built once after the factorization, the
// builds are not timed). The single-precision copy's residual is single precision's.
// Both libraries factor the same matrix with the same permutation (cholsim's METIS ordering,
// given to CHOLMOD, supernodal), single-threaded BLAS. Each repetition solves with cholsim and
// then CHOLMOD on fresh copies of the same random right-hand side; CHOLMOD uses
// cholmod_l_solve2 with its X/Y/E buffers kept between calls (no allocation in the timed call,
// as in cholsim's time step). Printed: medians (ms), min, the ratio cholsim/CHOLMOD of the
// medians, nnz(L) of both, effective bandwidth = 2 passes over L's stored values / time, and
// the relative residuals ‖B − A·X‖_F / ‖B‖_F.
//
// Options: bench_solve --help (kUsage below).
// Output: a Markdown table on stdout, progress on stderr.
#include <cholmod.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "bench/bench_models.hpp"
#include "bench/bench_statistics.hpp"
#include "bench/cholmod_reference.hpp"
#include "factor/gpu/gpu_solve.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/solve/supernodal_solve_tiled.hpp"
#include "fem/elements/elastic_body.hpp"
#include "fem/opsplit/operator_splitting.hpp"
#include "linalg/blas_kernels.hpp"
#include "linalg/blas_threads.hpp"
#include "linalg/generators.hpp"

namespace {

using cholsim::linalg::Index;
using cholsim::linalg::SymmetricCscMatrix;
namespace factor = cholsim::factor;
namespace fem = cholsim::fem;
namespace linalg = cholsim::linalg;
namespace bench = cholsim::bench;

constexpr const char* kUsage = R"(usage: bench_solve [options]

Factor::solve and TiledSolveFactor::solve (L in double and in single precision) against
cholmod_l_solve2 (same permutation, supernodal, 1 thread) on bench_opsplit's bars: the scalar operator-splitting matrix M + D^T K D
and the 3-dof elasticity matrix M + dt^2 K. Median and minimum times, bandwidths, ratios and
residuals as a Markdown table on stdout, progress on stderr.

  --sizes LIST       bars, of 6k,16k,55k,170k,330k tets (default 6k,16k,55k)
  --counts LIST      right-hand-side counts for the operator-splitting matrix (default 1,3;
                     the elasticity matrix is always solved with 1)
  --repeat R         timed repetitions after one warm-up, the median is reported (default 51)
  --no-elasticity    skip the elasticity matrices
  --gpu-trace        after the GPU timings, one more solve recording every unit's timeline: the
                     critical path of both substitutions (per unit: columns, rows, when its block
                     claimed it, when it was ready, when it signalled) after the GPU table
  --no-gpu           skip the GPU solve (factor::GpuSolveFactor), which runs when a GPU is present:
                     its table follows the CPU one (solve(): permutation and transfers included;
                     lanes: the operator-splitting step's pinned buffer; device: both
                     substitutions, which read B from and write X to that mapped buffer
                     themselves, timed by CUDA events)
  --help, -h         this text
)";

/// Cells (nx, ny, nz) of bench_opsplit's bars (0.9 m long, 3:1:1).
// The opsplit bars of bench_opsplit (seed 003 Table 1 sizes); the solve bench uses the first three.
const auto& kBarCells = cholsim::bench::opsplit_bar_cells;

struct Settings {
  std::vector<std::string> sizes = {"6k", "16k", "55k"};
  std::vector<Index> counts = {1, 3};
  int repeat = 51;
  bool elasticity = true;
  bool gpu = true;
  bool gpu_trace = false;
};

struct Problem {
  std::string name;
  SymmetricCscMatrix matrix;
  Index dofs_per_node = 1;
  std::vector<Index> counts;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

using cholsim::bench::median;

/// ‖B − A·X‖_F / ‖B‖_F for column-major n×count B and X.
double relative_residual(const SymmetricCscMatrix& a, const std::vector<double>& x, const std::vector<double>& b) {
  const auto n = static_cast<std::size_t>(a.size());
  std::vector<double> ax(n);
  double residual = 0.0;
  double norm_b = 0.0;
  for (std::size_t c = 0; c * n < b.size(); ++c) {
    linalg::symmetric_multiply(a, std::span<const double>(x.data() + c * n, n), ax);
    for (std::size_t i = 0; i < n; ++i) {
      residual += (b[c * n + i] - ax[i]) * (b[c * n + i] - ax[i]);
      norm_b += b[c * n + i] * b[c * n + i];
    }
  }
  return std::sqrt(residual / norm_b);
}

/// The operator-splitting system matrix of bench_opsplit's bar (E = 1e6 Pa, ν = 0.33, Δt = 10 ms).
SymmetricCscMatrix opsplit_matrix(const std::array<Index, 3>& cells) {
  fem::Material material;
  material.youngs_modulus = 1e6;
  material.poisson_ratio = 0.33;
  material.density = 1000.0;
  fem::OperatorSplittingOptions options;
  options.threads = 1;
  const double cell_size = 0.9 / static_cast<double>(cells[0]);
  fem::OperatorSplittingSimulation sim(
      fem::make_elastic_body(linalg::structured_tet_box(cells[0], cells[1], cells[2], cell_size), material, "bar"),
      options);
  return sim.system_matrix();
}

SymmetricCscMatrix elasticity_matrix(const std::array<Index, 3>& cells) {
  linalg::ElasticityBoxOptions options;
  options.nx = cells[0];
  options.ny = cells[1];
  options.nz = cells[2];
  options.cell_size = 0.9 / static_cast<double>(cells[0]);
  return linalg::elasticity_matrix(options);
}

/// CHOLMOD's supernodal factor of `a` with cholsim's permutation, and solve2 buffers.
class CholmodSolver {
 public:
  CholmodSolver(const SymmetricCscMatrix& a, std::span<const Index> permutation) : matrix_(a) {
    cholmod_common* c = common_.get();
    c->nmethods = 1;
    c->method[0].ordering = CHOLMOD_GIVEN;
    c->postorder = 1;
    c->supernodal = CHOLMOD_SUPERNODAL;
    std::vector<SuiteSparse_long> perm(permutation.begin(), permutation.end());
    factor_ = cholmod_l_analyze_p(&matrix_.sparse, perm.data(), nullptr, 0, c);
    if (factor_ == nullptr || !cholmod_l_factorize(&matrix_.sparse, factor_, c) || c->status != CHOLMOD_OK) {
      throw std::runtime_error("CHOLMOD failed to factor, status " + std::to_string(c->status));
    }
    stored_values = static_cast<double>(factor_->xsize);
    nnz_l = c->lnz;
  }
  ~CholmodSolver() {
    cholmod_common* c = common_.get();
    cholmod_l_free_dense(&x_, c);
    cholmod_l_free_dense(&y_, c);
    cholmod_l_free_dense(&e_, c);
    cholmod_l_free_factor(&factor_, c);
  }
  CholmodSolver(const CholmodSolver&) = delete;
  CholmodSolver& operator=(const CholmodSolver&) = delete;

  /// Solves A·X = B (column-major n×count); returns the seconds of the cholmod_l_solve2 call.
  double solve(std::vector<double>& b, Index count, std::vector<double>& x) {
    cholmod_dense rhs{};
    rhs.nrow = factor_->n;
    rhs.ncol = static_cast<std::size_t>(count);
    rhs.nzmax = b.size();
    rhs.d = factor_->n;
    rhs.x = b.data();
    rhs.xtype = CHOLMOD_REAL;
    rhs.dtype = CHOLMOD_DOUBLE;
    const auto start = std::chrono::steady_clock::now();
    const int ok = cholmod_l_solve2(CHOLMOD_A, factor_, &rhs, nullptr, &x_, nullptr, &y_, &e_, common_.get());
    const double seconds = seconds_since(start);
    if (!ok) throw std::runtime_error("cholmod_l_solve2 failed, status " + std::to_string(common_.get()->status));
    const auto* values = static_cast<const double*>(x_->x);
    x.assign(values, values + b.size());
    return seconds;
  }

  double stored_values = 0.0;  ///< L->xsize
  double nnz_l = 0.0;          ///< Common->lnz

 private:
  cholsim::reference::CholmodCommon common_;
  cholsim::reference::CholmodMatrix matrix_;
  cholmod_factor* factor_ = nullptr;
  cholmod_dense* x_ = nullptr;
  cholmod_dense* y_ = nullptr;
  cholmod_dense* e_ = nullptr;
};

/// The GPU solve's rows, printed after the CPU table, and its critical paths (--gpu-trace).
std::vector<std::string> gpu_rows;
std::vector<std::string> gpu_traces;

/// The chain of units that decided a substitution's span, in the order they ran: forward, from
/// the last unit done back through the child that signalled it last; backward, from the last
/// unit done up through the units it waited for.
std::vector<std::size_t> critical_path(const std::vector<factor::GpuSolveUnitTiming>& timings, bool forward) {
  std::size_t last = 0;
  for (std::size_t u = 0; u < timings.size(); ++u) {
    if (timings[u].done > timings[last].done) last = u;
  }
  std::vector<std::size_t> path{last};
  while (true) {
    const std::size_t current = path.back();
    std::ptrdiff_t next = -1;
    if (forward) {
      for (std::size_t u = 0; u < timings.size(); ++u) {
        if (timings[u].parent_unit == static_cast<Index>(current) && (next < 0 || timings[u].done > timings[next].done)) {
          next = static_cast<std::ptrdiff_t>(u);
        }
      }
    } else {
      next = timings[current].parent_unit;
    }
    if (next < 0) break;
    path.push_back(static_cast<std::size_t>(next));
  }
  std::reverse(path.begin(), path.end());
  return path;
}

std::string describe_critical_path(const std::vector<factor::GpuSolveUnitTiming>& timings, bool forward) {
  const std::vector<std::size_t> path = critical_path(timings, forward);
  std::string text = std::string(forward ? "forward" : "backward") + ": " + std::to_string(path.size()) +
                     " units on the critical path (columns×rows: claimed / ready / done µs)\n";
  double previous_done = 0.0;
  double computing = 0.0;
  double handing_over = 0.0;
  for (const std::size_t u : path) {
    const auto& t = timings[u];
    char line[160];
    std::snprintf(line, sizeof line, "    %ld×%ld: %.1f / %.1f / %.1f\n", static_cast<long>(t.columns),
                  static_cast<long>(t.rows), 1e6 * t.claimed, 1e6 * t.ready, 1e6 * t.done);
    text += line;
    computing += t.done - t.ready;
    handing_over += t.ready - previous_done;
    previous_done = t.done;
  }
  char total[160];
  std::snprintf(total, sizeof total, "    span %.1f µs: computing %.1f µs, handing over %.1f µs\n", 1e6 * previous_done,
                1e6 * computing, 1e6 * handing_over);
  return text + total;
}

/// GpuSolveFactor on the same factor and right-hand sides: solve() (user numbering: the
/// permutation and the transfers are in its time) and, for at most four columns, solve_lanes on
/// its pinned buffer as the operator-splitting step calls it; medians against the tiled copies.
void run_gpu_solve(const SymmetricCscMatrix& a, const factor::Factor& ours, const std::string& name, Index count,
                   const std::vector<double>& b, double tiled_median, double single_median, const Settings& settings) {
  factor::GpuSolveFactor gpu(ours);
  std::vector<double> x;
  std::vector<double> solve_seconds;
  std::vector<double> device_seconds;
  std::vector<double> lanes_seconds;
  std::vector<double> lanes_device_seconds;
  const auto permutation = gpu.permutation();
  const std::span<double> lanes = gpu.pinned_lanes();
  for (int r = 0; r < settings.repeat + 1; ++r) {
    x = b;
    const auto start = std::chrono::steady_clock::now();
    gpu.solve(linalg::DenseView{x.data(), a.size(), count, std::max<Index>(1, a.size())});
    const double solve_time = seconds_since(start);
    const double solve_device = gpu.last_solve().device_seconds;
    if (count <= 4) {
      for (Index k = 0; k < a.size(); ++k) {
        for (Index c = 0; c < count; ++c) {
          lanes[4 * static_cast<std::size_t>(k) + c] = b[static_cast<std::size_t>(c * a.size() + permutation[k])];
        }
      }
      const auto lanes_start = std::chrono::steady_clock::now();
      gpu.solve_lanes(lanes, static_cast<int>(count));
      if (r > 0) {
        lanes_seconds.push_back(seconds_since(lanes_start));
        lanes_device_seconds.push_back(gpu.last_solve().device_seconds);
      }
    }
    if (r == 0) continue;
    solve_seconds.push_back(solve_time);
    device_seconds.push_back(solve_device);
  }
  const auto cell = [](const std::vector<double>& seconds, bool with_minimum) {
    if (seconds.empty()) return std::string("—");
    char text[64];
    const double least = *std::min_element(seconds.begin(), seconds.end());
    if (with_minimum) {
      std::snprintf(text, sizeof text, "%.3f (%.3f)", 1e3 * median(seconds), 1e3 * least);
    } else {
      std::snprintf(text, sizeof text, "%.3f", 1e3 * median(seconds));
    }
    return std::string(text);
  };
  char row[512];
  std::snprintf(row, sizeof row, "| %s | %ld | %ld | %s | %ld | %s | %s | %s | %s | %.2f | %.2f | %.1e |", name.c_str(),
                static_cast<long>(a.size()), static_cast<long>(count), gpu.device_name().c_str(),
                static_cast<long>(gpu.unit_count()), cell(solve_seconds, true).c_str(), cell(device_seconds, false).c_str(),
                cell(lanes_seconds, true).c_str(), cell(lanes_device_seconds, false).c_str(),
                tiled_median / median(solve_seconds), single_median / median(solve_seconds), relative_residual(a, x, b));
  gpu_rows.emplace_back(row);
  if (settings.gpu_trace && count <= 4) {
    gpu.record_unit_timings(true);
    gpu.solve_lanes(lanes, static_cast<int>(count));
    gpu_traces.push_back("### " + name + ", " + std::to_string(count) + " right-hand sides (lanes)\n\n" +
                         describe_critical_path(gpu.forward_timings(), true) +
                         describe_critical_path(gpu.backward_timings(), false));
    gpu.record_unit_timings(false);
  }
}

void run_problem(const Problem& problem, const Settings& settings) {
  const SymmetricCscMatrix& a = problem.matrix;
  factor::AnalyzeOptions analyze_options;
  analyze_options.dofs_per_node = problem.dofs_per_node;
  factor::Factor ours(factor::analyze(a, analyze_options));
  factor::FactorOptions factor_options;
  factor_options.threads = 1;
  if (!ours.factorize(a, factor_options).ok()) throw std::runtime_error(problem.name + ": cholsim factorization failed");
  factor::TiledSolveFactor tiled(ours);
  factor::TiledSolveFactor single(ours, factor::TiledSolveFactor::Precision::single_values);
  CholmodSolver cholmod(a, ours.symbolic().permutation());
  const auto stored = static_cast<double>(ours.symbolic().factor_value_count());
  const std::int64_t supernodes = ours.symbolic().supernode_count();

  for (const Index count : problem.counts) {
    std::fprintf(stderr, "bench_solve: %s, %ld right-hand sides...\n", problem.name.c_str(), static_cast<long>(count));
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::vector<double> b(static_cast<std::size_t>(a.size() * count));
    for (double& v : b) v = uniform(rng);
    std::vector<double> x_ours;
    std::vector<double> x_tiled;
    std::vector<double> x_single;
    std::vector<double> x_cholmod;
    std::vector<double> ours_seconds;
    std::vector<double> tiled_seconds;
    std::vector<double> single_seconds;
    std::vector<double> cholmod_seconds;
    for (int r = 0; r < settings.repeat + 1; ++r) {  // repetition 0 warms caches and buffers
      x_ours = b;
      const auto start = std::chrono::steady_clock::now();
      ours.solve(linalg::DenseView{x_ours.data(), a.size(), count, std::max<Index>(1, a.size())});
      const double our_time = seconds_since(start);
      x_tiled = b;
      const auto tiled_start = std::chrono::steady_clock::now();
      tiled.solve(linalg::DenseView{x_tiled.data(), a.size(), count, std::max<Index>(1, a.size())});
      const double tiled_time = seconds_since(tiled_start);
      x_single = b;
      const auto single_start = std::chrono::steady_clock::now();
      single.solve(linalg::DenseView{x_single.data(), a.size(), count, std::max<Index>(1, a.size())});
      const double single_time = seconds_since(single_start);
      const double cholmod_time = cholmod.solve(b, count, x_cholmod);
      if (r == 0) continue;
      ours_seconds.push_back(our_time);
      tiled_seconds.push_back(tiled_time);
      single_seconds.push_back(single_time);
      cholmod_seconds.push_back(cholmod_time);
    }
    const double ours_median = median(ours_seconds);
    const double tiled_median = median(tiled_seconds);
    const double single_median = median(single_seconds);
    const double cholmod_median = median(cholmod_seconds);
    const double bytes = 2.0 * 8.0;  // forward and backward pass read every stored value
    std::printf("| %s | %ld | %ld | %.0f | %.0f | %ld | %.3f (%.3f) | %.2f | %.3f (%.3f) | %.2f | %.3f (%.3f) | %.2f | "
                "%.3f (%.3f) | %.2f | %.2f | %.1e | %.1e | %.1e | %.1e |\n",
                problem.name.c_str(), static_cast<long>(a.size()), static_cast<long>(count), stored,
                cholmod.stored_values, static_cast<long>(supernodes), 1e3 * ours_median,
                1e3 * *std::min_element(ours_seconds.begin(), ours_seconds.end()), bytes * stored / ours_median / 1e9,
                1e3 * tiled_median, 1e3 * *std::min_element(tiled_seconds.begin(), tiled_seconds.end()),
                tiled_median / ours_median, 1e3 * single_median,
                1e3 * *std::min_element(single_seconds.begin(), single_seconds.end()), single_median / tiled_median,
                1e3 * cholmod_median,
                1e3 * *std::min_element(cholmod_seconds.begin(), cholmod_seconds.end()),
                bytes * cholmod.stored_values / cholmod_median / 1e9, ours_median / cholmod_median,
                relative_residual(a, x_ours, b), relative_residual(a, x_tiled, b), relative_residual(a, x_single, b),
                relative_residual(a, x_cholmod, b));
    std::fflush(stdout);
    if (settings.gpu) run_gpu_solve(a, ours, problem.name, count, b, tiled_median, single_median, settings);
  }
}

Settings parse(int argc, char** argv) {
  Settings s;
  for (bench::ArgumentCursor arguments(argc, argv); arguments.next();) {
    const std::string& arg = arguments.flag();
    const auto value = [&arguments] { return arguments.value(); };
    if (bench::is_help_flag(arg)) {
      bench::exit_with_usage(kUsage);
    } else if (arg == "--sizes") {
      s.sizes = bench::parse_list<std::string>(value());
      for (const std::string& size : s.sizes) {
        if (kBarCells.count(size) == 0) throw std::invalid_argument("unknown size " + size + " (6k,16k,55k,170k,330k)");
      }
    } else if (arg == "--counts") {
      s.counts = bench::parse_list<Index>(value());
      for (const Index count : s.counts) {
        if (count < 1) throw std::invalid_argument("--counts: every count must be ≥ 1");
      }
    } else if (arg == "--repeat") {
      s.repeat = bench::parse_positive(arg, value());
    } else if (arg == "--no-elasticity") {
      s.elasticity = false;
    } else if (arg == "--gpu-trace") {
      s.gpu_trace = true;
    } else if (arg == "--no-gpu") {
      s.gpu = false;
    } else {
      throw bench::unknown_option(arg);
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  Settings settings = bench::parse_command_line("bench_solve", [&] { return parse(argc, argv); });
  std::string why_no_gpu;
  if (settings.gpu && !factor::gpu_available(&why_no_gpu)) settings.gpu = false;
  try {
    linalg::set_blas_threads(1);
    std::printf("# Factor::solve and TiledSolveFactor::solve (double, single) vs cholmod_l_solve2 (same permutation, supernodal, "
                "1 thread), %d repetitions\n\n",
                settings.repeat);
    std::printf("| matrix | n | rhs | cholsim stored L | CHOLMOD stored L | supernodes | cholsim ms median (min) | "
                "cholsim GB/s | tiled copy ms median (min) | ratio tiled/cholsim | single-precision tiled copy ms "
                "median (min) | ratio single/tiled | CHOLMOD ms median (min) | CHOLMOD GB/s | ratio cholsim/CHOLMOD | "
                "cholsim residual | tiled residual | single residual | CHOLMOD residual |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const std::string& size : settings.sizes) {
      run_problem({"opsplit " + size, opsplit_matrix(kBarCells.at(size)), 1, settings.counts}, settings);
    }
    if (settings.elasticity) {
      for (const std::string& size : settings.sizes) {
        run_problem({"elasticity " + size, elasticity_matrix(kBarCells.at(size)), 3, {1}}, settings);
      }
    }
    if (settings.gpu) {
      std::printf("\n# factor::GpuSolveFactor (L copied to the GPU once), same right-hand sides\n\n"
                  "| matrix | n | rhs | device | solve units | solve() ms median (min) | solve() device ms | "
                  "lanes ms median (min) | lanes device ms | speedup over tiled | speedup over single tiled | "
                  "residual |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
      for (const std::string& row : gpu_rows) std::printf("%s\n", row.c_str());
      for (const std::string& trace : gpu_traces) std::printf("\n%s", trace.c_str());
    } else if (!why_no_gpu.empty()) {
      std::printf("\nGPU solve not run: %s\n", why_no_gpu.c_str());
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_solve: %s\n", error.what());
    return 1;
  }
  return 0;
}
