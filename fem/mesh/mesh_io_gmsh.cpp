// Gmsh .msh reader, ASCII formats 2.2 and 4.0/4.1
// (https://gmsh.info/doc/texinfo/gmsh.html#MSH-file-format). Only volume tets are kept: the
// simulation needs the solid, and boundary triangles are recomputed by boundary_surface.
#include <limits>
#include <optional>
#include <unordered_map>

#include "fem/mesh/mesh_io.hpp"
#include "fem/mesh/mesh_io_text.hpp"

namespace cholsim::fem {
namespace {

using mesh_text::TextFile;
using mesh_text::Words;

constexpr std::int64_t max_count = std::numeric_limits<Index>::max() / 4;
constexpr int linear_tet_type = 4;
constexpr int quadratic_tet_type = 11;  // corners first, then edge nodes (dropped)

enum class Version { v2, v40, v41 };

/// Nodes by their Gmsh tag (any positive numbers) and tets by node tags, resolved to indices
/// once the whole file is read (sections may come in any order).
struct GmshContent {
  std::vector<double> positions;
  std::unordered_map<std::int64_t, Index> index_of_tag;
  std::vector<std::int64_t> tet_tags;
  std::vector<std::int64_t> tet_lines;  ///< the line of each tet, for the unknown-tag message
};

std::optional<int> tet_node_count(std::int64_t element_type) {
  if (element_type == linear_tet_type) return 4;
  if (element_type == quadratic_tet_type) return 10;
  return std::nullopt;
}

void expect_end_of_section(TextFile& text, const std::string& name) {
  text.require_line("$End" + name);
  if (text.line() != "$End" + name) text.fail(mesh_text::quoted(text.line()), "$End" + name);
}

Version read_mesh_format(TextFile& text) {
  const std::string format = "'<version 2.2|4.0|4.1> <file-type 0> <data-size>'";
  text.require_line(format);
  Words words(text);
  const std::string_view version = words.word("the version of " + format);
  const std::int64_t file_type = words.integer("the file type (0 = ASCII)");
  if (file_type == 1) {
    text.fail("binary .msh is not supported",
              "an ASCII file (file type 0; re-save with `gmsh FILE -save -format msh41` without -bin)");
  }
  if (file_type != 0) text.fail("file type " + std::to_string(file_type), "0 (ASCII)");
  words.integer("the data size");
  words.finish(format);
  Version result{};
  if (version == "2" || version == "2.0" || version == "2.1" || version == "2.2") {
    result = Version::v2;
  } else if (version == "4" || version == "4.0") {
    result = Version::v40;
  } else if (version == "4.1") {
    result = Version::v41;
  } else {
    text.fail("version " + mesh_text::quoted(version), "2.2, 4.0 or 4.1");
  }
  expect_end_of_section(text, "MeshFormat");
  return result;
}

void add_node(TextFile& text, GmshContent& content, std::int64_t tag, Words& coordinates) {
  mesh_text::read_point(coordinates, content.positions);
  const auto index = static_cast<Index>(content.positions.size() / 3 - 1);
  if (!content.index_of_tag.emplace(tag, index).second) {
    text.fail("node tag " + std::to_string(tag) + " defined twice", "unique node tags");
  }
}

void read_nodes_v2(TextFile& text, GmshContent& content) {
  text.require_line("the node count");
  Words header(text);
  const std::int64_t count = header.integer_in("the node count", 0, max_count);
  header.finish("the node count alone");
  const std::string expected_line = std::to_string(count) + " node lines '<tag> <x> <y> <z>'";
  for (std::int64_t node = 0; node < count; ++node) {
    text.require_line(expected_line);
    Words words(text);
    add_node(text, content, words.integer_in("the node tag", 1, std::numeric_limits<std::int64_t>::max()), words);
    words.finish("'<tag> <x> <y> <z>'");
  }
}

void read_nodes_v4(TextFile& text, GmshContent& content, Version version) {
  const std::string header_form =
      version == Version::v41 ? "'<blocks> <nodes> <min tag> <max tag>'" : "'<blocks> <nodes>'";
  text.require_line(header_form);
  Words header(text);
  const std::int64_t blocks = header.integer_in("the block count of " + header_form, 0, max_count);
  const std::int64_t total = header.integer_in("the node count of " + header_form, 0, max_count);
  if (version == Version::v41) {
    header.integer("the minimum node tag");
    header.integer("the maximum node tag");
  }
  header.finish(header_form);
  const std::string block_form = "'<entity dim> <entity tag> <parametric 0|1> <nodes in block>'";
  std::int64_t read = 0;
  for (std::int64_t block = 0; block < blocks; ++block) {
    text.require_line("node block header " + block_form);
    Words block_header(text);
    block_header.integer("the entity dimension or tag");
    block_header.integer("the entity tag or dimension");
    const bool parametric = block_header.integer_in("the parametric flag", 0, 1) == 1;
    const std::int64_t count = block_header.integer_in("the block's node count", 0, total - read);
    block_header.finish(block_form);
    const std::string expected_lines = std::to_string(count) + " node lines of the block";
    if (version == Version::v40) {
      for (std::int64_t node = 0; node < count; ++node) {
        text.require_line(expected_lines);
        Words words(text);
        add_node(text, content, words.integer_in("the node tag", 1, std::numeric_limits<std::int64_t>::max()), words);
        if (!parametric) words.finish("'<tag> <x> <y> <z>'");
      }
    } else {
      // Format 4.1 lists the block's tags first, then its coordinates.
      text.require_room_for(2 * count, "lines of node tags and coordinates");
      std::vector<std::int64_t> tags(static_cast<std::size_t>(count));
      for (auto& tag : tags) {
        text.require_line(expected_lines);
        Words words(text);
        tag = words.integer_in("the node tag", 1, std::numeric_limits<std::int64_t>::max());
        words.finish("one node tag per line");
      }
      for (const std::int64_t tag : tags) {
        text.require_line(expected_lines);
        Words words(text);
        add_node(text, content, tag, words);
        if (!parametric) words.finish("'<x> <y> <z>'");
      }
    }
    read += count;
  }
  if (read != total) text.fail(std::to_string(read) + " nodes in the blocks", std::to_string(total) + " as the header says");
}

void add_tet(TextFile& text, GmshContent& content, Words& words, int node_count) {
  const std::string_view expected = node_count == 4 ? "4 node tags of a tet" : "10 node tags of a quadratic tet";
  for (int node = 0; node < node_count; ++node) {
    const std::int64_t tag = words.integer(expected);
    if (node < 4) content.tet_tags.push_back(tag);
  }
  content.tet_lines.push_back(text.line_number());
  words.finish(expected);
}

void read_elements_v2(TextFile& text, GmshContent& content) {
  text.require_line("the element count");
  Words header(text);
  const std::int64_t count = header.integer_in("the element count", 0, std::numeric_limits<std::int64_t>::max());
  header.finish("the element count alone");
  const std::string expected_line =
      std::to_string(count) + " element lines '<tag> <type> <tag count> <tags...> <nodes...>'";
  for (std::int64_t element = 0; element < count; ++element) {
    text.require_line(expected_line);
    Words words(text);
    words.integer("the element tag");
    const std::optional<int> nodes = tet_node_count(words.integer("the element type"));
    if (!nodes) continue;  // points, lines, triangles, …: not part of the solid
    const std::int64_t tag_count = words.integer_in("the number of tags", 0, 1000);
    for (std::int64_t tag = 0; tag < tag_count; ++tag) words.integer("an element tag");
    add_tet(text, content, words, *nodes);
  }
}

void read_elements_v4(TextFile& text, GmshContent& content, Version version) {
  const std::string header_form =
      version == Version::v41 ? "'<blocks> <elements> <min tag> <max tag>'" : "'<blocks> <elements>'";
  text.require_line(header_form);
  Words header(text);
  const std::int64_t blocks = header.integer_in("the block count of " + header_form, 0, max_count);
  const std::int64_t total =
      header.integer_in("the element count of " + header_form, 0, std::numeric_limits<std::int64_t>::max());
  if (version == Version::v41) {
    header.integer("the minimum element tag");
    header.integer("the maximum element tag");
  }
  header.finish(header_form);
  const std::string block_form = "'<entity dim> <entity tag> <element type> <elements in block>'";
  std::int64_t read = 0;
  for (std::int64_t block = 0; block < blocks; ++block) {
    text.require_line("element block header " + block_form);
    Words block_header(text);
    block_header.integer("the entity dimension or tag");
    block_header.integer("the entity tag or dimension");
    const std::optional<int> nodes = tet_node_count(block_header.integer("the element type"));
    const std::int64_t count = block_header.integer_in("the block's element count", 0, total - read);
    block_header.finish(block_form);
    const std::string expected_line = std::to_string(count) + " element lines '<tag> <node tags...>'";
    for (std::int64_t element = 0; element < count; ++element) {
      text.require_line(expected_line);
      if (!nodes) continue;
      Words words(text);
      words.integer("the element tag");
      add_tet(text, content, words, *nodes);
    }
    read += count;
  }
  if (read != total) {
    text.fail(std::to_string(read) + " elements in the blocks", std::to_string(total) + " as the header says");
  }
}

void skip_section(TextFile& text, const std::string& name) {
  while (text.next_line()) {
    if (text.line() == "$End" + name) return;
  }
  text.fail("the file ends inside $" + name, "$End" + name);
}

TetMesh resolve_tets(const std::string& file, GmshContent& content) {
  TetMesh mesh;
  mesh.tets.reserve(content.tet_tags.size());
  for (std::size_t i = 0; i < content.tet_tags.size(); ++i) {
    const auto found = content.index_of_tag.find(content.tet_tags[i]);
    if (found == content.index_of_tag.end()) {
      throw MeshFormatError(file, content.tet_lines[i / 4],
                            "node tag " + std::to_string(content.tet_tags[i]) + " is not defined in $Nodes",
                            "tags of nodes listed in $Nodes");
    }
    mesh.tets.push_back(found->second);
  }
  mesh.positions = std::move(content.positions);
  return mesh;
}

}  // namespace

TetMesh read_gmsh_mesh(const std::filesystem::path& path) {
  TextFile text(path, '\0');
  std::optional<Version> version;
  GmshContent content;
  bool has_nodes = false;
  while (text.next_line()) {
    const std::string_view line = text.line();
    if (line.empty() || line[0] != '$') text.fail(mesh_text::quoted(line), "a section start such as $Nodes");
    const std::string name(line.substr(1));
    if (!version && name != "MeshFormat") {
      text.fail(mesh_text::quoted(line) + " before $MeshFormat", "$MeshFormat first (Gmsh 2.2 or 4.x; Gmsh 1 is not supported)");
    }
    if (name == "MeshFormat") {
      version = read_mesh_format(text);
      continue;
    }
    if (name == "Nodes") {
      if (has_nodes) text.fail("a second $Nodes section", "one $Nodes section");
      has_nodes = true;
      if (*version == Version::v2) {
        read_nodes_v2(text, content);
      } else {
        read_nodes_v4(text, content, *version);
      }
    } else if (name == "Elements") {
      if (*version == Version::v2) {
        read_elements_v2(text, content);
      } else {
        read_elements_v4(text, content, *version);
      }
    } else {
      skip_section(text, name);  // $Entities, $PhysicalNames, $NodeData, …
      continue;
    }
    expect_end_of_section(text, name);
  }
  if (!version) throw MeshFormatError(text.file(), 0, "no $MeshFormat section", "a Gmsh .msh file");
  if (!has_nodes) throw MeshFormatError(text.file(), 0, "no $Nodes section", "nodes and tetrahedra");
  if (content.tet_tags.empty()) {
    throw MeshFormatError(text.file(), 0, "no tetrahedra (element type 4 or 11)", "a volume mesh");
  }
  return resolve_tets(text.file(), content);
}

}  // namespace cholsim::fem
