// `cholsim pd`: projective dynamics with localized collisions through the Schur complement
// (seed 004, Wang et al. 2020) on its procedural scenes — an arm flexing at the elbow into
// self-contact (§5.1, the default) and lips closing on each other (§5.2). One .vtu per frame
// plus a .pvd for ParaView, a per-phase timing line per frame on stderr (Algorithm 1's local
// step, forward substitution, Schur path, backward substitution, detection), and a summary.
#include "pd_command.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fem/elements/elastic_body.hpp"
#include "fem/health/simulation_health.hpp"
#include "fem/pd/pd_scenes.hpp"
#include "fem/pd/projective_dynamics.hpp"
#include "interrupt_signals.hpp"
#include "output_folder.hpp"
#include "report.hpp"
#include "run_monitor.hpp"
#include "timing.hpp"
#include "vtk_series_writer.hpp"

namespace cholsim::apps {
namespace pd_command {
namespace {

using linalg::Index;

void progress(const std::string& line) { std::cerr << "cholsim pd: " << line << std::endl; }

struct PdCommandOptions {
  std::string scene = "elbow";
  std::string tets = "100k";
  int inner = 3;   ///< J of Algorithm 1 (§5.1: 1, 3 or 5)
  int outer = 1;   ///< PD loops per frame (§5.1: one)
  std::string solver = "schur";
  std::string device = "cpu";
  std::string schur_update = "auto";
  std::string schur_precision = "double";
  int frames = 0;  ///< 0: the scene's scripted motion
  std::string integrator = "quasistatic";
  double time_step = 1.0 / 30.0;
  std::string out = "pd-out";
  int threads = 2;
  bool json = false;
  RunEndOptions run_end;
};

/// --tets 50k | 100k | 250k | 650k | a plain count (10k to 5M: below 10K tets the bones no longer sit inside the flesh).
Index parse_tet_count(const std::string& text) {
  std::string digits = text;
  double scale = 1.0;
  if (!digits.empty() && (digits.back() == 'k' || digits.back() == 'K')) {
    scale = 1e3;
    digits.pop_back();
  } else if (!digits.empty() && (digits.back() == 'm' || digits.back() == 'M')) {
    scale = 1e6;
    digits.pop_back();
  }
  double value = -1.0;
  try {
    std::size_t used = 0;
    value = std::stod(digits, &used) * scale;
    if (used != digits.size()) value = -1.0;
  } catch (const std::exception&) {
    value = -1.0;
  }
  if (!(value >= 10000.0 && value <= 5e6)) {
    throw BadInputError("--tets " + text + ": expected a count from 10k to 5M such as 50k, 100k, 250k or 650k");
  }
  return static_cast<Index>(std::llround(value));
}

/// Per-frame figures summed over the run.
struct RunTotals {
  fem::PdPhaseTimes times;
  double output_seconds = 0.0;
  std::int64_t cg_iterations = 0;
  Index reanalyses = 0;
  Index low_rank_solves = 0;
  Index inner_solves = 0;
  Index most_springs = 0;
  double deepest = 0.0;
  int frames = 0;

  void add(const fem::PdFrameStats& frame, double output) {
    times.local_step += frame.times.local_step;
    times.right_hand_side += frame.times.right_hand_side;
    times.forward += frame.times.forward;
    times.detection += frame.times.detection;
    times.schur += frame.times.schur;
    times.backward += frame.times.backward;
    times.full_solve += frame.times.full_solve;
    times.total += frame.times.total;
    output_seconds += output;
    cg_iterations += frame.cg_iterations;
    reanalyses += frame.reanalyses;
    low_rank_solves += frame.low_rank_solves;
    inner_solves += frame.inner_iterations;
    most_springs = std::max(most_springs, frame.active_springs);
    deepest = std::max(deepest, frame.detection.deepest_penetration);
    ++frames;
  }
  [[nodiscard]] double mean(double sum) const { return frames > 0 ? sum / frames : 0.0; }
};

/// The fields ParaView shows: point displacement, collision-prone flag and proxy depth (the
/// deepest proxy embedded on the node), cell strain (largest |σ − 1|) and E_c flag.
class FrameFields {
 public:
  explicit FrameFields(const fem::PdSimulation& simulation) : simulation_(&simulation) {}

  /// Writes the current frame; the fields follow the simulation's scene, which an excision
  /// replaces by a cut copy with fewer nodes and tets.
  bool write(VtuSeriesWriter& writer) {
    const fem::PdScene& scene = simulation_->scene();
    const auto nodes = static_cast<std::size_t>(scene.mesh.node_count());
    const auto tets = static_cast<std::size_t>(scene.mesh.tet_count());
    prone_node_.assign(nodes, 0.0);
    for (Index node : simulation_->prone_nodes()) prone_node_[static_cast<std::size_t>(node)] = 1.0;
    prone_cell_.assign(tets, 0.0);
    for (Index tet : simulation_->prone_elements()) prone_cell_[static_cast<std::size_t>(tet)] = 1.0;
    const auto positions = simulation_->positions();
    displacement_.resize(3 * nodes);
    for (std::size_t i = 0; i < displacement_.size(); ++i) displacement_[i] = positions[i] - scene.mesh.positions[i];
    depth_.assign(nodes, 0.0);
    const auto depths = simulation_->proxy_depths();
    for (std::size_t p = 0; p < scene.proxies.size(); ++p) {
      const fem::EmbeddedPoint& proxy = scene.proxies[p];
      for (std::size_t i = 0; i < 4; ++i) {
        if (proxy.weights[i] <= 0.0) continue;
        const auto node = static_cast<std::size_t>(scene.mesh.tets[static_cast<std::size_t>(4 * proxy.tet) + i]);
        depth_[node] = std::max(depth_[node], depths[p]);
      }
    }
    strain_.resize(tets);
    for (Index tet = 0; tet < scene.mesh.tet_count(); ++tet) {
      strain_[static_cast<std::size_t>(tet)] = simulation_->model().strain_measure(positions, tet);
    }
    const VtkField point_fields[] = {{"displacement", 3, displacement_},
                                     {"collision_prone", 1, prone_node_},
                                     {"proxy_depth", 1, depth_}};
    const VtkField cell_fields[] = {{"strain", 1, strain_}, {"collision_prone", 1, prone_cell_}};
    return writer.write_frame(simulation_->frame(), positions, scene.mesh.tets, point_fields, cell_fields);
  }

 private:
  const fem::PdSimulation* simulation_;
  std::vector<double> prone_node_, prone_cell_, displacement_, depth_, strain_;
};

std::string frame_line(const fem::PdFrameStats& frame, int frames, fem::PdSolver solver) {
  const auto ms = [](double s) { return format_fixed(1e3 * s, 1); };
  const fem::PdPhaseTimes& t = frame.times;
  std::string line = "frame " + std::to_string(frame.frame) + "/" + std::to_string(frames) + "  " + ms(t.total) +
                     " ms: local " + ms(t.local_step) + ", detect " + ms(t.detection);
  if (solver == fem::PdSolver::schur) {
    line += ", forward " + ms(t.forward) + ", schur " + ms(t.schur) + ", backward " + ms(t.backward);
  } else {
    line += ", solve " + ms(t.full_solve);
    if (frame.cg_iterations > 0) line += " (" + std::to_string(frame.cg_iterations) + " CG it.)";
  }
  line += "; " + std::to_string(frame.active_springs) + " springs (" +
          std::to_string(frame.detection.bilateral_contacts) + " bilateral), deepest " +
          format_fixed(1e3 * frame.detection.deepest_penetration, 2) + " mm";
  return line;
}

constexpr const char* summary_file_name = "summary.json";

void add_report_sections(Report& report, const PdCommandOptions& flags, const fem::PdScene& scene,
                         const fem::PdSimulation& simulation, const RunTotals& totals, const VtuSeriesWriter& writer,
                         double scene_seconds) {
  const fem::PdSetupStats& setup = simulation.setup();
  report.section("scene");
  report.add_text("scene", "scene", scene.name);
  report.add_count("nodes", "nodes", setup.nodes);
  report.add_count("tets", "tets", setup.elements);
  report.add_count("proxies", "collision proxies", static_cast<std::int64_t>(scene.proxies.size()));
  report.add_count("attachments", "bone attachments", static_cast<std::int64_t>(scene.attachments.size()));
  report.add_count("fixed_nodes", "fixed nodes", static_cast<std::int64_t>(scene.fixed_nodes.size()));
  report.add_real("shear_modulus", "shear modulus (Pa)", scene.shear_modulus);
  report.add_text("integrator", "integrator", flags.integrator);
  report.add_seconds("scene_s", "scene build", scene_seconds);

  report.section("partition and factorization (once)");
  report.add_count("prone_elements", "collision-prone tets |E_c|", setup.prone_elements);
  report.add_count("prone_nodes", "collision-prone nodes |N_c| = m", setup.prone_nodes);
  report.add("prone_fraction", "collision-prone share of nodes",
             static_cast<double>(setup.prone_nodes) / static_cast<double>(std::max<Index>(setup.nodes, 1)),
             format_fixed(100.0 * static_cast<double>(setup.prone_nodes) / static_cast<double>(std::max<Index>(setup.nodes, 1)), 2) + " %");
  report.add_text("solver", "solver", flags.solver);
  report.add_count("nnz_K_lower", "nnz(K) lower", setup.matrix_nnz_lower);
  report.add_count("nnz_L", "nnz(L)", setup.nnz_l);
  if (setup.prone_nodes > 0 && flags.solver == "schur") {
    report.add("fill_increase", "nnz(L) increase of the constrained order", setup.fill_increase,
               "+" + format_fixed(100.0 * setup.fill_increase, 1) + " %");
  }
  report.add_seconds("assemble_s", "assembly", setup.assemble_seconds);
  report.add_seconds("analyze_s", "analysis", setup.analyze_seconds);
  report.add_seconds("factorize_s", "factorization", setup.factorize_seconds);
  report.add_seconds("collision_setup_s", "collision setup (BVH, rest distance field)", setup.collision_setup_seconds);
  if (!setup.device_note.empty()) report.add_text("device_note", "device", setup.device_note);

  report.section("mean per-frame time (" + std::to_string(totals.frames) + " frames, " + std::to_string(flags.outer) +
                 " outer x " + std::to_string(flags.inner) + " inner)");
  report.add_seconds("local_s", "local step", totals.mean(totals.times.local_step));
  report.add_seconds("rhs_s", "right-hand side", totals.mean(totals.times.right_hand_side));
  report.add_seconds("detection_s", "collision detection", totals.mean(totals.times.detection));
  report.add_seconds("forward_s", "forward substitution", totals.mean(totals.times.forward));
  report.add_seconds("schur_s", "Schur path (dS, potrf, potrs)", totals.mean(totals.times.schur));
  report.add_seconds("backward_s", "backward substitution", totals.mean(totals.times.backward));
  report.add_seconds("full_solve_s", "whole polluted solve (baselines)", totals.mean(totals.times.full_solve));
  report.add_seconds("frame_s", "frame total", totals.mean(totals.times.total));
  report.add_seconds("output_s", "output (VTK)", totals.mean(totals.output_seconds));

  report.section("result");
  report.add_count("most_springs", "most active collision springs", totals.most_springs);
  report.add_real("deepest_mm", "deepest proxy penetration (mm)", 1e3 * totals.deepest);
  if (totals.cg_iterations > 0) report.add_count("cg_iterations", "CG iterations (all frames)", totals.cg_iterations);
  if (flags.solver == "schur") {
    report.add_count("low_rank_solves", "inner solves by the Woodbury route", totals.low_rank_solves);
    report.add_count("dense_solves", "inner solves by dense refactorization", totals.inner_solves - totals.low_rank_solves);
  }
  if (totals.reanalyses > 0) report.add_count("reanalyses", "sparse re-analyses (all frames)", totals.reanalyses);

  report.section("output");
  report.add_text("pvd", "collection", writer.pvd_path().string());
  report.add_count("vtu_files", "frames written", writer.frames_written());
  report.add_text("summary_json", "summary", (writer.directory() / summary_file_name).string());
}

int run_pd(const PdCommandOptions& flags) {
  const InterruptSignals signals;
  const std::uint64_t byte_limit = parse_byte_size(flags.run_end.max_output, "--max-output");
  const Index target_tets = parse_tet_count(flags.tets);
  fem::PdOptions options;
  options.solver = fem::parse_pd_solver(flags.solver);
  options.device = factor::parse_schur_device(flags.device);
  options.schur_update = flags.schur_update == "dense"      ? fem::PdSchurUpdate::dense
                         : flags.schur_update == "low-rank" ? fem::PdSchurUpdate::low_rank
                                                            : fem::PdSchurUpdate::automatic;
  options.schur_precision =
      flags.schur_precision == "double" ? factor::SchurPrecision::double_precision : factor::SchurPrecision::mixed;
  options.inner_iterations = flags.inner;
  options.outer_iterations = flags.outer;
  options.model.threads = flags.threads;
  options.model.time_step = flags.time_step;
  options.model.integrator =
      flags.integrator == "backward-euler" ? fem::PdIntegrator::backward_euler : fem::PdIntegrator::quasistatic;

  progress("building the " + flags.scene + " scene at about " + format_count(target_tets) + " tets...");
  Clock::time_point start = Clock::now();
  const fem::PdScene scene = fem::make_pd_scene(flags.scene, target_tets);
  const double scene_seconds = seconds_since(start);
  const int frames = flags.frames > 0 ? flags.frames : scene.default_frames;
  OutputFolder folder(flags.out, byte_limit);
  progress(format_count(scene.mesh.tet_count()) + " tets, " + format_count(scene.mesh.node_count()) + " nodes, " +
           format_count(static_cast<std::int64_t>(scene.proxies.size())) + " proxies; partitioning and factoring K (" +
           flags.solver + ")...");
  fem::PdSimulation simulation(scene, options);
  const fem::PdSetupStats& setup = simulation.setup();
  progress("|N_c| = " + format_count(setup.prone_nodes) + " collision-prone nodes, factored in " +
           format_fixed(setup.analyze_seconds + setup.factorize_seconds, 2) + " s");
  if (!setup.device_note.empty()) progress(setup.device_note);

  // Health: the material only serves the inversion check; nothing here has gravity.
  fem::Material material;
  material.youngs_modulus = 2.0 * scene.shear_modulus * 1.3;
  material.poisson_ratio = 0.3;
  material.density = scene.density;
  auto body = std::make_unique<fem::ElasticBody>(fem::make_elastic_body(scene.mesh, material, scene.name));
  RunMonitor monitor("cholsim pd", flags.run_end, signals,
                     fem::SimulationHealth(*body, fem::Vec3{}, scene.obstacles, simulation.velocities()));
  VtuSeriesWriter writer(folder, "pd");
  FrameFields fields(simulation);
  if (!fields.write(writer)) monitor.stop_at_output_limit(byte_limit, 0);
  RunTotals totals;
  for (int frame = 1; frame <= frames && monitor.keep_going(); ++frame) {
    const fem::PdFrameStats stats = simulation.step();
    if (stats.excised) {
      auto cut = std::make_unique<fem::ElasticBody>(
          fem::make_elastic_body(simulation.scene().mesh, material, scene.name + " after the excision"));
      monitor.change_body(fem::SimulationHealth(*cut, fem::Vec3{}, scene.obstacles, simulation.velocities()));
      body = std::move(cut);
    }
    monitor.check({frame, static_cast<double>(frame) * flags.time_step, simulation.positions(),
                   simulation.velocities()});
    start = Clock::now();
    if (!fields.write(writer)) {
      monitor.stop_at_output_limit(byte_limit, writer.frames_written());
      break;
    }
    totals.add(stats, seconds_since(start));
    if (stats.excised) {
      progress("excision: " + format_count(simulation.scene().mesh.tet_count()) + " tets remain; K assembled, analysed and " +
               "factored again in " + format_fixed(stats.excision_seconds, 2) + " s");
    }
    progress(frame_line(stats, frames, options.solver));
  }

  Report report;
  add_report_sections(report, flags, scene, simulation, totals, writer, scene_seconds);
  monitor.add_section(report);
  publish_summary(report, folder, summary_file_name, flags.json);
  return monitor.exit_code();
}

int run_pd_command(const PdCommandOptions& flags) {
  return run_reporting_errors("pd", [&] { return run_pd(flags); });
}

}  // namespace
}  // namespace pd_command

void add_pd_command(CLI::App& app, CommandAction& action) {
  auto flags = std::make_shared<pd_command::PdCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "pd", "Projective dynamics with localized collisions through the Schur complement (seed 004); VTK frames, timings");
  command->footer(
      "Without arguments: the elbow scene at 100K tets, an arm whose forearm bone turns 2.5 degrees a frame\n"
      "until the elbow folds into self-contact, quasistatic, one outer and three inner iterations per frame\n"
      "(Algorithm 1), the Schur path on the CPU. Output in --out: pd.pvd + pd_NNNN.vtu (point data\n"
      "displacement, collision_prone, proxy_depth; cell data strain = max |sigma - 1|, collision_prone),\n"
      "summary.json. A line per frame on stderr gives the time of each phase.\n"
      "Exit codes: 0 ok, 2 bad input or unwritable output, 3 the state became non-finite.\n" +
      run_end_help());
  command->add_option("--scene", flags->scene, "Scene: elbow (self-contact at the inner elbow), lips (lip on lip) or surgery (a cleft lip on the teeth arch, excised and sutured)")
      ->check(CLI::IsMember({"elbow", "lips", "surgery"}))
      ->capture_default_str();
  command->add_option("--tets", flags->tets, "Mesh size: 50k, 100k, 250k, 650k or a count")->capture_default_str();
  command->add_option("--inner", flags->inner, "Inner iterations J per outer iteration (seed 004: 1, 3, 5)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--outer", flags->outer, "Outer PD iterations per frame")->check(CLI::PositiveNumber)->capture_default_str();
  command->add_option("--solver", flags->solver,
                      "Global step: schur (partial factorization + dense Schur updates), full (sparse refactor), "
                      "pcg (Jacobi-PCG), factor-pcg (CG preconditioned by the collision-free factor)")
      ->check(CLI::IsMember({"schur", "full", "pcg", "factor-pcg"}))
      ->capture_default_str();
  command->add_option("--device", flags->device, "Where the dense Schur path runs: cpu or gpu (falls back to cpu)")
      ->check(CLI::IsMember({"cpu", "gpu"}))
      ->capture_default_str();
  command->add_option("--schur-update", flags->schur_update,
                      "How an inner iteration solves S + W C W^T: dense (refactor, seed 004), low-rank (Woodbury "
                      "with S^-1 computed once; CPU), auto (low-rank below 0.85m springs for m Schur unknowns, the measured crossover)")
      ->check(CLI::IsMember({"auto", "dense", "low-rank"}))
      ->capture_default_str();
  command->add_option("--schur-precision", flags->schur_precision,
                      "The dense refactorization on the CPU: double, or mixed (single-precision factor refined in double; "
                      "falls back to double where the refinement stalls)")
      ->check(CLI::IsMember({"mixed", "double"}))
      ->capture_default_str();
  command->add_option("--frames", flags->frames, "Frames (0: the scene's scripted motion)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--integrator", flags->integrator, "quasistatic (seed 004) or backward-euler")
      ->check(CLI::IsMember({"quasistatic", "backward-euler"}))
      ->capture_default_str();
  command->add_option("--dt", flags->time_step, "Time step in s (backward Euler)")->check(CLI::PositiveNumber)->capture_default_str();
  command->add_option("--out", flags->out, "Output folder")->capture_default_str();
  command->add_option("--threads", flags->threads, "Threads for element loops and the factorization")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_flag("--json", flags->json, "Write the summary as one JSON object to stdout");
  add_run_end_options(*command, flags->run_end);
  command->callback([flags, &action] { action = [flags] { return pd_command::run_pd_command(*flags); }; });
}

}  // namespace cholsim::apps
