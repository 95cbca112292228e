#pragma once
// Tetrahedralizing a closed triangle surface with Debian's `tetgen` program (package tetgen,
// TetGen 1.5), run as a separate process: the library itself (AGPL) is not linked.
//
// What runs: the surface is written as `surface.off` into a fresh temporary folder, then
//   <executable> -<switches> surface.off
// runs in that folder (no shell; stdout and stderr go to tetgen.log there), and
// surface.1.node / surface.1.ele are read back with read_tetgen_mesh. The folder is removed
// afterwards. tetgen cuts its output names at the first '.' of the input name, which is why
// the input name is fixed and the command runs inside the folder.
//
// Useful switches (../shared/data/README.md): p = tetrahedralize a surface (required here),
// Y = keep the input surface triangles, q<ratio> = radius-edge quality bound (1.414 is tight,
// 2 loose), a<volume> = maximum tet volume in the surface's units. data/meshes/SOURCES.md lists
// the switches that give ~7K, ~100K and ~300K tets for the bundled bunnies, e.g. "pYq2" →
// 6740 tets and "pq1.414a0.0022" → 302483 tets for data/meshes/bunny.obj.
#include <filesystem>
#include <stdexcept>
#include <string>

#include "fem/mesh/tet_mesh.hpp"

namespace cholsim::fem {

/// tetgen did not run or did not produce a mesh; what() holds the command, the exit status
/// and the tail of its output.
class TetgenError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TetgenOptions {
  /// tetgen switches without the leading dash; must contain 'p' (the input is a surface) and
  /// must not contain 'N', 'E' (suppress the .node/.ele output we read) or 'r' (refinement
  /// of an existing mesh). Only letters, digits, '.' and (after the first character) the
  /// exponent signs '-', '+' are accepted, e.g. "pq1.414a1.6e-8".
  std::string switches = "pq1.414";
  /// The program to run.
  std::filesystem::path executable = "/usr/bin/tetgen";
};

struct TetgenResult {
  TetMesh mesh;          ///< as tetgen wrote it (positively oriented; run validate_tet_mesh)
  std::string command;   ///< e.g. "/usr/bin/tetgen -pq1.414 surface.off" (surface.off = the input)
  double seconds = 0.0;  ///< wall time of writing, running tetgen and reading back
};

/// Whether `executable` exists and is executable.
bool tetgen_available(const std::filesystem::path& executable = "/usr/bin/tetgen");

/// Runs tetgen on `surface` (closed, manifold, outward oriented, not self-intersecting — or
/// tetgen fails). Throws std::invalid_argument for bad switches or an empty surface, and
/// TetgenError when tetgen is missing, exits with an error or crashes (exit status and the last
/// lines of its output in the message), or writes no mesh.
TetgenResult tetrahedralize(const SurfaceMesh& surface, const TetgenOptions& options = {});

}  // namespace cholsim::fem
