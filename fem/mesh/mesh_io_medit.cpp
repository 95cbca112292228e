// Medit .mesh reader (ASCII, the libMeshb keyword format as written by libigl, TetGen -g,
// gmsh -format mesh): keyword lines followed by a count and one entry per line.
#include <limits>

#include "fem/mesh/mesh_io.hpp"
#include "fem/mesh/mesh_io_text.hpp"

namespace cholsim::fem {
namespace {

using mesh_text::TextFile;
using mesh_text::Words;

constexpr std::int64_t max_count = std::numeric_limits<Index>::max() / 4;

/// The number after a keyword: on the keyword's own line ("Dimension 3") or on the next.
std::int64_t keyword_value(TextFile& text, Words& words, const std::string& keyword, std::int64_t minimum,
                           std::int64_t maximum) {
  const std::string what = "the " + keyword + " value";
  if (words.done()) {
    text.require_line(what);
    Words next(text);
    const std::int64_t value = next.integer_in(what, minimum, maximum);
    next.finish(what + " alone");
    return value;
  }
  const std::int64_t value = words.integer_in(what, minimum, maximum);
  words.finish(what + " alone");
  return value;
}

void read_vertices(TextFile& text, std::int64_t count, std::vector<double>& positions) {
  text.require_room_for(count, "vertex lines");
  positions.reserve(static_cast<std::size_t>(3 * count));
  const std::string form = "'<x> <y> <z> <reference>'";
  const std::string expected_line = std::to_string(count) + " vertex lines " + form;
  for (std::int64_t vertex = 0; vertex < count; ++vertex) {
    text.require_line(expected_line);
    Words words(text);
    mesh_text::read_point(words, positions);
    words.integer("the vertex reference");
    words.finish(form);
  }
}

/// Tetrahedra may come before Vertices in principle, so indices are range-checked at the end
/// (validate_tet_mesh); here they only need to be positive (1-based).
void read_tetrahedra(TextFile& text, std::int64_t count, std::vector<Index>& tets, std::vector<std::int64_t>& lines) {
  text.require_room_for(count, "tetrahedron lines");
  tets.reserve(tets.size() + static_cast<std::size_t>(4 * count));
  const std::string form = "'<v1> <v2> <v3> <v4> <reference>' (1-based)";
  const std::string expected_line = std::to_string(count) + " tetrahedron lines " + form;
  for (std::int64_t tet = 0; tet < count; ++tet) {
    text.require_line(expected_line);
    Words words(text);
    for (int corner = 0; corner < 4; ++corner) {
      tets.push_back(static_cast<Index>(words.integer_in("a vertex number", 1, max_count) - 1));
    }
    words.integer("the tetrahedron reference");
    words.finish(form);
    lines.push_back(text.line_number());
  }
}

void skip_entries(TextFile& text, std::int64_t count, const std::string& keyword) {
  const std::string expected_line = std::to_string(count) + " " + keyword + " lines";
  for (std::int64_t entry = 0; entry < count; ++entry) text.require_line(expected_line);
}

}  // namespace

TetMesh read_medit_mesh(const std::filesystem::path& path) {
  TextFile text(path, '#');
  TetMesh mesh;
  std::vector<std::int64_t> tet_lines;
  bool has_version = false;
  bool has_vertices = false;
  while (text.next_line()) {
    Words words(text);
    const std::string keyword(words.word("a keyword"));
    if (!has_version) {
      if (keyword == "MeshVersionUnformatted") {
        text.fail("binary Medit mesh (.meshb) is not supported", "an ASCII .mesh file ('MeshVersionFormatted')");
      }
      if (keyword != "MeshVersionFormatted") text.fail(mesh_text::quoted(keyword), "'MeshVersionFormatted <1|2|3>' first");
      keyword_value(text, words, keyword, 1, 4);
      has_version = true;
    } else if (keyword == "End") {
      words.finish("'End' alone");
      break;
    } else if (keyword == "Dimension") {
      keyword_value(text, words, keyword, 3, 3);
    } else {
      const std::int64_t count = keyword_value(text, words, keyword, 0, max_count);
      if (keyword == "Vertices") {
        if (has_vertices) text.fail("a second Vertices section", "one Vertices section");
        has_vertices = true;
        read_vertices(text, count, mesh.positions);
      } else if (keyword == "Tetrahedra") {
        read_tetrahedra(text, count, mesh.tets, tet_lines);
      } else {
        skip_entries(text, count, keyword);  // Triangles, Edges, Corners, Ridges, Normals, …
      }
    }
  }
  if (!has_version) throw MeshFormatError(text.file(), 0, "the file is empty", "a Medit .mesh file");
  if (!has_vertices) throw MeshFormatError(text.file(), 0, "no Vertices section", "vertices and tetrahedra");
  if (mesh.tets.empty()) throw MeshFormatError(text.file(), 0, "no Tetrahedra section", "a volume mesh");
  for (std::size_t i = 0; i < mesh.tets.size(); ++i) {
    if (mesh.tets[i] >= mesh.node_count()) {
      throw MeshFormatError(text.file(), tet_lines[i / 4], "vertex " + std::to_string(mesh.tets[i] + 1),
                            "a vertex number in 1.." + std::to_string(mesh.node_count()));
    }
  }
  return mesh;
}

}  // namespace cholsim::fem
