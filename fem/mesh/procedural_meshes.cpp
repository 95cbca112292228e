#include "fem/mesh/procedural_meshes.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

namespace cholsim::fem {
namespace {

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

void require_positive(const char* function, const char* name, double value) {
  if (!(value > 0.0) || !std::isfinite(value)) {
    throw std::invalid_argument(std::string(function) + ": " + name + " must be a positive finite number, got " +
                                std::to_string(value));
  }
}

void require_cells(const char* function, const char* name, Index cells, Index minimum) {
  if (cells < minimum) {
    throw std::invalid_argument(std::string(function) + ": " + name + " must be at least " +
                                std::to_string(minimum) + ", got " + std::to_string(cells));
  }
}

/// Scales the unit-cell box from structured_tet_box to cells of size `cell[axis]` (positive
/// factors per axis keep every tet positively oriented).
void scale_axes(TetMesh& mesh, const std::array<double, 3>& cell) {
  for (std::size_t value = 0; value < mesh.positions.size(); ++value) mesh.positions[value] *= cell[value % 3];
}

/// A Kuhn-subdivided grid of cells[0]×cells[1]×cells[2] unit cubes whose node positions are the
/// integer grid coordinates (i, j, k), optionally periodic along x (the last layer of nodes is
/// identified with the first, for sweeps around a ring).
///
/// Unlike linalg::structured_tet_box, each axis is *mirrored* about the grid's middle: in the
/// lower half a cell's Kuhn diagonal runs in −axis direction. Every cell's diagonal then points
/// away from the centre, so after the cube is mapped onto a ball (or a square onto a disk)
/// each tet of an outer cell still holds the cell's innermost corner — without the mirror, the
/// cells at half of the cube's corners would get tets with all four vertices on the curved
/// boundary, i.e. slivers. The flip of an axis depends only on the cell's index along that
/// axis, so the triangulations of shared faces agree and the mesh stays conforming.
struct MirroredKuhnGrid {
  std::array<Index, 3> cells{};
  bool periodic_x = false;
  std::array<bool, 3> mirrored{};

  [[nodiscard]] Index nodes_along(std::size_t axis) const {
    return axis == 0 && periodic_x ? cells[0] : cells[axis] + 1;
  }
  [[nodiscard]] Index node(Index i, Index j, Index k) const {
    if (periodic_x) i %= cells[0];
    return i + nodes_along(0) * (j + nodes_along(1) * k);
  }
  [[nodiscard]] bool flipped(std::size_t axis, Index cell) const { return mirrored[axis] && cell < cells[axis] / 2; }

  [[nodiscard]] TetMesh build() const;
};

TetMesh MirroredKuhnGrid::build() const {
  const std::int64_t node_count = std::int64_t{nodes_along(0)} * nodes_along(1) * nodes_along(2);
  const std::int64_t tet_count = 6 * std::int64_t{cells[0]} * cells[1] * cells[2];
  if (4 * tet_count > std::numeric_limits<Index>::max()) {
    throw std::invalid_argument("procedural mesh: " + std::to_string(tet_count) + " tets overflow the index type");
  }
  TetMesh mesh;
  mesh.positions.reserve(3 * static_cast<std::size_t>(node_count));
  for (Index k = 0; k < nodes_along(2); ++k) {
    for (Index j = 0; j < nodes_along(1); ++j) {
      for (Index i = 0; i < nodes_along(0); ++i) mesh.positions.insert(mesh.positions.end(), {double(i), double(j), double(k)});
    }
  }
  // The 6 Kuhn tets of a cube are the monotone paths (0,0,0) → (1,1,1) stepping one axis at a
  // time, one per axis permutation; det[e_p0, e_p1, e_p2] is the permutation's sign.
  constexpr std::array<std::array<int, 3>, 6> permutations = {
      {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}}};
  mesh.tets.reserve(4 * static_cast<std::size_t>(tet_count));
  for (Index k = 0; k < cells[2]; ++k) {
    for (Index j = 0; j < cells[1]; ++j) {
      for (Index i = 0; i < cells[0]; ++i) {
        const std::array<bool, 3> flip{flipped(0, i), flipped(1, j), flipped(2, k)};
        const int flip_count = int(flip[0]) + int(flip[1]) + int(flip[2]);
        for (std::size_t p = 0; p < permutations.size(); ++p) {
          std::array<int, 3> step{0, 0, 0};  // local corner in the cell's outward frame
          std::array<Index, 4> tet{};
          for (std::size_t s = 0; s < 4; ++s) {
            if (s > 0) step[at(permutations[p][s - 1])] = 1;
            tet[s] = node(i + (step[0] ^ int(flip[0])), j + (step[1] ^ int(flip[1])), k + (step[2] ^ int(flip[2])));
          }
          // Each mirrored axis reverses the orientation once more.
          const bool negative = (p >= 3) != (flip_count % 2 == 1);
          if (negative) std::swap(tet[2], tet[3]);
          mesh.tets.insert(mesh.tets.end(), tet.begin(), tet.end());
        }
      }
    }
  }
  return mesh;
}

/// Maps the square/cube [-1, 1]^d radially onto the unit disk/ball: u·‖u‖∞/‖u‖₂. The map is
/// homogeneous of degree 1, so its Jacobian determinant is (‖u‖∞/‖u‖₂)^d ≥ d^(−d/2) > 0:
/// orientation is kept and no cell is squashed by more than 1/√d along the radius.
template <std::size_t D>
std::array<double, D> square_to_round(const std::array<double, D>& u) {
  double max_norm = 0.0;
  double squared = 0.0;
  for (const double value : u) {
    max_norm = std::max(max_norm, std::abs(value));
    squared += value * value;
  }
  if (squared == 0.0) return u;
  std::array<double, D> mapped{};
  const double factor = max_norm / std::sqrt(squared);
  for (std::size_t a = 0; a < D; ++a) mapped[a] = u[a] * factor;
  return mapped;
}

Index even_at_least_two(Index cells) { return std::max<Index>(2, cells + cells % 2); }

/// The cube grid of make_implicit_mesh: `cells` cubes of edge `cell` per axis from `origin`,
/// centred on the bounding box and covering it.
struct CubeGrid {
  linalg::Vec3 origin;
  double cell = 0.0;
  std::array<Index, 3> cells{};

  [[nodiscard]] linalg::Vec3 corner(Index i, Index j, Index k) const {
    return origin + cell * linalg::Vec3{double(i), double(j), double(k)};
  }
  [[nodiscard]] std::int64_t node(Index i, Index j, Index k) const {
    return i + std::int64_t{cells[0] + 1} * (j + std::int64_t{cells[1] + 1} * k);
  }
  [[nodiscard]] std::int64_t node_count() const {
    return std::int64_t{cells[0] + 1} * (cells[1] + 1) * (cells[2] + 1);
  }
};

CubeGrid cube_grid_over(const char* function, const std::array<double, 6>& box, double cell_size) {
  require_positive(function, "cell_size", cell_size);
  CubeGrid grid;
  grid.cell = cell_size;
  double total_cells = 1.0;
  for (std::size_t a = 0; a < 3; ++a) {
    const double extent = box[a + 3] - box[a];
    require_positive(function, "bounding box extent", extent);
    const double cells = std::max(1.0, std::ceil(extent / cell_size));
    total_cells *= cells;
    // Checked in double before any cast: a tiny cell size must fail here, not overflow.
    if (total_cells > double(std::numeric_limits<Index>::max())) {
      throw std::invalid_argument(std::string(function) + ": cell size " + std::to_string(cell_size) +
                                  " makes a grid too large for the index type");
    }
    grid.cells[a] = static_cast<Index>(cells);
    grid.origin[int(a)] = 0.5 * (box[a] + box[a + 3]) - 0.5 * cells * cell_size;
  }
  return grid;
}

/// Calls visit(i, j, k) for every cube whose centre the shape contains, in grid order.
template <typename Visit>
void for_each_inside_cube(const CubeGrid& grid, const SignedDistance& signed_distance, Visit&& visit) {
  const double half = 0.5 * grid.cell;
  for (Index k = 0; k < grid.cells[2]; ++k) {
    for (Index j = 0; j < grid.cells[1]; ++j) {
      for (Index i = 0; i < grid.cells[0]; ++i) {
        if (signed_distance(grid.corner(i, j, k) + linalg::Vec3{half, half, half}) < 0.0) visit(i, j, k);
      }
    }
  }
}

/// The cell size whose kept-cube count has come closest to the target so far.
struct ClosestCellSize {
  const CellSizedShape& shape_at;
  const std::array<double, 6>& bounding_box;
  double target_cubes = 0.0;
  double size = 0.0;
  double error = std::numeric_limits<double>::infinity();  ///< |count / target − 1|

  /// count(cell_size) / target, remembering the closest.
  double measure(double cell_size) {
    const double ratio = count_implicit_cells(shape_at(cell_size), bounding_box, cell_size) / target_cubes;
    if (std::abs(ratio - 1.0) < error) {
      error = std::abs(ratio - 1.0);
      size = cell_size;
    }
    return ratio;
  }
  [[nodiscard]] bool close_enough() const { return error < 0.02; }
};

/// The 6 Kuhn tets of a unit cube as corner codes (bit 0 = +x, bit 1 = +y, bit 2 = +z), taken
/// from structured_tet_box on one cube — whose node numbering i + 2j + 4k is exactly that code —
/// so the diagonal convention is shared by construction rather than restated.
const std::vector<Index>& kuhn_corner_codes() {
  static const std::vector<Index> codes = linalg::structured_tet_box(1, 1, 1, 1.0).tets;
  return codes;
}

}  // namespace

TetMesh make_box_mesh(double size_x, double size_y, double size_z, Index cells_along_longest) {
  const std::array<double, 3> size{size_x, size_y, size_z};
  for (const double s : size) require_positive("make_box_mesh", "size", s);
  require_cells("make_box_mesh", "cells_along_longest", cells_along_longest, 1);
  const double longest = std::max({size_x, size_y, size_z});
  std::array<Index, 3> cells{};
  std::array<double, 3> cell_size{};
  for (std::size_t a = 0; a < 3; ++a) {
    const double ideal = cells_along_longest * size[a] / longest;
    cells[a] = std::max<Index>(1, static_cast<Index>(std::lround(ideal)));
    cell_size[a] = size[a] / cells[a];
  }
  TetMesh box = linalg::structured_tet_box(cells[0], cells[1], cells[2], 1.0);
  scale_axes(box, cell_size);
  return box;
}

TetMesh make_sheet_mesh(double width, double thickness, Index cells_along_side) {
  require_positive("make_sheet_mesh", "width", width);
  require_positive("make_sheet_mesh", "thickness", thickness);
  require_cells("make_sheet_mesh", "cells_along_side", cells_along_side, 1);
  // Seed 000 §5.1 meshes the sheet one element thick: the cells are flat slabs, which is what
  // makes per-node rotations ill-defined there (§4.1) and the sheet a stress test for them.
  TetMesh sheet = linalg::structured_tet_box(cells_along_side, cells_along_side, 1, 1.0);
  const double cell = width / cells_along_side;
  scale_axes(sheet, {cell, cell, thickness});
  return sheet;
}

TetMesh make_sphere_mesh(double radius, Index cells_across) {
  require_positive("make_sphere_mesh", "radius", radius);
  require_cells("make_sphere_mesh", "cells_across", cells_across, 1);
  // A cube mapped onto the ball: regular cells inside, all nodes of the cube's surface on the
  // sphere, the same structure and quality control as the box (no external mesher needed).
  const Index n = even_at_least_two(cells_across);
  const MirroredKuhnGrid grid{{n, n, n}, false, {true, true, true}};
  TetMesh ball = grid.build();
  const double half = n / 2.0;
  for (std::size_t node = 0; node < ball.positions.size(); node += 3) {
    const std::array<double, 3> u{(ball.positions[node] - half) / half, (ball.positions[node + 1] - half) / half,
                                  (ball.positions[node + 2] - half) / half};
    const std::array<double, 3> mapped = square_to_round(u);
    for (std::size_t a = 0; a < 3; ++a) ball.positions[node + a] = radius * mapped[a];
  }
  return ball;
}

TetMesh make_torus_mesh(double major_radius, double minor_radius, Index cells_around, Index cells_across) {
  require_positive("make_torus_mesh", "major_radius", major_radius);
  require_positive("make_torus_mesh", "minor_radius", minor_radius);
  if (!(minor_radius < major_radius)) {
    throw std::invalid_argument("make_torus_mesh: minor radius " + std::to_string(minor_radius) +
                                " must be smaller than the major radius " + std::to_string(major_radius));
  }
  require_cells("make_torus_mesh", "cells_around", cells_around, 3);
  require_cells("make_torus_mesh", "cells_across", cells_across, 1);
  // A periodic bar swept around the z axis, its square cross-section mapped onto the tube's
  // disk: the Kuhn cut is the same in every ring slice, so the last slice glues to the first.
  const Index m = even_at_least_two(cells_across);
  const MirroredKuhnGrid grid{{cells_around, m, m}, true, {false, true, true}};
  TetMesh torus = grid.build();
  const double half = m / 2.0;
  for (std::size_t node = 0; node < torus.positions.size(); node += 3) {
    const double angle = 2.0 * std::numbers::pi * torus.positions[node] / cells_around;
    const std::array<double, 2> disk =
        square_to_round<2>({(torus.positions[node + 1] - half) / half, (torus.positions[node + 2] - half) / half});
    // Grid j → height, grid k → distance from the axis: (angle, height, distance) is a
    // right-handed frame (e_angle = e_z × e_distance), so orientation is kept.
    const double distance = major_radius + minor_radius * disk[1];
    torus.positions[node] = distance * std::cos(angle);
    torus.positions[node + 1] = distance * std::sin(angle);
    torus.positions[node + 2] = minor_radius * disk[0];
  }
  return torus;
}

Index count_implicit_cells(const SignedDistance& signed_distance, const std::array<double, 6>& bounding_box,
                           double cell_size) {
  const CubeGrid grid = cube_grid_over("count_implicit_cells", bounding_box, cell_size);
  std::int64_t count = 0;
  for_each_inside_cube(grid, signed_distance, [&](Index, Index, Index) { ++count; });
  if (6 * count > std::numeric_limits<Index>::max() / 4) {
    throw std::invalid_argument("count_implicit_cells: " + std::to_string(count) + " cubes overflow the index type");
  }
  return static_cast<Index>(count);
}

TetMesh make_implicit_mesh(const SignedDistance& signed_distance, const std::array<double, 6>& bounding_box,
                           double cell_size) {
  const CubeGrid grid = cube_grid_over("make_implicit_mesh", bounding_box, cell_size);
  const Index cube_count = count_implicit_cells(signed_distance, bounding_box, cell_size);
  if (cube_count == 0) {
    throw std::invalid_argument("make_implicit_mesh: no cube centre of the grid (cell size " +
                                std::to_string(cell_size) + ") is inside the shape");
  }
  const std::vector<Index>& codes = kuhn_corner_codes();
  constexpr Index unused = -1;
  // Grid node → mesh node; first the corners of kept cubes are marked, then numbered in grid
  // order, so the numbering is deterministic and keeps the grid's locality.
  std::vector<Index> mesh_node(static_cast<std::size_t>(grid.node_count()), unused);
  auto corner_node = [&](Index i, Index j, Index k, Index code) {
    return grid.node(i + (code & 1), j + ((code >> 1) & 1), k + ((code >> 2) & 1));
  };
  for_each_inside_cube(grid, signed_distance, [&](Index i, Index j, Index k) {
    for (Index code = 0; code < 8; ++code) mesh_node[static_cast<std::size_t>(corner_node(i, j, k, code))] = 0;
  });
  TetMesh mesh;
  Index next = 0;
  for (Index k = 0; k <= grid.cells[2]; ++k) {
    for (Index j = 0; j <= grid.cells[1]; ++j) {
      for (Index i = 0; i <= grid.cells[0]; ++i) {
        Index& node = mesh_node[static_cast<std::size_t>(grid.node(i, j, k))];
        if (node == unused) continue;
        node = next++;
        const linalg::Vec3 x = grid.corner(i, j, k);
        mesh.positions.insert(mesh.positions.end(), {x.x, x.y, x.z});
      }
    }
  }
  mesh.tets.reserve(24 * static_cast<std::size_t>(cube_count));
  for_each_inside_cube(grid, signed_distance, [&](Index i, Index j, Index k) {
    for (const Index code : codes) mesh.tets.push_back(mesh_node[static_cast<std::size_t>(corner_node(i, j, k, code))]);
  });
  return mesh;
}

linalg::Vec3 implicit_grid_origin(const std::array<double, 6>& bounding_box, double cell_size) {
  return cube_grid_over("implicit_grid_origin", bounding_box, cell_size).origin;
}

double cell_size_for_tet_count(const SignedDistance& signed_distance, const std::array<double, 6>& bounding_box,
                               Index target_tets) {
  return cell_size_for_tet_count([&](double) { return signed_distance; }, bounding_box, target_tets);
}

double cell_size_for_tet_count(const CellSizedShape& shape_at, const std::array<double, 6>& bounding_box,
                               Index target_tets) {
  require_cells("cell_size_for_tet_count", "target_tets", target_tets, 6);
  const double box_volume =
      (bounding_box[3] - bounding_box[0]) * (bounding_box[4] - bounding_box[1]) * (bounding_box[5] - bounding_box[2]);
  require_positive("cell_size_for_tet_count", "bounding box volume", box_volume);
  ClosestCellSize closest{shape_at, bounding_box, target_tets / 6.0};
  // Start as if the shape filled its box (too fine a cell only when it does not, so the first
  // count is never zero), then let the tet count ∝ h⁻³ law correct it.
  double cell_size = std::cbrt(box_volume / closest.target_cubes);
  for (int attempt = 0; attempt < 4 && !closest.close_enough(); ++attempt) {
    const double ratio = closest.measure(cell_size);
    cell_size *= ratio > 0.0 ? std::cbrt(ratio) : 0.5;
  }
  // On coarse, boxy shapes the count jumps by whole layers of cubes (≈ 10 % at 20K tets) and
  // the law can hop over the target: bisect between a size counting more and one counting less.
  if (!closest.close_enough()) {
    double finer = closest.size;
    double coarser = closest.size;
    for (int step = 0; step < 40 && closest.measure(finer) < 1.0; ++step) finer *= 0.97;
    for (int step = 0; step < 40 && closest.measure(coarser) > 1.0; ++step) coarser *= 1.03;
    for (int step = 0; step < 30 && !closest.close_enough(); ++step) {
      const double middle = 0.5 * (finer + coarser);
      (closest.measure(middle) > 1.0 ? finer : coarser) = middle;
    }
  }
  return closest.size;
}

}  // namespace cholsim::fem
