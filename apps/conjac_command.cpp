// `cholsim conjac`: CONJAC condensation dynamics (seed 002 ch. 4) — a few dynamic nodes
// integrated in time, every other node kept at zero net force through the condensation
// Jacobian, which the partial factorization gives (fem/conjac/) — or the full model
// (linearly implicit Euler) on the same scene. One .vtu per step plus a .pvd for ParaView
// (displacement, velocity, a dynamic-node flag, energy density), a CSV of the step's phases
// (fill, factor, solves, other: Fig. 4.3's split) and a summary.
#include "conjac_command.hpp"

#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fem/conjac/adaptive_conjac.hpp"
#include "fem/conjac/conjac_scenes.hpp"
#include "fem/conjac/conjac_stepper.hpp"
#include "fem/conjac/dynamic_nodes.hpp"
#include "fem/health/simulation_health.hpp"
#include "interrupt_signals.hpp"
#include "mesh_source.hpp"
#include "output_folder.hpp"
#include "report.hpp"
#include "run_monitor.hpp"
#include "timing.hpp"
#include "vtk_series_writer.hpp"

namespace cholsim::apps {
namespace conjac_command {
namespace {

using linalg::Index;

void progress(const std::string& line) { std::cerr << "cholsim conjac: " << line << std::endl; }

struct ConjacCommandOptions {
  std::string scene = "dragon";
  std::string method = "conjac";
  int dynamic_nodes = 6;
  double resolution = 1.0;
  double time_step = 0.0;  ///< 0: the scene's
  double beta = 0.0;       ///< 0: the scene's (per method)
  double gamma = -1.0;     ///< < 0: the scene's
  int frames = 0;          ///< 0: the scene's duration
  std::string out = "conjac-out";
  int threads = 2;
  bool json = false;
  RunEndOptions run_end;
};

constexpr const char* summary_file_name = "summary.json";
constexpr const char* steps_file_name = "steps.csv";

/// Phase times summed over the run, and per step for the CSV.
struct PhaseTotals {
  std::ostringstream csv;
  fem::StepPhases sum;
  double output_seconds = 0.0;
  double active_sum = 0.0;  ///< adaptivity: dynamic representatives summed over the steps
  int steps = 0;

  PhaseTotals() { csv << "step,time,step_seconds,fill,factor,solves,other,quasistatic_force\n"; }
  void add(double time, const fem::StepPhases& phases, double quasistatic_force) {
    ++steps;
    csv << steps << ',' << time << ',' << phases.total() << ',' << phases.fill << ',' << phases.factor << ','
        << phases.solves << ',' << phases.other << ',' << quasistatic_force << '\n';
    sum.fill += phases.fill;
    sum.factor += phases.factor;
    sum.solves += phases.solves;
    sum.other += phases.other;
  }
};

/// The full-mesh fields of a frame, kept between frames.
class FrameFields {
 public:
  FrameFields(const fem::ElasticSystem& system, std::span<const Index> dynamic_nodes) : system_(system) {
    set_dynamic(dynamic_nodes, {});
  }
  /// The nodes flagged dynamic: `nodes`, or with `active` (adaptivity) those of them active.
  void set_dynamic(std::span<const Index> nodes, std::span<const char> active) {
    dynamic_flag_.assign(static_cast<std::size_t>(system_.body().node_count()), 0.0);
    for (std::size_t k = 0; k < nodes.size(); ++k) dynamic_flag_[nodes[k]] = active.empty() || active[k] ? 1.0 : 0.0;
  }

  bool write(VtuSeriesWriter& writer, double time, std::span<const double> x, std::span<const double> v) {
    const std::vector<double>& rest = system_.body().rest.positions;
    positions_.resize(rest.size());
    velocities_.resize(rest.size());
    displacement_.resize(rest.size());
    system_.full_positions(x, positions_);
    system_.full_velocities(v, velocities_);
    for (std::size_t i = 0; i < rest.size(); ++i) displacement_[i] = positions_[i] - rest[i];
    energy_density_ = system_.energy_densities(positions_);
    const VtkField point_fields[] = {
        {"displacement", 3, displacement_}, {"velocity", 3, velocities_}, {"dynamic", 1, dynamic_flag_}};
    const VtkField cell_fields[] = {{"energy_density", 1, energy_density_}};
    return writer.write_frame(time, positions_, system_.body().rest.tets, point_fields, cell_fields);
  }
  [[nodiscard]] std::span<const double> positions() const { return positions_; }
  [[nodiscard]] std::span<const double> velocities() const { return velocities_; }

 private:
  const fem::ElasticSystem& system_;
  std::vector<double> dynamic_flag_, positions_, velocities_, displacement_, energy_density_;
};

void add_report_sections(Report& report, const fem::ConjacScene& scene, const ConjacCommandOptions& flags,
                         const fem::ConjacOptions& options, const PhaseTotals& totals, fem::ElasticSystem& system,
                         std::span<const double> x, std::span<const double> v, const VtuSeriesWriter& writer) {
  report.section("scene");
  report.add_text("scene", "scene", scene.scene.description);
  report.add_count("nodes", "nodes", scene.scene.mesh.node_count());
  report.add_count("tets", "tets", scene.scene.mesh.tet_count());
  report.add_count("free_dofs", "free DOFs", system.size());
  report.add_text("method", "method", flags.method);
  if (scene.adaptive && flags.method == "conjac") {
    report.add_count("representative_nodes", "representative nodes", static_cast<Index>(scene.dynamic_nodes.size()));
    const double mean = totals.steps > 0 ? totals.active_sum / totals.steps : 0.0;
    report.add("mean_dynamic_nodes", "mean dynamic (adaptive)", mean, format_fixed(mean, 2));
  } else {
    report.add_count("dynamic_nodes", "dynamic nodes", flags.method == "conjac" ? flags.dynamic_nodes : system.size() / 3);
  }
  report.add_real("dt", "time step (s)", options.time_step);
  report.add_real("beta", "beta (eq. 4.10/4.11)", options.beta);
  report.add_real("gamma", "gamma (eq. 4.13)", options.gamma);
  report.add_count("steps", "steps", totals.steps);

  report.section("time (all steps; seed 002 Fig. 4.3's split)");
  report.add_seconds("total_s", "stepping", totals.sum.total());
  report.add_seconds("fill_s", "fill (f and K)", totals.sum.fill);
  report.add_seconds("factor_s", "factorizations", totals.sum.factor);
  report.add_seconds("solve_s", "triangular solves", totals.sum.solves);
  report.add_seconds("other_s", "other (reduced system, update)", totals.sum.other);
  report.add_seconds("output_s", "output (VTK)", totals.output_seconds);

  report.section("final state");
  const fem::ElasticSystem::EnergyParts energy = system.energy_parts(x, v);
  report.add_real("elastic_energy", "elastic energy (J)", energy.elastic);
  report.add_real("kinetic_energy", "kinetic energy (J)", energy.kinetic);
  report.add_real("gravity_energy", "gravity energy (J)", energy.gravity);

  report.section("output");
  report.add_text("pvd", "collection", writer.pvd_path().string());
  report.add_count("vtu_files", "frames written", writer.frames_written());
  report.add_text("steps_csv", "per-step CSV", (writer.directory() / steps_file_name).string());
  report.add_text("summary_json", "summary", (writer.directory() / summary_file_name).string());
}

fem::ConjacScene build_scene(const ConjacCommandOptions& flags) {
  fem::ConjacSceneOptions options;
  options.kind = fem::parse_conjac_scene(flags.scene);
  options.dynamic_nodes = flags.method == "conjac" ? flags.dynamic_nodes : 0;
  options.resolution = flags.resolution;
  const std::string armadillo = find_bundled_mesh("armadillo_4k.node");
  if (!armadillo.empty()) options.mesh_directory = std::filesystem::path(armadillo).parent_path();
  options.threads = flags.threads;
  return fem::make_conjac_scene(options);
}

int run_conjac(const ConjacCommandOptions& flags) {
  const InterruptSignals signals;
  const std::uint64_t byte_limit = parse_byte_size(flags.run_end.max_output, "--max-output");
  progress("building the " + flags.scene + " scene...");
  const fem::ConjacScene scene = build_scene(flags);
  progress(scene.scene.description);
  OutputFolder folder(flags.out, byte_limit);
  std::unique_ptr<fem::ElasticSystem> system = fem::make_scene_system(scene.scene);
  const bool conjac = flags.method == "conjac";
  fem::ConjacOptions options;
  options.time_step = flags.time_step > 0.0 ? flags.time_step : scene.time_step;
  options.beta = flags.beta > 0.0 ? flags.beta : (conjac ? scene.beta : scene.full_beta);
  options.gamma = flags.gamma >= 0.0 ? flags.gamma : scene.gamma;
  options.threads = flags.threads;
  std::vector<double> x = system->free_values(scene.scene.mesh.positions);
  std::vector<double> v = fem::initial_velocity(scene, *system);
  std::unique_ptr<fem::ConjacStepper> conjac_stepper;
  std::unique_ptr<fem::AdaptiveConjac> adaptive_stepper;
  std::unique_ptr<fem::LinearlyImplicitStepper> full_stepper;
  const bool adaptive = conjac && scene.adaptive;
  if (adaptive) {
    fem::LivelinessOptions liveliness;
    liveliness.threads = flags.threads;
    adaptive_stepper = std::make_unique<fem::AdaptiveConjac>(*system, scene.dynamic_nodes, options, liveliness);
  } else if (conjac) {
    conjac_stepper = std::make_unique<fem::ConjacStepper>(
        *system, fem::free_dofs_of_nodes(*system, scene.dynamic_nodes), options);
  } else {
    full_stepper = std::make_unique<fem::LinearlyImplicitStepper>(*system, options);
  }
  // One step of whichever stepper runs, its phases and its largest quasistatic force after.
  const auto step = [&](double t) {
    if (adaptive) {
      adaptive_stepper->step(t, x, v);
    } else if (conjac) {
      conjac_stepper->step(t, x, v);
    } else {
      full_stepper->step(t, x, v);
    }
  };
  const auto last_phases = [&]() -> const fem::StepPhases& {
    return adaptive ? adaptive_stepper->last_phases() : conjac ? conjac_stepper->last_phases() : full_stepper->last_phases();
  };
  const auto quasistatic_force = [&] {
    return adaptive ? adaptive_stepper->last_quasistatic_force() : conjac ? conjac_stepper->last_quasistatic_force() : 0.0;
  };
  const int frames =
      flags.frames > 0 ? flags.frames : static_cast<int>(std::lround(scene.duration / options.time_step));

  VtuSeriesWriter writer(folder, "conjac");
  FrameFields fields(*system, conjac ? std::span<const Index>(scene.dynamic_nodes) : std::span<const Index>());
  if (!fields.write(writer, 0.0, x, v)) progress("the first frame passes --max-output");
  fem::HealthThresholds thresholds;
  if (!scene.scene.system.prescribed.empty()) thresholds.energy_gain_model_sizes = std::numeric_limits<double>::infinity();
  RunMonitor monitor("cholsim conjac", flags.run_end, signals,
                     fem::SimulationHealth(system->body(), scene.scene.system.gravity, {}, fields.velocities(), thresholds));
  PhaseTotals totals;
  double time = 0.0;
  for (int frame = 1; frame <= frames && monitor.keep_going(); ++frame) {
    try {
      step(time);
    } catch (const std::runtime_error& error) {
      monitor.stop_on_failure(frame, error.what());
      break;
    }
    time += options.time_step;
    const fem::StepPhases& phases = last_phases();
    totals.add(time, phases, quasistatic_force());
    if (adaptive) {
      fields.set_dynamic(scene.dynamic_nodes, adaptive_stepper->active_nodes());
      totals.active_sum += adaptive_stepper->active_count();
    }
    const Clock::time_point output_start = Clock::now();
    const bool written = fields.write(writer, time, x, v);
    totals.output_seconds += seconds_since(output_start);
    monitor.check({frame, time, fields.positions(), fields.velocities(), true});
    if (!written) {
      monitor.stop_at_output_limit(byte_limit, writer.frames_written());
      break;
    }
    progress("step " + std::to_string(frame) + "/" + std::to_string(frames) + "  " +
             (adaptive ? std::to_string(adaptive_stepper->active_count()) + " of " +
                             std::to_string(scene.dynamic_nodes.size()) + " representatives dynamic, "
                       : std::string()) +
             format_fixed(1e3 * phases.total(), 1) + " ms (fill " + format_fixed(1e3 * phases.fill, 1) + ", factor " + format_fixed(1e3 * phases.factor, 1) +
             ", solves " + format_fixed(1e3 * phases.solves, 1) + ")");
  }

  folder.write(steps_file_name, totals.csv.str());
  Report report;
  add_report_sections(report, scene, flags, options, totals, *system, x, v, writer);
  monitor.add_section(report);
  publish_summary(report, folder, summary_file_name, flags.json);
  return monitor.exit_code();
}

}  // namespace
}  // namespace conjac_command

void add_conjac_command(CLI::App& app, CommandAction& action) {
  auto flags = std::make_shared<conjac_command::ConjacCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "conjac", "CONJAC condensation dynamics (seed 002 ch. 4): a few dynamic nodes, the rest quasistatic through the "
                "condensation Jacobian of the partial factorization; or the full model");
  command->footer(
      "Without arguments: the DRAGON scene of seed 002 Table 4.1 with the bundled armadillo standing in (no dragon\n"
      "mesh is bundled; 62,373 tets), SNH E = 3e4 Pa, nu = 0.49, feet held, swinging from a sideways push, 6 dynamic\n"
      "nodes spread from the extremities, linearly implicit Euler h = 5e-3 s, beta = 0.5, gamma = 1/3, 1 s.\n"
      "Scenes: dragon, twist (a 20 x 6 x 6-cell bar, one end compressed, stretched, bent and twisted; dynamic nodes\n"
      "along its axis), armadillo (Table 4.1's adaptive ARMADILLO: 20,938 tets, E = 6e4 Pa, five representative nodes\n"
      "switched dynamic / quasistatic by the liveliness metric of seed 002 §4.4.1, thresholds 0.10/s and 0.02/s).\n"
      "--method full runs the full model (beta = 3.7 on dragon) for comparison.\n"
      "Output in --out: conjac.pvd + conjac_NNNN.vtu (point data displacement, velocity, dynamic = 1 on dynamic\n"
      "nodes; cell data energy_density), steps.csv (each step's fill, factor, solves, other and the largest\n"
      "quasistatic force), summary.json.\n"
      "Exit codes: 0 ok, 2 bad input or unwritable output, 3 numerical failure (with --strict: a health warning).\n" +
      run_end_help());
  command->add_option("--scene", flags->scene, "dragon, twist or armadillo (adaptive)")
      ->check(CLI::IsMember({"dragon", "twist", "armadillo"}))
      ->capture_default_str();
  command->add_option("--method", flags->method, "conjac or full")
      ->check(CLI::IsMember({"conjac", "full"}))
      ->capture_default_str();
  command->add_option("--dynamic-nodes", flags->dynamic_nodes, "CONJAC: dynamic nodes (0: quasistatic motion)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  command->add_option("--resolution", flags->resolution, "Mesh size relative to Table 4.1's")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--dt", flags->time_step, "Time step in s (default: the scene's)")->check(CLI::PositiveNumber);
  command->add_option("--beta", flags->beta, "Damping factor beta of eq. 4.10 / 4.11 (default: the scene's)")
      ->check(CLI::PositiveNumber);
  command->add_option("--gamma", flags->gamma, "Stabilization share gamma of eq. 4.13, in [0, 1] (default: the scene's)")
      ->check(CLI::Range(0.0, 1.0));
  command->add_option("--frames", flags->frames, "Steps (default: the scene's duration)")->check(CLI::PositiveNumber);
  command->add_option("--out", flags->out, "Output folder")->capture_default_str();
  command->add_option("--threads", flags->threads, "Threads for element loops, the factorization and the solves")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_flag("--json", flags->json, "Write the summary as one JSON object to stdout");
  add_run_end_options(*command, flags->run_end);
  command->callback([flags, &action] {
    action = [flags] { return run_reporting_errors("conjac", [&] { return conjac_command::run_conjac(*flags); }); };
  });
}

}  // namespace cholsim::apps
