// `cholsim corot`: corotational elastodynamics of seed 000 (Hecht et al. 2012) — a model dropped
// onto the ground, simulated with the exact method, Jacobi-PCG, stiffness warping or
// warp-canceling corotation; one .vtu per frame plus a .pvd for ParaView, a per-frame timing
// CSV with the rows of the paper's Table II, and a summary (stdout and summary.json).
#include "corot_command.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "corot_scene.hpp"
#include "fem/corotational/corotational_simulation.hpp"
#include "fem/elements/corotational_element.hpp"
#include "fem/elements/elastic_body.hpp"
#include "fem/health/simulation_health.hpp"
#include "fem/mesh/tet_mesh.hpp"
#include "interrupt_signals.hpp"
#include "mesh_source.hpp"
#include "output_folder.hpp"
#include "report.hpp"
#include "run_monitor.hpp"
#include "timing.hpp"
#include "vtk_series_writer.hpp"

namespace cholsim::apps {
namespace corot_command {
namespace {

void progress(const std::string& line) { std::cerr << "cholsim corot: " << line << std::endl; }

/// What the command line holds besides the scene settings it shares with the scene file.
struct CorotCommandOptions {
  std::string scene_file;
  MeshSourceOptions mesh;
  std::string method;
  double tau = 0.0;
  std::string budget;
  int frames = 0;
  double time_step = 0.0;
  int steps_per_frame = 0;
  double youngs = 0.0;
  double poisson = 0.0;
  double density = 0.0;
  double rayleigh_alpha = 0.0;
  double rayleigh_beta = 0.0;
  double drop_height = 0.0;
  bool implicit_contact = false;
  std::string out = "corot-out";
  int threads = 0;
  bool json = false;
  RunEndOptions run_end;
};

/// Defaults, then the scene file, then every flag given on the command line.
CorotScene resolve_scene(const CorotCommandOptions& flags, const CLI::App& command) {
  CorotScene scene;
  if (!flags.scene_file.empty()) read_scene_file(flags.scene_file, scene);
  const auto given = [&command](const char* name) { return command.count(name) > 0; };
  if (given("--mesh")) {
    scene.mesh.mesh_file = flags.mesh.mesh_file;
    scene.mesh.builtin.clear();
  }
  if (given("--builtin")) {
    scene.mesh.builtin = flags.mesh.builtin;
    scene.mesh.mesh_file.clear();
  }
  if (given("--resolution")) scene.mesh.resolution = flags.mesh.resolution;
  if (given("--scale")) scene.mesh.scale = flags.mesh.scale;
  if (given("--tetgen-switches")) scene.mesh.tetgen_switches = flags.mesh.tetgen_switches;
  scene.mesh.max_memory = flags.mesh.max_memory;
  if (given("--method")) scene.method = parse_method(flags.method, "--method");
  if (given("--tau")) scene.tau = flags.tau;
  if (given("--budget")) parse_budget(flags.budget, "--budget", scene);
  if (given("--frames")) scene.frames = flags.frames;
  if (given("--dt")) scene.time_step = flags.time_step;
  if (given("--steps-per-frame")) scene.steps_per_frame = flags.steps_per_frame;
  if (given("--youngs")) scene.material.youngs_modulus = flags.youngs;
  if (given("--poisson")) scene.material.poisson_ratio = flags.poisson;
  if (given("--density")) scene.material.density = flags.density;
  if (given("--rayleigh-alpha")) scene.rayleigh_alpha = flags.rayleigh_alpha;
  if (given("--rayleigh-beta")) scene.rayleigh_beta = flags.rayleigh_beta;
  if (given("--drop-height")) scene.drop_height = flags.drop_height;
  if (given("--implicit-contact")) scene.implicit_contact = true;
  return scene;
}

/// The Table II rows (seed 000 §5.2), in the order of the paper, with their CSV/JSON keys.
struct TimingRow {
  const char* key;
  const char* label;
  double fem::StepTimings::*seconds;
};
constexpr TimingRow timing_rows[] = {
    {"element_rotations_s", "element rotations", &fem::StepTimings::element_rotations},
    {"node_rotations_s", "node rotations", &fem::StepTimings::node_rotations},
    {"error_estimation_s", "error estimation", &fem::StepTimings::error_estimation},
    {"matrix_update_s", "matrix update", &fem::StepTimings::matrix_update},
    {"factor_update_s", "Cholesky update", &fem::StepTimings::factor_update},
    {"rhs_s", "right-hand side", &fem::StepTimings::right_hand_side},
    {"solve_s", "solve", &fem::StepTimings::solve},
    {"collisions_s", "collisions", &fem::StepTimings::collisions},
    {"step_total_s", "step total", &fem::StepTimings::total},
};

/// The per-frame CSV, rewritten after every frame like the .pvd so a stopped run keeps it.
class TimingTable {
 public:
  explicit TimingTable(OutputFolder& folder) : folder_(&folder) {
    text_ << "frame,time_s";
    for (const TimingRow& row : timing_rows) text_ << ',' << row.key;
    text_ << ",frame_total_s,updated_elements,updated_supernodes,recomputed_flop_fraction,cg_iterations,"
             "max_element_error,damped_elements,contact_nodes\n";
  }

  void add(int frame, double time, const fem::StepStatistics& step, double frame_seconds) {
    text_ << frame << ',' << time;
    for (const TimingRow& row : timing_rows) text_ << ',' << step.timings.*row.seconds;
    text_ << ',' << frame_seconds << ',' << step.updated_elements << ',' << step.updated_supernodes << ','
          << step.recomputed_flop_fraction << ',' << step.cg_iterations << ',' << step.max_element_error << ','
          << step.damped_elements << ',' << step.contact_nodes << '\n';
    folder_->write(file_name, text_.str());
  }

  [[nodiscard]] std::filesystem::path path() const { return folder_->path() / file_name; }

 private:
  static constexpr const char* file_name = "timings.csv";
  OutputFolder* folder_;
  std::ostringstream text_;
};

/// Sums over the simulated frames, for the means the summary reports.
struct RunTotals {
  fem::StepTimings timings;
  double frame_seconds = 0.0;  ///< step + output
  double output_seconds = 0.0;
  double updated_elements = 0.0;
  double updated_supernodes = 0.0;
  double recomputed_flop_fraction = 0.0;
  std::int64_t cg_iterations = 0;
  std::int64_t max_cg_iterations = 0;
  double max_element_error = 0.0;
  int frames = 0;

  void add(const fem::StepStatistics& step, double frame, double output) {
    for (const TimingRow& row : timing_rows) timings.*row.seconds += step.timings.*row.seconds;
    frame_seconds += frame;
    output_seconds += output;
    updated_elements += static_cast<double>(step.updated_elements);
    updated_supernodes += static_cast<double>(step.updated_supernodes);
    recomputed_flop_fraction += step.recomputed_flop_fraction;
    cg_iterations += step.cg_iterations;
    max_cg_iterations = std::max(max_cg_iterations, step.cg_iterations);
    max_element_error = std::max(max_element_error, step.max_element_error);
    ++frames;
  }
  [[nodiscard]] double mean(double sum) const { return frames > 0 ? sum / frames : 0.0; }
};

/// The simulation's own numerical failures (a factorization that is not positive definite)
/// arrive as std::runtime_error; they map to exit code 3, unlike output errors.
class SimulationFailure : public NumericalFailure {
 public:
  using NumericalFailure::NumericalFailure;
};

template <typename Work>
auto simulate(Work&& work) {
  try {
    return work();
  } catch (const std::runtime_error& error) {
    throw SimulationFailure(error.what());
  }
}

/// The first non-finite entry of the state, or −1.
std::int64_t first_non_finite(std::span<const double> values) {
  const auto bad = std::find_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); });
  return bad == values.end() ? -1 : static_cast<std::int64_t>(bad - values.begin());
}

/// One frame's steps; SimulationFailure when they fail or leave a non-finite state. The scene
/// was validated when the simulation was set up, so whatever a step throws (a factorization
/// that is not positive definite, a non-finite new velocity) is the numerics failing: exit 3,
/// not bad input.
fem::StepStatistics step_frame(fem::CorotationalSimulation& simulation, int steps_per_frame) {
  fem::StepStatistics step;
  try {
    step = simulation.step();
    for (int more = 1; more < steps_per_frame; ++more) step += simulation.step();
  } catch (const std::runtime_error& error) {
    throw SimulationFailure(error.what());
  } catch (const std::invalid_argument& error) {
    throw SimulationFailure(error.what());
  }
  for (const auto state : {simulation.positions(), simulation.velocities()}) {
    if (const std::int64_t bad = first_non_finite(state); bad >= 0) {
      throw SimulationFailure("the state became non-finite at node " + std::to_string(bad / 3) +
                              "; the step is unstable for this scene (try a smaller --dt, a softer --youngs or "
                              "--method exact)");
    }
  }
  return step;
}

/// Writes the simulation's current state as the next frame of the series; false when the
/// frame would pass the output folder's byte limit (nothing written).
bool write_state(VtuSeriesWriter& writer, const fem::CorotationalSimulation& simulation,
                 std::vector<double>& displacement, std::vector<double>& updated) {
  const std::span<const double> positions = simulation.positions();
  const std::vector<double>& rest = simulation.body().rest.positions;
  for (std::size_t i = 0; i < positions.size(); ++i) displacement[i] = positions[i] - rest[i];
  const auto flags = simulation.element_updated();
  std::transform(flags.begin(), flags.end(), updated.begin(), [](std::uint8_t flag) { return double(flag); });
  const VtkField point_fields[] = {{"velocity", 3, simulation.velocities()}, {"displacement", 3, displacement}};
  const VtkField cell_fields[] = {{"stale_error", 1, simulation.element_errors()},
                                   {"badness", 1, simulation.element_badness()},
                                   {"updated", 1, updated}};
  return writer.write_frame(simulation.time(), positions, simulation.body().rest.tets, point_fields, cell_fields);
}

void add_mesh_section(Report& report, const LoadedMesh& loaded) {
  const auto box = fem::bounding_box(loaded.mesh.positions);
  report.section("mesh");
  report.add_text("mesh_source", "source", loaded.source);
  if (!loaded.tetgen_command.empty()) report.add_text("tetgen_command", "tetgen command", loaded.tetgen_command);
  report.add_count("nodes", "nodes", loaded.check.node_count);
  report.add_count("tets", "tets", loaded.check.tet_count);
  report.add_count("boundary_triangles", "boundary triangles", loaded.check.boundary_triangles);
  report.add_real("volume_m3", "volume (m^3)", loaded.check.total_volume);
  const std::vector<double> size = {box[3] - box[0], box[4] - box[1], box[5] - box[2]};
  report.add("size_m", "size (m)", size,
             format_fixed(size[0], 3) + " x " + format_fixed(size[1], 3) + " x " + format_fixed(size[2], 3));
  report.add_seconds("mesh_load_s", "load", loaded.seconds);
}

void add_scene_section(Report& report, const CorotScene& scene, const fem::CorotationalOptions& options,
                       const fem::ElasticBody& body) {
  report.section("scene");
  report.add_text("method", "method", method_name(scene.method));
  report.add_real("youngs_modulus", "Young's modulus (Pa)", scene.material.youngs_modulus);
  report.add("poisson_ratio", "Poisson ratio", scene.material.poisson_ratio,
             format_fixed(scene.material.poisson_ratio, 3));
  report.add_real("density", "density (kg/m^3)", scene.material.density);
  if (!scene.regions.empty()) {
    report.add_count("material_regions", "material regions", static_cast<std::int64_t>(scene.regions.size()));
    const auto in_regions = std::count_if(body.element_material.begin(), body.element_material.end(),
                                          [](fem::Index material) { return material != 0; });
    report.add_count("region_elements", "elements in regions", static_cast<std::int64_t>(in_regions));
    const auto [softest, stiffest] = std::minmax_element(
        body.materials.begin(), body.materials.end(),
        [](const fem::Material& a, const fem::Material& b) { return a.youngs_modulus < b.youngs_modulus; });
    const double contrast = stiffest->youngs_modulus / softest->youngs_modulus;
    report.add("stiffness_contrast", "stiffness contrast (E max / min)", contrast, format_fixed(contrast, 1));
  }
  report.add_real("dt", "time step (s)", scene.time_step);
  report.add_count("steps_per_frame", "steps per frame", scene.steps_per_frame);
  report.add_count("frames", "frames", scene.frames);
  report.add_count("obstacles", "obstacles", static_cast<std::int64_t>(options.obstacles.size()));
  report.add_text("contact", "contact springs", options.contact.implicit ? "implicit" : "explicit");
  if (scene.method == fem::CorotationalMethod::warp_canceling) {
    report.add_real("tau", "tau", scene.tau);
    if (scene.budget_fraction) {
      report.add("budget_fraction", "budget (of a full factorization)", *scene.budget_fraction,
                 format_fixed(*scene.budget_fraction, 3));
    }
    if (scene.budget_seconds) report.add_seconds("budget_s", "budget", *scene.budget_seconds);
  }
}

/// Where the body ended up: what shows at a glance whether a scene did what it should (the
/// sheet draped, the squashed body stood up again, nothing sank through the ground).
void add_final_state_section(Report& report, const fem::CorotationalSimulation& simulation) {
  const std::span<const double> positions = simulation.positions();
  const std::span<const double> velocities = simulation.velocities();
  const std::vector<double>& rest = simulation.body().rest.positions;
  double lowest = std::numeric_limits<double>::infinity();
  double highest = -lowest;
  double largest_displacement = 0.0;
  double largest_speed = 0.0;
  for (std::size_t node = 0; node < positions.size() / 3; ++node) {
    const fem::Vec3 x{positions[3 * node], positions[3 * node + 1], positions[3 * node + 2]};
    const fem::Vec3 u = x - fem::Vec3{rest[3 * node], rest[3 * node + 1], rest[3 * node + 2]};
    lowest = std::min(lowest, x.y);
    highest = std::max(highest, x.y);
    largest_displacement = std::max(largest_displacement, linalg::norm(u));
    largest_speed = std::max(largest_speed, linalg::norm(fem::Vec3{velocities[3 * node], velocities[3 * node + 1],
                                                                    velocities[3 * node + 2]}));
  }
  std::int64_t inverted = 0;
  for (fem::Index e = 0; e < simulation.body().element_count(); ++e) {
    if (linalg::determinant(fem::deformation_gradient(simulation.body(), e, positions)) <= 0.0) ++inverted;
  }
  report.section("final state (t = " + format_fixed(simulation.time(), 3) + " s)");
  report.add_real("lowest_y_m", "lowest point y (m)", lowest);
  report.add_real("highest_y_m", "highest point y (m)", highest);
  report.add_real("max_displacement_m", "largest displacement from rest (m)", largest_displacement);
  report.add_real("max_speed_m_s", "largest node speed (m/s)", largest_speed);
  report.add_count("inverted_elements", "inverted elements (det F <= 0)", inverted);
}

void add_timing_section(Report& report, const RunTotals& totals, const fem::FactorSummary& factor,
                        double setup_seconds) {
  report.section("mean per-frame time (" + std::to_string(totals.frames) + " frames)");
  for (const TimingRow& row : timing_rows) {
    report.add_seconds(row.key, row.label, totals.mean(totals.timings.*row.seconds));
  }
  report.add_seconds("output_s", "output (VTK frame)", totals.mean(totals.output_seconds));
  report.add_seconds("frame_s", "frame", totals.mean(totals.frame_seconds));
  report.add_seconds("setup_s", "setup (analysis, first factorization)", setup_seconds);

  report.section("work per frame (mean)");
  const auto add_mean = [&](const char* key, const char* label, double sum, int decimals) {
    report.add(key, label, totals.mean(sum), format_fixed(totals.mean(sum), decimals));
  };
  add_mean("updated_elements", "updated elements", totals.updated_elements, 1);
  add_mean("updated_supernodes", "updated supernodes", totals.updated_supernodes, 1);
  add_mean("recomputed_flop_fraction", "recomputed flop fraction", totals.recomputed_flop_fraction, 4);
  add_mean("cg_iterations", "CG iterations", static_cast<double>(totals.cg_iterations), 1);
  report.add_count("max_cg_iterations", "max CG iterations", totals.max_cg_iterations);
  report.add_real("max_element_error", "max element error", totals.max_element_error);

  report.section("factor");
  report.add_count("nnz_L", "nnz(L)", factor.nnz_l);
  report.add_count("supernodes", "supernodes", factor.supernodes);
  report.add_bytes("factor_bytes", "factor bytes", factor.factor_bytes);
  report.add_bytes("retained_update_bytes", "retained update bytes", factor.retained_update_bytes);
  report.add_seconds("full_factor_s", "full factorization", factor.full_factor_seconds);
}

int run_corot(const CorotCommandOptions& flags, const CLI::App& command) {
  // From the start, so that a stop requested during a long setup still ends cleanly.
  const InterruptSignals signals;
  const CorotScene scene = resolve_scene(flags, command);
  const std::uint64_t byte_limit = parse_byte_size(flags.run_end.max_output, "--max-output");
  LoadedMesh loaded = load_mesh(scene.mesh, progress);
  if (!loaded.tetgen_command.empty()) progress("ran: " + loaded.tetgen_command);
  for (const std::string& warning : loaded.check.warnings) progress("warning: " + warning);
  place_above_ground(loaded.mesh, scene.drop_height);

  const Clock::time_point setup_start = Clock::now();
  progress("setting up " + method_name(scene.method) + " on " + format_count(loaded.check.tet_count) + " tets...");
  fem::ElasticBody body = make_scene_body(loaded.mesh, scene, loaded.source);
  // Before the factorization: a run that could not save anything fails at once.
  OutputFolder folder(flags.out, byte_limit);
  const fem::CorotationalOptions options = simulation_options(scene, loaded.is_thin_sheet, flags.threads);
  fem::CorotationalSimulation simulation =
      simulate([&] { return fem::CorotationalSimulation(std::move(body), options); });
  if (scene.initial_velocity != fem::Vec3{}) {
    std::vector<double> velocities(simulation.positions().size());
    for (std::size_t i = 0; i < velocities.size(); ++i) velocities[i] = scene.initial_velocity[static_cast<int>(i % 3)];
    const std::vector<double> positions(simulation.positions().begin(), simulation.positions().end());
    simulation.set_state(positions, velocities);
  }
  const double setup_seconds = seconds_since(setup_start);

  VtuSeriesWriter writer(folder, "corot");
  TimingTable table(folder);
  RunMonitor monitor("cholsim corot", flags.run_end, signals,
                     fem::SimulationHealth(simulation.body(), options.gravity, options.obstacles,
                                           simulation.velocities()));
  std::vector<double> displacement(simulation.positions().size());
  std::vector<double> updated(static_cast<std::size_t>(simulation.body().element_count()));
  if (!write_state(writer, simulation, displacement, updated)) monitor.stop_at_output_limit(byte_limit, 0);

  RunTotals totals;
  for (int frame = 1; frame <= scene.frames && monitor.keep_going(); ++frame) {
    const Clock::time_point frame_start = Clock::now();
    fem::StepStatistics step;
    try {
      step = step_frame(simulation, scene.steps_per_frame);
    } catch (const SimulationFailure& error) {
      monitor.stop_on_failure(frame, error.what());
      break;
    }
    monitor.check({frame, simulation.time(), simulation.positions(), simulation.velocities(), step.cg_converged});
    const Clock::time_point output_start = Clock::now();
    if (!write_state(writer, simulation, displacement, updated)) {
      monitor.stop_at_output_limit(byte_limit, writer.frames_written());
      break;
    }
    const double output_seconds = seconds_since(output_start);
    const double frame_seconds = seconds_since(frame_start);
    table.add(frame, simulation.time(), step, frame_seconds);
    totals.add(step, frame_seconds, output_seconds);
    progress("frame " + std::to_string(frame) + "/" + std::to_string(scene.frames) + "  " +
             format_fixed(1e3 * step.timings.total / scene.steps_per_frame, 1) + " ms/step, " +
             format_fixed(1e3 * frame_seconds, 1) + " ms/frame");
  }

  Report report;
  add_mesh_section(report, loaded);
  add_scene_section(report, scene, options, simulation.body());
  add_timing_section(report, totals, simulation.factor_summary(), setup_seconds);
  add_final_state_section(report, simulation);
  report.section("output");
  report.add_text("pvd", "collection", writer.pvd_path().string());
  report.add_count("vtu_files", "frames written", writer.frames_written());
  report.add_text("timings_csv", "per-frame timings", table.path().string());
  const std::filesystem::path summary = folder.path() / "summary.json";
  report.add_text("summary_json", "summary", summary.string());
  monitor.add_section(report);
  publish_summary(report, folder, summary.filename().string(), flags.json);
  return monitor.exit_code();
}

int run_corot_command(const CorotCommandOptions& flags, const CLI::App& command) {
  return run_reporting_errors("corot", [&] { return run_corot(flags, command); });
}

}  // namespace
}  // namespace corot_command

void add_corot_command(CLI::App& app, CommandAction& action) {
  auto flags = std::make_shared<corot_command::CorotCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "corot", "Corotational elastodynamics (seed 000): drop a model on the ground; write VTK frames and timings");
  command->footer(
      "Without arguments: the bundled bunny (or a box) dropped from 0.3 m, warp-canceling with tau = 5e-3,\n"
      "120 frames of 1/60 s. Flags override --scene FILE.json (keys: see apps/corot_scene.hpp).\n"
      "Output in --out: corot.pvd + corot_NNNN.vtu (frame 0 = initial state; point data velocity,\n"
      "displacement; cell data stale_error, badness, updated), timings.csv, summary.json.\n"
      "Exit codes: 0 ok, 2 bad input (file:line reported) or unwritable output, 3 the simulation failed\n"
      "numerically (non-finite state, or a factorization that is not positive definite).\n" +
      run_end_help());

  command->add_option("--scene", flags->scene_file, "JSON scene file (mesh, material, method, obstacles, ...)")
      ->check(CLI::ExistingFile);
  add_mesh_source_options(*command, flags->mesh);
  command->add_option("--method", flags->method,
                      "exact (refactor every step), cg (Jacobi-PCG), warping, wc (warp-canceling; default)")
      ->check(CLI::IsMember({"exact", "cg", "warping", "wc"}));
  command->add_option("--tau", flags->tau,
                      "Warp-canceling target quality: update supernodes whose badness exceeds it (default 5e-3)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--budget", flags->budget,
                      "Warp-canceling time budget: a fraction of a full factorization (0.33) or seconds (0.05s)");
  command->add_option("--frames", flags->frames, "Frames written (default 120)")->check(CLI::PositiveNumber);
  command->add_option("--dt", flags->time_step, "Time step in s (default 1/60)")->check(CLI::PositiveNumber);
  command->add_option("--steps-per-frame", flags->steps_per_frame,
                      "Time steps between written frames (default 1; timings are per frame)")
      ->check(CLI::PositiveNumber);
  command->add_option("--youngs", flags->youngs, "Young's modulus E in Pa (default 5e6)")->check(CLI::PositiveNumber);
  command->add_option("--poisson", flags->poisson, "Poisson ratio in (-1, 0.5) (default 0.4)");
  command->add_option("--density", flags->density, "Density in kg/m^3 (default 1000)")->check(CLI::PositiveNumber);
  command->add_option("--rayleigh-alpha", flags->rayleigh_alpha, "Rayleigh mass damping alpha (default 0)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--rayleigh-beta", flags->rayleigh_beta, "Rayleigh stiffness damping beta (default 0)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--drop-height", flags->drop_height,
                      "Height of the model's lowest point above the ground in m (default 0.3)")
      ->check(CLI::NonNegativeNumber);
  command->add_flag("--implicit-contact", flags->implicit_contact,
                    "Contact springs' stiffness in the system matrix too (stable for stiff springs; "
                    "refactors the contact nodes' columns when contacts change)");
  command->add_option("--out", flags->out, "Output folder")->capture_default_str();
  command->add_option("--threads", flags->threads, "Factorization threads (0: all hardware threads)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_flag("--json", flags->json, "Write the summary as one JSON object to stdout");
  add_run_end_options(*command, flags->run_end);

  command->callback([flags, command, &action] {
    action = [flags, command] { return corot_command::run_corot_command(*flags, *command); };
  });
}

}  // namespace cholsim::apps
