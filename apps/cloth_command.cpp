// `cholsim cloth`: Lagrangian and Eulerian-on-Lagrangian cloth sliding over sharp edges
// (seed 002 ch. 2), each step a QP solved by our primal-dual active set method from the previous
// step's active rows, or where it does not settle by our interior point method. Writes the cloth and the obstacles as two .pvd series, a per-step
// CSV and a summary with the phase split of Table 2.1.
#include "cloth_command.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fem/cloth/cloth_health.hpp"
#include "fem/cloth/cloth_scenes.hpp"
#include "fem/cloth/eol_mapping.hpp"
#include "interrupt_signals.hpp"
#include "output_folder.hpp"
#include "report.hpp"
#include "timing.hpp"
#include "vtk_series_writer.hpp"

namespace cholsim::apps {
namespace cloth_command {
namespace {

using linalg::Index;
namespace cloth = fem::cloth;

void progress(const std::string& line) { std::cerr << "cholsim cloth: " << line << std::endl; }

struct ClothCommandOptions {
  std::string scene = "edge";
  std::string method = "eol";
  int cells = 0;
  bool cone = false;
  bool consistent_mass = false;
  double friction = -1.0;
  double time_step = 0.0;
  int frames = 0;
  int every = 4;
  std::string qp_backend = "auto";
  bool interior_point_only = false;
  bool lagrangian_first = false;
  std::string out = "cloth-out";
  bool json = false;
  std::string max_output = "2G";
  bool strict = false;
};

/// The obstacles as triangles: 12 per box, a small pyramid per nail tip.
struct ObstacleSurface {
  std::vector<double> positions;
  std::vector<Index> triangles;

  void add_box(const cloth::ClothBox& box, double t) {
    const Index first = static_cast<Index>(positions.size() / 3);
    const linalg::Vec3 c = box.center_at(t);
    for (int corner = 0; corner < 8; ++corner) {
      positions.push_back(c.x + ((corner & 1) ? 1 : -1) * box.half_extents.x);
      positions.push_back(c.y + ((corner & 2) ? 1 : -1) * box.half_extents.y);
      positions.push_back(c.z + ((corner & 4) ? 1 : -1) * box.half_extents.z);
    }
    // Two triangles per face, counter-clockwise seen from outside (corner bits: x 1, y 2, z 4).
    constexpr int faces[6][4] = {{0, 2, 6, 4}, {1, 5, 7, 3}, {0, 4, 5, 1}, {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 6, 7, 5}};
    for (const auto& f : faces) {
      triangles.insert(triangles.end(), {first + f[0], first + f[1], first + f[2], first + f[0], first + f[2], first + f[3]});
    }
  }
  void add_nail(const cloth::ClothPoint& nail) {
    const Index first = static_cast<Index>(positions.size() / 3);
    const double r = 0.004, depth = 0.02;
    positions.insert(positions.end(), {nail.position.x, nail.position.y, nail.position.z});
    for (int k = 0; k < 3; ++k) {
      const double angle = 2.0 * M_PI * k / 3.0;
      positions.insert(positions.end(), {nail.position.x + r * std::cos(angle), nail.position.y + r * std::sin(angle),
                                         nail.position.z - depth});
    }
    triangles.insert(triangles.end(), {first, first + 1, first + 2, first, first + 2, first + 3, first, first + 3,
                                       first + 1, first + 1, first + 3, first + 2});
  }
};

ObstacleSurface obstacle_surface(const cloth::ClothObstacles& obstacles, double t) {
  ObstacleSurface surface;
  for (const cloth::ClothBox& box : obstacles.boxes) surface.add_box(box, t);
  for (const cloth::ClothPoint& nail : obstacles.points) surface.add_nail(nail);
  return surface;
}

/// Writes the cloth frame (world velocity, EOL flag, material coordinates, contact force) and
/// the obstacles at the same time.
class ClothFrames {
 public:
  ClothFrames(OutputFolder& folder)
      : cloth_(folder, "cloth", VtkCellShape::triangle), obstacles_(folder, "obstacles", VtkCellShape::triangle) {}

  bool write(const cloth::ClothSimulation& simulation) {
    const cloth::ClothMesh& mesh = simulation.cloth();
    const std::vector<double> velocity = simulation.world_velocities();
    std::vector<double> eol(static_cast<std::size_t>(mesh.vertex_count()));
    std::vector<double> material(3 * static_cast<std::size_t>(mesh.vertex_count()), 0.0);
    for (Index v = 0; v < mesh.vertex_count(); ++v) {
      eol[static_cast<std::size_t>(v)] = mesh.is_eulerian(v) ? 1.0 : 0.0;
      material[3 * static_cast<std::size_t>(v)] = mesh.material[2 * v];
      material[3 * static_cast<std::size_t>(v) + 1] = mesh.material[2 * v + 1];
    }
    const VtkField fields[] = {{"velocity", 3, velocity},
                               {"eol_vertex", 1, eol},
                               {"material_coordinates", 3, material},
                               {"contact_force", 3, simulation.contact_forces()}};
    if (!cloth_.write_frame(simulation.time(), mesh.positions, mesh.triangles, fields, {})) return false;
    const ObstacleSurface surface = obstacle_surface(simulation.obstacles(), simulation.time());
    return obstacles_.write_frame(simulation.time(), surface.positions, surface.triangles, {}, {});
  }
  [[nodiscard]] const VtuSeriesWriter& cloth_series() const { return cloth_; }

 private:
  VtuSeriesWriter cloth_;
  VtuSeriesWriter obstacles_;
};

/// The phases of Table 2.1 summed over the run, and the per-step CSV.
struct RunTotals {
  std::ostringstream csv;
  cloth::ClothStepStats sum;
  Index max_faces = 0;
  double max_eol_share = 0.0;
  int steps = 0;
  int qp_iterations_max = 0;
  Index max_schur = 0;
  double min_gap = 1e300;
  Index released = 0;
  Index late_contacts = 0;
  int late_contact_steps = 0;
  int active_set_solves = 0, interior_point_solves = 0, augmented_lagrangian_solves = 0;

  RunTotals() {
    csv << "step,time,faces,vertices,eol_vertices,conformal_vertices,equalities,inequalities,active,schur_size,"
           "qp_iterations,active_set_solves,interior_point_solves,augmented_lagrangian_solves,qp_status,collision_ms,remesh_ms,fill_ms,qp_ms,total_ms,kinetic_energy,min_gap\n";
  }
  void add(const cloth::ClothStepStats& s, double time) {
    ++steps;
    csv << steps << ',' << time << ',' << s.faces << ',' << s.vertices << ',' << s.eol_vertices << ','
        << s.conformal_vertices << ',' << s.equality_rows << ',' << s.inequality_rows << ',' << s.active_rows << ','
        << s.schur_size << ',' << s.qp_iterations << ',' << s.active_set_solves << ','
        << s.interior_point_solves << ',' << s.augmented_lagrangian_solves << ',' << s.qp_status << ',' << 1e3 * s.collision_seconds << ','
        << 1e3 * s.remesh_seconds << ',' << 1e3 * s.fill_seconds << ',' << 1e3 * s.qp_seconds << ','
        << 1e3 * s.total_seconds << ',' << s.kinetic_energy << ',' << s.min_gap << '\n';
    sum.collision_seconds += s.collision_seconds;
    sum.remesh_seconds += s.remesh_seconds;
    sum.fill_seconds += s.fill_seconds;
    sum.qp_seconds += s.qp_seconds;
    sum.total_seconds += s.total_seconds;
    sum.qp_iterations += s.qp_iterations;
    max_faces = std::max(max_faces, s.faces);
    max_eol_share = std::max(max_eol_share, s.vertices > 0 ? double(s.eol_vertices) / double(s.vertices) : 0.0);
    qp_iterations_max = std::max(qp_iterations_max, s.qp_iterations);
    max_schur = std::max(max_schur, s.schur_size);
    min_gap = std::min(min_gap, s.min_gap);
    released += s.released;
    late_contacts += s.late_contacts;
    late_contact_steps += s.late_contacts > 0 ? 1 : 0;
    active_set_solves += s.active_set_solves;
    interior_point_solves += s.interior_point_solves;
    augmented_lagrangian_solves += s.augmented_lagrangian_solves;
  }
};

std::string step_line(int step, int steps, const cloth::ClothStepStats& s) {
  return "step " + std::to_string(step) + "/" + std::to_string(steps) + "  " + std::to_string(s.faces) + " faces, " +
         std::to_string(s.eol_vertices) + " EOL, " + std::to_string(s.inequality_rows) + " contacts (" +
         std::to_string(s.active_rows) + " active), QP " + std::to_string(s.qp_iterations) + " it. on m = " +
         std::to_string(s.schur_size) + "  " + format_fixed(1e3 * s.total_seconds, 1) + " ms";
}

double share(double part, double whole) { return whole > 0.0 ? 100.0 * part / whole : 0.0; }

void add_report(Report& report, const cloth::ClothScene& scene, const ClothCommandOptions& flags,
                const RunTotals& totals, const ClothFrames& frames, const OutputFolder& folder,
                const std::string& failure, const cloth::ClothHealth& health) {
  report.section("scene");
  report.add_text("scene", "scene", scene.description);
  report.add_text("method", "method", flags.method);
  report.add_real("dt", "time step (s)", scene.options.time_step);
  report.add_count("steps", "steps", totals.steps);
  report.add_count("max_faces", "#F (most faces)", totals.max_faces);
  report.add("max_eol_percent", "%E (most EOL vertices)", 100.0 * totals.max_eol_share,
             format_fixed(100.0 * totals.max_eol_share, 2) + " %");
  if (scene.obstacles.boxes.empty()) {  // NAILS: nothing to measure a gap to (JSON null)
    report.add("min_gap_m", "least gap to a box (m, < 0: penetration)", nullptr, "no box in the scene");
  } else {
    report.add_real("min_gap_m", "least gap to a box (m, < 0: penetration)", totals.min_gap);
  }
  report.add_count("released", "feature vertices that lifted off", totals.released);
  report.add_count("late_contacts", "late contacts (QP solved again)", totals.late_contacts);
  report.add_count("late_contact_steps", "steps with late contacts", totals.late_contact_steps);

  const double total = totals.sum.total_seconds;
  report.section("time per step (Table 2.1)");
  const auto phase = [&](const char* key, const char* label, double seconds) {
    report.add(key, label, share(seconds, total), format_fixed(share(seconds, total), 1) + " %");
  };
  phase("collision_percent", "%CD collision detection", totals.sum.collision_seconds);
  phase("remesh_percent", "%RM remeshing", totals.sum.remesh_seconds);
  phase("fill_percent", "%MF matrix fill", totals.sum.fill_seconds);
  phase("qp_percent", "%VI velocity QP", totals.sum.qp_seconds);
  const double per_step = totals.steps > 0 ? 1e3 * total / totals.steps : 0.0;
  report.add("ms_per_step", "T (ms a step)", per_step, format_fixed(per_step, 2));
  report.add_count("qp_iterations", "QP iterations (all steps)", totals.sum.qp_iterations);
  report.add_count("qp_iterations_max", "most QP iterations in a step", totals.qp_iterations_max);
  report.add_count("max_schur_size", "largest Schur complement (constrained DOFs)", totals.max_schur);
  report.add_count("active_set_solves", "QPs solved by the active set method", totals.active_set_solves);
  report.add_count("interior_point_solves", "QPs solved by the interior point method", totals.interior_point_solves);
  report.add_count("augmented_lagrangian_solves", "QPs solved by the augmented Lagrangian method (the last resort)",
                   totals.augmented_lagrangian_solves);

  report.section("outcome");
  report.add_text("status", "status", failure.empty() ? "ok" : failure);
  report.add_text("health", "health", health.summary());
  report.section("output");
  report.add_text("pvd", "cloth collection", frames.cloth_series().pvd_path().string());
  report.add_text("obstacles_pvd", "obstacle collection", (folder.path() / "obstacles.pvd").string());
  report.add_count("vtu_files", "cloth frames written", frames.cloth_series().frames_written());
}

int run_cloth(const ClothCommandOptions& flags) {
  const InterruptSignals signals;
  cloth::ClothSceneOptions scene_options;
  scene_options.kind = cloth::parse_cloth_scene(flags.scene);
  scene_options.method = cloth::parse_cloth_method(flags.method);
  scene_options.cells = flags.cells;
  scene_options.cone = flags.cone;
  scene_options.consistent_mass = flags.consistent_mass;
  scene_options.friction = flags.friction;
  cloth::ClothScene scene = cloth::make_cloth_scene(scene_options);
  if (flags.time_step > 0.0) scene.options.time_step = flags.time_step;
  scene.options.qp.backend = flags.qp_backend == "schur"    ? solvers::qp::QpBackend::schur_reduced
                             : flags.qp_backend == "sparse" ? solvers::qp::QpBackend::sparse
                                                            : solvers::qp::QpBackend::automatic;
  scene.options.active_set_first = !flags.interior_point_only;
  scene.options.lagrangian_before_interior_point = flags.lagrangian_first;
  progress(scene.description);
  OutputFolder folder(flags.out, parse_byte_size(flags.max_output, "--max-output"));
  cloth::ClothSimulation simulation(scene.cloth, scene.obstacles, scene.scripted, scene.options);
  const int steps = flags.frames > 0 ? flags.frames
                                     : static_cast<int>(std::lround(scene.duration / scene.options.time_step));
  ClothFrames frames(folder);
  frames.write(simulation);
  RunTotals totals;
  std::string failure;
  cloth::ClothHealth health(scene.cloth, scene.options.material.density, scene.options.gravity);
  for (int step = 1; step <= steps; ++step) {
    if (signals.received() != 0) {
      failure = "stopped by signal " + std::to_string(signals.received());
      break;
    }
    const cloth::ClothStepStats stats = simulation.step();
    totals.add(stats, simulation.time());
    // The step's kinetic energy is the one it started from: the previous step's answer.
    if (const auto news = health.check(step - 1, simulation.time() - scene.options.time_step, stats.kinetic_energy)) {
      progress("warning: " + *news);
    }
    if (!stats.ok) {
      failure = "step " + std::to_string(step) + ": the velocity QP ended " + stats.qp_status + " (" +
                stats.qp_message + ")";
      progress("error: " + failure);
      break;
    }
    if ((step % flags.every == 0 || step == steps) && !frames.write(simulation)) {
      failure = "stopped at --max-output " + flags.max_output;
      break;
    }
    if (step % 20 == 0 || step == steps) progress(step_line(step, steps, stats));
  }
  folder.write("steps.csv", totals.csv.str());
  Report report;
  add_report(report, scene, flags, totals, frames, folder, failure, health);
  publish_summary(report, folder, "summary.json", flags.json);
  if (signals.received() != 0) return InterruptSignals::exit_code(signals.received());
  if (flags.strict && !health.healthy()) return 3;
  return failure.empty() || failure.starts_with("stopped at") ? 0 : 3;
}

}  // namespace
}  // namespace cloth_command

void add_cloth_command(CLI::App& app, CommandAction& action) {
  auto flags = std::make_shared<cloth_command::ClothCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "cloth", "Cloth sliding over sharp edges (seed 002 ch. 2): Lagrangian or Eulerian-on-Lagrangian, each step a QP");
  command->footer(
      "Without arguments: EDGE with EOL vertices — a 1 x 1 m cloth of 3,042 faces (area density 0.05 kg/m2, E = 50,\n"
      "nu = 0.01, bending 1e-5), held at two corners, falls onto a box and is pulled over its edge at 0.1 m/s from\n"
      "t = 0.35 s; h = 5 ms, 300 steps. Every step solves the QP of eq. 2.12 (solvers/qp) with our primal-dual\n"
      "active set method, started from the rows active in the previous step and those the current velocities\n"
      "violate; where it does not settle, with our interior point method, on the Schur complement of the\n"
      "constrained DOFs or on the sparse H + C'DC, whichever costs fewer flops per iteration (--qp-backend);\n"
      "where that fails too, with our proximal augmented Lagrangian method (--lagrangian-first: before it).\n"
      "Scenes: edge, wire, nails, jaws, push, throw, lo-res, friction (mu = 0.5 unless --friction).\n"
      "Methods: lagrangian-regular (static mesh, faces only), lagrangian-conformal (remeshed at features, averaged\n"
      "normals; --cone: both normals, which locks a cloth pulled over an edge), eol (the thesis' method).\n"
      "Output in --out: cloth.pvd + cloth_NNNN.vtu (triangles; point data velocity = world velocity, eol_vertex,\n"
      "material_coordinates, contact_force), obstacles.pvd (boxes and nails), steps.csv (per step: faces, EOL\n"
      "vertices, constraints, QP iterations and solvers, phase times), summary.json (Table 2.1's columns).\n"
      "Health: the cloth's kinetic energy is checked every step against 10 x lifting the cloth its own size against\n"
      "gravity (or 10 x its initial kinetic energy); the first step over it is warned about on stderr and the\n"
      "summary's outcome says when and how far (health).\n"
      "Exit codes: 0 ok, 2 bad input or unwritable output, 3 a QP that did not reach optimality (or a health\n"
      "warning under --strict), 128+n on signal n.");
  command->add_option("--scene", flags->scene, "edge, wire, nails, jaws, push, throw, lo-res or friction")
      ->check(CLI::IsMember({"edge", "wire", "nails", "jaws", "push", "throw", "lo-res", "friction"}))
      ->capture_default_str();
  command->add_option("--method", flags->method, "lagrangian-regular, lagrangian-conformal or eol")
      ->check(CLI::IsMember({"lagrangian-regular", "lagrangian-conformal", "eol"}))
      ->capture_default_str();
  command->add_option("--cells", flags->cells, "Cells along each side of the cloth (default: 39, LO-RES 9)")
      ->check(CLI::Range(1, 400));
  command->add_flag("--cone", flags->cone, "lagrangian-conformal: both normals of a feature instead of their average");
  command->add_flag("--consistent-mass", flags->consistent_mass,
                    "eq. 2.8's consistent inertia instead of the lumped (vertex-quadrature) one");
  command->add_option("--friction", flags->friction, "Coulomb coefficient of the friction filter (default: the scene's)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--dt", flags->time_step, "Time step in s (default 5e-3)")->check(CLI::PositiveNumber);
  command->add_option("--frames", flags->frames, "Steps (default: the scene's duration)")->check(CLI::PositiveNumber);
  command->add_option("--every", flags->every, "Write a frame every this many steps")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--qp-backend", flags->qp_backend,
                      "schur (dense Schur complement of the constrained DOFs), sparse (values-only refactorization of "
                      "H + C'DC) or auto")
      ->check(CLI::IsMember({"auto", "schur", "sparse"}))
      ->capture_default_str();
  command->add_flag("--interior-point-only", flags->interior_point_only,
                    "Solve every QP with the interior point method (no active set method first)");
  command->add_flag("--lagrangian-first", flags->lagrangian_first,
                    "Where the active set method fails, the augmented Lagrangian method before the interior point "
                    "method (default: after it, as the last resort)");
  command->add_option("--out", flags->out, "Output folder")->capture_default_str();
  command->add_option("--max-output", flags->max_output, "Most bytes the run may write (e.g. 500M, 2G)")
      ->capture_default_str();
  command->add_flag("--json", flags->json, "Write the summary as one JSON object to stdout");
  command->add_flag("--strict", flags->strict, "Exit 3 (after writing every output) when the health check warned");
  command->callback([flags, &action] {
    action = [flags] { return run_reporting_errors("cloth", [&] { return cloth_command::run_cloth(*flags); }); };
  });
}

}  // namespace cholsim::apps
