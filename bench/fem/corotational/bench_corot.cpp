// Corotational elastodynamics, the shape of seed 000 Table I and Table IV: one model at several
// resolutions, dropped onto the ground and bouncing for a fixed number of frames, simulated
// with full Cholesky every step (exact), Jacobi-PCG (tolerance 1e-4, §5.2) and warp-canceling
// corotation (τ = 5e-3; and target-time scheduling limited to 66% and 33% of a full
// factorization's cost, Table IV), for each Young's modulus.
//
// The model: the Stanford bunny surface (../shared/data/meshes/npm-bunny/bunny.obj) meshed by
// Debian's `tetgen` near each requested tet count (the switches follow the counts measured in
// ../shared/data/meshes/SOURCES.md), scaled to a 1.6 m longest side (the paper's sculpture has
// a 0.8 m radius); without tetgen or the data, a procedural ball of the same size. ρ = 1000,
// ν = 0.4, dropped from --drop-height.
//
// The exact run and the warp-canceling runs are stepped in lockstep, one frame each per round,
// so a drift of the machine's speed reaches them alike; CG runs alone afterwards (it can be
// cut at a time limit) against the stored exact trajectory.
// Reported per method: the mean per-frame step time (wall clock, and the process's CPU time,
// which on a shared machine measures the work far more steadily — compare CPU times with
// --threads 1) and its ratio to exact, CG iterations,
// updated elements, and the max and mean node-position deviation from the exact run over all
// frames, relative to the model's longest side.
// Output: a Markdown table on stdout, progress on stderr.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "bench/bench_models.hpp"
#include "fem/corotational/corotational_simulation.hpp"
#include "fem/elements/elastic_body.hpp"
#include "fem/mesh/mesh_io.hpp"
#include "fem/mesh/procedural_meshes.hpp"
#include "fem/mesh/tet_mesh.hpp"
#include "fem/mesh/tetgen.hpp"
#include "linalg/blas_kernels.hpp"

namespace {

namespace bench = cholsim::bench;
namespace fem = cholsim::fem;
using cholsim::linalg::Index;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage = R"(usage: bench_corot [options]
  --sizes LIST       target tet counts (default 7000; the paper's sizes are 7000,100000,300000)
  --youngs LIST      Young's moduli in Pa (default 5e6,5e7,5e8)
  --frames N         frames of 1/60 s per run (default 60)
  --methods LIST     of exact,cg,wc,wc66,wc33 (default all; exact is always run as the reference)
  --model M          bunny, knot (a slender knotted tube) or ball (default bunny when tetgen and
                     the data exist)
  --threads T        factorization threads (default 0 = all)
  --drop-height H    metres between the ground and the model's lowest point (default 0.1: the
                     first impact comes at frame 9, so short runs include the bounce)
  --cg-time-limit S  stop the CG run after S seconds of stepping and report the frames done
                     (default 600; the other methods always run every frame)
)";

constexpr double model_longest_side = 1.6;  // m, seed 000 §5.2: the sculpture's radius is 0.8 m

struct Options {
  std::vector<Index> sizes{7000};
  std::vector<double> youngs{5e6, 5e7, 5e8};
  int frames = 60;
  std::vector<std::string> methods{"exact", "cg", "wc", "wc66", "wc33"};
  std::string model;
  int threads = 0;
  double drop_height = 0.1;
  double cg_time_limit = 600.0;
};

using bench::parse_list;

Options parse_options(int argc, char** argv) {
  Options options;
  for (cholsim::bench::ArgumentCursor arguments(argc, argv); arguments.next();) {
    const std::string& flag = arguments.flag();
    const auto value = [&arguments] { return arguments.value(); };
    if (cholsim::bench::is_help_flag(flag)) {
      cholsim::bench::exit_with_usage(kUsage);
    } else if (flag == "--sizes") {
      options.sizes = parse_list<Index>(value());
    } else if (flag == "--youngs") {
      options.youngs = parse_list<double>(value());
    } else if (flag == "--frames") {
      options.frames = bench::parse_positive(flag, value());
    } else if (flag == "--methods") {
      options.methods = parse_list<std::string>(value());
    } else if (flag == "--model") {
      options.model = value();
    } else if (flag == "--threads") {
      options.threads = static_cast<int>(bench::parse_number(flag, value()));
    } else if (flag == "--drop-height") {
      options.drop_height = bench::parse_number(flag, value());
    } else if (flag == "--cg-time-limit") {
      options.cg_time_limit = bench::parse_number(flag, value());
    } else {
      throw std::invalid_argument("unknown option '" + flag + "' (see --help)");
    }
  }
  for (const std::string& method : options.methods) {
    if (method != "exact" && method != "cg" && method != "wc" && method != "wc66" && method != "wc33") {
      throw std::invalid_argument("unknown method '" + method + "' (see --help)");
    }
  }
  if (options.frames <= 0) throw std::invalid_argument("--frames must be positive");
  return options;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// CPU seconds of all threads of this process so far.
double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

/// A ball with about `tets` tets: make_sphere_mesh's count grows with the cube of its layers.
fem::TetMesh ball_near(Index tets) {
  Index layers = 8;
  fem::TetMesh ball = fem::make_sphere_mesh(0.5 * model_longest_side, layers);
  const double ratio = static_cast<double>(tets) / static_cast<double>(ball.tet_count());
  layers = std::max<Index>(2, static_cast<Index>(std::lround(layers * std::cbrt(ratio))));
  return fem::make_sphere_mesh(0.5 * model_longest_side, layers);
}

struct Model {
  fem::TetMesh mesh;
  std::string description;
};

Model make_model(const std::string& kind, Index tets, double drop_height) {
  Model model;
  if (const bench::SurfaceModel* surface = bench::find_surface_model(kind)) {
    bench::ModelMesh meshed = bench::tetrahedralize_model(*surface, tets);
    model.mesh = std::move(meshed.mesh);
    model.description = std::move(meshed.description);
  } else {
    model.mesh = ball_near(tets);
    model.description = "procedural ball";
  }
  const auto box = fem::bounding_box(model.mesh.positions);
  const double scale = model_longest_side / std::max({box[3] - box[0], box[4] - box[1], box[5] - box[2]});
  // Lowest point at drop_height, centred over the origin.
  const double shift[3] = {-0.5 * (box[0] + box[3]), -box[1], -0.5 * (box[2] + box[5])};
  for (std::size_t i = 0; i < model.mesh.positions.size(); ++i) {
    model.mesh.positions[i] = (model.mesh.positions[i] + shift[i % 3]) * scale + (i % 3 == 1 ? drop_height : 0.0);
  }
  return model;
}

fem::CorotationalOptions method_options(const std::string& method, int threads) {
  fem::CorotationalOptions options;
  options.threads = threads;
  options.obstacles.push_back(fem::HalfSpace{});
  if (method == "exact") options.method = fem::CorotationalMethod::exact;
  if (method == "cg") options.method = fem::CorotationalMethod::conjugate_gradient;
  if (method.starts_with("wc")) options.method = fem::CorotationalMethod::warp_canceling;
  // Table IV's "66% / 33% limit": τ = 5·10⁻³ picks what is worth updating, the budget (a
  // fraction of a full factorization) caps what is spent.
  if (method == "wc66" || method == "wc33") {
    options.warp_canceling.budget_fraction = method == "wc66" ? 0.66 : 0.33;
  }
  return options;
}

struct RunResult {
  std::string method;
  int frames_done = 0;
  double mean_step_seconds = 0.0;
  double mean_step_cpu_seconds = 0.0;
  double setup_seconds = 0.0;
  double mean_cg_iterations = 0.0;
  double mean_updated_elements = 0.0;
  double mean_recomputed_flop_fraction = 0.0;
  fem::StepTimings timing_sums;  ///< Table II rows summed over the frames
  fem::FactorSummary factor;     ///< after the last frame (direct methods)
  double max_deviation = 0.0;   ///< relative to the model's longest side
  double mean_deviation = 0.0;
};

/// One method's simulation, stepped frame by frame and measured: wall and CPU time per step,
/// CG iterations, updated elements, Table II phases, and the deviation of its positions from
/// a reference (the exact run's positions of the same frame).
class MethodRun {
 public:
  MethodRun(const fem::ElasticBody& body, const std::string& method, const Options& options) {
    result_.method = method;
    const Clock::time_point setup_start = Clock::now();
    simulation_ = std::make_unique<fem::CorotationalSimulation>(body, method_options(method, options.threads));
    result_.setup_seconds = seconds_since(setup_start);
  }

  /// Steps one frame; `reference`, when given, holds the exact run's positions at this frame.
  void step(const std::vector<double>* reference) {
    const double cpu_start = process_cpu_seconds();
    const fem::StepStatistics step = simulation_->step();
    step_cpu_seconds_ += process_cpu_seconds() - cpu_start;
    step_seconds_ += step.timings.total;
    result_.timing_sums += step.timings;
    result_.mean_recomputed_flop_fraction += step.recomputed_flop_fraction;
    cg_iterations_ += step.cg_iterations;
    updated_elements_ += static_cast<double>(step.updated_elements);
    ++result_.frames_done;
    std::fprintf(stderr, "bench_corot:     %s frame %d: %.1f ms, %d elements updated, %.2f of the factorization's flops\n",
                 result_.method.c_str(), result_.frames_done, 1e3 * step.timings.total,
                 static_cast<int>(step.updated_elements), step.recomputed_flop_fraction);
    const auto positions = simulation_->positions();
    if (!std::all_of(positions.begin(), positions.end(), [](double x) { return std::isfinite(x); })) {
      throw std::runtime_error(result_.method + ": the state became non-finite in frame " +
                               std::to_string(result_.frames_done));
    }
    if (reference != nullptr) add_deviation(positions, *reference);
  }

  [[nodiscard]] std::span<const double> positions() const { return simulation_->positions(); }
  [[nodiscard]] double step_seconds() const { return step_seconds_; }

  /// The means over the frames stepped.
  [[nodiscard]] RunResult finish() {
    RunResult result = result_;
    result.factor = simulation_->factor_summary();
    const double frames = std::max(1, result.frames_done);
    result.mean_step_seconds = step_seconds_ / frames;
    result.mean_step_cpu_seconds = step_cpu_seconds_ / frames;
    result.mean_cg_iterations = static_cast<double>(cg_iterations_) / frames;
    result.mean_updated_elements = updated_elements_ / frames;
    result.mean_recomputed_flop_fraction /= frames;
    result.mean_deviation = deviation_count_ > 0 ? deviation_sum_ / static_cast<double>(deviation_count_) : 0.0;
    std::fprintf(stderr, "bench_corot:   %-5s %d frames, %.1f ms/frame, %.1f CPU ms/frame (setup %.2f s)\n",
                 result.method.c_str(), result.frames_done, 1e3 * result.mean_step_seconds,
                 1e3 * result.mean_step_cpu_seconds, result.setup_seconds);
    return result;
  }

 private:
  void add_deviation(std::span<const double> positions, const std::vector<double>& exact) {
    for (std::size_t node = 0; node < exact.size(); node += 3) {
      const double dx = positions[node] - exact[node];
      const double dy = positions[node + 1] - exact[node + 1];
      const double dz = positions[node + 2] - exact[node + 2];
      const double distance = std::sqrt(dx * dx + dy * dy + dz * dz) / model_longest_side;
      result_.max_deviation = std::max(result_.max_deviation, distance);
      deviation_sum_ += distance;
      ++deviation_count_;
    }
  }

  RunResult result_;
  std::unique_ptr<fem::CorotationalSimulation> simulation_;
  double step_seconds_ = 0.0;
  double step_cpu_seconds_ = 0.0;
  double deviation_sum_ = 0.0;
  std::int64_t deviation_count_ = 0;
  std::int64_t cg_iterations_ = 0;
  double updated_elements_ = 0.0;
};

/// The exact run and the direct methods (warp-canceling with and without budgets) stepped
/// in lockstep, one frame each per round: a drift of the machine's speed over the run
/// reaches every method alike, and each compares against the exact positions of the same
/// frame. The exact trajectory is kept only when CG (run alone afterwards, it may be cut at
/// its time limit) needs it.
std::vector<RunResult> run_direct_methods(const fem::ElasticBody& body, const std::vector<std::string>& methods,
                                          const Options& options, std::vector<std::vector<double>>* exact_trajectory) {
  MethodRun exact(body, "exact", options);
  std::vector<MethodRun> others;
  for (const std::string& method : methods) {
    if (method != "exact" && method != "cg") others.emplace_back(body, method, options);
  }
  for (int frame = 0; frame < options.frames; ++frame) {
    exact.step(nullptr);
    std::vector<double> reference(exact.positions().begin(), exact.positions().end());
    for (MethodRun& run : others) run.step(&reference);
    if (exact_trajectory != nullptr) exact_trajectory->push_back(std::move(reference));
  }
  std::vector<RunResult> results{exact.finish()};
  for (MethodRun& run : others) results.push_back(run.finish());
  return results;
}

/// CG alone, cut at --cg-time-limit seconds of steps, against the stored exact trajectory.
RunResult run_conjugate_gradient(const fem::ElasticBody& body, const Options& options,
                                 const std::vector<std::vector<double>>& exact_trajectory) {
  MethodRun cg(body, "cg", options);
  for (int frame = 0; frame < options.frames && cg.step_seconds() < options.cg_time_limit; ++frame) {
    cg.step(&exact_trajectory[static_cast<std::size_t>(frame)]);
  }
  return cg.finish();
}

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

void print_row(const fem::TetMesh& mesh, double youngs, const RunResult& run, const RunResult& exact,
               int requested_frames) {
  const bool is_reference = &run == &exact;
  const std::string method =
      run.method + (run.frames_done < requested_frames ? " (" + std::to_string(run.frames_done) + " fr)" : "");
  std::printf("| %d | %d | %.0e | %s | %.1f | %.2f | %.1f | %.2f | %s | %.0f | %s | %s |\n", mesh.tet_count(),
              mesh.node_count(), youngs, method.c_str(), 1e3 * run.mean_step_seconds,
              run.mean_step_seconds / exact.mean_step_seconds, 1e3 * run.mean_step_cpu_seconds,
              run.mean_step_cpu_seconds / exact.mean_step_cpu_seconds,
              run.method == "cg" ? format("%.0f", run.mean_cg_iterations).c_str() : "-", run.mean_updated_elements,
              is_reference ? "ref" : format("%.2e", run.max_deviation).c_str(),
              is_reference ? "ref" : format("%.2e", run.mean_deviation).c_str());
}

/// One method's mean Table II breakdown (seed 000 §5.2), kept for the phase table that
/// follows each size's main table.
struct PhaseRow {
  double youngs = 0.0;
  std::string method;
  int frames = 0;
  fem::StepTimings sums;
  double recomputed_flop_fraction = 0.0;
};

void print_phase_table(const std::vector<PhaseRow>& rows) {
  std::printf("\nTable II shape — mean ms per frame by phase (rotations = element + node rotations; "
              "factor = full factorization or incremental update; flop share = recomputed share of a "
              "full factorization's flops):\n\n");
  std::printf("| E (Pa) | method | rotations | error est. | matrix update | factor | rhs | solve | collisions | "
              "total | flop share |\n");
  std::printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const PhaseRow& row : rows) {
    const double per_frame = 1e3 / std::max(1, row.frames);
    const fem::StepTimings& t = row.sums;
    std::printf("| %.0e | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f |\n", row.youngs,
                row.method.c_str(), per_frame * (t.element_rotations + t.node_rotations),
                per_frame * t.error_estimation, per_frame * t.matrix_update, per_frame * t.factor_update,
                per_frame * t.right_hand_side, per_frame * t.solve, per_frame * t.collisions, per_frame * t.total,
                row.recomputed_flop_fraction);
  }
}

void run_size(const std::string& model_kind, Index tets, const Options& options) {
  std::fprintf(stderr, "bench_corot: meshing %s near %d tets...\n", model_kind.c_str(), tets);
  Model model = make_model(model_kind, tets, options.drop_height);
  std::printf("\nmodel: %s — %d tets, %d nodes, %.1f m longest side, dropped from %.2f m, %d frames of 1/60 s\n\n",
              model.description.c_str(), model.mesh.tet_count(), model.mesh.node_count(), model_longest_side,
              options.drop_height, options.frames);
  std::printf("| tets | nodes | E (Pa) | method | wall ms/frame | / exact | CPU ms/frame | / exact | CG iters | "
              "updated elems | max dev | mean dev |\n");
  std::printf("|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::vector<PhaseRow> phase_rows;
  std::string factor_line;
  auto keep_phases = [&](double youngs, const RunResult& run) {
    phase_rows.push_back({youngs, run.method, run.frames_done, run.timing_sums, run.mean_recomputed_flop_fraction});
  };
  for (double youngs : options.youngs) {
    fem::Material material;
    material.youngs_modulus = youngs;
    material.poisson_ratio = 0.4;
    material.density = 1000.0;
    const fem::ElasticBody body = fem::make_elastic_body(model.mesh, material, model.description);
    std::fprintf(stderr, "bench_corot: %d tets, E = %.0e\n", model.mesh.tet_count(), youngs);
    const bool with_cg = std::find(options.methods.begin(), options.methods.end(), "cg") != options.methods.end();
    std::vector<std::vector<double>> exact_trajectory;
    std::vector<RunResult> runs = run_direct_methods(body, options.methods, options, with_cg ? &exact_trajectory : nullptr);
    if (with_cg) runs.push_back(run_conjugate_gradient(body, options, exact_trajectory));
    const RunResult& exact = runs.front();
    factor_line = format("nnz(L) %.0f", static_cast<double>(exact.factor.nnz_l)) +
                  format(" (%.0f MB of factor values), ", 1e-6 * static_cast<double>(exact.factor.factor_bytes)) +
                  format("first full factorization %.2f s", exact.factor.full_factor_seconds);
    for (const std::string& method : options.methods) {  // rows in the order asked for
      for (const RunResult& run : runs) {
        if (run.method != method) continue;
        print_row(model.mesh, youngs, run, exact, options.frames);
        keep_phases(youngs, run);
      }
    }
  }
  std::printf("\nfactor (exact run): %s\n", factor_line.c_str());
  print_phase_table(phase_rows);
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  const Options options = bench::parse_command_line("bench_corot", [&] {
    Options parsed = parse_options(argc, argv);
    if (parsed.model.empty()) {
      parsed.model =
          fem::tetgen_available() && std::filesystem::exists(bench::find_surface_model("bunny")->path()) ? "bunny" : "ball";
    }
    if (parsed.model != "ball" && bench::find_surface_model(parsed.model) == nullptr) {
      throw std::invalid_argument("--model is bunny, knot or ball");
    }
    return parsed;
  });
  try {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // rows appear as they are measured
    std::printf("## bench_corot (seed 000 Table I / IV shape)\n");
    std::printf("max/mean dev: node-position deviation from the exact run over all frames, / longest side\n");
    for (Index tets : options.sizes) run_size(options.model, tets, options);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_corot: %s\n", error.what());
    return 1;
  }
}
