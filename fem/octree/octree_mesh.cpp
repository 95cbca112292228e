#include "fem/octree/octree_mesh.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <tbb/parallel_sort.h>

#include "fem/mesh/tet_mesh.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::fem::octree {
namespace {

using linalg::Index;

/// Row a of W (§3.2): the local conforming nodes x_a averages, all with weight 1/count (see
/// the header for the three cases).
struct InterpolationRow {
  int count = 1;
  std::array<int, 4> columns{};
  /// 1/count (1, 1/2 or 1/4: a product, exact, where a division would cost more).
  [[nodiscard]] double weight() const { return count == 1 ? 1.0 : count == 2 ? 0.5 : 0.25; }
};

InterpolationRow interpolation_row(int child, std::uint8_t hanging, int a) {
  if (!((hanging >> a) & 1)) return {1, {a, 0, 0, 0}};
  const int differ = a ^ child;  // ≠ 0: the child's own corner never hangs
  // One axis differs (a power of two): an edge midpoint. Not std::popcount, which without
  // -mpopcnt is a libgcc call (1.3 % of a frame's samples, in every gather and scatter).
  if ((differ & (differ - 1)) == 0) return {2, {child, a, 0, 0}};
  const int low_axis = differ & -differ;
  const int high_axis = differ ^ low_axis;
  return {4, {child, child ^ low_axis, child ^ high_axis, a}};
}

/// §7.1: every leaf finer than 2^min_level replaced by its ancestor of that size (consecutive
/// in Morton order, so merged in one pass), kept where it covers an inside leaf.
std::vector<Octant> coarsened_inside_octants(const BalancedOctree& tree, int min_level) {
  std::vector<Octant> kept;
  for (std::size_t i = 0; i < tree.leaves.size();) {
    const Octant& leaf = tree.leaves[i];
    const Octant element = leaf.level >= min_level ? leaf : ancestor_at(leaf, min_level);
    bool covers_inside = false;
    for (; i < tree.leaves.size() && octant_contains_cell(element, tree.leaves[i].x, tree.leaves[i].y, tree.leaves[i].z); ++i) {
      covers_inside = covers_inside || tree.inside[i] != 0;
    }
    if (covers_inside) kept.push_back({element.x, element.y, element.z, element.level, 0});
  }
  kept.shrink_to_fit();  // held for the whole simulation
  return kept;
}

/// Looks up kept elements by octant during make_octree_mesh.
class ElementLookup {
 public:
  ElementLookup(std::span<const Octant> elements, int depth) : elements_(elements), cube_(std::int64_t{1} << depth) {
    keys_.resize(elements.size());
    for (std::size_t i = 0; i < elements.size(); ++i) keys_[i] = morton_key(elements[i]);
  }
  /// True iff the octant anchored at (x, y, z) of `level` is a kept element.
  [[nodiscard]] bool is_element(std::int64_t x, std::int64_t y, std::int64_t z, int level) const {
    if (x < 0 || y < 0 || z < 0 || x >= cube_ || y >= cube_ || z >= cube_) return false;
    const std::uint64_t key = morton_key(static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y), static_cast<std::uint32_t>(z));
    const auto found = std::lower_bound(keys_.begin(), keys_.end(), key);
    return found != keys_.end() && *found == key && elements_[static_cast<std::size_t>(found - keys_.begin())].level == level;
  }

 private:
  std::span<const Octant> elements_;
  std::int64_t cube_;
  std::vector<std::uint64_t> keys_;
};

/// Whether corner a of `e`, the midpoint of a parent edge along `axis`, lies on an edge of
/// a kept element one level coarser: one of the 3 octants other than the parent around that edge.
bool edge_midpoint_hangs(const ElementLookup& lookup, const Octant& e, const std::array<std::uint32_t, 3>& p, int axis) {
  const std::int64_t coarse = 2 * std::int64_t{octant_size(e)};
  const Octant parent = ancestor_at(e, e.level + 1);
  const std::array<std::int64_t, 3> parent_anchor{parent.x, parent.y, parent.z};
  const int u = (axis + 1) % 3;
  const int v = (axis + 2) % 3;
  for (int around = 0; around < 4; ++around) {
    std::array<std::int64_t, 3> anchor{};
    anchor[static_cast<std::size_t>(axis)] = parent_anchor[static_cast<std::size_t>(axis)];
    anchor[static_cast<std::size_t>(u)] = p[static_cast<std::size_t>(u)] - ((around & 1) ? coarse : 0);
    anchor[static_cast<std::size_t>(v)] = p[static_cast<std::size_t>(v)] - ((around & 2) ? coarse : 0);
    if (anchor == parent_anchor) continue;
    if (lookup.is_element(anchor[0], anchor[1], anchor[2], e.level + 1)) return true;
  }
  return false;
}

/// Whether corner a of `e`, the centre of a parent face normal to `axis`, is the centre of
/// a face of the kept element one level coarser across that face.
bool face_centre_hangs(const ElementLookup& lookup, const Octant& e, const std::array<std::uint32_t, 3>& p, int axis) {
  const std::int64_t coarse = 2 * std::int64_t{octant_size(e)};
  const Octant parent = ancestor_at(e, e.level + 1);
  std::array<std::int64_t, 3> across{parent.x, parent.y, parent.z};
  const auto k = static_cast<std::size_t>(axis);
  across[k] = across[k] == p[k] ? across[k] - coarse : std::int64_t{p[k]};
  return lookup.is_element(across[0], across[1], across[2], e.level + 1);
}

/// §5: bit a set iff primary node a of `e` hangs.
std::uint8_t hanging_corners(const ElementLookup& lookup, const Octant& e, int depth) {
  if (e.level >= depth) return 0;
  const int child = child_number(e);
  std::uint8_t hanging = 0;
  for (int a = 0; a < 8; ++a) {
    const int differ = a ^ child;
    const int axes = std::popcount(static_cast<unsigned>(differ));
    if (axes == 0 || axes == 3) continue;
    const std::array<std::uint32_t, 3> p = corner_point(e, a);
    const bool hangs = axes == 1 ? edge_midpoint_hangs(lookup, e, p, std::countr_zero(static_cast<unsigned>(differ)))
                                 : face_centre_hangs(lookup, e, p, std::countr_zero(static_cast<unsigned>(7 ^ differ)));
    if (hangs) hanging = static_cast<std::uint8_t>(hanging | (1u << a));
  }
  return hanging;
}

/// The grid point of corner a's conforming node: itself, or for a hanging corner the far end
/// 2·p_a − p_c of the coarse edge or face diagonal from the parent's corner p_c.
std::uint64_t conforming_point_key(const Octant& e, std::uint8_t hanging, int a) {
  const std::array<std::uint32_t, 3> p = corner_point(e, a);
  if (!((hanging >> a) & 1)) return morton_key(p[0], p[1], p[2]);
  const std::array<std::uint32_t, 3> q = corner_point(e, child_number(e));
  return morton_key(2 * p[0] - q[0], 2 * p[1] - q[1], 2 * p[2] - q[2]);
}

/// Morton codes of the grid points of all non-hanging corners, sorted, each once.
std::vector<std::uint64_t> node_keys(const OctreeMesh& mesh, int threads) {
  std::vector<std::uint64_t> keys(8 * mesh.elements.size());
  linalg::parallel_chunks(mesh.element_count(), threads, [&](Index begin, Index end) {
    for (Index e = begin; e < end; ++e) {
      const auto ue = static_cast<std::size_t>(e);
      for (int a = 0; a < 8; ++a) keys[8 * ue + static_cast<std::size_t>(a)] = conforming_point_key(mesh.elements[ue], mesh.hanging[ue], a);
    }
  });
  linalg::thread_arena(linalg::resolve_thread_count(threads)).execute([&] { tbb::parallel_sort(keys.begin(), keys.end()); });
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

void number_conforming_nodes(OctreeMesh& mesh, std::span<const std::uint64_t> keys, int threads) {
  mesh.conforming_nodes.resize(mesh.elements.size());
  linalg::parallel_chunks(mesh.element_count(), threads, [&](Index begin, Index end) {
    for (Index e = begin; e < end; ++e) {
      const auto ue = static_cast<std::size_t>(e);
      for (int a = 0; a < 8; ++a) {
        const std::uint64_t key = conforming_point_key(mesh.elements[ue], mesh.hanging[ue], a);
        const auto found = std::lower_bound(keys.begin(), keys.end(), key);
        if (found == keys.end() || *found != key) {
          throw std::logic_error("make_octree_mesh: conforming node of element " + std::to_string(e) + " corner " +
                                 std::to_string(a) + " is not a node (tree not 2:1 balanced?)");
        }
        mesh.conforming_nodes[ue][static_cast<std::size_t>(a)] = static_cast<std::int32_t>(found - keys.begin());
      }
    }
  });
}

/// Trilinear shape functions N_a(ξ) of the primary nodes.
std::array<double, 8> trilinear_weights(const Vec3& xi) {
  std::array<double, 8> n{};
  for (int a = 0; a < 8; ++a) {
    n[static_cast<std::size_t>(a)] = ((a & 1) ? xi.x : 1.0 - xi.x) * ((a & 2) ? xi.y : 1.0 - xi.y) * ((a & 4) ? xi.z : 1.0 - xi.z);
  }
  return n;
}

/// Points this close to a grid plane (in cells) count as on it: a node's world position
/// mapped back to grid units may miss the integer by rounding.
constexpr double kGridPlaneTolerance = 1e-9;

/// Per axis the finest cells a grid-unit coordinate g touches: floor(g), or both cells beside
/// the grid plane g is on (a point on a face may belong to the element on either side).
/// Empty outside the cube.
std::vector<std::uint32_t> cells_touching(double g, std::uint32_t cube) {
  const double plane = std::round(g);
  const bool on_plane = std::abs(g - plane) <= kGridPlaneTolerance;
  const double low = on_plane ? plane - 1.0 : std::floor(g);
  const double high = on_plane ? plane : low;
  std::vector<std::uint32_t> cells;
  for (double cell = std::max(low, 0.0); cell <= std::min(high, cube - 1.0); cell += 1.0) {
    cells.push_back(static_cast<std::uint32_t>(cell));
  }
  return cells;
}

}  // namespace

Vec3 OctreeMesh::node_position(Index node) const {
  const auto& g = node_grid[static_cast<std::size_t>(node)];
  return origin + cell_size * Vec3{double(g[0]), double(g[1]), double(g[2])};
}

std::vector<double> OctreeMesh::node_positions() const {
  std::vector<double> positions(static_cast<std::size_t>(3 * node_count()));
  for (Index node = 0; node < node_count(); ++node) {
    const Vec3 p = node_position(node);
    for (int i = 0; i < 3; ++i) positions[static_cast<std::size_t>(3 * node + i)] = p[i];
  }
  return positions;
}

double OctreeMesh::element_size(Index e) const {
  return cell_size * octant_size(elements[static_cast<std::size_t>(e)]);
}

Vec3 OctreeMesh::element_origin(Index e) const {
  const Octant& o = elements[static_cast<std::size_t>(e)];
  return origin + cell_size * Vec3{double(o.x), double(o.y), double(o.z)};
}

void OctreeMesh::gather(Index e, std::span<const double> nodal, std::array<Vec3, 8>& primary) const {
  const auto ue = static_cast<std::size_t>(e);
  if (hanging[ue] == 0) {  // most elements: W = I
    for (std::size_t a = 0; a < 8; ++a) primary[a] = fem::node_position(nodal, conforming_nodes[ue][a]);
    return;
  }
  const int child = child_number(elements[ue]);
  for (int a = 0; a < 8; ++a) {
    const InterpolationRow row = interpolation_row(child, hanging[ue], a);
    Vec3 sum;
    for (int k = 0; k < row.count; ++k) sum += fem::node_position(nodal, conforming_nodes[ue][static_cast<std::size_t>(row.columns[static_cast<std::size_t>(k)])]);
    primary[static_cast<std::size_t>(a)] = sum * row.weight();
  }
}

namespace {

/// f̃_b += Σ_a W_ab f_a for the conforming nodes b that `keep` accepts, W from the compact rows.
template <typename Keep>
void scatter_rows(const OctreeMesh& mesh, Index e, const std::array<Vec3, 8>& primary, std::span<double> nodal,
                  const Keep& keep) {
  const auto ue = static_cast<std::size_t>(e);
  if (mesh.hanging[ue] == 0) {  // most elements: W = I
    for (std::size_t a = 0; a < 8; ++a) {
      const Index node = mesh.conforming_nodes[ue][a];
      if (!keep(node)) continue;
      const auto first = 3 * static_cast<std::size_t>(node);
      nodal[first] += primary[a].x;
      nodal[first + 1] += primary[a].y;
      nodal[first + 2] += primary[a].z;
    }
    return;
  }
  const int child = child_number(mesh.elements[ue]);
  for (int a = 0; a < 8; ++a) {
    const InterpolationRow row = interpolation_row(child, mesh.hanging[ue], a);
    const Vec3 share = primary[static_cast<std::size_t>(a)] * row.weight();
    for (int k = 0; k < row.count; ++k) {
      const Index node = mesh.conforming_nodes[ue][static_cast<std::size_t>(row.columns[static_cast<std::size_t>(k)])];
      if (!keep(node)) continue;
      const auto first = 3 * static_cast<std::size_t>(node);
      nodal[first] += share.x;
      nodal[first + 1] += share.y;
      nodal[first + 2] += share.z;
    }
  }
}

}  // namespace

void OctreeMesh::scatter_add(Index e, const std::array<Vec3, 8>& primary, std::span<double> nodal) const {
  scatter_rows(*this, e, primary, nodal, [](Index) { return true; });
}

void OctreeMesh::scatter_add_owned(Index e, const std::array<Vec3, 8>& primary, std::span<double> nodal,
                                   std::span<const Index> owner, Index block) const {
  scatter_rows(*this, e, primary, nodal, [&](Index node) { return owner[static_cast<std::size_t>(node)] == block; });
}

std::array<std::array<double, 8>, 8> OctreeMesh::interpolation_matrix(Index e) const {
  const auto ue = static_cast<std::size_t>(e);
  const int child = child_number(elements[ue]);
  std::array<std::array<double, 8>, 8> w{};
  for (int a = 0; a < 8; ++a) {
    const InterpolationRow row = interpolation_row(child, hanging[ue], a);
    for (int k = 0; k < row.count; ++k) {
      w[static_cast<std::size_t>(a)][static_cast<std::size_t>(row.columns[static_cast<std::size_t>(k)])] = 1.0 / row.count;
    }
  }
  return w;
}

std::size_t OctreeMesh::memory_bytes() const {
  return sizeof(*this) + elements.capacity() * sizeof(Octant) + node_grid.capacity() * sizeof(node_grid[0]) +
         conforming_nodes.capacity() * sizeof(conforming_nodes[0]) + hanging.capacity() * sizeof(std::uint8_t);
}

OctreeMesh make_octree_mesh(const BalancedOctree& tree, int min_level, int threads) {
  if (min_level < 0 || min_level > tree.depth) {
    throw std::invalid_argument("make_octree_mesh: min_level " + std::to_string(min_level) + " outside [0, " +
                                std::to_string(tree.depth) + "]");
  }
  OctreeMesh mesh;
  mesh.depth = tree.depth;
  mesh.origin = tree.origin;
  mesh.cell_size = tree.cell_size;
  mesh.min_level = min_level;
  mesh.elements = coarsened_inside_octants(tree, min_level);
  mesh.hanging.resize(mesh.elements.size());
  {
    const ElementLookup lookup(mesh.elements, tree.depth);
    linalg::parallel_chunks(mesh.element_count(), threads, [&](Index begin, Index end) {
      for (Index e = begin; e < end; ++e) {
        mesh.hanging[static_cast<std::size_t>(e)] = hanging_corners(lookup, mesh.elements[static_cast<std::size_t>(e)], tree.depth);
      }
    });
  }
  const std::vector<std::uint64_t> keys = node_keys(mesh, threads);
  if (keys.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw std::invalid_argument("make_octree_mesh: " + std::to_string(keys.size()) + " nodes, more than 2^31 - 1");
  }
  mesh.node_grid.resize(keys.size());
  for (std::size_t n = 0; n < keys.size(); ++n) {
    const auto p = morton_point(keys[n]);
    mesh.node_grid[n] = {static_cast<std::uint16_t>(p[0]), static_cast<std::uint16_t>(p[1]), static_cast<std::uint16_t>(p[2])};
  }
  number_conforming_nodes(mesh, keys, threads);
  return mesh;
}

std::optional<Index> element_containing_cell(const OctreeMesh& mesh, const std::array<std::uint32_t, 3>& cell) {
  const std::uint64_t key = morton_key(cell[0], cell[1], cell[2]);
  const auto after = std::upper_bound(mesh.elements.begin(), mesh.elements.end(), key,
                                      [](std::uint64_t k, const Octant& o) { return k < morton_key(o); });
  if (after == mesh.elements.begin()) return std::nullopt;
  const Octant& candidate = *(after - 1);
  if (!octant_contains_cell(candidate, cell[0], cell[1], cell[2])) return std::nullopt;
  return static_cast<Index>(after - 1 - mesh.elements.begin());
}

std::optional<ElementPoint> locate_point(const OctreeMesh& mesh, const Vec3& world) {
  return locate_grid_point(mesh, (world - mesh.origin) / mesh.cell_size);
}

std::optional<ElementPoint> locate_grid_point(const OctreeMesh& mesh, const Vec3& g) {
  const std::uint32_t cube = octant_size(mesh.depth);
  const std::vector<std::uint32_t> xs = cells_touching(g.x, cube), ys = cells_touching(g.y, cube), zs = cells_touching(g.z, cube);
  for (const std::uint32_t z : zs) {
    for (const std::uint32_t y : ys) {
      for (const std::uint32_t x : xs) {
        const std::optional<Index> e = element_containing_cell(mesh, {x, y, z});
        if (!e) continue;
        const Octant& o = mesh.elements[static_cast<std::size_t>(*e)];
        const double size = octant_size(o);
        const auto local = [&](double coordinate, std::uint16_t anchor) { return std::clamp((coordinate - anchor) / size, 0.0, 1.0); };
        return ElementPoint{*e, Vec3{local(g.x, o.x), local(g.y, o.y), local(g.z, o.z)}};
      }
    }
  }
  return std::nullopt;
}

std::array<double, 8> conforming_weights(const OctreeMesh& mesh, const ElementPoint& p) {
  const auto ue = static_cast<std::size_t>(p.element);
  const int child = child_number(mesh.elements[ue]);
  const std::array<double, 8> primary = trilinear_weights(p.xi);
  std::array<double, 8> weights{};
  for (int a = 0; a < 8; ++a) {
    const InterpolationRow row = interpolation_row(child, mesh.hanging[ue], a);
    for (int k = 0; k < row.count; ++k) {
      weights[static_cast<std::size_t>(row.columns[static_cast<std::size_t>(k)])] += primary[static_cast<std::size_t>(a)] / row.count;
    }
  }
  return weights;
}

}  // namespace cholsim::fem::octree
