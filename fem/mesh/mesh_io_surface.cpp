// Triangle-surface readers: Wavefront OBJ, OFF, STL (ASCII and binary). Surfaces are obstacles
// and the input of `tetgen`; polygons are fan-triangulated, which is exact for the convex
// quads and planar polygons these formats hold in practice.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "fem/mesh/mesh_io.hpp"
#include "fem/mesh/mesh_io_text.hpp"

namespace cholsim::fem {
namespace {

using mesh_text::TextFile;
using mesh_text::Words;

constexpr std::int64_t max_count = std::numeric_limits<Index>::max() / 3;

/// Appends the fan (p₀, pᵢ, pᵢ₊₁) of a polygon with at least three corners.
void add_fan(SurfaceMesh& surface, const std::vector<Index>& polygon) {
  for (std::size_t i = 1; i + 1 < polygon.size(); ++i) {
    surface.triangles.insert(surface.triangles.end(), {polygon[0], polygon[i], polygon[i + 1]});
  }
}

// --- OBJ -------------------------------------------------------------------------------------

/// The vertex part of an OBJ face corner ("7", "7/2", "7/2/5", "7//5"), 0-based; negative
/// numbers count back from the last vertex defined so far.
Index obj_corner(const TextFile& text, std::string_view token, Index defined) {
  const std::string_view vertex = token.substr(0, token.find('/'));
  std::int64_t number = 0;
  if (!mesh_text::parse_integer(vertex, number) || number == 0) {
    text.fail(mesh_text::quoted(token) + " is not a vertex reference", "'v', 'v/t', 'v/t/n' or 'v//n' with v ≠ 0");
  }
  const std::int64_t index = number > 0 ? number - 1 : defined + number;
  if (index < 0 || index >= defined) {
    text.fail("vertex " + std::to_string(number) + " is not defined yet",
              "a vertex number in 1.." + std::to_string(defined) + " (or -1..-" + std::to_string(defined) + ")");
  }
  return static_cast<Index>(index);
}

// --- OFF -------------------------------------------------------------------------------------

/// "OFF" with optional prefix letters (ST = texture, C = colour, N = normal): the prefixed
/// variants carry extra numbers on each vertex line.
bool is_off_keyword(std::string_view word, bool& has_vertex_extras) {
  if (word.size() < 3 || word.substr(word.size() - 3) != "OFF") return false;
  const std::string_view prefix = word.substr(0, word.size() - 3);
  has_vertex_extras = !prefix.empty();
  return prefix.find_first_not_of("STCN") == std::string_view::npos;
}

// --- STL -------------------------------------------------------------------------------------

/// Welds vertices by exact position (STL stores every triangle's corners separately).
class VertexWelder {
 public:
  explicit VertexWelder(SurfaceMesh& surface) : surface_(surface) {}
  Index index_of(std::array<double, 3> point) {
    for (double& value : point) value += 0.0;  // −0 and +0 are one position
    const auto [slot, added] = index_.emplace(point, surface_.node_count());
    if (added) surface_.positions.insert(surface_.positions.end(), point.begin(), point.end());
    return slot->second;
  }
  /// Adds the triangle unless welding made two corners one (a zero-area sliver of the STL).
  void add_triangle(const std::array<std::array<double, 3>, 3>& corners) {
    const std::array<Index, 3> t{index_of(corners[0]), index_of(corners[1]), index_of(corners[2])};
    if (t[0] != t[1] && t[1] != t[2] && t[0] != t[2]) surface_.triangles.insert(surface_.triangles.end(), t.begin(), t.end());
  }

 private:
  struct Hash {
    std::size_t operator()(const std::array<double, 3>& p) const {
      std::size_t hash = 0;
      for (const double value : p) hash = hash * 0x9E3779B97F4A7C15ull + std::hash<std::uint64_t>{}(std::bit_cast<std::uint64_t>(value));
      return hash;
    }
  };
  SurfaceMesh& surface_;
  std::unordered_map<std::array<double, 3>, Index, Hash> index_;
};

constexpr std::size_t stl_header_bytes = 84;
constexpr std::size_t stl_triangle_bytes = 50;

bool is_binary_stl(std::string_view bytes) {
  if (bytes.size() < stl_header_bytes) return false;
  std::uint32_t count = 0;
  std::memcpy(&count, bytes.data() + 80, sizeof count);
  return bytes.size() == stl_header_bytes + stl_triangle_bytes * std::size_t{count};
}

// Binary STL is little-endian float32: normal, three corners, a 16-bit attribute.
SurfaceMesh read_binary_stl(const std::string& file, std::string_view bytes) {
  static_assert(std::endian::native == std::endian::little, "binary STL reading assumes a little-endian host");
  SurfaceMesh surface;
  VertexWelder welder(surface);
  const std::size_t count = (bytes.size() - stl_header_bytes) / stl_triangle_bytes;
  for (std::size_t triangle = 0; triangle < count; ++triangle) {
    std::array<float, 12> values{};
    std::memcpy(values.data(), bytes.data() + stl_header_bytes + stl_triangle_bytes * triangle, sizeof values);
    std::array<std::array<double, 3>, 3> corners{};
    for (std::size_t c = 0; c < 3; ++c) {
      for (std::size_t a = 0; a < 3; ++a) {
        corners[c][a] = values[3 + 3 * c + a];
        if (!std::isfinite(corners[c][a])) {
          throw MeshFormatError(file, 0, "binary triangle " + std::to_string(triangle + 1) + " has a non-finite coordinate",
                                "finite float32 coordinates");
        }
      }
    }
    welder.add_triangle(corners);
  }
  return surface;
}

/// Reads the next line and checks that it starts with `keyword` (then `second`, if given).
Words expect_stl_line(TextFile& text, const std::string& keyword, const std::string& second = {}) {
  const std::string expected = "'" + keyword + (second.empty() ? "" : " " + second) + "'";
  text.require_line(expected);
  Words words(text);
  if (mesh_text::lower_case(words.word(expected)) != keyword) text.fail(mesh_text::quoted(text.line()), expected);
  if (!second.empty() && mesh_text::lower_case(words.word(expected)) != second) text.fail(mesh_text::quoted(text.line()), expected);
  return words;
}

SurfaceMesh read_ascii_stl(TextFile& text) {
  SurfaceMesh surface;
  VertexWelder welder(surface);
  bool in_solid = false;
  while (text.next_line()) {
    Words words(text);
    const std::string keyword = mesh_text::lower_case(words.word("a keyword"));
    if (!in_solid) {
      if (keyword != "solid") text.fail(mesh_text::quoted(text.line()), "'solid <name>'");
      in_solid = true;
      continue;
    }
    if (keyword == "endsolid") {
      in_solid = false;
      continue;
    }
    if (keyword != "facet") text.fail(mesh_text::quoted(text.line()), "'facet normal <nx> <ny> <nz>' or 'endsolid'");
    if (mesh_text::lower_case(words.word("'normal'")) != "normal") text.fail(mesh_text::quoted(text.line()), "'facet normal <nx> <ny> <nz>'");
    // The normal is recomputed from the corners; some writers put "nan" here, so it is not parsed.
    for (int axis = 0; axis < 3; ++axis) words.word("three normal components");
    words.finish("'facet normal <nx> <ny> <nz>'");
    expect_stl_line(text, "outer", "loop").finish("'outer loop'");
    std::array<std::array<double, 3>, 3> corners{};
    for (auto& corner : corners) {
      Words vertex = expect_stl_line(text, "vertex");
      for (double& value : corner) value = vertex.real("a vertex coordinate");
      vertex.finish("'vertex <x> <y> <z>' (triangles only)");
    }
    expect_stl_line(text, "endloop").finish("'endloop'");
    expect_stl_line(text, "endfacet").finish("'endfacet'");
    welder.add_triangle(corners);
  }
  if (in_solid) text.fail("the file ends inside a solid", "'endsolid'");
  return surface;
}

}  // namespace

SurfaceMesh read_obj(const std::filesystem::path& path) {
  TextFile text(path, '#');
  SurfaceMesh surface;
  std::vector<Index> polygon;
  while (text.next_line()) {
    Words words(text);
    const std::string_view keyword = words.word("a keyword");
    if (keyword == "v") {
      if (surface.node_count() >= max_count) text.fail("too many vertices", "fewer than " + std::to_string(max_count));
      mesh_text::read_point(words, surface.positions);
      // 'v x y z [w]' or, from some scanners, 'v x y z r g b': extras carry no geometry.
      for (int extra = 0; extra < 3 && !words.done(); ++extra) words.real("a vertex weight or colour value");
      words.finish("'v <x> <y> <z> [w | r g b]'");
    } else if (keyword == "f") {
      polygon.clear();
      while (!words.done()) polygon.push_back(obj_corner(text, words.word("a vertex reference"), surface.node_count()));
      if (polygon.size() < 3) text.fail("a face with " + std::to_string(polygon.size()) + " corners", "at least 3");
      add_fan(surface, polygon);
    }
    // vt, vn, g, o, s, usemtl, mtllib, l, …: no geometry of the solid.
  }
  if (surface.triangles.empty()) throw MeshFormatError(text.file(), 0, "no faces", "'f' lines of a surface");
  return surface;
}

SurfaceMesh read_off(const std::filesystem::path& path) {
  TextFile text(path, '#');
  text.require_line("'OFF'");
  Words first(text);
  bool has_vertex_extras = false;
  if (!is_off_keyword(first.word("'OFF'"), has_vertex_extras)) text.fail(mesh_text::quoted(text.line()), "'OFF' (or COFF, NOFF, STOFF)");
  if (text.line().find("BINARY") != std::string_view::npos) text.fail("binary OFF is not supported", "an ASCII OFF file");
  std::int64_t vertices = 0;
  std::int64_t faces = 0;
  const auto read_counts = [&](Words& counts) {
    vertices = counts.integer_in("the vertex count", 1, max_count);
    faces = counts.integer_in("the face count", 1, max_count);
    if (!counts.done()) counts.integer("the edge count");
    counts.finish("'<vertices> <faces> <edges>'");
  };
  if (first.done()) {
    text.require_line("'<vertices> <faces> <edges>'");
    Words counts(text);
    read_counts(counts);
  } else {
    read_counts(first);  // some writers put the counts on the OFF line itself
  }

  text.require_room_for(vertices, "vertex lines");
  SurfaceMesh surface;
  surface.positions.reserve(static_cast<std::size_t>(3 * vertices));
  const std::string expected_vertex_line = std::to_string(vertices) + " vertex lines '<x> <y> <z>'";
  for (std::int64_t vertex = 0; vertex < vertices; ++vertex) {
    text.require_line(expected_vertex_line);
    Words words(text);
    mesh_text::read_point(words, surface.positions);
    if (!has_vertex_extras) words.finish("'<x> <y> <z>'");
  }
  std::vector<Index> polygon;
  const std::string expected_face_line = std::to_string(faces) + " face lines '<n> <v1> ... <vn>'";
  const std::string vertex_number = "a vertex number (0-based)";
  for (std::int64_t face = 0; face < faces; ++face) {
    text.require_line(expected_face_line);
    Words words(text);
    const std::int64_t corners = words.integer_in("the corner count", 3, vertices);
    polygon.clear();
    for (std::int64_t corner = 0; corner < corners; ++corner) {
      polygon.push_back(static_cast<Index>(words.integer_in(vertex_number, 0, vertices - 1)));
    }
    add_fan(surface, polygon);  // anything after the corners is the face's colour
  }
  if (text.next_line()) text.fail("an extra line after the " + std::to_string(faces) + " faces", "the end of the file");
  return surface;
}

SurfaceMesh read_stl(const std::filesystem::path& path) {
  TextFile text(path, '\0');
  // Binary files may also begin with "solid", so the size decides: exactly 84 + 50·count bytes.
  SurfaceMesh surface =
      is_binary_stl(text.contents()) ? read_binary_stl(text.file(), text.contents()) : read_ascii_stl(text);
  if (surface.triangles.empty()) throw MeshFormatError(text.file(), 0, "no facets", "an ASCII or binary STL surface");
  return surface;
}

}  // namespace cholsim::fem
