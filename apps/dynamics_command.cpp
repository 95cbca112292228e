// `cholsim dynamics`: nonlinear hyperelastic dynamics with Newton and quasi-Newton solvers on
// fresh, frozen, extrapolated (L + h·L̇) or incrementally refactorized Cholesky factors — the
// scenes of seed 002 §5.5 (BAR, ARMADILLO, BUNNY). One .vtu per step plus a .pvd for ParaView
// (displacement, velocity, energy density, clamped eigenvalues), a CSV of per-step solver work,
// and a summary with the split of the time between factorizations, solves and element work.
#include "dynamics_command.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fem/contact/contact_potential.hpp"
#include "fem/dynamics/dynamics_scenes.hpp"
#include "fem/health/simulation_health.hpp"
#include "interrupt_signals.hpp"
#include "mesh_source.hpp"
#include "output_folder.hpp"
#include "report.hpp"
#include "run_monitor.hpp"
#include "timing.hpp"
#include "vtk_series_writer.hpp"

namespace cholsim::apps {
namespace dynamics_command {
namespace {

using linalg::Index;

void progress(const std::string& line) { std::cerr << "cholsim dynamics: " << line << std::endl; }

struct DynamicsCommandOptions {
  std::string scene = "bar";
  double resolution = 0.5;
  std::string solver = "hybrid-r";
  std::string integrator;  ///< empty: the scene's
  std::string material;    ///< empty: the scene's (snh)
  double youngs = 0.0;     ///< 0: the scene's
  double poisson = 0.0;    ///< 0: the scene's
  double damping = -1.0;   ///< < 0: the scene's
  double time_step = 0.0;  ///< 0: the scene's
  bool heterogeneous = false;
  bool anisotropic = false;
  bool analytic_rate = false;
  int bodies = 50;
  int frames = 0;          ///< 0: the scene's duration
  int refactor_every = 1;
  double refactor_tolerance = 0.05;
  double refresh_ratio = 0.5;
  int quasi_newton_iterations = 40;
  std::string out = "dynamics-out";
  int threads = 2;
  bool json = false;
  RunEndOptions run_end;
};

fem::DynamicsSceneOptions scene_options(const DynamicsCommandOptions& flags) {
  fem::DynamicsSceneOptions options;
  options.kind = fem::parse_scene(flags.scene);
  options.resolution = flags.resolution;
  if (flags.youngs != 0.0) options.youngs_modulus = flags.youngs;
  if (flags.poisson != 0.0) options.poisson_ratio = flags.poisson;
  if (!flags.material.empty()) options.model = fem::parse_model(flags.material);
  if (flags.damping >= 0.0) options.damping = flags.damping;
  if (flags.time_step != 0.0) options.time_step = flags.time_step;
  if (!flags.integrator.empty()) options.integrator = solvers::parse_integrator(flags.integrator);
  options.heterogeneous = flags.heterogeneous;
  options.anisotropic = flags.anisotropic;
  options.body_count = flags.bodies;
  const std::string bunny = find_bundled_mesh("bunny.obj");
  if (!bunny.empty()) options.mesh_directory = std::filesystem::path(bunny).parent_path();
  options.threads = flags.threads;
  return options;
}

/// Per-step solver work, summed over the run and kept per step for the CSV.
struct RunTotals {
  std::ostringstream csv;
  solvers::NewtonStatistics sum;
  int steps = 0;
  int unconverged_solves = 0;
  int solves = 0;
  double step_seconds = 0.0;
  double output_seconds = 0.0;
  double refactorized_fraction_sum = 0.0;
  int max_iterations = 0;
  std::string first_failure;  ///< the first unconverged solve: its step and why

  RunTotals() {
    csv << "step,time,solves,iterations,quasi_newton_iterations,newton_iterations,pcg_iterations,factorizations,"
           "derivative_factorizations,refactorizations,refactorized_flop_fraction,failed_line_searches,converged,"
           "clamped_elements,inverted_elements,step_seconds\n";
  }

  void add(const solvers::IntegratorStepStatistics& step, const fem::ElasticSystemStatistics& system, double output) {
    solvers::NewtonStatistics s;
    double fraction = 0.0;
    for (const solvers::NewtonStatistics& solve : step.solves) {
      s.iterations += solve.iterations;
      s.quasi_newton_iterations += solve.quasi_newton_iterations;
      s.newton_iterations += solve.newton_iterations;
      s.pcg_iterations += solve.pcg_iterations;
      s.factorizations += solve.factorizations;
      s.derivative_factorizations += solve.derivative_factorizations;
      s.refactorizations += solve.refactorizations;
      s.failed_line_searches += solve.failed_line_searches;
      s.factor_seconds += solve.factor_seconds;
      s.solve_seconds += solve.solve_seconds;
      s.assembly_seconds += solve.assembly_seconds;
      s.evaluation_seconds += solve.evaluation_seconds;
      fraction += solve.refactorized_flop_fraction * solve.refactorizations;
      if (!solve.converged) {
        ++unconverged_solves;
        if (first_failure.empty()) {
          first_failure = "step " + std::to_string(steps + 1) + ": " +
                          (solve.failure.empty() ? "iteration limit or line search" : solve.failure);
        }
      }
      ++solves;
    }
    const double step_fraction = s.refactorizations > 0 ? fraction / s.refactorizations : 0.0;
    ++steps;
    csv << steps << ',' << step.time << ',' << step.solves.size() << ',' << s.iterations << ','
        << s.quasi_newton_iterations << ',' << s.newton_iterations << ',' << s.pcg_iterations << ','
        << s.factorizations << ',' << s.derivative_factorizations << ',' << s.refactorizations << ',' << step_fraction
        << ',' << s.failed_line_searches << ',' << (step.converged ? 1 : 0) << ',' << system.clamped_elements << ','
        << system.inverted_elements << ',' << step.seconds << '\n';
    sum.iterations += s.iterations;
    sum.quasi_newton_iterations += s.quasi_newton_iterations;
    sum.newton_iterations += s.newton_iterations;
    sum.pcg_iterations += s.pcg_iterations;
    sum.factorizations += s.factorizations;
    sum.derivative_factorizations += s.derivative_factorizations;
    sum.refactorizations += s.refactorizations;
    sum.failed_line_searches += s.failed_line_searches;
    sum.factor_seconds += s.factor_seconds;
    sum.solve_seconds += s.solve_seconds;
    sum.assembly_seconds += s.assembly_seconds;
    sum.evaluation_seconds += s.evaluation_seconds;
    refactorized_fraction_sum += fraction;
    max_iterations = std::max(max_iterations, s.iterations);
    step_seconds += step.seconds;
    output_seconds += output;
  }
};

/// The fields of one frame, full-mesh arrays kept between frames.
class FrameFields {
 public:
  FrameFields(fem::ElasticSystem& system, const solvers::TimeIntegrator& integrator)
      : system_(system), integrator_(integrator) {}

  bool write(VtuSeriesWriter& writer) {
    const std::vector<double>& rest = system_.body().rest.positions;
    positions_.resize(rest.size());
    velocities_.resize(rest.size());
    displacement_.resize(rest.size());
    system_.full_positions(integrator_.positions(), positions_);
    system_.full_velocities(integrator_.velocities(), velocities_);
    for (std::size_t i = 0; i < rest.size(); ++i) displacement_[i] = positions_[i] - rest[i];
    energy_density_ = system_.energy_densities(positions_);
    const std::span<const unsigned char> clamped = system_.clamped_eigenvalues();
    clamped_.assign(clamped.begin(), clamped.end());
    const VtkField point_fields[] = {{"displacement", 3, displacement_}, {"velocity", 3, velocities_}};
    const VtkField cell_fields[] = {{"energy_density", 1, energy_density_}, {"clamped_eigenvalues", 1, clamped_}};
    return writer.write_frame(integrator_.time(), positions_, system_.body().rest.tets, point_fields, cell_fields);
  }
  [[nodiscard]] std::span<const double> positions() const { return positions_; }
  [[nodiscard]] std::span<const double> velocities() const { return velocities_; }

 private:
  fem::ElasticSystem& system_;
  const solvers::TimeIntegrator& integrator_;
  std::vector<double> positions_, velocities_, displacement_, energy_density_, clamped_;
};

std::string frame_line(int frame, int frames, const solvers::IntegratorStepStatistics& step) {
  int iterations = 0, factorizations = 0, refactorizations = 0;
  std::int64_t pcg = 0;
  for (const solvers::NewtonStatistics& s : step.solves) {
    iterations += s.iterations;
    factorizations += s.factorizations;
    refactorizations += s.refactorizations;
    pcg += s.pcg_iterations;
  }
  return "step " + std::to_string(frame) + "/" + std::to_string(frames) + "  " + std::to_string(iterations) +
         " iterations, " + std::to_string(pcg) + " PCG, " + std::to_string(factorizations) + " factorizations, " +
         std::to_string(refactorizations) + " refactorizations" + (step.converged ? "" : "  (NOT converged)") + "  " +
         format_fixed(1e3 * step.seconds, 1) + " ms";
}

constexpr const char* summary_file_name = "summary.json";
constexpr const char* steps_file_name = "steps.csv";

void add_report_sections(Report& report, const fem::DynamicsScene& scene, const DynamicsCommandOptions& flags,
                         const RunTotals& totals, const VtuSeriesWriter& writer, double setup_seconds) {
  report.section("scene");
  report.add_text("scene", "scene", scene.description);
  report.add_count("nodes", "nodes", scene.mesh.node_count());
  report.add_count("tets", "tets", scene.mesh.tet_count());
  report.add_text("solver", "solver", flags.solver);
  report.add_text("integrator", "integrator", std::string(solvers::integrator_name(scene.integrator)));
  report.add_real("dt", "time step (s)", scene.time_step);
  report.add_count("steps", "steps", totals.steps);
  report.add_seconds("setup_s", "setup (mesh, pattern)", setup_seconds);

  report.section("solver work (all steps)");
  report.add_count("solves", "nonlinear solves", totals.solves);
  report.add_count("unconverged_solves", "solves not converged", totals.unconverged_solves);
  if (!totals.first_failure.empty()) report.add_text("first_failure", "first one", totals.first_failure);
  report.add_count("iterations", "nonlinear iterations", totals.sum.iterations);
  report.add_count("max_iterations_per_step", "most iterations in a step", totals.max_iterations);
  report.add_count("quasi_newton_iterations", "quasi-Newton iterations", totals.sum.quasi_newton_iterations);
  report.add_count("newton_iterations", "Newton iterations", totals.sum.newton_iterations);
  report.add_count("pcg_iterations", "PCG iterations", totals.sum.pcg_iterations);
  report.add_count("factorizations", "full factorizations", totals.sum.factorizations);
  report.add_count("derivative_factorizations", "of which with Ldot", totals.sum.derivative_factorizations);
  report.add_count("refactorizations", "incremental refactorizations", totals.sum.refactorizations);
  const double mean_fraction =
      totals.sum.refactorizations > 0 ? totals.refactorized_fraction_sum / totals.sum.refactorizations : 0.0;
  report.add("refactorized_flop_fraction", "mean refactorized flop share", mean_fraction, format_fixed(mean_fraction, 3));
  report.add_count("failed_line_searches", "failed line searches", totals.sum.failed_line_searches);

  report.section("time (all steps)");
  report.add_seconds("total_s", "stepping", totals.step_seconds);
  report.add_seconds("factor_s", "factorizations (L, Ldot)", totals.sum.factor_seconds);
  report.add_seconds("solve_s", "solves and PCG", totals.sum.solve_seconds);
  report.add_seconds("assembly_s", "Hessian assembly", totals.sum.assembly_seconds);
  report.add_seconds("evaluation_s", "energy and gradient", totals.sum.evaluation_seconds);
  report.add_seconds("output_s", "output (VTK)", totals.output_seconds);

  report.section("output");
  report.add_text("pvd", "collection", writer.pvd_path().string());
  report.add_count("vtu_files", "frames written", writer.frames_written());
  report.add_text("steps_csv", "per-step CSV", (writer.directory() / steps_file_name).string());
  report.add_text("summary_json", "summary", (writer.directory() / summary_file_name).string());
}

int run_dynamics(const DynamicsCommandOptions& flags) {
  const InterruptSignals signals;
  const std::uint64_t byte_limit = parse_byte_size(flags.run_end.max_output, "--max-output");
  const solvers::NewtonMethod method = solvers::parse_method(flags.solver);
  const Clock::time_point setup_start = Clock::now();
  progress("building the " + flags.scene + " scene...");
  fem::DynamicsScene scene = fem::make_dynamics_scene(scene_options(flags));
  scene.system.analytic_hessian_rate = flags.analytic_rate;
  progress(scene.description);
  OutputFolder folder(flags.out, byte_limit);
  std::unique_ptr<fem::ElasticSystem> system = fem::make_scene_system(scene);
  solvers::NewtonOptions newton;
  newton.refactor_every = flags.refactor_every;
  newton.refactor_tolerance = flags.refactor_tolerance;
  newton.refresh_ratio = flags.refresh_ratio;
  newton.quasi_newton_iterations = flags.quasi_newton_iterations;
  newton.threads = flags.threads;
  newton.dofs_per_node = 3;
  solvers::NewtonSolver solver(method, newton);
  solvers::TimeIntegrator integrator(*system, solver, scene.integrator, scene.time_step);
  const std::vector<double> start = system->free_values(scene.mesh.positions);
  integrator.set_state(start, std::vector<double>(start.size(), 0.0));
  const double setup_seconds = seconds_since(setup_start);
  const int frames =
      flags.frames > 0 ? flags.frames : static_cast<int>(std::lround(scene.duration / scene.time_step));

  VtuSeriesWriter writer(folder, "dynamics");
  FrameFields fields(*system, integrator);
  std::vector<fem::Obstacle> obstacles;
  if (scene.contact) obstacles = scene.contact->obstacles;
  if (!fields.write(writer)) progress("the first frame passes --max-output");
  // A driven boundary (the bar's end, the armadillo's platform) supplies energy: the energy
  // check, which assumes nothing in the scene can, is off for those scenes.
  fem::HealthThresholds thresholds;
  if (!scene.system.prescribed.empty()) thresholds.energy_gain_model_sizes = std::numeric_limits<double>::infinity();
  RunMonitor monitor("cholsim dynamics", flags.run_end, signals,
                     fem::SimulationHealth(system->body(), scene.system.gravity, obstacles, fields.velocities(),
                                           thresholds));
  RunTotals totals;
  for (int frame = 1; frame <= frames && monitor.keep_going(); ++frame) {
    const solvers::IntegratorStepStatistics step = integrator.step();
    const Clock::time_point output_start = Clock::now();
    const bool written = fields.write(writer);
    totals.add(step, system->statistics(), seconds_since(output_start));
    monitor.check({frame, integrator.time(), fields.positions(), fields.velocities(), step.converged});
    if (!written) {
      monitor.stop_at_output_limit(byte_limit, writer.frames_written());
      break;
    }
    progress(frame_line(frame, frames, step));
  }

  folder.write(steps_file_name, totals.csv.str());
  Report report;
  add_report_sections(report, scene, flags, totals, writer, setup_seconds);
  monitor.add_section(report);
  publish_summary(report, folder, summary_file_name, flags.json);
  return monitor.exit_code();
}

}  // namespace
}  // namespace dynamics_command

void add_dynamics_command(CLI::App& app, CommandAction& action) {
  auto flags = std::make_shared<dynamics_command::DynamicsCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "dynamics",
      "Nonlinear hyperelastic dynamics (seed 002 ch. 5): Newton / quasi-Newton with fresh, frozen, extrapolated "
      "(L + h Ldot) or incrementally refactorized factors");
  command->footer(
      "Without arguments: the BAR of seed 002 Table 5.2 at half the thesis' resolution (22 x 7 x 7 cells, 6,468 tets;\n"
      "--resolution 1 = 44 x 14 x 14 cells, 10,125 nodes, 51,744 tets), quasistatic, h = 0.05 s, stable Neo-Hookean E = 2e4 Pa,\n"
      "nu = 0.49, under gravity, its far end compressed, stretched, bent and twisted over 5 s, solved by HYBRID-R.\n"
      "Scenes: bar, armadillo (feet on a shaken platform, BDF2), bunny (dropped on the floor, SDIRK2, self-contact),\n"
      "bodies (--bodies small balls dropped into a bowl, SDIRK2, body contact).\n"
      "Solvers: newton-d, newton-i, newton-l0, newton-l1, hybrid-l0, hybrid-l1, newton-r, hybrid-r.\n"
      "Output in --out: dynamics.pvd + dynamics_NNNN.vtu (point data displacement, velocity; cell data\n"
      "energy_density, clamped_eigenvalues = how many the Hessian's definiteness fix set to zero), steps.csv (per-step\n"
      "iterations, PCG iterations, factorizations, refactorized share, time), summary.json.\n"
      "Exit codes: 0 ok, 2 bad input or unwritable output, 3 numerical failure (with --strict: a health warning).\n" +
      run_end_help());
  command->add_option("--scene", flags->scene, "bar, armadillo, bunny or bodies")
      ->check(CLI::IsMember({"bar", "armadillo", "bunny", "bodies"}))
      ->capture_default_str();
  command->add_option("--bodies", flags->bodies, "bodies scene: how many balls (the thesis: 50 and 100)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command->add_option("--resolution", flags->resolution, "Mesh size relative to the thesis' (Table 5.1)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--solver", flags->solver,
                      "newton-d, newton-i, newton-l0, newton-l1, hybrid-l0, hybrid-l1, newton-r or hybrid-r")
      ->capture_default_str();
  command->add_option("--integrator", flags->integrator, "quasistatic, baraff, bdf1, bdf2 or sdirk2 (default: the scene's)");
  command->add_option("--material", flags->material, "snh, stvk, corotated or fixed-corotated (default: snh)");
  command->add_option("--youngs", flags->youngs, "Young's modulus E in Pa (default: the scene's)")->check(CLI::PositiveNumber);
  command->add_option("--poisson", flags->poisson, "Poisson ratio in (-1, 0.5) (default: 0.49)");
  command->add_option("--damping", flags->damping, "Green damping coefficient in s (default: the scene's)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--dt", flags->time_step, "Time step in s (default: the scene's)")->check(CLI::PositiveNumber);
  command->add_flag("--heterogeneous", flags->heterogeneous, "bar: alternating 8e3 / 2e4 Pa bands");
  command->add_flag("--anisotropic", flags->anisotropic, "bar: a 4e4 Pa StVK fibre along the bar");
  command->add_flag("--analytic-rate", flags->analytic_rate,
                    "newton-l1 / hybrid-l1: the Hessian's rate from the materials' analytic derivative instead of a "
                    "forward difference");
  command->add_option("--frames", flags->frames, "Steps (default: the scene's duration)")->check(CLI::PositiveNumber);
  command->add_option("--refactor-every", flags->refactor_every, "Frozen / extrapolated factors: refactor every k solves")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--refactor-tolerance", flags->refactor_tolerance,
                      "newton-r / hybrid-r: relative change (Frobenius) of an element block that triggers its refactorization")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--refresh-ratio", flags->refresh_ratio,
                      "hybrid-r: refactorize (incrementally) when a quasi-Newton iteration reduces the gradient by "
                      "less than this factor and the measured costs say a fresh factor gets there sooner")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  command->add_option("--quasi-newton-iterations", flags->quasi_newton_iterations,
                      "Hybrid solvers: quasi-Newton iterations before switching to Newton (hybrid-r: with one "
                      "factor, before refreshing it)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--out", flags->out, "Output folder")->capture_default_str();
  command->add_option("--threads", flags->threads, "Threads for element loops and the factorization")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_flag("--json", flags->json, "Write the summary as one JSON object to stdout");
  add_run_end_options(*command, flags->run_end);
  command->callback([flags, &action] {
    action = [flags] { return run_reporting_errors("dynamics", [&] { return dynamics_command::run_dynamics(*flags); }); };
  });
}

}  // namespace cholsim::apps
