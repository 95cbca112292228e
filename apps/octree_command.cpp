// `cholsim octree`: character flesh on a surface-refined octree (seed 001) — stabilized
// corotated hexahedra with hanging nodes, a bone moved by a script, a frictional floor,
// backward Euler with Newton steps solved by multigrid-preconditioned CG (or MG, CG, or
// cholsim's direct Cholesky). Writes the octree (hexahedra with level, hanging-node count and
// strain) and the embedded surface per frame for ParaView, a per-frame CSV and a summary.
#include "octree_command.hpp"

#include <bit>
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fem/mesh/mesh_io.hpp"
#include "fem/octree/octree_flesh.hpp"
#include "fem/octree/octree_scene.hpp"
#include "interrupt_signals.hpp"
#include "mesh_source.hpp"
#include "output_folder.hpp"
#include "report.hpp"
#include "timing.hpp"
#include "vtk_series_writer.hpp"

namespace cholsim::apps {
namespace octree_command {
namespace {

using linalg::Index;
using linalg::Vec3;
namespace oct = fem::octree;

void progress(const std::string& line) { std::cerr << "cholsim octree: " << line << std::endl; }

struct OctreeCommandOptions {
  std::string mesh;  ///< empty: the bundled armadillo
  int cells = 256;
  bool uniform = false;
  std::string solver = "mgpcg";
  int frames = 0;  ///< 0: the scene's duration
  int levels = 7;
  std::string cycle = std::string(solvers::cycle_shape_name(oct::OctreeLevelsOptions{}.cycle.shape));
  std::string coarse = oct::OctreeLevelsOptions{}.merged_coarse_elements ? "merged" : "one-point";
  int newton_steps = 10;
  int solver_iterations = 3;
  double young_modulus = 5e4;
  int volume_every = 1;
  std::string out = "octree-out";
  int threads = 2;
  bool json = false;
  std::string max_output = "2G";
};

constexpr const char* summary_file_name = "summary.json";
constexpr const char* frames_file_name = "frames.csv";

/// The flesh surface: --mesh (a closed surface, or a tet mesh whose boundary is taken) or
/// the bundled armadillo's boundary.
fem::SurfaceMesh load_surface(const std::string& file, std::string& name) {
  if (file.empty()) {
    const std::string bundled = find_bundled_mesh("armadillo_4k.node");
    if (bundled.empty()) throw MeshSourceError("the bundled armadillo (data/meshes/armadillo_4k.node) was not found; give --mesh");
    name = "bundled armadillo";
    return fem::boundary_surface(fem::read_tet_mesh(bundled));
  }
  name = std::filesystem::path(file).filename().string();
  return fem::read_closed_surface(file);
}

/// The hexahedra of the finest level for VTK: non-hanging corners are the mesh's nodes,
/// hanging corners extra points interpolated from the conforming nodes (§3.2). The cells and
/// the extra points' numbering are the same every frame, so they are made once.
class OctreeVolumeFrame {
 public:
  explicit OctreeVolumeFrame(const oct::OctreeMesh& mesh) : mesh_(mesh) {
    // VTK orders a hexahedron's corners around the bottom face, then the top one.
    constexpr int kVtkCorner[8] = {0, 1, 3, 2, 4, 5, 7, 6};
    Index next_point = mesh.node_count();
    for (Index e = 0; e < mesh.element_count(); ++e) {
      level_.push_back(mesh.elements[e].level);
      hanging_.push_back(std::popcount(static_cast<unsigned>(mesh.hanging[e])));
      for (const int a : kVtkCorner) {
        const bool hangs = (mesh.hanging[e] >> a & 1) != 0;
        cells_.push_back(hangs ? next_point++ : mesh.conforming_nodes[e][a]);
        if (hangs) hanging_corners_.push_back({e, a});
      }
    }
  }
  bool write(VtuSeriesWriter& writer, double time, std::span<const double> x, std::span<const double> rest,
             std::span<const double> strain) {
    const std::size_t values = x.size() + 3 * hanging_corners_.size();
    positions_.reserve(values);
    displacement_.reserve(values);  // no reallocation below: the gathers read its first part
    positions_.assign(x.begin(), x.end());
    displacement_.resize(x.size());
    for (std::size_t k = 0; k < x.size(); ++k) displacement_[k] = x[k] - rest[k];
    const std::size_t nodal_values = x.size();
    for (const HangingCorner& corner : hanging_corners_) {
      fem::HexNodes corners, displacements;
      mesh_.gather(corner.element, x, corners);
      mesh_.gather(corner.element, std::span<const double>(displacement_.data(), nodal_values), displacements);
      for (int i = 0; i < 3; ++i) {
        positions_.push_back(corners[corner.corner][i]);
        displacement_.push_back(displacements[corner.corner][i]);
      }
    }
    const VtkField point_fields[] = {{"displacement", 3, displacement_}};
    const VtkField cell_fields[] = {{"level", 1, level_}, {"hanging_nodes", 1, hanging_}, {"strain", 1, strain}};
    return writer.write_frame(time, positions_, cells_, point_fields, cell_fields);
  }

 private:
  struct HangingCorner {
    Index element;
    int corner;
  };
  const oct::OctreeMesh& mesh_;
  std::vector<HangingCorner> hanging_corners_;  ///< the extra points, in their numbering order
  std::vector<double> level_, hanging_, positions_, displacement_;
  std::vector<Index> cells_;
};

void add_octree_section(Report& report, const oct::OctreeFlesh& flesh, const OctreeCommandOptions& flags,
                        double build_seconds) {
  const oct::OctreeHierarchy& hierarchy = flesh.hierarchy();
  const oct::OctreeMesh& mesh = flesh.mesh();
  Index hanging_elements = 0;
  for (const std::uint8_t code : mesh.hanging) hanging_elements += code != 0;
  report.section(flags.uniform ? "uniform grid (every cell at the finest size)" : "octree (seed 001 §5, §6)");
  report.add_count("cells_across", "finest cells across", flags.cells);
  report.add_real("cell_size", "finest cell (m)", mesh.cell_size);
  report.add_count("elements", "elements", mesh.element_count());
  report.add_count("nodes", "nodes", mesh.node_count());
  report.add_count("elements_with_hanging_nodes", "elements with hanging nodes", hanging_elements);
  report.add_count("levels", "multigrid levels", hierarchy.level_count());
  report.add_text("cycle", "multigrid cycle",
                  std::string(solvers::cycle_shape_name(flesh.options().levels.cycle.shape)) + "-cycle");
  report.add_text("coarse_elements", "coarse elements",
                  flesh.options().levels.merged_coarse_elements ? "merged from their children" : "one-point (§7.3)");
  std::string sizes;
  for (int l = 0; l < hierarchy.level_count(); ++l) {
    sizes += (l ? ", " : "") + format_count(hierarchy.mesh(l).node_count());
  }
  report.add_text("level_nodes", "nodes per level", sizes);
  report.add_bytes("memory_bytes", "simulation memory", static_cast<std::int64_t>(flesh.memory_bytes()));
  report.add("bytes_per_element", "bytes per element",
             static_cast<double>(flesh.memory_bytes()) / mesh.element_count(),
             format_fixed(static_cast<double>(flesh.memory_bytes()) / mesh.element_count(), 0));
  report.add("ghost_share", "ghost elements of the parallel blocks", hierarchy.op(0).blocks().ghost_share(),
             format_fixed(100.0 * hierarchy.op(0).blocks().ghost_share(), 1) + " %");
  report.add_seconds("build_s", "construction", build_seconds);
}

struct FrameTotals {
  std::ostringstream csv;
  int frames = 0, newton_steps = 0, solver_iterations = 0;
  double seconds = 0.0, solve_seconds = 0.0, output_seconds = 0.0;
  int damping_halvings = 0;
  FrameTotals() { csv << "frame,time,newton_steps,solver_iterations,initial_residual,final_residual,last_linear_residual,contacts,damping,seconds,solve_seconds\n"; }
  void add(int frame, double time, const oct::OctreeFrameStats& s) {
    ++frames;
    newton_steps += s.newton_steps;
    solver_iterations += s.solver_iterations;
    seconds += s.seconds;
    solve_seconds += s.solve_seconds;
    damping_halvings += s.damping_halvings;
    csv << frame << ',' << time << ',' << s.newton_steps << ',' << s.solver_iterations << ',' << s.initial_residual
        << ',' << s.final_residual << ',' << s.last_linear_residual << ',' << s.contacts << ',' << s.damping << ','
        << s.seconds << ',' << s.solve_seconds << '\n';
  }
};

int run_octree(const OctreeCommandOptions& flags) {
  const InterruptSignals signals;
  const std::uint64_t byte_limit = parse_byte_size(flags.max_output, "--max-output");
  std::string name;
  fem::SurfaceMesh surface = load_surface(flags.mesh, name);
  const oct::OctreeScene scene = oct::make_octree_scene(std::move(surface), name);
  progress(scene.description);

  const Clock::time_point build_start = Clock::now();
  oct::OctreeBuildOptions build;
  build.cells_across = flags.cells;
  build.uniform = flags.uniform;
  build.threads = flags.threads;
  progress("building the " + std::string(flags.uniform ? "uniform grid" : "octree") + " at " +
           std::to_string(flags.cells) + " cells across...");
  const oct::BalancedOctree tree = oct::build_balanced_octree(scene.surface, build);
  oct::OctreeFleshOptions options;
  options.young_modulus = flags.young_modulus;
  options.solver = oct::parse_octree_solver(flags.solver);
  options.levels.max_levels = flags.levels;
  options.levels.cycle.shape = solvers::parse_cycle_shape(flags.cycle);
  options.levels.merged_coarse_elements = flags.coarse == "merged";
  options.max_newton_steps = flags.newton_steps;
  options.max_solver_iterations = flags.solver_iterations;
  options.threads = flags.threads;
  oct::OctreeFlesh flesh(tree, scene.bone_points, oct::surface_points(scene), options);
  flesh.set_obstacles(scene.obstacles);
  const double build_seconds = seconds_since(build_start);
  progress(std::to_string(flesh.mesh().element_count()) + " elements, " + std::to_string(flesh.mesh().node_count()) +
           " nodes, " + std::to_string(flesh.hierarchy().level_count()) + " levels, " +
           format_bytes(static_cast<std::int64_t>(flesh.memory_bytes())) + " in " + format_seconds(build_seconds));

  OutputFolder folder(flags.out, byte_limit);  // after the input is known good: no empty folder on bad input
  VtuSeriesWriter volume_writer(folder, "octree", VtkCellShape::hexahedron);
  VtuSeriesWriter surface_writer(folder, "surface", VtkCellShape::triangle);
  OctreeVolumeFrame volume(flesh.mesh());
  const auto write_frame = [&](int frame, double time) {
    std::vector<double> surface = flesh.surface_positions();
    std::vector<double> displacement(surface.size());
    for (std::size_t k = 0; k < surface.size(); ++k) displacement[k] = surface[k] - scene.surface.positions[k];
    const VtkField surface_fields[] = {{"displacement", 3, displacement}};
    bool written = surface_writer.write_frame(time, surface, scene.surface.triangles, surface_fields, {});
    if (written && flags.volume_every > 0 && frame % flags.volume_every == 0) {
      written = volume.write(volume_writer, time, flesh.positions(), flesh.rest_positions(), flesh.element_strain());
    }
    return written;
  };
  write_frame(0, 0.0);

  const int frames = flags.frames > 0 ? flags.frames
                                      : static_cast<int>(std::lround(scene.duration / options.time_step));
  FrameTotals totals;
  int exit_code = 0;
  std::string stop_reason = "completed";
  std::vector<Vec3> bone_targets(scene.bone_points.size());
  progress("frame  newton  iterations  residual (first -> last)  contacts  seconds");
  for (int frame = 1; frame <= frames; ++frame) {
    if (signals.received() != 0) {
      stop_reason = "interrupted";
      exit_code = InterruptSignals::exit_code(signals.received());
      break;
    }
    const double time = (frame - 1) * options.time_step;
    for (std::size_t p = 0; p < bone_targets.size(); ++p) {
      bone_targets[p] = scene.bone.position(scene.bone_points[p], time + options.time_step);
    }
    try {
      const oct::OctreeFrameStats& stats = flesh.step(time, bone_targets);
      totals.add(frame, time + options.time_step, stats);
      std::ostringstream line;
      line << frame << "/" << frames << "  " << stats.newton_steps << "  " << stats.solver_iterations << "  "
           << format_scientific(stats.initial_residual) << " -> " << format_scientific(stats.final_residual) << "  "
           << stats.contacts << "  " << format_fixed(stats.seconds, 2);
      if (stats.damping_halvings > 0) {
        line << "  (MGPCG's cycle was indefinite: smoother damping halved to " << format_fixed(stats.damping, 3) << ")";
      }
      progress(line.str());
    } catch (const std::runtime_error& error) {
      stop_reason = std::string("numerical failure at frame ") + std::to_string(frame) + ": " + error.what();
      progress(stop_reason);
      exit_code = 3;
      break;
    }
    const Clock::time_point output_start = Clock::now();
    const bool written = write_frame(frame, time + options.time_step);
    totals.output_seconds += seconds_since(output_start);
    if (!written) {
      stop_reason = "output limit (--max-output) reached";
      progress(stop_reason);
      break;
    }
  }
  folder.write(frames_file_name, totals.csv.str());

  Report report;
  report.section("scene");
  report.add_text("scene", "scene", scene.description);
  report.add_text("solver", "linear solver", flags.solver);
  report.add_real("dt", "time step (s)", options.time_step);
  add_octree_section(report, flesh, flags, build_seconds);
  report.section("frames");
  report.add_count("frames", "frames", totals.frames);
  const double per_frame = totals.frames > 0 ? 1.0 / totals.frames : 0.0;
  report.add("mean_newton_steps", "mean Newton steps", totals.newton_steps * per_frame, format_fixed(totals.newton_steps * per_frame, 2));
  report.add("mean_solver_iterations", "mean solver iterations", totals.solver_iterations * per_frame,
             format_fixed(totals.solver_iterations * per_frame, 2));
  report.add_seconds("mean_frame_s", "mean time per frame", totals.seconds * per_frame);
  report.add_seconds("solve_s", "linear solves (all frames)", totals.solve_seconds);
  report.add_seconds("output_s", "output (VTK)", totals.output_seconds);
  report.add_count("damping_halvings", "smoother damping halvings (indefinite cycles)", totals.damping_halvings);
  report.add_real("elastic_energy", "final elastic energy (J)", flesh.elastic_energy());
  report.add_real("kinetic_energy", "final kinetic energy (J)", flesh.kinetic_energy());
  report.add_text("end", "run ended", stop_reason);
  report.section("output");
  report.add_text("octree_pvd", "octree collection", volume_writer.pvd_path().string());
  report.add_text("surface_pvd", "surface collection", surface_writer.pvd_path().string());
  report.add_text("frames_csv", "per-frame CSV", (folder.path() / frames_file_name).string());
  publish_summary(report, folder, summary_file_name, flags.json);
  return exit_code;
}

}  // namespace
}  // namespace octree_command

void add_octree_command(CLI::App& app, CommandAction& action) {
  auto flags = std::make_shared<octree_command::OctreeCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "octree", "Character flesh on a surface-refined octree (seed 001): stabilized corotated hexahedra with hanging "
                "nodes, multigrid-preconditioned CG, a scripted bone and a frictional floor");
  command->footer(
      "Without arguments: the bundled armadillo's surface at 256 finest cells across, E = 5e4 Pa, nu = 0.3,\n"
      "1000 kg/m^3, hung on a spherical bone at its centroid that lifts by a tenth of the height and swings\n"
      "0.3 rad over 2 s (48 frames of 1/24 s), feet on a frictional floor; backward Euler, at most 10 Newton steps a\n"
      "frame and 3 MGPCG iterations a Newton step (seed 001 §10.2), 7 multigrid levels in §7's V-cycles (damping\n"
      "0.8), the coarsest solved by cholsim's Cholesky. --cycle k: K-cycles, fewer iterations to a tolerance but\n"
      "slower frames under these caps; so too --coarse merged (coarse elements as their children's Galerkin operator).\n"
      "--uniform puts every inside cell at the finest size (the paper's uniform-grid baseline, same code).\n"
      "--solver mg|cg|direct swaps the linear solver (direct: cholsim's supernodal Cholesky on the assembled matrix).\n"
      "Output in --out: octree.pvd + octree_NNNN.vtu (hexahedra; cell data level, hanging_nodes, strain; point data\n"
      "displacement), surface.pvd + surface_NNNN.vtu (the embedded surface, deformed), frames.csv (per frame: Newton\n"
      "steps, solver iterations, residuals, contacts, seconds), summary.json.\n"
      "Exit codes: 0 ok, 2 bad input or unwritable output, 3 numerical failure, 130/143 interrupted.");
  command->add_option("--mesh", flags->mesh, "Closed surface (.obj, .off, .stl) or tet mesh (boundary taken)")
      ->check(CLI::ExistingFile);
  command->add_option("--cells", flags->cells, "Finest cells across the longest side")
      ->check(CLI::Range(4, 16384))
      ->capture_default_str();
  command->add_flag("--uniform", flags->uniform, "Every inside cell at the finest size (no octree coarsening)");
  command->add_option("--solver", flags->solver, "mgpcg, mg, cg or direct")
      ->check(CLI::IsMember({"mgpcg", "mg", "cg", "direct"}))
      ->capture_default_str();
  command->add_option("--frames", flags->frames, "Frames of 1/24 s (default: one bone period, 48)")
      ->check(CLI::PositiveNumber);
  command->add_option("--levels", flags->levels, "Most multigrid levels")->check(CLI::Range(1, 12))->capture_default_str();
  command->add_option("--cycle", flags->cycle,
                      "Multigrid cycle: v (seed 001 §7: cheaper per iteration), k (K-cycle: fewer iterations, a "
                      "coarse level's error never grows) or w")
      ->check(CLI::IsMember({"v", "w", "k"}))
      ->capture_default_str();
  command->add_option("--coarse", flags->coarse,
                      "Coarse multigrid elements: one-point (seed 001 §7.3's re-discretization: cheaper per iteration) "
                      "or merged (each the Galerkin operator of its finer children: fewer iterations to a tolerance)")
      ->check(CLI::IsMember({"merged", "one-point"}))
      ->capture_default_str();
  command->add_option("--newton-steps", flags->newton_steps, "Most Newton steps a frame")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command->add_option("--solver-iterations", flags->solver_iterations, "Most solver iterations a Newton step")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  command->add_option("--young", flags->young_modulus, "Young's modulus (Pa)")->check(CLI::PositiveNumber)->capture_default_str();
  command->add_option("--volume-every", flags->volume_every, "Write the octree every N frames (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--out", flags->out, "Output folder")->capture_default_str();
  command->add_option("--threads", flags->threads, "Threads")->check(CLI::PositiveNumber)->capture_default_str();
  command->add_flag("--json", flags->json, "Write the summary as one JSON object to stdout");
  command->add_option("--max-output", flags->max_output, "Stop writing frames past this many bytes (e.g. 500M, 2G)")
      ->capture_default_str();
  command->callback([flags, &action] {
    action = [flags] { return run_reporting_errors("octree", [&] { return octree_command::run_octree(*flags); }); };
  });
}

}  // namespace cholsim::apps
