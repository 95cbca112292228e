#include "mesh_source.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "fem/mesh/mesh_io.hpp"
#include "fem/mesh/procedural_meshes.hpp"
#include "fem/mesh/tetgen.hpp"
#include "memory_admission.hpp"
#include "timing.hpp"

namespace cholsim::apps {
namespace {

constexpr double model_longest_side = 0.4;  // m, the bundled models' size in every scene

bool is_surface_file(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension == ".obj" || extension == ".off" || extension == ".stl";
}

/// Rotates y into z and z into −y (a proper rotation, so tets stay positively oriented): the
/// procedural torus and sheet are built in the x–y plane but should lie flat on a y-up ground.
void lay_flat(fem::TetMesh& mesh) {
  for (std::size_t node = 0; node < mesh.positions.size(); node += 3) {
    const double y = mesh.positions[node + 1];
    mesh.positions[node + 1] = mesh.positions[node + 2];
    mesh.positions[node + 2] = -y;
  }
}

void scale_positions(std::vector<double>& positions, double factor) {
  for (double& value : positions) value *= factor;
}

double longest_side(const std::vector<double>& positions) {
  const auto box = fem::bounding_box(positions);
  return std::max({box[3] - box[0], box[4] - box[1], box[5] - box[2]});
}

int resolution_or(const MeshSourceOptions& options, int fallback) {
  return options.resolution > 0 ? options.resolution : fallback;
}

struct Tetrahedralized {
  fem::TetMesh mesh;
  std::string command;
};

Tetrahedralized tetrahedralize_surface(const std::filesystem::path& surface_file, const std::string& switches,
                                       const std::function<void(const std::string&)>& progress) {
  if (!fem::tetgen_available()) {
    throw MeshSourceError(surface_file.string() +
                          ": a surface mesh needs Debian's `tetgen` to be tetrahedralized, and it is not "
                          "installed (apt-get install tetgen); give a tet mesh (.node/.ele, .msh, .mesh) instead");
  }
  const fem::SurfaceMesh surface = fem::read_surface_mesh(surface_file);
  fem::TetgenOptions tetgen_options;
  tetgen_options.switches = switches;
  progress("tetrahedralizing " + surface_file.string() + " with tetgen -" + switches + "...");
  fem::TetgenResult result = fem::tetrahedralize(surface, tetgen_options);
  return {std::move(result.mesh), result.command + "  (surface.off = " + surface_file.string() + ")"};
}

/// The bundled file data/meshes/<file_name>, or a MeshSourceError saying where it was sought.
std::string bundled_model_path(const std::string& file_name) {
  const std::string path = find_bundled_mesh(file_name);
  if (path.empty()) {
    throw MeshSourceError("the bundled mesh data/meshes/" + file_name +
                          " was not found (set CHOLSIM_DATA_DIR to the folder holding data/meshes, or use --mesh)");
  }
  return path;
}

// Cells of the structured grid a procedural shape is cut from (each cell gives at most six
// tets), from the same resolutions make_builtin uses; 0 for shapes read from files.
std::int64_t predicted_builtin_cells(const std::string& name, const MeshSourceOptions& options) {
  const auto cube = [](std::int64_t a, std::int64_t b, std::int64_t c) { return a * b * c; };
  if (name == "box") {
    const std::int64_t cells = resolution_or(options, 8);
    return cube(cells, std::max<std::int64_t>(1, cells / 2), std::max<std::int64_t>(1, cells / 2));
  }
  if (name == "sphere") {
    const std::int64_t cells = resolution_or(options, 10) + 1;
    return cube(cells, cells, cells);
  }
  if (name == "torus") {
    const std::int64_t cells = resolution_or(options, 24);
    const std::int64_t across = std::max<std::int64_t>(3, cells / 6);
    return cube(cells, across, across);
  }
  if (name == "sheet") {
    const std::int64_t cells = resolution_or(options, 16);
    return cube(cells, cells, 1);
  }
  return 0;
}

void admit_builtin(const std::string& name, const MeshSourceOptions& options) {
  const std::int64_t tets = 6 * predicted_builtin_cells(name, options);
  admit({"simulating the builtin " + name + " (up to " + std::to_string(tets) + " tets)",
         {{"at least " + std::to_string(options.simulation_bytes_per_tet) + " bytes a tet",
           tets * options.simulation_bytes_per_tet}}},
        resolve_memory_limit(options.max_memory));
}

fem::TetMesh make_builtin(const std::string& name, const MeshSourceOptions& options, LoadedMesh& loaded,
                          const std::function<void(const std::string&)>& progress) {
  if (name == "box") {
    const int cells = resolution_or(options, 8);
    loaded.source = "builtin box (" + std::to_string(cells) + " cells along x)";
    return fem::make_box_mesh(0.4, 0.2, 0.2, cells);
  }
  if (name == "sphere") {
    const int cells = resolution_or(options, 10);
    loaded.source = "builtin sphere (" + std::to_string(cells) + " layers across)";
    return fem::make_sphere_mesh(0.15, cells);
  }
  if (name == "torus") {
    const int cells = resolution_or(options, 24);
    loaded.source = "builtin torus (" + std::to_string(cells) + " cells around)";
    fem::TetMesh torus = fem::make_torus_mesh(0.2, 0.07, cells, std::max(3, cells / 6));
    lay_flat(torus);
    return torus;
  }
  if (name == "sheet") {
    const int cells = resolution_or(options, 16);
    loaded.source = "builtin sheet (" + std::to_string(cells) + " cells per side)";
    loaded.is_thin_sheet = true;
    fem::TetMesh sheet = fem::make_sheet_mesh(1.0, 1e-4, cells);
    lay_flat(sheet);
    return sheet;
  }
  if (name == "bunny") {
    const std::string surface = bundled_model_path("bunny.obj");
    Tetrahedralized bunny = tetrahedralize_surface(surface, options.tetgen_switches, progress);
    loaded.source = "builtin bunny (" + surface + " via tetgen)";
    loaded.tetgen_command = bunny.command;
    scale_positions(bunny.mesh.positions, model_longest_side / longest_side(bunny.mesh.positions));
    return std::move(bunny.mesh);
  }
  if (name == "armadillo") {
    const std::string file = bundled_model_path("armadillo_4k.node");
    progress("reading " + file + "...");
    fem::TetMesh armadillo = fem::read_tet_mesh(file);
    loaded.source = "builtin armadillo (" + file + ")";
    scale_positions(armadillo.positions, model_longest_side / longest_side(armadillo.positions));
    return armadillo;
  }
  throw MeshSourceError("--builtin " + name + ": unknown shape; expected box, sphere, torus, sheet, bunny or armadillo");
}

/// No --mesh and no --builtin: the command's preferred bundled model when it can be loaded
/// here (the bunny also needs tetgen), else the box.
std::string default_builtin(const MeshSourceOptions& options) {
  const std::string& model = options.default_model;
  if (model == "bunny") return !find_bundled_mesh("bunny.obj").empty() && fem::tetgen_available() ? "bunny" : "box";
  if (model == "armadillo") return find_bundled_mesh("armadillo_4k.node").empty() ? "box" : "armadillo";
  return model;
}

}  // namespace

void add_mesh_source_options(CLI::App& command, MeshSourceOptions& options) {
  CLI::Option* mesh = command.add_option(
      "--mesh", options.mesh_file,
      "Tet mesh (.node/.ele, .msh v2/v4 ASCII, .mesh) or closed surface (.obj, .off, .stl) meshed by tetgen");
  command.add_option("--builtin", options.builtin,
                     "Built-in shape: box, sphere, torus, sheet, bunny or armadillo (default: the command's "
                     "bundled model when it can be loaded, else box)")
      ->check(CLI::IsMember(builtin_mesh_names))
      ->excludes(mesh);
  command.add_option("--resolution", options.resolution,
                     "Cells along the longest side of a procedural shape (box 8, sphere 10, torus 24, sheet 16)")
      ->check(CLI::PositiveNumber);
  command.add_option("--scale", options.scale, "Factor applied to the coordinates of a --mesh file")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command.add_option("--tetgen-switches", options.tetgen_switches,
                     "tetgen switches for surface meshes, without the dash")
      ->capture_default_str();
  add_max_memory_option(command, options.max_memory);
}

LoadedMesh load_mesh(const MeshSourceOptions& options, const std::function<void(const std::string&)>& progress) {
  const Clock::time_point start = Clock::now();
  LoadedMesh loaded;
  fem::TetMesh mesh;
  if (!options.mesh_file.empty()) {
    const std::filesystem::path file = options.mesh_file;
    loaded.source = file.string();
    if (is_surface_file(file)) {
      Tetrahedralized meshed = tetrahedralize_surface(file, options.tetgen_switches, progress);
      loaded.source += " via tetgen";
      loaded.tetgen_command = meshed.command;
      mesh = std::move(meshed.mesh);
    } else {
      progress("reading " + file.string() + "...");
      mesh = fem::read_tet_mesh(file);
    }
    if (options.scale != 1.0) scale_positions(mesh.positions, options.scale);
  } else {
    const std::string builtin = options.builtin.empty() ? default_builtin(options) : options.builtin;
    admit_builtin(builtin, options);
    mesh = make_builtin(builtin, options, loaded, progress);
  }

  // Nodes no tet references would get no mass and make the system singular.
  const fem::Index unused = fem::validate_tet_mesh(mesh, loaded.source).unused_nodes;
  if (unused > 0) mesh = fem::remove_unused_nodes(mesh);
  loaded.check = fem::validate_tet_mesh(mesh, loaded.source);
  if (unused > 0) {
    loaded.check.warnings.push_back(loaded.source + ": " + std::to_string(unused) +
                                    " nodes are used by no tet and were removed");
  }
  loaded.mesh = std::move(mesh);
  loaded.seconds = seconds_since(start);
  return loaded;
}

std::string find_bundled_mesh(const std::string& file_name) {
  std::vector<std::filesystem::path> roots;
  if (const char* data_dir = std::getenv("CHOLSIM_DATA_DIR")) roots.emplace_back(data_dir);
  roots.emplace_back(std::filesystem::current_path());
  roots.emplace_back(CHOLSIM_SOURCE_DIR);  // a build run in place finds the repository's data
  for (const auto& root : roots) {
    const std::filesystem::path candidate = root / "data" / "meshes" / file_name;
    if (std::filesystem::is_regular_file(candidate)) return candidate.string();
  }
  return {};
}

}  // namespace cholsim::apps
