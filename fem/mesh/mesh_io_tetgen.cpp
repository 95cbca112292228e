// TetGen .node/.ele reader (the format written by `tetgen`, and by PositionBasedDynamics,
// Vega and others): https://wias-berlin.de/software/tetgen/fformats.html.
#include <limits>

#include "fem/mesh/mesh_io.hpp"
#include "fem/mesh/mesh_io_text.hpp"

namespace cholsim::fem {
namespace {

using mesh_text::TextFile;
using mesh_text::Words;

constexpr std::int64_t max_count = std::numeric_limits<Index>::max() / 4;

struct NodeFile {
  std::vector<double> positions;
  std::int64_t first_number = 0;  ///< 0 or 1: the numbering .ele uses too
};

/// Fails unless the file has no further content lines (the header's count was exact).
void require_end(TextFile& text, const std::string& what) {
  if (text.next_line()) text.fail("an extra line after the " + what, "the end of the file (as many entries as the header says)");
}

NodeFile read_node_file(const std::filesystem::path& path) {
  TextFile text(path, '#');
  text.require_line("the header '<points> 3 <attributes> <boundary markers 0|1>'");
  Words header(text);
  const std::string header_form = "'<points> 3 <attributes> <boundary markers 0|1>'";
  const std::int64_t points = header.integer_in("the point count of " + header_form, 1, max_count);
  header.integer_in("the dimension of " + header_form, 3, 3);
  const std::int64_t attributes = header.done() ? 0 : header.integer_in("the attribute count", 0, 1000);
  const std::int64_t markers = header.done() ? 0 : header.integer_in("the boundary-marker flag", 0, 1);
  header.finish(header_form);

  text.require_room_for(points, "point lines");
  NodeFile nodes;
  nodes.positions.reserve(static_cast<std::size_t>(3 * points));
  const std::string line_form = "'<point number> <x> <y> <z>' plus " + std::to_string(attributes) +
                                " attributes and " + std::to_string(markers) + " markers";
  const std::string expected_line = std::to_string(points) + " point lines " + line_form;
  for (std::int64_t point = 0; point < points; ++point) {
    text.require_line(expected_line);
    Words words(text);
    const std::int64_t number = words.integer("the point number");
    if (point == 0) {
      if (number != 0 && number != 1) text.fail("first point number " + std::to_string(number), "0 or 1");
      nodes.first_number = number;
    } else if (number != nodes.first_number + point) {
      text.fail("point number " + std::to_string(number), "consecutive numbers: " + std::to_string(nodes.first_number + point));
    }
    mesh_text::read_point(words, nodes.positions);
    for (std::int64_t extra = 0; extra < attributes + markers; ++extra) words.word(line_form);
    words.finish(line_form);
  }
  require_end(text, std::to_string(points) + " points");
  return nodes;
}

std::vector<Index> read_ele_file(const std::filesystem::path& path, const NodeFile& nodes) {
  TextFile text(path, '#');
  const std::string header_form = "'<tetrahedra> <nodes per tet 4|10> <attributes>'";
  text.require_line("the header " + header_form);
  Words header(text);
  const std::int64_t tets = header.integer_in("the tet count of " + header_form, 1, max_count);
  const std::int64_t nodes_per_tet = header.integer("nodes per tet (4 or 10)");
  if (nodes_per_tet != 4 && nodes_per_tet != 10) {
    text.fail(std::to_string(nodes_per_tet) + " nodes per tet", "4 or 10 (linear or quadratic tets)");
  }
  const std::int64_t attributes = header.done() ? 0 : header.integer_in("the attribute count", 0, 1000);
  header.finish(header_form);
  text.require_room_for(tets, "tet lines");

  const std::int64_t first = nodes.first_number;
  const std::int64_t last = first + static_cast<std::int64_t>(nodes.positions.size() / 3) - 1;
  const std::string line_form = "'<tet number>' and " + std::to_string(nodes_per_tet) + " node numbers plus " +
                                std::to_string(attributes) + " attributes";
  std::vector<Index> indices;
  indices.reserve(static_cast<std::size_t>(4 * tets));
  std::int64_t first_tet_number = 0;
  const std::string expected_line = std::to_string(tets) + " tet lines " + line_form;
  const std::string node_number = "a node number (numbered from " + std::to_string(first) + " as in the .node file)";
  for (std::int64_t tet = 0; tet < tets; ++tet) {
    text.require_line(expected_line);
    Words words(text);
    const std::int64_t number = words.integer("the tet number");
    if (tet == 0) {
      first_tet_number = number;
    } else if (number != first_tet_number + tet) {
      text.fail("tet number " + std::to_string(number), "consecutive numbers: " + std::to_string(first_tet_number + tet));
    }
    // Quadratic tets list their corners first; the edge midpoints are dropped (linear elements).
    for (std::int64_t corner = 0; corner < nodes_per_tet; ++corner) {
      const std::int64_t node = words.integer_in(node_number, first, last);
      if (corner < 4) indices.push_back(static_cast<Index>(node - first));
    }
    for (std::int64_t extra = 0; extra < attributes; ++extra) words.real("tet attribute");
    words.finish(line_form);
  }
  require_end(text, std::to_string(tets) + " tets");
  return indices;
}

}  // namespace

TetMesh read_tetgen_mesh(const std::filesystem::path& node_or_ele_path) {
  std::filesystem::path node_path = node_or_ele_path;
  std::filesystem::path ele_path = node_or_ele_path;
  node_path.replace_extension(".node");
  ele_path.replace_extension(".ele");
  NodeFile nodes = read_node_file(node_path);
  TetMesh mesh;
  mesh.tets = read_ele_file(ele_path, nodes);
  mesh.positions = std::move(nodes.positions);
  return mesh;
}

}  // namespace cholsim::fem
