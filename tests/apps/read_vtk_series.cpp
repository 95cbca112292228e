// read_vtk_series: opens a .pvd collection and every .vtu it lists with VTK's own readers (as
// ParaView would) and checks what a client relies on — the frame count, increasing times, the
// same point and cell counts in every frame (unless --remeshed), tetrahedral (or --triangles, --hexahedra,
// --vertices) cells, and the named arrays with their component counts and finite values. Exit 0 when everything matches, 1 otherwise
// (each mismatch on stderr), 2 for bad arguments. Used by the `cholsim corot` app tests.
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkDataArray.h>
#include <vtkPointData.h>

#include "vtk_series_reading.hpp"

namespace {

using cholsim::apps::testing::read_collection;
using cholsim::apps::testing::read_unstructured_grid;

struct ArraySpec {
  std::string name;
  int components = 1;
};

/// "velocity:3" → {velocity, 3}; the components must be 1 or 3.
ArraySpec parse_array_spec(const std::string& text) {
  const auto colon = text.rfind(':');
  const std::string components = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (colon == 0 || (components != "1" && components != "3")) {
    throw CLI::ValidationError(text + ": expected NAME:1 or NAME:3");
  }
  return {text.substr(0, colon), components == "1" ? 1 : 3};
}

std::vector<ArraySpec> parse_array_specs(const std::vector<std::string>& texts) {
  std::vector<ArraySpec> specs;
  for (const std::string& text : texts) specs.push_back(parse_array_spec(text));
  return specs;
}

class Checker {
 public:
  void expect(bool condition, const std::string& message) {
    if (!condition) {
      std::cerr << "read_vtk_series: " << message << '\n';
      ++failures_;
    }
  }
  [[nodiscard]] int failures() const { return failures_; }

 private:
  int failures_ = 0;
};

void check_array(Checker& checker, vtkDataArray* array, const ArraySpec& spec, vtkIdType tuples,
                 const std::string& where) {
  checker.expect(array != nullptr, where + ": no array '" + spec.name + "'");
  if (array == nullptr) return;
  checker.expect(array->GetNumberOfComponents() == spec.components,
                 where + ": array '" + spec.name + "' has " + std::to_string(array->GetNumberOfComponents()) +
                     " components, expected " + std::to_string(spec.components));
  checker.expect(array->GetNumberOfTuples() == tuples, where + ": array '" + spec.name + "' has " +
                                                           std::to_string(array->GetNumberOfTuples()) +
                                                           " tuples, expected " + std::to_string(tuples));
  for (vtkIdType tuple = 0; tuple < array->GetNumberOfTuples(); ++tuple) {
    for (int component = 0; component < array->GetNumberOfComponents(); ++component) {
      if (!std::isfinite(array->GetComponent(tuple, component))) {
        checker.expect(false, where + ": array '" + spec.name + "' is not finite at tuple " + std::to_string(tuple));
        return;
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Check a .pvd collection and its .vtu frames through VTK's readers"};
  std::string pvd;
  std::size_t frames = 0;
  std::optional<vtkIdType> points;
  std::optional<vtkIdType> cells;
  std::vector<std::string> point_arrays;
  std::vector<std::string> cell_arrays;
  app.add_option("pvd", pvd, "The .pvd collection")->required();
  app.add_option("--frames", frames, "Expected number of frames")->required();
  app.add_option("--points", points, "Expected points per frame (default: as in the first frame)");
  app.add_option("--cells", cells, "Expected cells per frame (default: as in the first frame)");
  app.add_option("--point-array", point_arrays, "NAME:COMPONENTS of a point array every frame must have");
  app.add_option("--cell-array", cell_arrays, "NAME:COMPONENTS of a cell array every frame must have");
  bool triangles = false;
  bool hexahedra = false;
  bool vertices = false;
  bool remeshed = false;
  app.add_flag("--triangles", triangles, "The cells are triangles (a surface such as cloth), not tetrahedra");
  app.add_flag("--hexahedra", hexahedra, "The cells are hexahedra (an octree, rigid cuboids), not tetrahedra");
  app.add_flag("--vertices", vertices, "The cells are vertices (points such as joints), not tetrahedra");
  app.add_flag("--remeshed", remeshed, "Point and cell counts may change between frames (a remeshed surface)");
  CLI11_PARSE(app, argc, argv);
  std::vector<ArraySpec> point_specs;
  std::vector<ArraySpec> cell_specs;
  try {
    point_specs = parse_array_specs(point_arrays);
    cell_specs = parse_array_specs(cell_arrays);
  } catch (const CLI::ValidationError& error) {
    std::cerr << "read_vtk_series: " << error.what() << '\n';
    return 2;
  }

  Checker checker;
  try {
    const auto entries = read_collection(pvd);
    checker.expect(entries.size() == frames, pvd + ": " + std::to_string(entries.size()) + " frames, expected " +
                                                 std::to_string(frames));
    for (std::size_t frame = 0; frame < entries.size(); ++frame) {
      const std::string where = entries[frame].file.string();
      if (frame > 0) checker.expect(entries[frame].time > entries[frame - 1].time, where + ": time does not increase");
      const auto grid = read_unstructured_grid(entries[frame].file);
      if (!points || remeshed) points = grid->GetNumberOfPoints();
      if (!cells || remeshed) cells = grid->GetNumberOfCells();
      checker.expect(grid->GetNumberOfPoints() == *points, where + ": " + std::to_string(grid->GetNumberOfPoints()) +
                                                               " points, expected " + std::to_string(*points));
      checker.expect(grid->GetNumberOfCells() == *cells, where + ": " + std::to_string(grid->GetNumberOfCells()) +
                                                             " cells, expected " + std::to_string(*cells));
      const int cell_type = triangles ? VTK_TRIANGLE : hexahedra ? VTK_HEXAHEDRON : vertices ? VTK_VERTEX : VTK_TETRA;
      const char* cell_name = triangles ? "triangles" : hexahedra ? "hexahedra" : vertices ? "vertices" : "tetrahedra";
      checker.expect(grid->IsHomogeneous() && grid->GetNumberOfCells() > 0 && grid->GetCellType(0) == cell_type,
                     where + ": the cells are not all " + cell_name);
      for (const ArraySpec& spec : point_specs) {
        check_array(checker, grid->GetPointData()->GetArray(spec.name.c_str()), spec, grid->GetNumberOfPoints(), where);
      }
      for (const ArraySpec& spec : cell_specs) {
        check_array(checker, grid->GetCellData()->GetArray(spec.name.c_str()), spec, grid->GetNumberOfCells(), where);
      }
    }
  } catch (const std::exception& error) {
    checker.expect(false, error.what());
  }
  if (checker.failures() == 0) std::cout << "read_vtk_series: " << pvd << ": " << frames << " frames ok\n";
  return checker.failures() == 0 ? 0 : 1;
}
