#include "fem/octree/triangle_rasterization.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>

#include <tbb/parallel_sort.h>

#include "fem/octree/octant.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::fem::octree {
namespace {

/// Grows every cell by this fraction of its edge: the overlap test is conservative.
constexpr double kCellGrowth = 1e-9;

/// True iff the projections of the triangle (relative to the box centre) and of the box on
/// `axis` are disjoint.
bool separated_along(const Vec3& axis, const Vec3& a, const Vec3& b, const Vec3& c, double half_size) {
  const double pa = linalg::dot(axis, a);
  const double pb = linalg::dot(axis, b);
  const double pc = linalg::dot(axis, c);
  const double box_radius = half_size * (std::abs(axis.x) + std::abs(axis.y) + std::abs(axis.z));
  return std::min({pa, pb, pc}) > box_radius || std::max({pa, pb, pc}) < -box_radius;
}

Vec3 grid_point(const SurfaceMesh& surface, Index vertex, const Vec3& origin, double cell_size) {
  return (node_position(surface.positions, vertex) - origin) / cell_size;
}

/// Appends the cells one triangle (in grid units) overlaps.
void rasterize_triangle(const Vec3& v0, const Vec3& v1, const Vec3& v2, int depth, std::vector<std::uint64_t>& cells) {
  const double cells_across = std::ldexp(1.0, depth);
  std::array<std::uint32_t, 3> low{};
  std::array<std::uint32_t, 3> high{};
  for (int axis = 0; axis < 3; ++axis) {
    const double lo = std::min({v0[axis], v1[axis], v2[axis]}) - kCellGrowth;
    const double hi = std::max({v0[axis], v1[axis], v2[axis]}) + kCellGrowth;
    if (hi < 0.0 || lo >= cells_across) return;
    low[static_cast<std::size_t>(axis)] = static_cast<std::uint32_t>(std::max(0.0, std::floor(lo)));
    high[static_cast<std::size_t>(axis)] = static_cast<std::uint32_t>(std::min(cells_across - 1.0, std::floor(hi)));
  }
  for (std::uint32_t z = low[2]; z <= high[2]; ++z) {
    for (std::uint32_t y = low[1]; y <= high[1]; ++y) {
      for (std::uint32_t x = low[0]; x <= high[0]; ++x) {
        const Vec3 centre{x + 0.5, y + 0.5, z + 0.5};
        if (triangle_overlaps_box(v0, v1, v2, centre, 0.5 + kCellGrowth)) cells.push_back(morton_key(x, y, z));
      }
    }
  }
}

void sort_unique(std::vector<std::uint64_t>& keys, int threads) {
  linalg::thread_arena(linalg::resolve_thread_count(threads)).execute([&] { tbb::parallel_sort(keys.begin(), keys.end()); });
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
}

}  // namespace

bool triangle_overlaps_box(const Vec3& v0, const Vec3& v1, const Vec3& v2, const Vec3& centre, double half_size) {
  const Vec3 a = v0 - centre;
  const Vec3 b = v1 - centre;
  const Vec3 c = v2 - centre;
  const std::array<Vec3, 3> box_axes{Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}};
  for (const Vec3& axis : box_axes) {
    if (separated_along(axis, a, b, c, half_size)) return false;
  }
  const std::array<Vec3, 3> edges{b - a, c - b, a - c};
  if (separated_along(linalg::cross(edges[0], edges[1]), a, b, c, half_size)) return false;
  for (const Vec3& edge : edges) {
    for (const Vec3& axis : box_axes) {
      if (separated_along(linalg::cross(edge, axis), a, b, c, half_size)) return false;
    }
  }
  return true;
}

std::vector<std::uint64_t> rasterize_surface(const SurfaceMesh& surface, int depth, const Vec3& origin,
                                             double cell_size, int threads) {
  std::vector<std::uint64_t> all_cells;
  std::mutex merge;
  linalg::parallel_chunks(surface.triangle_count(), threads, [&](Index begin, Index end) {
    std::vector<std::uint64_t> cells;
    for (Index t = begin; t < end; ++t) {
      const Index* v = &surface.triangles[3 * static_cast<std::size_t>(t)];
      rasterize_triangle(grid_point(surface, v[0], origin, cell_size), grid_point(surface, v[1], origin, cell_size),
                         grid_point(surface, v[2], origin, cell_size), depth, cells);
    }
    const std::lock_guard lock(merge);
    all_cells.insert(all_cells.end(), cells.begin(), cells.end());
  }, 256);
  sort_unique(all_cells, threads);
  return all_cells;
}

}  // namespace cholsim::fem::octree
