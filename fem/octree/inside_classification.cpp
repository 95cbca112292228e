#include "fem/octree/inside_classification.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "fem/octree/balanced_refinement.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::fem::octree {
namespace {

using linalg::Index;
using LeafPair = std::pair<Index, Index>;

/// The last leaf whose Morton code is ≤ `key`, searching forward from `from` (keys[from] ≤ key)
/// with doubling steps: face neighbours are usually close by in Morton order.
std::size_t leaf_at_or_before(std::span<const std::uint64_t> keys, std::size_t from, std::uint64_t key) {
  std::size_t low = from;
  std::size_t step = 1;
  std::size_t high = from + 1;
  while (high < keys.size() && keys[high] <= key) {
    low = high;
    step *= 2;
    high = from + step;
  }
  high = std::min(high, keys.size());
  return static_cast<std::size_t>(std::upper_bound(keys.begin() + static_cast<std::ptrdiff_t>(low),
                                                   keys.begin() + static_cast<std::ptrdiff_t>(high), key) -
                                  keys.begin()) - 1;
}

/// Appends (leaf, neighbour) for every non-seed neighbour across the +x, +y, +z faces of
/// non-seed leaf `leaf`. Across a face the neighbour is as large or larger (one search) or
/// half as large (four; the tree is balanced). Searching only the + faces meets every
/// face-adjacent pair once.
void append_face_neighbours(std::span<const Octant> leaves, std::span<const std::uint64_t> keys, std::size_t leaf,
                            std::uint32_t cube, std::vector<LeafPair>& pairs) {
  const Octant& o = leaves[leaf];
  const std::uint32_t size = octant_size(o);
  const std::array<std::uint32_t, 3> anchor{o.x, o.y, o.z};
  for (std::size_t axis = 0; axis < 3; ++axis) {
    if (anchor[axis] + size >= cube) continue;
    std::array<std::uint32_t, 3> cell = anchor;
    cell[axis] += size;
    const std::size_t first = leaf_at_or_before(keys, leaf, morton_key(cell[0], cell[1], cell[2]));
    const bool finer_across = leaves[first].level < o.level;
    const std::uint32_t half = size / 2;
    for (int quarter = 0; quarter < (finer_across ? 4 : 1); ++quarter) {
      std::array<std::uint32_t, 3> sub = cell;
      sub[(axis + 1) % 3] += (quarter & 1) ? half : 0;
      sub[(axis + 2) % 3] += (quarter & 2) ? half : 0;
      const std::size_t neighbour = quarter == 0 ? first : leaf_at_or_before(keys, first, morton_key(sub[0], sub[1], sub[2]));
      if (!(leaves[neighbour].flags & kSeedCellFlag)) pairs.emplace_back(static_cast<Index>(leaf), static_cast<Index>(neighbour));
    }
  }
}

std::vector<LeafPair> face_adjacent_open_leaves(std::span<const Octant> leaves, std::span<const std::uint64_t> keys,
                                                int depth, int threads) {
  std::vector<LeafPair> pairs;
  std::mutex merge;
  const std::uint32_t cube = octant_size(depth);
  linalg::parallel_chunks(static_cast<Index>(leaves.size()), threads, [&](Index begin, Index end) {
    std::vector<LeafPair> found;
    for (Index i = begin; i < end; ++i) {
      if (!(leaves[static_cast<std::size_t>(i)].flags & kSeedCellFlag)) {
        append_face_neighbours(leaves, keys, static_cast<std::size_t>(i), cube, found);
      }
    }
    const std::lock_guard lock(merge);
    pairs.insert(pairs.end(), found.begin(), found.end());
  });
  return pairs;
}

Index find_root(std::vector<Index>& parent, Index i) {
  while (parent[static_cast<std::size_t>(i)] != i) {
    parent[static_cast<std::size_t>(i)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(i)])];  // path halving
    i = parent[static_cast<std::size_t>(i)];
  }
  return i;
}

/// Union–find over the pairs; every leaf ends pointing straight at the smallest leaf of its
/// component.
std::vector<Index> component_roots(std::size_t leaf_count, std::span<const LeafPair> pairs) {
  std::vector<Index> parent(leaf_count);
  std::iota(parent.begin(), parent.end(), Index{0});
  for (const auto& [a, b] : pairs) {
    const Index ra = find_root(parent, a);
    const Index rb = find_root(parent, b);
    if (ra != rb) parent[static_cast<std::size_t>(std::max(ra, rb))] = std::min(ra, rb);
  }
  for (std::size_t i = 0; i < leaf_count; ++i) parent[i] = find_root(parent, static_cast<Index>(i));
  return parent;
}

Vec3 leaf_centre(const Octant& o, const Vec3& origin, double cell_size) {
  const double half = 0.5 * octant_size(o);
  return origin + cell_size * Vec3{o.x + half, o.y + half, o.z + half};
}

}  // namespace

double winding_number(const SurfaceMesh& surface, const Vec3& point) {
  double solid_angle = 0.0;
  for (std::size_t t = 0; t < surface.triangles.size(); t += 3) {
    const Vec3 a = node_position(surface.positions, surface.triangles[t]) - point;
    const Vec3 b = node_position(surface.positions, surface.triangles[t + 1]) - point;
    const Vec3 c = node_position(surface.positions, surface.triangles[t + 2]) - point;
    const double la = linalg::norm(a), lb = linalg::norm(b), lc = linalg::norm(c);
    const double numerator = linalg::dot(a, linalg::cross(b, c));
    const double denominator = la * lb * lc + linalg::dot(a, b) * lc + linalg::dot(b, c) * la + linalg::dot(c, a) * lb;
    solid_angle += 2.0 * std::atan2(numerator, denominator);
  }
  return solid_angle / (4.0 * std::numbers::pi);
}

std::vector<std::uint8_t> classify_leaves(std::span<const Octant> leaves, int depth, const SurfaceMesh& surface,
                                          const Vec3& origin, double cell_size, int threads,
                                          InsideClassificationStats* stats) {
  if (leaves.empty() || (leaves[0].flags & kSeedCellFlag)) {
    throw std::invalid_argument("classify_leaves: the first leaf must be padding, not touched by the surface");
  }
  std::vector<std::uint64_t> keys(leaves.size());
  for (std::size_t i = 0; i < leaves.size(); ++i) keys[i] = morton_key(leaves[i]);
  const std::vector<Index> root = component_roots(leaves.size(), face_adjacent_open_leaves(leaves, keys, depth, threads));
  keys = {};
  std::vector<Index> components;  // their first leaves; root[i] == i marks one
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    if (!(leaves[i].flags & kSeedCellFlag) && root[i] == static_cast<Index>(i)) components.push_back(static_cast<Index>(i));
  }
  // Component 0 holds leaf 0: the padding, outside without a test.
  std::vector<std::uint8_t> component_inside(leaves.size(), 0);
  linalg::parallel_chunks(static_cast<Index>(components.size()), threads, [&](Index begin, Index end) {
    for (Index c = std::max<Index>(begin, 1); c < end; ++c) {
      const auto first = static_cast<std::size_t>(components[static_cast<std::size_t>(c)]);
      component_inside[first] = std::abs(winding_number(surface, leaf_centre(leaves[first], origin, cell_size))) >= 0.5;
    }
  }, 1);
  std::vector<std::uint8_t> inside(leaves.size());
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    inside[i] = (leaves[i].flags & kSeedCellFlag) ? 1 : component_inside[static_cast<std::size_t>(root[i])];
  }
  if (stats) {
    stats->components = static_cast<Index>(components.size());
    stats->inside_components = static_cast<Index>(std::count_if(components.begin(), components.end(), [&](Index c) {
      return component_inside[static_cast<std::size_t>(c)] != 0;
    }));
  }
  return inside;
}

}  // namespace cholsim::fem::octree
