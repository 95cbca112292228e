#include "vtk_series_writer.hpp"

#include <charconv>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkDoubleArray.h>
#include <vtkIdTypeArray.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkSmartPointer.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridWriter.h>

#include "xml_text.hpp"

namespace cholsim::apps {
namespace {

using linalg::Index;

/// Every value finite, or std::invalid_argument naming `what` and the first bad entry.
void require_finite(std::span<const double> values, int components, const std::string& what) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      throw std::invalid_argument("VtuSeriesWriter: " + what + " has a non-finite value at entry " +
                                  std::to_string(i / static_cast<std::size_t>(components)) +
                                  " (component " +
                                  std::to_string(i % static_cast<std::size_t>(components)) + ")");
    }
  }
}

void check_field(const VtkField& field, std::size_t count, const char* kind) {
  const std::string what = std::string(kind) + " field '" + field.name + "'";
  if (field.name.empty()) throw std::invalid_argument(std::string("VtuSeriesWriter: a ") + kind + " field has no name");
  if (field.components != 1 && field.components != 3) {
    throw std::invalid_argument("VtuSeriesWriter: " + what + " has " + std::to_string(field.components) +
                                " components; expected 1 or 3");
  }
  const std::size_t expected = count * static_cast<std::size_t>(field.components);
  if (field.values.size() != expected) {
    throw std::invalid_argument("VtuSeriesWriter: " + what + " has " + std::to_string(field.values.size()) +
                                " values; expected " + std::to_string(expected) + " (" +
                                std::to_string(field.components) + " per " + (kind[0] == 'p' ? "point" : "cell") +
                                ")");
  }
  require_finite(field.values, field.components, what);
}

std::size_t nodes_per_cell(VtkCellShape shape) {
  switch (shape) {
    case VtkCellShape::triangle: return 3;
    case VtkCellShape::tetrahedron: return 4;
    case VtkCellShape::hexahedron: return 8;
    case VtkCellShape::vertex: return 1;
  }
  return 4;
}

const char* cell_name(VtkCellShape shape) {
  switch (shape) {
    case VtkCellShape::triangle: return "triangle";
    case VtkCellShape::tetrahedron: return "tet";
    case VtkCellShape::hexahedron: return "hexahedron";
    case VtkCellShape::vertex: return "vertex";
  }
  return "tet";
}

int vtk_cell_type(VtkCellShape shape) {
  switch (shape) {
    case VtkCellShape::triangle: return VTK_TRIANGLE;
    case VtkCellShape::tetrahedron: return VTK_TETRA;
    case VtkCellShape::hexahedron: return VTK_HEXAHEDRON;
    case VtkCellShape::vertex: return VTK_VERTEX;
  }
  return VTK_TETRA;
}

void check_cells(std::span<const Index> cells, VtkCellShape shape, Index point_count) {
  const std::size_t per_cell = nodes_per_cell(shape);
  if (cells.size() % per_cell != 0) {
    throw std::invalid_argument("VtuSeriesWriter: " + std::to_string(cells.size()) + " " + cell_name(shape) +
                                " indices is not a multiple of " + std::to_string(per_cell));
  }
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (cells[i] < 0 || cells[i] >= point_count) {
      throw std::invalid_argument("VtuSeriesWriter: " + std::string(cell_name(shape)) + " " +
                                  std::to_string(i / per_cell) + " refers to node " + std::to_string(cells[i]) +
                                  "; expected 0.." + std::to_string(point_count - 1));
    }
  }
}

vtkSmartPointer<vtkDoubleArray> to_vtk_array(const VtkField& field) {
  auto array = vtkSmartPointer<vtkDoubleArray>::New();
  array->SetName(field.name.c_str());
  array->SetNumberOfComponents(field.components);
  array->SetNumberOfTuples(static_cast<vtkIdType>(field.values.size() / static_cast<std::size_t>(field.components)));
  std::copy(field.values.begin(), field.values.end(), array->GetPointer(0));
  return array;
}

vtkSmartPointer<vtkUnstructuredGrid> build_grid(std::span<const double> positions, std::span<const Index> tets,
                                                VtkCellShape shape) {
  const auto per_cell = static_cast<vtkIdType>(nodes_per_cell(shape));
  auto coordinates = vtkSmartPointer<vtkDoubleArray>::New();
  coordinates->SetNumberOfComponents(3);
  coordinates->SetNumberOfTuples(static_cast<vtkIdType>(positions.size() / 3));
  std::copy(positions.begin(), positions.end(), coordinates->GetPointer(0));
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetData(coordinates);

  const auto tet_count = static_cast<vtkIdType>(tets.size()) / per_cell;
  auto offsets = vtkSmartPointer<vtkIdTypeArray>::New();
  offsets->SetNumberOfValues(tet_count + 1);
  for (vtkIdType tet = 0; tet <= tet_count; ++tet) offsets->SetValue(tet, per_cell * tet);
  auto connectivity = vtkSmartPointer<vtkIdTypeArray>::New();
  connectivity->SetNumberOfValues(static_cast<vtkIdType>(tets.size()));
  for (std::size_t i = 0; i < tets.size(); ++i) connectivity->SetValue(static_cast<vtkIdType>(i), tets[i]);
  auto cells = vtkSmartPointer<vtkCellArray>::New();
  cells->SetData(offsets, connectivity);

  auto grid = vtkSmartPointer<vtkUnstructuredGrid>::New();
  grid->SetPoints(points);
  grid->SetCells(vtk_cell_type(shape), cells);
  return grid;
}

/// Shortest text that reads back as exactly `value`, so the .pvd times round-trip.
std::string shortest_decimal(double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string frame_file_name(const std::string& basename, std::size_t frame) {
  std::ostringstream name;
  name << basename << '_' << std::setw(4) << std::setfill('0') << frame << ".vtu";
  return name.str();
}

}  // namespace

VtuSeriesWriter::VtuSeriesWriter(OutputFolder& folder, std::string basename, VtkCellShape cell_shape)
    : folder_(&folder), basename_(std::move(basename)), cell_shape_(cell_shape) {
  if (basename_.empty() || basename_.find('/') != std::string::npos) {
    throw std::invalid_argument("VtuSeriesWriter: basename '" + basename_ + "' must be a non-empty file name");
  }
}

std::filesystem::path VtuSeriesWriter::pvd_path() const { return directory() / (basename_ + ".pvd"); }

bool VtuSeriesWriter::write_frame(double time, std::span<const double> positions, std::span<const Index> tets,
                                  std::span<const VtkField> point_fields, std::span<const VtkField> cell_fields) {
  if (!std::isfinite(time)) throw std::invalid_argument("VtuSeriesWriter: the frame time is not finite");
  if (!frames_.empty() && time < frames_.back().time) {
    throw std::invalid_argument("VtuSeriesWriter: frame time " + shortest_decimal(time) + " is before the previous " +
                                shortest_decimal(frames_.back().time));
  }
  if (positions.size() % 3 != 0) {
    throw std::invalid_argument("VtuSeriesWriter: " + std::to_string(positions.size()) +
                                " position values is not a multiple of 3");
  }
  const auto point_count = static_cast<Index>(positions.size() / 3);
  require_finite(positions, 3, "positions");
  check_cells(tets, cell_shape_, point_count);
  for (const VtkField& field : point_fields) check_field(field, positions.size() / 3, "point");
  for (const VtkField& field : cell_fields) check_field(field, tets.size() / nodes_per_cell(cell_shape_), "cell");

  vtkSmartPointer<vtkUnstructuredGrid> grid = build_grid(positions, tets, cell_shape_);
  for (const VtkField& field : point_fields) grid->GetPointData()->AddArray(to_vtk_array(field));
  for (const VtkField& field : cell_fields) grid->GetCellData()->AddArray(to_vtk_array(field));

  const std::string file_name = frame_file_name(basename_, frames_.size());
  auto writer = vtkSmartPointer<vtkXMLUnstructuredGridWriter>::New();
  // Encoded in memory first: the frame's size is known before anything reaches the disk
  // (for the byte limit), and every file takes OutputFolder's one path to the disk.
  writer->WriteToOutputStringOn();
  writer->SetInputData(grid);
  // Raw (not base64) appended binary with zlib: the smallest files ParaView reads fastest.
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();
  writer->SetCompressorTypeToZLib();
  writer->SetHeaderTypeToUInt64();
  if (writer->Write() != 1 || writer->GetErrorCode() != 0) {
    throw std::runtime_error("VtuSeriesWriter: VTK cannot encode frame " + file_name);
  }
  const std::string frame_bytes = writer->GetOutputString();

  std::vector<Frame> frames = frames_;
  frames.push_back({time, file_name});
  const std::string collection = collection_text(frames);
  const std::string collection_name = basename_ + ".pvd";
  if (!folder_->fits({{file_name, frame_bytes.size()}, {collection_name, collection.size()}})) return false;
  folder_->write(file_name, frame_bytes);
  try {
    folder_->write(collection_name, collection);
  } catch (const OutputError&) {
    folder_->remove(file_name);  // a frame no collection lists is clutter
    throw;
  }
  frames_ = std::move(frames);
  return true;
}

std::string VtuSeriesWriter::collection_text(const std::vector<Frame>& frames) {
  std::ostringstream out;
  out << "<?xml version=\"1.0\"?>\n"
         "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
         "  <Collection>\n";
  for (const Frame& frame : frames) {
    out << "    <DataSet timestep=\"" << shortest_decimal(frame.time) << "\" group=\"\" part=\"0\" file=\""
        << xml_escaped(frame.file_name) << "\"/>\n";
  }
  out << "  </Collection>\n"
         "</VTKFile>\n";
  return out.str();
}

}  // namespace cholsim::apps
