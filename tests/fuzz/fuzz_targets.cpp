#include "fuzz_targets.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "corot_scene.hpp"
#include "fem/mesh/mesh_io.hpp"
#include "fem/mesh/tet_mesh.hpp"
#include "linalg/matrix_market.hpp"

namespace cholsim::fuzz {
namespace {

/// A folder of this process for the files the readers open (they read paths, not bytes),
/// removed when the process ends normally.
class ScratchFolder {
 public:
  ScratchFolder()
      : path_(std::filesystem::temp_directory_path() / ("cholsim-fuzz-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  /// Writes `bytes` to the file `name` in the folder and returns its path.
  [[nodiscard]] std::filesystem::path write(const std::string& name, std::string_view bytes) const {
    const std::filesystem::path file = path_ / name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("fuzz: cannot write " + file.string());
    return file;
  }

 private:
  std::filesystem::path path_;
};

std::filesystem::path scratch_file(const std::string& name, std::string_view bytes) {
  static const ScratchFolder folder;
  return folder.write(name, bytes);
}

// The CSC form of a valid matrix holds cols + 1 column pointers however few its entries
// (empty columns are legal), so a general read of a header announcing 2·10⁹ columns costs
// 16 GB by design and would trip libFuzzer's malloc limit. The general read is fuzzed up to
// this many columns; the symmetric read, guarded as `cholsim factor` guards it, at any size.
constexpr linalg::Index kLargestGeneralReadColumns = 1 << 20;

void read_matrix_market_like_the_commands(const std::string& path) {
  const linalg::MatrixMarketHeader header = linalg::read_matrix_market_info(path);
  if (header.format == linalg::MatrixMarketFormat::array) {
    (void)linalg::read_dense_matrix_market(path);
    return;
  }
  try {
    linalg::require_header_allows_spd(path, header);
    (void)linalg::read_symmetric_matrix_market(path);
  } catch (const linalg::MatrixMarketError&) {
    // Rejected for a symmetric read; the general read below may still accept the file.
  }
  if (header.cols <= kLargestGeneralReadColumns) (void)linalg::read_matrix_market(path);
}

void run_matrix_market(std::string_view input) {
  try {
    read_matrix_market_like_the_commands(scratch_file("input.mtx", input).string());
  } catch (const linalg::MatrixMarketError&) {
  }
}

/// Reads a tet mesh and validates it, as `cholsim corot --mesh` does.
void read_and_validate(const std::filesystem::path& path) {
  try {
    const fem::TetMesh mesh = fem::read_tet_mesh(path);
    (void)fem::validate_tet_mesh(mesh, path.string());
  } catch (const fem::MeshFormatError&) {
  } catch (const fem::InvalidMeshError&) {
  }
}

// A TetGen mesh is two files: the input holds the .node file, a line "@ele", then the .ele file.
constexpr std::string_view kEleSeparator = "\n@ele\n";

void run_tetgen(std::string_view input) {
  const std::size_t split = input.find(kEleSeparator);
  const std::string_view node = input.substr(0, split);
  const std::string_view ele = split == std::string_view::npos ? std::string_view{} : input.substr(split + kEleSeparator.size());
  scratch_file("input.ele", ele);
  read_and_validate(scratch_file("input.node", node));
}

void run_gmsh(std::string_view input) { read_and_validate(scratch_file("input.msh", input)); }
void run_medit(std::string_view input) { read_and_validate(scratch_file("input.mesh", input)); }

template <const char* extension>
void run_surface(std::string_view input) {
  try {
    (void)fem::read_surface_mesh(scratch_file(std::string("input") + extension, input));
  } catch (const fem::MeshFormatError&) {
  }
}
constexpr char kOff[] = ".off";
constexpr char kObj[] = ".obj";
constexpr char kStl[] = ".stl";

void run_scene(std::string_view input) {
  try {
    apps::CorotScene scene;
    apps::read_scene_file(scratch_file("input.json", input), scene);
  } catch (const apps::SceneError&) {
  }
}

constexpr std::array kTargets{
    FuzzTarget{"matrix_market", run_matrix_market}, FuzzTarget{"tetgen", run_tetgen},
    FuzzTarget{"gmsh", run_gmsh},                   FuzzTarget{"medit", run_medit},
    FuzzTarget{"off", run_surface<kOff>},           FuzzTarget{"obj", run_surface<kObj>},
    FuzzTarget{"stl", run_surface<kStl>},           FuzzTarget{"scene", run_scene},
};

}  // namespace

std::span<const FuzzTarget> fuzz_targets() { return kTargets; }

const FuzzTarget* find_fuzz_target(std::string_view name) {
  const auto found = std::find_if(kTargets.begin(), kTargets.end(), [name](const FuzzTarget& t) { return t.name == name; });
  return found == kTargets.end() ? nullptr : &*found;
}

}  // namespace cholsim::fuzz
