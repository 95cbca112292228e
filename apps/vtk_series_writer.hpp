#pragma once
// Writes a simulation as one VTK XML unstructured grid (.vtu) per frame plus a ParaView
// collection (.pvd) listing them with their times, through the VTK library (binary, zlib
// compressed). Files go through an OutputFolder (temporary name, renamed when complete,
// errors named); the .pvd is rewritten after each frame, so a run stopped at any point leaves
// a collection that opens.
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "linalg/index_types.hpp"
#include "output_folder.hpp"

namespace cholsim::apps {

/// A named array over the points (nodes) or the cells (tets) of a frame.
/// values.size() = components · (point or cell count).
struct VtkField {
  std::string name;
  int components = 1;  ///< 1 (scalar) or 3 (vector)
  std::span<const double> values;
};

/// The cells of a series: tetrahedra (4 nodes each), triangles (3, a surface such as cloth),
/// hexahedra (8, in VTK's order: the bottom face counter-clockwise, then the top face; octrees,
/// rigid cuboids) or vertices (1, points such as joints).
enum class VtkCellShape { tetrahedron, triangle, hexahedron, vertex };

class VtuSeriesWriter {
 public:
  /// Writes into `folder` (which must outlive the writer): frames named
  /// <basename>_<frame, 4+ digits>.vtu and the collection <basename>.pvd.
  VtuSeriesWriter(OutputFolder& folder, std::string basename,
                  VtkCellShape cell_shape = VtkCellShape::tetrahedron);

  /// Writes the next frame: cells (4 node indices a tet, 3 a triangle, 8 a hexahedron, 1 a vertex) over `positions` (3 per node) with the
  /// given point and cell fields, then rewrites the .pvd. Returns false, writing nothing, when
  /// the frame and the longer .pvd would take the folder past its byte limit. Throws
  /// std::invalid_argument when a field's size does not match, a field has other than 1 or 3
  /// components, a tet names a node out of range, a position or field value is not finite, or
  /// `time` is not finite or before the previous frame's (nothing is written then);
  /// std::runtime_error when VTK cannot encode the frame; OutputError when a file cannot be
  /// written (naming it; the frames before stay listed in a valid .pvd).
  [[nodiscard]] bool write_frame(double time, std::span<const double> positions,
                                 std::span<const linalg::Index> tets, std::span<const VtkField> point_fields,
                                 std::span<const VtkField> cell_fields);

  [[nodiscard]] const std::filesystem::path& directory() const { return folder_->path(); }
  [[nodiscard]] std::filesystem::path pvd_path() const;
  [[nodiscard]] linalg::Index frames_written() const {
    return static_cast<linalg::Index>(frames_.size());
  }

 private:
  struct Frame {
    double time;
    std::string file_name;
  };
  /// The .pvd's text listing `frames`.
  [[nodiscard]] static std::string collection_text(const std::vector<Frame>& frames);

  OutputFolder* folder_;
  std::string basename_;
  VtkCellShape cell_shape_;
  std::vector<Frame> frames_;
};

}  // namespace cholsim::apps
