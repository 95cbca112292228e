// `cholsim opsplit`: the operator-splitting corotated FEM of seed 003 (Kugelstadt et al. 2018)
// — a model held at a few fixed vertices swings under gravity (the paper's swinging-armadillo
// scene, Fig. 2 / Table 1); one .vtu per frame plus a .pvd for ParaView with the velocity and
// the per-element volume ratio det F, and a timing summary by phase of Algorithm 2.
#include "opsplit_command.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fem/elements/elastic_body.hpp"
#include "fem/health/simulation_health.hpp"
#include "fem/mesh/tet_mesh.hpp"
#include "fem/opsplit/operator_splitting.hpp"
#include "interrupt_signals.hpp"
#include "mesh_source.hpp"
#include "output_folder.hpp"
#include "report.hpp"
#include "run_monitor.hpp"
#include "timing.hpp"
#include "vtk_series_writer.hpp"

namespace cholsim::apps {
namespace opsplit_command {
namespace {

using linalg::Index;

void progress(const std::string& line) { std::cerr << "cholsim opsplit: " << line << std::endl; }

/// Seed 003's scenes swing the armadillo.
MeshSourceOptions armadillo_by_default() {
  MeshSourceOptions options;
  options.default_model = "armadillo";
  // (348 − 282 MB at start-up) / 96,000 tets for `opsplit --builtin box --resolution 40`.
  options.simulation_bytes_per_tet = 700;
  return options;
}

struct OpsplitCommandOptions {
  MeshSourceOptions mesh = armadillo_by_default();
  double youngs = 1e6;  ///< seed 003 Table 1: E = 10⁶ Pa
  double poisson = 0.33;  ///< seed 003 Table 1: ν = 0.33
  double density = 1000.0;
  double time_step = 0.01;  ///< seed 003 Table 1: Δt = 10 ms
  int volume_iterations = 1;  ///< seed 003 Table 1: one sweep
  int frames = 100;
  std::string fixed = "side:0.03";
  std::string out = "opsplit-out";
  int threads = 2;
  std::string solve_precision = "auto";  ///< of the stored L copy (OperatorSplittingOptions)
  std::string element_precision = "double";  ///< arithmetic of the element passes (OperatorSplittingOptions)
  std::string rotation_warm_start = "previous";  ///< where each step's APD starts (OperatorSplittingOptions)
  std::string device = "cpu";              ///< where the per-step solve runs: cpu, gpu, auto
  bool json = false;
  RunEndOptions run_end;
};

/// A --fixed value that cannot be used; exit code 2.
class FixedSpecError : public BadInputError {
 public:
  using BadInputError::BadInputError;
};

/// --fixed top:F (the top fraction F of the height, y), side:F (the fraction F of the length
/// at the +x end: the model swings down like a pendulum) or none.
std::vector<Index> fixed_nodes(const std::string& spec, const fem::TetMesh& mesh) {
  if (spec == "none") return {};
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  double fraction = -1.0;
  if (colon != std::string::npos) {
    try {
      std::size_t used = 0;
      fraction = std::stod(spec.substr(colon + 1), &used);
      if (used != spec.size() - colon - 1) fraction = -1.0;
    } catch (const std::exception&) {
      fraction = -1.0;
    }
  }
  if ((kind != "top" && kind != "side") || !(fraction >= 0.0 && fraction <= 1.0)) {
    throw FixedSpecError("--fixed " + spec + ": expected top:F, side:F (F in [0, 1]) or none");
  }
  return fem::nodes_near_top(mesh, kind == "top" ? 1 : 0, fraction);
}

/// Per-step phase times summed over the run.
struct RunTotals {
  fem::OperatorSplittingTimings timings;
  double output_seconds = 0.0;
  std::int64_t rotation_fallbacks = 0;
  double min_volume_ratio = 1.0;
  double max_volume_error = 0.0;
  int frames = 0;

  void add(const fem::OperatorSplittingStepStatistics& step, double output, const std::vector<double>& ratios) {
    timings.rotations += step.timings.rotations;
    timings.right_hand_side += step.timings.right_hand_side;
    timings.solve += step.timings.solve;
    timings.volume_constraints += step.timings.volume_constraints;
    timings.collisions += step.timings.collisions;
    timings.total += step.timings.total;
    output_seconds += output;
    rotation_fallbacks += step.rotation_fallbacks;
    for (double r : ratios) {
      min_volume_ratio = std::min(min_volume_ratio, r);
      max_volume_error = std::max(max_volume_error, std::abs(r - 1.0));
    }
    ++frames;
  }
  [[nodiscard]] double mean(double sum) const { return frames > 0 ? sum / frames : 0.0; }
};

/// Writes the next frame; false when it would pass the output folder's byte limit.
bool write_state(VtuSeriesWriter& writer, const fem::OperatorSplittingSimulation& simulation,
                 const std::vector<double>& ratios) {
  const VtkField point_fields[] = {{"velocity", 3, simulation.velocities()}};
  const VtkField cell_fields[] = {{"volume_ratio", 1, ratios}};
  return writer.write_frame(simulation.time(), simulation.positions(), simulation.body().rest.tets, point_fields,
                            cell_fields);
}

bool all_finite(std::span<const double> values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
}

constexpr const char* summary_file_name = "summary.json";

void add_report_sections(Report& report, const LoadedMesh& loaded, const OpsplitCommandOptions& flags,
                         const fem::OperatorSplittingSimulation& simulation, const RunTotals& totals,
                         const VtuSeriesWriter& writer) {
  report.section("mesh");
  report.add_text("mesh_source", "source", loaded.source);
  report.add_count("nodes", "nodes", loaded.check.node_count);
  report.add_count("tets", "tets", loaded.check.tet_count);
  report.add_seconds("mesh_load_s", "load", loaded.seconds);

  const fem::OperatorSplittingSetup& setup = simulation.setup();
  report.section("scene");
  report.add_real("youngs_modulus", "Young's modulus (Pa)", flags.youngs);
  report.add("poisson_ratio", "Poisson ratio", flags.poisson, format_fixed(flags.poisson, 3));
  report.add_real("density", "density (kg/m^3)", flags.density);
  report.add_real("dt", "time step (s)", flags.time_step);
  report.add_count("volume_iterations", "volume iterations", flags.volume_iterations);
  report.add_text("solve_precision", "stored L precision", setup.solve_precision);
  report.add_text("element_precision", "element passes in", flags.element_precision);
  report.add_text("rotation_warm_start", "rotations warm-started at", flags.rotation_warm_start);
  report.add_text("solve_device", "per-step solve on", setup.solve_device);
  report.add_text("fixed", "fixed vertices", flags.fixed);
  report.add_count("fixed_nodes", "fixed nodes", setup.fixed_nodes);
  report.add_count("frames", "frames", totals.frames);

  report.section("setup (Algorithm 1, once)");
  report.add_count("free_nodes", "unknowns per coordinate", setup.free_nodes);
  report.add_count("nnz_A_lower", "nnz(A) lower", setup.matrix_nnz_lower);
  report.add_count("nnz_L", "nnz(L)", setup.nnz_l);
  report.add_seconds("assemble_s", "assembly", setup.assemble_seconds);
  report.add_seconds("analyze_s", "analysis", setup.analyze_seconds);
  report.add_seconds("factorize_s", "factorization", setup.factorize_seconds);

  report.section("mean per-step time (" + std::to_string(totals.frames) + " steps)");
  report.add_seconds("rotations_s", "rotations (APD)", totals.mean(totals.timings.rotations));
  report.add_seconds("rhs_s", "right-hand side", totals.mean(totals.timings.right_hand_side));
  report.add_seconds("solve_s", "solve (3 right-hand sides)", totals.mean(totals.timings.solve));
  report.add_seconds("volume_s", "volume constraints", totals.mean(totals.timings.volume_constraints));
  report.add_seconds("collisions_s", "collisions", totals.mean(totals.timings.collisions));
  report.add_seconds("step_s", "step total", totals.mean(totals.timings.total));
  report.add_seconds("output_s", "output (VTK)", totals.mean(totals.output_seconds));

  report.section("result");
  report.add_count("rotation_fallbacks", "scalar APD fallbacks (all steps)", totals.rotation_fallbacks);
  report.add("min_volume_ratio", "min det F", totals.min_volume_ratio, format_fixed(totals.min_volume_ratio, 4));
  report.add("max_volume_error", "max |det F - 1|", totals.max_volume_error, format_fixed(totals.max_volume_error, 4));

  report.section("output");
  report.add_text("pvd", "collection", writer.pvd_path().string());
  report.add_count("vtu_files", "frames written", writer.frames_written());
  report.add_text("summary_json", "summary", (writer.directory() / summary_file_name).string());
}

int run_opsplit(const OpsplitCommandOptions& flags) {
  // From the start, so that a stop requested during a long setup still ends cleanly.
  const InterruptSignals signals;
  const std::uint64_t byte_limit = parse_byte_size(flags.run_end.max_output, "--max-output");
  const LoadedMesh loaded = load_mesh(flags.mesh, progress);
  for (const std::string& warning : loaded.check.warnings) progress("warning: " + warning);
  fem::Material material;
  material.youngs_modulus = flags.youngs;
  material.poisson_ratio = flags.poisson;
  material.density = flags.density;

  fem::OperatorSplittingOptions options;
  options.time_step = flags.time_step;
  options.volume_iterations = flags.volume_iterations;
  options.fixed_nodes = fixed_nodes(flags.fixed, loaded.mesh);
  options.threads = flags.threads;
  options.solve_precision = flags.solve_precision == "double"   ? factor::TiledSolveFactor::Precision::double_values
                            : flags.solve_precision == "single" ? factor::TiledSolveFactor::Precision::single_values
                                                                : factor::TiledSolveFactor::Precision::automatic;
  options.element_precision = flags.element_precision == "single" ? fem::ElementPrecision::single_values
                                                                  : fem::ElementPrecision::double_values;
  options.rotation_warm_start = flags.rotation_warm_start == "extrapolated" ? fem::RotationWarmStart::extrapolated
                                                                            : fem::RotationWarmStart::previous;
  options.solve_device = flags.device == "gpu"    ? factor::FactorDevice::gpu
                         : flags.device == "auto" ? factor::FactorDevice::automatic
                                                  : factor::FactorDevice::cpu;
  fem::ElasticBody body = fem::make_elastic_body(loaded.mesh, material, loaded.source);
  // Before the factorization: a run that could not save anything fails at once.
  OutputFolder folder(flags.out, byte_limit);
  progress("prefactoring M + D^T K D for " + format_count(loaded.check.tet_count) + " tets, " +
           format_count(static_cast<std::int64_t>(options.fixed_nodes.size())) + " fixed nodes...");
  const fem::Vec3 gravity = options.gravity;
  const std::vector<fem::Obstacle> obstacles = options.obstacles;
  fem::OperatorSplittingSimulation simulation(std::move(body), std::move(options));

  VtuSeriesWriter writer(folder, "opsplit");
  RunMonitor monitor("cholsim opsplit", flags.run_end, signals,
                     fem::SimulationHealth(simulation.body(), gravity, obstacles, simulation.velocities()));
  std::vector<double> ratios = simulation.volume_ratios();
  if (!write_state(writer, simulation, ratios)) monitor.stop_at_output_limit(byte_limit, 0);
  RunTotals totals;
  for (int frame = 1; frame <= flags.frames && monitor.keep_going(); ++frame) {
    const fem::OperatorSplittingStepStatistics step = simulation.step();
    if (!all_finite(simulation.positions()) || !all_finite(simulation.velocities())) {
      monitor.stop_on_failure(frame, "the state became non-finite");
      break;
    }
    monitor.check({frame, simulation.time(), simulation.positions(), simulation.velocities()});
    const Clock::time_point output_start = Clock::now();
    ratios = simulation.volume_ratios();
    if (!write_state(writer, simulation, ratios)) {
      monitor.stop_at_output_limit(byte_limit, writer.frames_written());
      break;
    }
    totals.add(step, seconds_since(output_start), ratios);
    progress("frame " + std::to_string(frame) + "/" + std::to_string(flags.frames) + "  " +
             format_fixed(1e3 * step.timings.total, 2) + " ms/step");
  }

  Report report;
  add_report_sections(report, loaded, flags, simulation, totals, writer);
  monitor.add_section(report);
  publish_summary(report, folder, summary_file_name, flags.json);
  return monitor.exit_code();
}

int run_opsplit_command(const OpsplitCommandOptions& flags) {
  return run_reporting_errors("opsplit", [&] { return run_opsplit(flags); });
}

}  // namespace
}  // namespace opsplit_command

void add_opsplit_command(CLI::App& app, CommandAction& action) {
  auto flags = std::make_shared<opsplit_command::OpsplitCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "opsplit", "Operator-splitting corotated FEM (seed 003): a model swings from fixed vertices; VTK frames, timings");
  command->footer(
      "Without arguments: the bundled armadillo (else a box) held at its +x end (--fixed side:0.03) swinging\n"
      "under gravity, E = 1e6 Pa, nu = 0.33, dt = 10 ms, one volume sweep (seed 003 Table 1), 100 steps.\n"
      "Output in --out: opsplit.pvd + opsplit_NNNN.vtu (frame 0 = initial state; point data velocity,\n"
      "cell data volume_ratio = det F), summary.json. Exit codes: 0 ok, 2 bad input or unwritable output,\n"
      "3 the state became non-finite.\n" +
      run_end_help());
  add_mesh_source_options(*command, flags->mesh);
  command->add_option("--stiffness", flags->youngs, "Young's modulus E in Pa")->check(CLI::PositiveNumber)->capture_default_str();
  command->add_option("--poisson", flags->poisson, "Poisson ratio in (-1, 0.5)")->capture_default_str();
  command->add_option("--density", flags->density, "Density in kg/m^3")->check(CLI::PositiveNumber)->capture_default_str();
  command->add_option("--dt", flags->time_step, "Time step in s")->check(CLI::PositiveNumber)->capture_default_str();
  command->add_option("--volume-iterations", flags->volume_iterations, "Gauss-Seidel sweeps over the volume constraints per step")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--frames", flags->frames, "Steps (one frame each)")->check(CLI::PositiveNumber)->capture_default_str();
  command->add_option("--fixed", flags->fixed, "Fixed vertices: top:F (top fraction F by height), side:F (+x end), none")
      ->capture_default_str();
  command->add_option("--out", flags->out, "Output folder")->capture_default_str();
  command->add_option("--solve-precision", flags->solve_precision,
                      "How the prefactored L is stored for the per-step solve: single (half the bytes; the step "
                      "solves for its correction, so the error is relative to it), double, or auto (double where "
                      "it fits in a core's L2 cache, else single)")
      ->check(CLI::IsMember({"auto", "single", "double"}))
      ->capture_default_str();
  command->add_option("--element-precision", flags->element_precision,
                      "Arithmetic of the per-element passes (F, rotations, forces, volume constraints): double, or "
                      "single (16 elements per vector as in seed 003's own code; positions stay double, results "
                      "differ by ~1e-6 of each step's motion)")
      ->check(CLI::IsMember({"single", "double"}))
      ->capture_default_str();
  command->add_option("--rotation-warm-start", flags->rotation_warm_start,
                      "Where each step's rotation extraction starts an element: previous (its last rotation, as "
                      "seed 003) or extrapolated (its last step's rotation taken again: most elements then "
                      "converge in one Newton step instead of two, to the same tolerance)")
      ->check(CLI::IsMember({"previous", "extrapolated"}))
      ->capture_default_str();
  command->add_option("--device", flags->device,
                      "Where the per-step solve runs: gpu copies L to the CUDA GPU once and solves there in "
                      "double precision (an error without one), auto the GPU when present")
      ->check(CLI::IsMember({"cpu", "gpu", "auto"}))
      ->capture_default_str();
  command->add_option("--threads", flags->threads, "Threads for element loops and the factorization")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_flag("--json", flags->json, "Write the summary as one JSON object to stdout");
  add_run_end_options(*command, flags->run_end);
  command->callback([flags, &action] { action = [flags] { return opsplit_command::run_opsplit_command(*flags); }; });
}

}  // namespace cholsim::apps
