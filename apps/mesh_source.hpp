#pragma once
// Where a simulation command's tetrahedral mesh comes from — shared by `cholsim corot` and
// `cholsim opsplit` so both accept the same flags and report the same way:
//
//   --mesh FILE       a tet mesh (.node/.ele, .msh, .mesh) read by fem::read_tet_mesh, or a
//                     closed surface (.obj, .off, .stl) tetrahedralized by Debian's `tetgen`
//                     (the command line it ran is reported);
//   --builtin NAME    box | sphere | torus | sheet | bunny | armadillo; without either flag
//                     the command's bundled model (MeshSourceOptions::default_model) when it
//                     can be loaded, else the box;
//   --resolution N    cells along the longest side of the procedural shapes;
//   --scale S         multiplies the coordinates of a --mesh file (e.g. 0.001 for mm);
//   --tetgen-switches tetgen's switches for surfaces (default pYq2);
//   --max-memory SIZE refuses a procedural shape too large to simulate (memory_admission.hpp).
// Coordinates are metres with y up; the commands place the mesh in their scene.
//
// Usage in a command:
//   auto mesh_options = std::make_shared<MeshSourceOptions>();
//   add_mesh_source_options(*command, *mesh_options);
//   ... later, in the action:
//   const LoadedMesh loaded = load_mesh(*mesh_options, progress);   // may throw, see below
//   fem::ElasticBody body = fem::make_elastic_body(loaded.mesh, material, loaded.source);
//
// Errors: load_mesh throws MeshSourceError (unknown builtin, tetgen missing or failing, a
// surface given where tetgen is not installed), fem::MeshFormatError (file:line of a malformed
// file) or fem::InvalidMeshError (inverted tets, bad indices); all are bad input (exit 2).
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "fem/mesh/tet_mesh.hpp"

#include "command.hpp"

namespace cholsim::apps {

struct MeshSourceOptions {
  std::string mesh_file;  ///< --mesh; empty = builtin
  std::string builtin;    ///< --builtin; empty = the default model
  int resolution = 0;     ///< --resolution; 0 = the shape's default (below)
  double scale = 1.0;     ///< --scale, applied to --mesh files only
  /// tetgen switches for surfaces; the default gives ~7K tets for the bundled bunny (seed 000
  /// Table I's smallest size; ../shared/data/meshes/SOURCES.md lists the counts).
  std::string tetgen_switches = "pYq2";
  /// The shape used without --mesh or --builtin, when it can be loaded here (else the box):
  /// `cholsim corot` drops the bunny (seed 000), `cholsim opsplit` hangs the armadillo (seed 003).
  std::string default_model = "bunny";
  /// --max-memory (memory_admission.hpp): a procedural shape whose simulation is predicted to
  /// need more is refused before it is generated. Empty = the available memory.
  std::string max_memory;
  /// Bytes the command's simulation holds per tet beyond the process's start-up footprint,
  /// measured (peak resident memory over tets) on a box of 96,000 tets; fill makes larger meshes
  /// need more per tet, so admission with it refuses only what surely cannot fit. The default
  /// is `cholsim corot`'s (factored implicit system, retained update blocks).
  std::int64_t simulation_bytes_per_tet = 9'600;
};

/// The builtin shapes, in metres, resting with their lowest point at y = 0, centred in x and z:
///   box    0.4 × 0.2 × 0.2 m bar, `resolution` cells along x (default 8);
///   sphere radius 0.15 m, `resolution` tet layers across (default 10);
///   torus  major radius 0.2 m, tube radius 0.07 m, lying in the x–z plane (default 24 around);
///   sheet  1 m × 1 m × 0.1 mm in the x–z plane (seed 000 §5.1; default 16 cells per side);
///   bunny  the bundled Stanford bunny surface (npm `bunny`), tetrahedralized by tetgen, scaled
///          to 0.4 m along its longest side (ignores `resolution`, see tetgen_switches);
///   armadillo  the bundled 3,717-tet Stanford armadillo (data/meshes/armadillo_4k.node),
///          scaled to 0.4 m along its longest side.
inline const std::vector<std::string> builtin_mesh_names = {"box", "sphere", "torus", "sheet", "bunny", "armadillo"};

struct LoadedMesh {
  fem::TetMesh mesh;           ///< validated, unused nodes removed, positively oriented
  std::string source;          ///< "builtin box (8 cells)", "path/to/x.msh", "bunny.obj via tetgen"
  std::string tetgen_command;  ///< the command line run, empty when tetgen was not used
  fem::MeshCheck check;        ///< counts, volumes and warnings of fem::validate_tet_mesh
  bool is_thin_sheet = false;  ///< the sheet builtin: per-node rotations should be identity (seed 000 §4.1)
  double seconds = 0.0;        ///< reading, generating or tetrahedralizing
};

/// Bad mesh flags or an unavailable mesh source (see the header comment); exit code 2.
class MeshSourceError : public BadInputError {
 public:
  using BadInputError::BadInputError;
};

/// Registers --mesh, --builtin, --resolution, --scale and --tetgen-switches on `command`, writing into `options`
/// (which must outlive the parse).
void add_mesh_source_options(CLI::App& command, MeshSourceOptions& options);

/// Loads the mesh `options` names; `progress` receives one line per slow step (e.g. the tetgen
/// command before it runs). Unused nodes are removed (with a warning in check.warnings).
LoadedMesh load_mesh(const MeshSourceOptions& options, const std::function<void(const std::string&)>& progress);

/// The bundled file data/meshes/<file_name> below $CHOLSIM_DATA_DIR, the current folder, or
/// the source tree the program was built from; empty when none exists.
std::string find_bundled_mesh(const std::string& file_name);

}  // namespace cholsim::apps
