#pragma once
// Model meshes shared by the benchmark programs: surface models from ../shared/data/meshes
// tetrahedralized by Debian's `tetgen` near a requested tet count.
#include <cmath>
#include <cstdio>
#include <array>
#include <filesystem>
#include <map>
#include <string>

#include "fem/mesh/mesh_io.hpp"
#include "fem/mesh/tet_mesh.hpp"
#include "fem/mesh/tetgen.hpp"

namespace cholsim::bench {

/// Cells (x, y, z) of the 3:1:1 bars standing in for seed 003 Table 1's armadillo resolutions
/// (structured Kuhn boxes: 6 tets per cell).
inline const std::map<std::string, std::array<linalg::Index, 3>> opsplit_bar_cells = {
    {"6k", {21, 7, 7}},      // 6,174 tets
    {"16k", {30, 10, 9}},    // 16,200 tets
    {"55k", {45, 15, 14}},   // 56,700 tets
    {"170k", {66, 21, 21}},  // 174,636 tets
    {"330k", {81, 26, 26}},  // 328,536 tets
};

/// A surface model and how to mesh it near a tet count: below 15K tets with
/// `small_switches`, above with `-pq1.414a<bound>`, the volume bound following the power law
/// through two measured (bound, tets) points (bound ∝ tets^-k).
struct SurfaceModel {
  const char* name;
  const char* file;  ///< under ../shared/data/meshes
  const char* small_switches;
  double bound_1, tets_1, bound_2, tets_2;
  const char* about;

  [[nodiscard]] std::filesystem::path path() const {
    return std::filesystem::path(CHOLSIM_SHARED_DATA_DIR) / "meshes" / file;
  }

  [[nodiscard]] std::string switches(linalg::Index tets) const {
    if (tets < 15'000) return small_switches;
    const double exponent = std::log(bound_1 / bound_2) / std::log(tets_2 / tets_1);
    const double volume_bound = bound_1 * std::pow(tets_1 / static_cast<double>(tets), exponent);
    char text[64];  // fixed notation where it keeps six digits (the documented bunny runs), else exponent
    std::snprintf(text, sizeof text, volume_bound >= 1e-3 ? "pq1.414a%.6f" : "pq1.414a%.3e", volume_bound);
    return text;
  }
};

/// The counts were measured with tetgen 1.5.0 (SOURCES.md for the bunny's).
inline constexpr SurfaceModel surface_models[] = {
    // Compact: the Stanford bunny (bbox ≈ 10 units). -pYq2 → 6,740 tets.
    {"bunny", "npm-bunny/bunny.obj", "pYq2", 0.02, 87'005.0, 0.0025, 277'481.0, "bunny"},
    // Slender: a knotted tube (bbox ≈ 1 unit), like seed 000's Fig. 8 geometric sculpture.
    // -pYq3 → 7,522 tets.
    {"knot", "RAINBOW/knot.obj", "pYq3", 2e-5, 109'926.0, 3e-6, 258'142.0, "knotted tube (RAINBOW knot.obj)"},
};

/// The model called `name`, or nullptr.
inline const SurfaceModel* find_surface_model(const std::string& name) {
  for (const SurfaceModel& model : surface_models) {
    if (name == model.name) return &model;
  }
  return nullptr;
}

struct ModelMesh {
  linalg::TetMesh mesh;
  std::string description;  ///< the model and the tetgen command that meshed it
};

/// `model` tetrahedralized near `tets` tets, unused nodes removed, in the surface's units.
inline ModelMesh tetrahedralize_model(const SurfaceModel& model, linalg::Index tets) {
  fem::TetgenOptions tetgen;
  tetgen.switches = model.switches(tets);
  fem::TetgenResult result = fem::tetrahedralize(fem::read_surface_mesh(model.path()), tetgen);
  return {fem::remove_unused_nodes(result.mesh), std::string(model.about) + ", `" + result.command + "`"};
}

}  // namespace cholsim::bench
