#pragma once
// Independent checks on meshes shared by the mesh tests (tet_mesh, procedural meshes, readers,
// tetgen): the divergence-theorem volume of a surface, closedness and orientation of a surface
// by directed edges, the Euler characteristic, and a scratch folder for written files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "fem/mesh/tet_mesh.hpp"

namespace cholsim::fem::test {

inline std::array<double, 3> node_position(const std::vector<double>& positions, Index node) {
  const auto base = static_cast<std::size_t>(3 * node);
  return {positions[base], positions[base + 1], positions[base + 2]};
}

/// Σ over triangles of (area·n)·centroid / 3: by the divergence theorem (div x = 3) the volume
/// enclosed by a closed, outward-oriented surface; negative when it is oriented inward.
inline double enclosed_volume(const SurfaceMesh& surface) {
  double volume = 0.0;
  for (Index t = 0; t < surface.triangle_count(); ++t) {
    const auto a = node_position(surface.positions, surface.triangles[3 * t]);
    const auto b = node_position(surface.positions, surface.triangles[3 * t + 1]);
    const auto c = node_position(surface.positions, surface.triangles[3 * t + 2]);
    const std::array<double, 3> u{b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const std::array<double, 3> v{c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const std::array<double, 3> area_normal{0.5 * (u[1] * v[2] - u[2] * v[1]), 0.5 * (u[2] * v[0] - u[0] * v[2]),
                                            0.5 * (u[0] * v[1] - u[1] * v[0])};
    for (int axis = 0; axis < 3; ++axis) {
      volume += area_normal[axis] * (a[axis] + b[axis] + c[axis]) / 3.0 / 3.0;
    }
  }
  return volume;
}

/// Closed and consistently oriented: every directed edge is used exactly once and its
/// reverse exactly once.
inline bool is_closed_and_oriented(const SurfaceMesh& surface) {
  std::map<std::pair<Index, Index>, int> uses;
  for (Index t = 0; t < surface.triangle_count(); ++t) {
    for (int s = 0; s < 3; ++s) ++uses[{surface.triangles[3 * t + s], surface.triangles[3 * t + (s + 1) % 3]}];
  }
  for (const auto& [edge, count] : uses) {
    if (count != 1) return false;
    const auto reverse = uses.find({edge.second, edge.first});
    if (reverse == uses.end() || reverse->second != 1) return false;
  }
  return true;
}

/// V − E + F of the surface, counting only vertices that triangles use (2 for a sphere, 0 for
/// a torus).
inline long euler_characteristic(const SurfaceMesh& surface) {
  std::set<Index> vertices(surface.triangles.begin(), surface.triangles.end());
  std::set<std::pair<Index, Index>> edges;
  for (Index t = 0; t < surface.triangle_count(); ++t) {
    for (int s = 0; s < 3; ++s) {
      const Index a = surface.triangles[3 * t + s];
      const Index b = surface.triangles[3 * t + (s + 1) % 3];
      edges.insert({std::min(a, b), std::max(a, b)});
    }
  }
  return static_cast<long>(vertices.size()) - static_cast<long>(edges.size()) + surface.triangle_count();
}

/// A folder for files a test writes, removed at the end of the test.
class ScratchFolder {
 public:
  ScratchFolder() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "cholsim-mesh-test-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name();
    for (char& c : name) {
      if (c == '/') c = '_';  // parameterized test names
    }
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  /// Writes `contents` (bytes as given) to `name` in the folder and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& contents) const {
    const std::filesystem::path file = path_ / name;
    std::ofstream(file, std::ios::binary) << contents;
    return file;
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Path of a file in the repository's data/meshes.
inline std::filesystem::path repo_mesh(const std::string& name) {
  return std::filesystem::path(CHOLSIM_SOURCE_DIR) / "data" / "meshes" / name;
}

/// Path of a file in ../shared/data/meshes (the collection the bundled files come from).
inline std::filesystem::path shared_mesh(const std::string& name) {
  return std::filesystem::path(CHOLSIM_SHARED_DATA_DIR) / "meshes" / name;
}

}  // namespace cholsim::fem::test
