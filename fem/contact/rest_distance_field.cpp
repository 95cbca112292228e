#include "fem/contact/rest_distance_field.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "fem/contact/tet_bvh.hpp"

namespace cholsim::fem {

using linalg::Vec3;

namespace {

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

/// The point of triangle abc nearest p, by locating p among the triangle's Voronoi regions
/// (3 vertices, 3 edges, the face) with dot products only (Ericson, Real-Time Collision
/// Detection, §5.1.5).
Vec3 closest_point_on_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 ab = b - a;
  const Vec3 ac = c - a;
  const double a_ab = linalg::dot(ab, p - a);
  const double a_ac = linalg::dot(ac, p - a);
  if (a_ab <= 0.0 && a_ac <= 0.0) return a;
  const double b_ab = linalg::dot(ab, p - b);
  const double b_ac = linalg::dot(ac, p - b);
  if (b_ab >= 0.0 && b_ac <= b_ab) return b;
  const double c_ab = linalg::dot(ab, p - c);
  const double c_ac = linalg::dot(ac, p - c);
  if (c_ac >= 0.0 && c_ab <= c_ac) return c;
  // Barycentric areas (scaled) of p's projection: each ≤ 0 puts it beyond the opposite edge.
  const double area_c = a_ab * b_ac - b_ab * a_ac;
  if (area_c <= 0.0 && a_ab >= 0.0 && b_ab <= 0.0) return a + (a_ab / (a_ab - b_ab)) * ab;
  const double area_b = c_ab * a_ac - a_ab * c_ac;
  if (area_b <= 0.0 && a_ac >= 0.0 && c_ac <= 0.0) return a + (a_ac / (a_ac - c_ac)) * ac;
  const double area_a = b_ab * c_ac - c_ab * b_ac;
  if (area_a <= 0.0 && b_ac - b_ab >= 0.0 && c_ab - c_ac >= 0.0) {
    return b + ((b_ac - b_ab) / ((b_ac - b_ab) + (c_ab - c_ac))) * (c - b);
  }
  const double total = area_a + area_b + area_c;
  if (!(total > 0.0)) return a;  // a degenerate triangle: its edges answered above already
  return a + (area_b / total) * ab + (area_c / total) * ac;
}

/// The grid description shared by the build steps.
struct Grid {
  Vec3 origin;
  double spacing = 0.0;
  std::array<Index, 3> counts{};

  [[nodiscard]] std::size_t size() const { return at(counts[0]) * at(counts[1]) * at(counts[2]); }
  [[nodiscard]] std::size_t index(Index i, Index j, Index k) const {
    return at(i) + at(counts[0]) * (at(j) + at(counts[1]) * at(k));
  }
  [[nodiscard]] Vec3 position(Index i, Index j, Index k) const {
    return origin + spacing * Vec3{static_cast<double>(i), static_cast<double>(j), static_cast<double>(k)};
  }
  /// The samples with lower − reach ≤ position ≤ upper + reach, per axis {first, last}
  /// (first > last when none).
  [[nodiscard]] std::array<std::array<Index, 2>, 3> samples_near(const Vec3& lower, const Vec3& upper,
                                                                 double reach) const {
    std::array<std::array<Index, 2>, 3> range{};
    for (int axis = 0; axis < 3; ++axis) {
      const double first = std::ceil((lower[axis] - reach - origin[axis]) / spacing);
      const double last = std::floor((upper[axis] + reach - origin[axis]) / spacing);
      range[at(axis)] = {static_cast<Index>(std::max(first, 0.0)),
                         static_cast<Index>(std::min(last, static_cast<double>(counts[at(axis)] - 1)))};
    }
    return range;
  }
  template <typename Visit>
  void for_each_sample_in(const std::array<std::array<Index, 2>, 3>& range, const Visit& visit) const {
    for (Index k = range[2][0]; k <= range[2][1]; ++k) {
      for (Index j = range[1][0]; j <= range[1][1]; ++j) {
        for (Index i = range[0][0]; i <= range[0][1]; ++i) visit(i, j, k);
      }
    }
  }
};

Grid grid_around(const TetMesh& mesh, double spacing, int margin_cells) {
  if (mesh.tet_count() == 0) throw std::invalid_argument("RestDistanceField: the mesh has no tets");
  if (!(spacing > 0.0) || !std::isfinite(spacing)) {
    throw std::invalid_argument("RestDistanceField: grid spacing " + std::to_string(spacing) +
                                " must be positive and finite");
  }
  if (margin_cells < 0) {
    throw std::invalid_argument("RestDistanceField: margin of " + std::to_string(margin_cells) +
                                " cells must not be negative");
  }
  const std::array<double, 6> box = bounding_box(mesh.positions);
  Grid grid;
  grid.spacing = spacing;
  double samples = 1.0;
  for (std::size_t axis = 0; axis < 3; ++axis) {
    // Computed in double first: a tiny spacing must be refused, not overflow an Index.
    const double cells = std::max(std::ceil((box[axis + 3] - box[axis]) / spacing), 1.0) + 2.0 * margin_cells;
    samples *= cells + 1.0;
    if (!(samples <= static_cast<double>(RestDistanceField::kMaxSamples))) {
      throw std::invalid_argument("RestDistanceField: grid spacing " + std::to_string(spacing) +
                                  " over a bounding box of " + std::to_string(box[3] - box[0]) + " × " +
                                  std::to_string(box[4] - box[1]) + " × " + std::to_string(box[5] - box[2]) +
                                  " needs more than " + std::to_string(RestDistanceField::kMaxSamples) +
                                  " samples; use a larger spacing");
    }
    grid.counts[axis] = static_cast<Index>(cells) + 1;
    grid.origin[static_cast<int>(axis)] = box[axis] - margin_cells * spacing;
  }
  return grid;
}

/// A boundary triangle's corners, gathered once so that the distance loops read them
/// contiguously.
struct Triangle {
  Vec3 a;
  Vec3 b;
  Vec3 c;
};

std::vector<Triangle> gather_triangles(const SurfaceMesh& surface) {
  std::vector<Triangle> triangles;
  triangles.reserve(at(surface.triangle_count()));
  for (Index triangle = 0; triangle < surface.triangle_count(); ++triangle) {
    triangles.push_back({node_position(surface.positions, surface.triangles[3 * at(triangle)]),
                         node_position(surface.positions, surface.triangles[3 * at(triangle) + 1]),
                         node_position(surface.positions, surface.triangles[3 * at(triangle) + 2])});
  }
  return triangles;
}

/// What the distance steps know of a sample: the nearest surface point found so far and the
/// triangle it lies on (−1 before any).
struct NearestSurfacePoint {
  Vec3 point;
  Index triangle = -1;
};

/// Step 1: exact squared distances and nearest points at the samples within `band` of each
/// boundary triangle's box. Others keep +∞. Returns how many samples got a distance.
std::size_t compute_narrow_band(const Grid& grid, const std::vector<Triangle>& triangles, double band,
                                std::vector<double>& squared_distances, std::vector<NearestSurfacePoint>& nearest) {
  for (std::size_t triangle = 0; triangle < triangles.size(); ++triangle) {
    // Named references, not a structured binding: the lambda below uses them, and Clang 14
    // (the fuzzing and sanitizer builds) cannot capture structured bindings.
    const Vec3& a = triangles[triangle].a;
    const Vec3& b = triangles[triangle].b;
    const Vec3& c = triangles[triangle].c;
    const Vec3 lower{std::min({a.x, b.x, c.x}), std::min({a.y, b.y, c.y}), std::min({a.z, b.z, c.z})};
    const Vec3 upper{std::max({a.x, b.x, c.x}), std::max({a.y, b.y, c.y}), std::max({a.z, b.z, c.z})};
    grid.for_each_sample_in(grid.samples_near(lower, upper, band), [&](Index i, Index j, Index k) {
      const Vec3 sample = grid.position(i, j, k);
      const Vec3 closest = closest_point_on_triangle(sample, a, b, c);
      const double squared = linalg::squared_norm(sample - closest);
      const std::size_t index = grid.index(i, j, k);
      if (squared < squared_distances[index]) {
        squared_distances[index] = squared;
        nearest[index] = {closest, static_cast<Index>(triangle)};
      }
    });
  }
  return static_cast<std::size_t>(std::count_if(squared_distances.begin(), squared_distances.end(),
                                                [](double squared) { return std::isfinite(squared); }));
}

/// One raster sweep of step 2 in direction `direction` (+1: increasing linear index, −1:
/// decreasing): every sample takes the nearest of the nearest points of its 13 neighbours
/// already visited in this sweep. Comparing points, not triangles, keeps a sweep to a few
/// multiply-adds per neighbour.
void propagate_nearest_points(const Grid& grid, int direction, std::vector<double>& squared_distances,
                              std::vector<NearestSurfacePoint>& nearest) {
  // The half of the 26-neighbourhood that comes earlier in increasing raster order.
  static constexpr std::array<std::array<int, 3>, 13> kEarlierNeighbours = {{
      {-1, -1, -1}, {0, -1, -1}, {1, -1, -1}, {-1, 0, -1}, {0, 0, -1}, {1, 0, -1}, {-1, 1, -1},
      {0, 1, -1}, {1, 1, -1}, {-1, -1, 0}, {0, -1, 0}, {1, -1, 0}, {-1, 0, 0}}};
  const auto [nx, ny, nz] = grid.counts;
  const Index first_k = direction > 0 ? 0 : nz - 1;
  const Index first_j = direction > 0 ? 0 : ny - 1;
  const Index first_i = direction > 0 ? 0 : nx - 1;
  for (Index k = first_k; k >= 0 && k < nz; k += direction) {
    for (Index j = first_j; j >= 0 && j < ny; j += direction) {
      for (Index i = first_i; i >= 0 && i < nx; i += direction) {
        const std::size_t index = grid.index(i, j, k);
        const Vec3 sample = grid.position(i, j, k);
        for (const auto& offset : kEarlierNeighbours) {
          const Index ni = i + direction * offset[0];
          const Index nj = j + direction * offset[1];
          const Index nk = k + direction * offset[2];
          if (ni < 0 || ni >= nx || nj < 0 || nj >= ny || nk < 0 || nk >= nz) continue;
          const NearestSurfacePoint& candidate = nearest[grid.index(ni, nj, nk)];
          if (candidate.triangle < 0) continue;
          const double squared = linalg::squared_norm(sample - candidate.point);
          if (squared < squared_distances[index]) {
            squared_distances[index] = squared;
            nearest[index] = candidate;
          }
        }
      }
    }
  }
}

/// Ends step 2: a propagated point lies on a triangle near the true nearest one but is that
/// triangle's nearest point to the neighbour it came from, not to this sample; the exact
/// distance to its triangle removes that error (it can only lower the value, never below the
/// true distance).
void exact_distances_to_nearest_triangles(const Grid& grid, const std::vector<Triangle>& triangles,
                                          const std::vector<NearestSurfacePoint>& nearest,
                                          std::vector<double>& squared_distances) {
  const auto [nx, ny, nz] = grid.counts;
  for (Index k = 0; k < nz; ++k) {
    for (Index j = 0; j < ny; ++j) {
      for (Index i = 0; i < nx; ++i) {
        const std::size_t index = grid.index(i, j, k);
        const Triangle& triangle = triangles[at(nearest[index].triangle)];
        const Vec3 sample = grid.position(i, j, k);
        squared_distances[index] =
            linalg::squared_norm(sample - closest_point_on_triangle(sample, triangle.a, triangle.b, triangle.c));
      }
    }
  }
}

/// Step 3: marks the samples inside some rest tet. Returns how many.
std::size_t mark_inside_samples(const Grid& grid, const TetMesh& mesh, std::vector<std::uint8_t>& inside) {
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    std::array<Vec3, 4> vertices;
    for (std::size_t corner = 0; corner < 4; ++corner) {
      vertices[corner] = node_position(mesh.positions, mesh.tets[4 * at(tet) + corner]);
    }
    Vec3 lower = vertices[0];
    Vec3 upper = vertices[0];
    for (const Vec3& vertex : vertices) {
      for (int axis = 0; axis < 3; ++axis) {
        lower[axis] = std::min(lower[axis], vertex[axis]);
        upper[axis] = std::max(upper[axis], vertex[axis]);
      }
    }
    grid.for_each_sample_in(grid.samples_near(lower, upper, 0.0), [&](Index i, Index j, Index k) {
      const std::size_t index = grid.index(i, j, k);
      if (inside[index] != 0) return;
      const auto weights = barycentric_weights(vertices, grid.position(i, j, k));
      if (weights && std::min({(*weights)[0], (*weights)[1], (*weights)[2], (*weights)[3]}) >=
                         -TetBvh::kWeightTolerance) {
        inside[index] = 1;
      }
    });
  }
  return static_cast<std::size_t>(std::count(inside.begin(), inside.end(), std::uint8_t{1}));
}

}  // namespace

RestDistanceField::RestDistanceField(const TetMesh& mesh, double spacing, int margin_cells) {
  const auto start = std::chrono::steady_clock::now();
  const Grid grid = grid_around(mesh, spacing, margin_cells);
  spacing_ = grid.spacing;
  origin_ = grid.origin;
  counts_ = grid.counts;

  const std::vector<Triangle> triangles = gather_triangles(boundary_surface(mesh));
  values_.assign(grid.size(), std::numeric_limits<double>::infinity());  // squared distances until the end
  std::vector<NearestSurfacePoint> nearest(grid.size());
  stats_.boundary_triangles = static_cast<Index>(triangles.size());
  stats_.samples = grid.size();
  stats_.band_samples = compute_narrow_band(grid, triangles, kBandCells * spacing, values_, nearest);
  // Two round trips: the second repairs samples whose nearest point arrives only through a
  // neighbour that the first backward sweep updated after they were visited.
  for (int round = 0; round < 2; ++round) {
    propagate_nearest_points(grid, +1, values_, nearest);
    propagate_nearest_points(grid, -1, values_, nearest);
  }
  exact_distances_to_nearest_triangles(grid, triangles, nearest, values_);
  std::vector<std::uint8_t> inside(grid.size(), 0);
  stats_.inside_samples = mark_inside_samples(grid, mesh, inside);
  for (std::size_t index = 0; index < values_.size(); ++index) {
    values_[index] = (inside[index] != 0 ? -1.0 : 1.0) * std::sqrt(values_[index]);
  }
  stats_.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

DistanceSample RestDistanceField::interpolate_inside_grid(const Vec3& grid_point) const {
  // Cell (i, j, k) and the point's local coordinates t ∈ [0, 1]³ in it.
  std::array<Index, 3> cell{};
  Vec3 t;
  for (int axis = 0; axis < 3; ++axis) {
    const double last_cell = static_cast<double>(counts_[at(axis)] - 2);
    const double corner = std::clamp(std::floor(grid_point[axis]), 0.0, last_cell);
    cell[at(axis)] = static_cast<Index>(corner);
    t[axis] = grid_point[axis] - corner;
  }
  const auto value = [&](Index di, Index dj, Index dk) {
    return values_[linear_index(cell[0] + di, cell[1] + dj, cell[2] + dk)];
  };
  // Interpolate along x on the 4 edges, then y, then z; the derivatives follow the same tree.
  const double v00 = value(0, 0, 0) + t.x * (value(1, 0, 0) - value(0, 0, 0));
  const double v10 = value(0, 1, 0) + t.x * (value(1, 1, 0) - value(0, 1, 0));
  const double v01 = value(0, 0, 1) + t.x * (value(1, 0, 1) - value(0, 0, 1));
  const double v11 = value(0, 1, 1) + t.x * (value(1, 1, 1) - value(0, 1, 1));
  const double dx00 = value(1, 0, 0) - value(0, 0, 0);
  const double dx10 = value(1, 1, 0) - value(0, 1, 0);
  const double dx01 = value(1, 0, 1) - value(0, 0, 1);
  const double dx11 = value(1, 1, 1) - value(0, 1, 1);
  const double v0 = v00 + t.y * (v10 - v00);
  const double v1 = v01 + t.y * (v11 - v01);
  const double dx0 = dx00 + t.y * (dx10 - dx00);
  const double dx1 = dx01 + t.y * (dx11 - dx01);
  const Vec3 gradient{dx0 + t.z * (dx1 - dx0), (1.0 - t.z) * (v10 - v00) + t.z * (v11 - v01), v1 - v0};
  return {v0 + t.z * (v1 - v0), linalg::normalized(gradient / spacing_)};
}

DistanceSample RestDistanceField::sample(const Vec3& rest_point) const {
  Vec3 clamped;
  for (int axis = 0; axis < 3; ++axis) {
    const double far_side = origin_[axis] + spacing_ * static_cast<double>(counts_[at(axis)] - 1);
    clamped[axis] = std::clamp(rest_point[axis], origin_[axis], far_side);
  }
  const DistanceSample at_clamped = interpolate_inside_grid((clamped - origin_) / spacing_);
  if (clamped == rest_point) return at_clamped;
  // Beyond the grid: the distance to the surface point nearest the clamped point, found by one
  // projection step there. A distance to a surface point is never below the true distance,
  // and it meets the interpolant continuously on the grid's box.
  const Vec3 surface_point = clamped - at_clamped.distance * at_clamped.gradient;
  const Vec3 offset = rest_point - surface_point;
  const double length = linalg::norm(offset);
  return {length, length > 0.0 ? offset / length : at_clamped.gradient};
}

Vec3 RestDistanceField::project_to_surface(const Vec3& rest_point, int iterations) const {
  Vec3 point = rest_point;
  for (int step = 0; step < iterations; ++step) {
    const DistanceSample here = sample(point);
    point -= here.distance * here.gradient;
  }
  return point;
}

}  // namespace cholsim::fem
