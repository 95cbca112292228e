// VtuSeriesWriter (apps/vtk_series_writer.hpp) read back through VTK's own XML readers: the
// .pvd lists every frame with its exact time, each .vtu holds the exact positions, tets and
// fields, no temporary file is left behind, and bad input is rejected before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkDataArray.h>
#include <vtkIdList.h>
#include <vtkPointData.h>

#include "apps/vtk_series_writer.hpp"
#include "vtk_series_reading.hpp"

namespace cholsim::apps {
namespace {

using linalg::Index;

/// A fresh folder under the system temp directory, removed at the end of the test.
class ScratchFolder {
 public:
  ScratchFolder() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("cholsim_vtk_" + std::to_string(::getpid()) + "_" + test->name());
    std::filesystem::remove_all(path_);
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Two tets sharing the face (0, 1, 2), both positively oriented.
const std::vector<Index> two_tets = {0, 1, 2, 3, 0, 2, 1, 4};

/// Frame-dependent values with non-terminating binary fractions, so that any rounding through
/// float or text would show.
std::vector<double> positions_at(int frame) {
  std::vector<double> positions = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0.3, 0.3, -1};
  for (std::size_t i = 0; i < positions.size(); ++i) positions[i] += 0.1 * frame + 1e-3 * static_cast<double>(i) / 3.0;
  return positions;
}
std::vector<double> velocity_at(int frame) {
  std::vector<double> velocity(15);
  for (std::size_t i = 0; i < velocity.size(); ++i) velocity[i] = std::sin(1.0 + frame + 0.7 * static_cast<double>(i));
  return velocity;
}
std::vector<double> badness_at(int frame) { return {frame / 3.0, 1.0 / (frame + 7.0)}; }

void write_test_frame(VtuSeriesWriter& writer, int frame) {
  const std::vector<double> positions = positions_at(frame);
  const std::vector<double> velocity = velocity_at(frame);
  const std::vector<double> badness = badness_at(frame);
  const std::vector<VtkField> point_fields = {{"velocity", 3, velocity}};
  const std::vector<VtkField> cell_fields = {{"badness", 1, badness}};
  ASSERT_TRUE(writer.write_frame(frame / 60.0, positions, two_tets, point_fields, cell_fields));
}

void expect_array_equals(vtkDataArray* array, int components, const std::vector<double>& expected) {
  ASSERT_NE(array, nullptr);
  ASSERT_EQ(array->GetNumberOfComponents(), components);
  ASSERT_EQ(array->GetNumberOfTuples() * components, static_cast<vtkIdType>(expected.size()));
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto tuple = static_cast<vtkIdType>(i) / components;
    EXPECT_EQ(array->GetComponent(tuple, static_cast<int>(i) % components), expected[i]) << "entry " << i;
  }
}

TEST(VtuSeriesWriter, ThreeFramesReadBackExactlyThroughVtkReaders) {
  const ScratchFolder folder;
  OutputFolder output(folder.path() / "nested");
  VtuSeriesWriter writer(output, "run");
  for (int frame = 0; frame < 3; ++frame) write_test_frame(writer, frame);
  EXPECT_EQ(writer.frames_written(), 3);
  EXPECT_EQ(writer.pvd_path(), folder.path() / "nested" / "run.pvd");

  const auto entries = testing::read_collection(writer.pvd_path());
  ASSERT_EQ(entries.size(), 3u);
  for (int frame = 0; frame < 3; ++frame) {
    SCOPED_TRACE("frame " + std::to_string(frame));
    const auto& entry = entries[static_cast<std::size_t>(frame)];
    EXPECT_EQ(entry.time, frame / 60.0);
    EXPECT_EQ(entry.file.filename().string(), "run_000" + std::to_string(frame) + ".vtu");

    const auto grid = testing::read_unstructured_grid(entry.file);
    ASSERT_EQ(grid->GetNumberOfPoints(), 5);
    ASSERT_EQ(grid->GetNumberOfCells(), 2);
    expect_array_equals(grid->GetPoints()->GetData(), 3, positions_at(frame));
    for (vtkIdType cell = 0; cell < 2; ++cell) {
      EXPECT_EQ(grid->GetCellType(cell), VTK_TETRA);
      auto ids = vtkSmartPointer<vtkIdList>::New();
      grid->GetCellPoints(cell, ids);
      ASSERT_EQ(ids->GetNumberOfIds(), 4);
      for (vtkIdType corner = 0; corner < 4; ++corner) {
        EXPECT_EQ(ids->GetId(corner), two_tets[static_cast<std::size_t>(4 * cell + corner)]);
      }
    }
    expect_array_equals(grid->GetPointData()->GetArray("velocity"), 3, velocity_at(frame));
    expect_array_equals(grid->GetCellData()->GetArray("badness"), 1, badness_at(frame));
  }
}

TEST(VtuSeriesWriter, FramesAreCompressedAppendedBinary) {
  const ScratchFolder folder;
  OutputFolder output(folder.path());
  VtuSeriesWriter writer(output, "run");
  write_test_frame(writer, 0);
  std::ifstream in(folder.path() / "run_0000.vtu", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("compressor=\"vtkZLibDataCompressor\""), std::string::npos);
  EXPECT_NE(text.find("<AppendedData encoding=\"raw\">"), std::string::npos);
  EXPECT_NE(text.find("format=\"appended\""), std::string::npos);
}

TEST(VtuSeriesWriter, CollectionOpensAfterEveryFrameAndNoTemporaryFilesRemain) {
  const ScratchFolder folder;
  OutputFolder output(folder.path());
  VtuSeriesWriter writer(output, "run");
  for (int frame = 0; frame < 2; ++frame) {
    write_test_frame(writer, frame);
    EXPECT_EQ(testing::read_collection(writer.pvd_path()).size(), static_cast<std::size_t>(frame + 1));
  }
  std::vector<std::string> names;
  for (const auto& file : std::filesystem::directory_iterator(folder.path())) names.push_back(file.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"run.pvd", "run_0000.vtu", "run_0001.vtu"}));
}

TEST(VtuSeriesWriter, RejectsMismatchedOrNonFiniteInputWithoutWriting) {
  const ScratchFolder folder;
  OutputFolder output(folder.path());
  VtuSeriesWriter writer(output, "run");
  const std::vector<double> positions = positions_at(0);
  const std::vector<double> short_field(14, 0.0);
  const std::vector<VtkField> bad_point_field = {{"velocity", 3, short_field}};
  EXPECT_THROW((void)writer.write_frame(0.0, positions, two_tets, bad_point_field, {}), std::invalid_argument);

  const std::vector<double> two_vectors(6, 0.0);
  const std::vector<VtkField> two_component_field = {{"weird", 2, two_vectors}};
  EXPECT_THROW((void)writer.write_frame(0.0, positions, two_tets, {}, two_component_field), std::invalid_argument);

  const std::vector<Index> out_of_range = {0, 1, 2, 5};
  try {
    (void)writer.write_frame(0.0, positions, out_of_range, {}, {});
    ADD_FAILURE() << "an out-of-range node index was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("tet 0 refers to node 5"), std::string::npos) << error.what();
  }

  std::vector<double> not_finite = positions;
  not_finite[7] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW((void)writer.write_frame(0.0, not_finite, two_tets, {}, {}), std::invalid_argument);
  EXPECT_THROW((void)writer.write_frame(std::numeric_limits<double>::infinity(), positions, two_tets, {}, {}),
               std::invalid_argument);

  EXPECT_EQ(writer.frames_written(), 0);
  EXPECT_TRUE(std::filesystem::is_empty(folder.path()));
}

// The reading side must be able to fail, or the app tests built on it would prove nothing.
TEST(VtuSeriesWriter, TruncatedFrameFailsToReadBack) {
  const ScratchFolder folder;
  OutputFolder output(folder.path());
  VtuSeriesWriter writer(output, "run");
  write_test_frame(writer, 0);
  const std::filesystem::path frame = folder.path() / "run_0000.vtu";
  std::filesystem::resize_file(frame, std::filesystem::file_size(frame) / 2);
  EXPECT_THROW(testing::read_unstructured_grid(frame), std::runtime_error);
}

TEST(VtuSeriesWriter, FramePastTheByteLimitIsRefusedAndTheCollectionStaysValid) {
  const ScratchFolder folder;
  std::filesystem::create_directories(folder.path());
  OutputFolder unlimited(folder.path() / "measure");
  VtuSeriesWriter measure(unlimited, "run");
  write_test_frame(measure, 0);
  const std::uint64_t one_frame = unlimited.bytes_held();

  // Room for one frame and its collection, not for two.
  OutputFolder limited(folder.path() / "limited", one_frame + one_frame / 2);
  VtuSeriesWriter writer(limited, "run");
  write_test_frame(writer, 0);
  const std::vector<double> positions = positions_at(1);
  EXPECT_FALSE(writer.write_frame(1.0, positions, two_tets, {}, {}));
  EXPECT_EQ(writer.frames_written(), 1);
  EXPECT_LE(limited.bytes_held(), limited.byte_limit());
  EXPECT_EQ(testing::read_collection(writer.pvd_path()).size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(folder.path() / "limited" / "run_0001.vtu"));
}

}  // namespace
}  // namespace cholsim::apps
