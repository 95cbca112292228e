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

#include "fem/mesh/tet_mesh.hpp"

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

/// A closed surface from any mesh file: a surface (read_surface_mesh's extensions) as it is,
/// a tet mesh (read_tet_mesh's) by its boundary — what the octree builds from (seed 001 §6).
SurfaceMesh read_closed_surface(const std::filesystem::path& path);

/// TetGen `.node` + `.ele` (either path; the other is found beside it by extension). Point
/// numbers may start at 0 or 1 — the first point of the .node file says which, and .ele uses
/// the same numbering; attributes and boundary markers are read past; 10-node tets keep their
/// 4 corners.
TetMesh read_tetgen_mesh(const std::filesystem::path& node_or_ele_path);

/// Gmsh `.msh`, format 2.2 or 4.0/4.1 ASCII. Tetrahedra (element type 4, and the corners of
/// 10-node type 11) are kept, all other elements skipped; node tags may be any positive
/// numbers. A binary file is a MeshFormatError ("binary .msh is not supported").
TetMesh read_gmsh_mesh(const std::filesystem::path& path);

/// Medit `.mesh` (ASCII, one entry per line): Vertices and Tetrahedra sections, 1-based;
/// other sections (Triangles, Edges, Corners, …) skipped.
TetMesh read_medit_mesh(const std::filesystem::path& path);

/// Wavefront OBJ: `v x y z [w | r g b]`, `f a b c …` (a, a/t, a/t/n, a//n; negative = relative to the end),
/// polygons fan-triangulated; other lines (vt, vn, g, o, s, usemtl, l, …) ignored.
SurfaceMesh read_obj(const std::filesystem::path& path);

/// OFF (also with C/N/ST prefixes, whose extra per-vertex values are ignored): polygons
/// fan-triangulated, per-face colours ignored.
SurfaceMesh read_off(const std::filesystem::path& path);

/// STL, ASCII or binary (binary when the size is exactly 84 + 50·count bytes, whatever the
/// header says), vertices welded by exact position; triangles that welding collapses (two equal
/// corners) are dropped, stored normals ignored.
SurfaceMesh read_stl(const std::filesystem::path& path);

/// Writes `surface` as OFF through a temporary file renamed over `path` when complete.
void write_off(const SurfaceMesh& surface, const std::filesystem::path& path);

}  // namespace cholsim::fem
