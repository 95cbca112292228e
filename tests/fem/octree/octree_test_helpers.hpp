#pragma once
// Shared set-ups of the octree tests: procedural closed surfaces, random balanced trees, and
// a dense grid of leaf levels to check trees against cell by cell.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "fem/octree/balanced_refinement.hpp"
#include "fem/octree/linear_octree.hpp"

namespace cholsim::fem::octree::test {

inline const std::string kArmadillo = std::string(CHOLSIM_SHARED_DATA_DIR) + "/meshes/libigl-tutorial-data/armadillo.obj";

/// values appended one by one (GCC 12 warns falsely about vector::insert of an initializer list).
template <typename T>
void append(std::vector<T>& vector, std::initializer_list<T> values) {
  for (const T& value : values) vector.push_back(value);
}

/// Flips every triangle whose normal points towards `centre`: CCW seen from outside for a
/// surface star-shaped around `centre`.
inline void orient_outward(SurfaceMesh& mesh, const Vec3& centre) {
  for (std::size_t t = 0; t < mesh.triangles.size(); t += 3) {
    const Vec3 a = node_position(mesh.positions, mesh.triangles[t]);
    const Vec3 b = node_position(mesh.positions, mesh.triangles[t + 1]);
    const Vec3 c = node_position(mesh.positions, mesh.triangles[t + 2]);
    if (linalg::dot(linalg::cross(b - a, c - a), (a + b + c) / 3.0 - centre) < 0) std::swap(mesh.triangles[t + 1], mesh.triangles[t + 2]);
  }
}

/// The cube [0, side]^3 as 12 triangles.
inline SurfaceMesh cube_surface(double side = 1.0) {
  SurfaceMesh mesh;
  for (int v = 0; v < 8; ++v) {
    for (int axis = 0; axis < 3; ++axis) mesh.positions.push_back(((v >> axis) & 1) ? side : 0.0);
  }
  // Each face: the 4 corners with bit `axis` = `side_bit`, as two triangles.
  for (int axis = 0; axis < 3; ++axis) {
    const int u = 1 << ((axis + 1) % 3), w = 1 << ((axis + 2) % 3);
    for (int side_bit = 0; side_bit < 2; ++side_bit) {
      const int base = side_bit << axis;
      append<Index>(mesh.triangles, {base, base + u, base + u + w, base, base + u + w, base + w});
    }
  }
  orient_outward(mesh, {0.5 * side, 0.5 * side, 0.5 * side});
  return mesh;
}

/// A UV sphere of `radius` about the origin, `rings` latitude bands, 2·rings segments.
inline SurfaceMesh sphere_surface(double radius, int rings) {
  SurfaceMesh mesh;
  const int segments = 2 * rings;
  append<double>(mesh.positions, {0.0, 0.0, radius});
  for (int r = 1; r < rings; ++r) {
    const double theta = std::numbers::pi * r / rings;
    for (int s = 0; s < segments; ++s) {
      const double phi = 2.0 * std::numbers::pi * s / segments;
      append<double>(mesh.positions, {radius * std::sin(theta) * std::cos(phi),
                                                   radius * std::sin(theta) * std::sin(phi), radius * std::cos(theta)});
    }
  }
  append<double>(mesh.positions, {0.0, 0.0, -radius});
  const Index south = 1 + (rings - 1) * segments;
  const auto ring_vertex = [&](int r, int s) { return 1 + (r - 1) * segments + (s % segments); };
  for (int s = 0; s < segments; ++s) {
    append<Index>(mesh.triangles, {0, ring_vertex(1, s), ring_vertex(1, s + 1)});
    append<Index>(mesh.triangles, {south, ring_vertex(rings - 1, s), ring_vertex(rings - 1, s + 1)});
    for (int r = 1; r + 1 < rings; ++r) {
      append<Index>(mesh.triangles, {ring_vertex(r, s), ring_vertex(r + 1, s), ring_vertex(r + 1, s + 1)});
      append<Index>(mesh.triangles, {ring_vertex(r, s), ring_vertex(r + 1, s + 1), ring_vertex(r, s + 1)});
    }
  }
  orient_outward(mesh, {});
  return mesh;
}

/// A balanced tree over 2^depth cells refined around `seed_count` random cells, each leaf
/// inside with probability `inside_probability` (seed leaves always): kept subsets with
/// boundaries and holes at every level, so every hanging edge and face case occurs.
inline BalancedOctree random_balanced_octree(int depth, int seed_count, double inside_probability, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<std::uint32_t> coordinate(0, (1u << depth) - 1);
  std::vector<std::uint64_t> seeds;
  for (int i = 0; i < seed_count; ++i) seeds.push_back(morton_key(coordinate(random), coordinate(random), coordinate(random)));
  std::sort(seeds.begin(), seeds.end());
  seeds.erase(std::unique(seeds.begin(), seeds.end()), seeds.end());
  BalancedOctree tree;
  tree.depth = depth;
  tree.origin = {-1.0, 0.5, 2.0};
  tree.cell_size = 0.25;
  tree.leaves = balanced_octree_from_seeds(depth, seeds, 2);
  std::bernoulli_distribution inside(inside_probability);
  for (const Octant& leaf : tree.leaves) tree.inside.push_back((leaf.flags & kSeedCellFlag) || inside(random) ? 1 : 0);
  return tree;
}

/// Per finest cell (x + n·y + n²·z, n = 2^depth) the index of the octant covering it, −1 if
/// none, −2 if several.
inline std::vector<Index> cell_owners(const std::vector<Octant>& octants, int depth) {
  const std::size_t n = std::size_t{1} << depth;
  std::vector<Index> owner(n * n * n, -1);
  for (std::size_t i = 0; i < octants.size(); ++i) {
    const Octant& o = octants[i];
    for (std::size_t z = o.z; z < o.z + octant_size(o); ++z) {
      for (std::size_t y = o.y; y < o.y + octant_size(o); ++y) {
        for (std::size_t x = o.x; x < o.x + octant_size(o); ++x) {
          Index& cell = owner[x + n * (y + n * z)];
          cell = cell == -1 ? static_cast<Index>(i) : -2;
        }
      }
    }
  }
  return owner;
}

}  // namespace cholsim::fem::octree::test
