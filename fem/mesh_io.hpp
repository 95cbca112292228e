#pragma once
// Readers for tetrahedral meshes (TetGen .node/.ele, Gmsh .msh v2 and v4 ASCII, Medit .mesh)
// and triangle surfaces (OBJ, OFF, STL ASCII and binary), and an OFF writer (the input
// format Debian's `tetgen` reads best, see ../shared/data/README.md).
//
// Every reader reports malformed input as a MeshFormatError naming file:line, what was
// found and what was expected; indices are converted to 0-based; tets are returned as
// stored (validate_tet_mesh checks orientation). Unsupported element types in .msh/.mesh
// (edges, triangles, points) are skipped; a file with no tetrahedra is an error.
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "fem/tet_mesh.hpp"

namespace cholsim::fem {

/// A malformed or unreadable mesh file. what() reads "<file>:<line>: <problem>; expected <…>".
class MeshFormatError : public std::runtime_error {
 public:
  MeshFormatError(std::string file, std::int64_t line, const std::string& problem,
                  const std::string& expected);
  [[nodiscard]] const std::string& file() const { return file_; }
  /// 1-based line; 0 when the problem concerns the whole file (cannot open, empty).
  [[nodiscard]] std::int64_t line() const { return line_; }

 private:
  std::string file_;
  std::int64_t line_;
};

/// Reads a tet mesh, choosing the format by extension: `.node` or `.ele` (TetGen: the other
/// file of the pair is found beside it), `.msh` (Gmsh 2.2 or 4.x ASCII), `.mesh` (Medit).
TetMesh read_tet_mesh(const std::filesystem::path& path);

/// Reads a surface by extension: `.obj` (v/f lines, polygons fan-triangulated), `.off`,
/// `.stl` (ASCII or binary, vertices welded by exact position).
SurfaceMesh read_surface_mesh(const std::filesystem::path& path);

/// Writes `surface` as OFF through a temporary file renamed over `path` when complete.
void write_off(const SurfaceMesh& surface, const std::filesystem::path& path);

}  // namespace cholsim::fem
