#include "fem/octree/octree_transfer.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#include "linalg/parallel_loops.hpp"

namespace cholsim::fem::octree {
namespace {

using linalg::Index;
using linalg::Offset;

void check_nested(const OctreeMesh& fine, const OctreeMesh& coarse, const char* caller) {
  if (fine.depth != coarse.depth || !(fine.origin == coarse.origin) || fine.cell_size != coarse.cell_size) {
    throw std::invalid_argument(std::string(caller) + ": the meshes come from different octrees");
  }
  if (coarse.min_level < fine.min_level) {
    throw std::invalid_argument(std::string(caller) + ": coarse min_level " + std::to_string(coarse.min_level) +
                                " is below fine min_level " + std::to_string(fine.min_level));
  }
}

/// The coarse element holding fine node `node` and the node's weights there.
ElementPoint embed_fine_node(const OctreeMesh& fine, const OctreeMesh& coarse, Index node) {
  const auto& g = fine.node_grid[static_cast<std::size_t>(node)];
  const std::optional<ElementPoint> p = locate_grid_point(coarse, Vec3{double(g[0]), double(g[1]), double(g[2])});
  if (!p) {
    throw std::logic_error("make_transfer: fine node " + std::to_string(node) + " lies in no coarse element");
  }
  return *p;
}

/// Fills restriction_offsets/sources from the nonzero weights, fine nodes in increasing order.
void build_restriction_pattern(OctreeTransfer& t, const OctreeMesh& coarse) {
  t.restriction_offsets.assign(static_cast<std::size_t>(coarse.node_count()) + 1, 0);
  const auto for_each_nonzero = [&](auto&& visit) {
    for (std::size_t n = 0; n < t.weights.size(); ++n) {
      const auto& nodes = coarse.conforming_nodes[static_cast<std::size_t>(t.coarse_element[n])];
      for (std::size_t b = 0; b < 8; ++b) {
        if (t.weights[n][b] != 0.0f) visit(static_cast<std::size_t>(nodes[b]), static_cast<std::uint32_t>(8 * n + b));
      }
    }
  };
  for_each_nonzero([&](std::size_t m, std::uint32_t) { ++t.restriction_offsets[m + 1]; });
  for (std::size_t m = 0; m + 1 < t.restriction_offsets.size(); ++m) t.restriction_offsets[m + 1] += t.restriction_offsets[m];
  t.restriction_sources.resize(static_cast<std::size_t>(t.restriction_offsets.back()));
  std::vector<Offset> next(t.restriction_offsets.begin(), t.restriction_offsets.end() - 1);
  for_each_nonzero([&](std::size_t m, std::uint32_t source) { t.restriction_sources[static_cast<std::size_t>(next[m]++)] = source; });
}

void check_sizes(std::size_t fine_values, std::size_t fine_nodes, std::size_t coarse_values, Index coarse_nodes,
                 const char* caller) {
  if (fine_values != 3 * fine_nodes || coarse_values != 3 * static_cast<std::size_t>(coarse_nodes)) {
    throw std::invalid_argument(std::string(caller) + ": expected 3 values per node (" + std::to_string(fine_nodes) +
                                " fine, " + std::to_string(coarse_nodes) + " coarse nodes), got " +
                                std::to_string(fine_values) + " and " + std::to_string(coarse_values));
  }
}

}  // namespace

void OctreeTransfer::prolong(const OctreeMesh& coarse, std::span<const double> coarse_values,
                             std::span<double> fine_values, int threads) const {
  check_sizes(fine_values.size(), weights.size(), coarse_values.size(), coarse.node_count(), "prolong");
  linalg::parallel_chunks(static_cast<Index>(weights.size()), threads, [&](Index begin, Index end) {
    for (auto n = static_cast<std::size_t>(begin); n < static_cast<std::size_t>(end); ++n) {
      const auto& nodes = coarse.conforming_nodes[static_cast<std::size_t>(coarse_element[n])];
      std::array<double, 3> sum{};
      for (std::size_t b = 0; b < 8; ++b) {
        for (std::size_t i = 0; i < 3; ++i) sum[i] += weights[n][b] * coarse_values[3 * static_cast<std::size_t>(nodes[b]) + i];
      }
      for (std::size_t i = 0; i < 3; ++i) fine_values[3 * n + i] = sum[i];
    }
  });
}

void OctreeTransfer::restrict_to(const OctreeMesh& coarse, std::span<const double> fine_values,
                                 std::span<double> coarse_values, int threads) const {
  check_sizes(fine_values.size(), weights.size(), coarse_values.size(), coarse.node_count(), "restrict_to");
  linalg::parallel_chunks(coarse.node_count(), threads, [&](Index begin, Index end) {
    for (auto m = static_cast<std::size_t>(begin); m < static_cast<std::size_t>(end); ++m) {
      std::array<double, 3> sum{};
      for (Offset k = restriction_offsets[m]; k < restriction_offsets[m + 1]; ++k) {
        const std::uint32_t source = restriction_sources[static_cast<std::size_t>(k)];
        const std::size_t fine_node = source / 8;
        const double w = weights[fine_node][source % 8];  // float → double: exact
        for (std::size_t i = 0; i < 3; ++i) sum[i] += w * fine_values[3 * fine_node + i];
      }
      for (std::size_t i = 0; i < 3; ++i) coarse_values[3 * m + i] = sum[i];
    }
  });
}

std::size_t OctreeTransfer::memory_bytes() const {
  return sizeof(*this) + coarse_element.capacity() * sizeof(coarse_element[0]) + weights.capacity() * sizeof(weights[0]) +
         restriction_offsets.capacity() * sizeof(Offset) + restriction_sources.capacity() * sizeof(std::uint32_t);
}

OctreeTransfer make_transfer(const OctreeMesh& fine, const OctreeMesh& coarse, int threads) {
  check_nested(fine, coarse, "make_transfer");
  if (fine.node_count() >= (Index{1} << 29)) throw std::invalid_argument("make_transfer: more than 2^29 fine nodes");
  if (coarse.element_count() > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("make_transfer: more than 2^31 - 1 coarse elements");
  }
  OctreeTransfer t;
  t.coarse_element.resize(static_cast<std::size_t>(fine.node_count()));
  t.weights.resize(static_cast<std::size_t>(fine.node_count()));
  linalg::parallel_chunks(fine.node_count(), threads, [&](Index begin, Index end) {
    for (Index n = begin; n < end; ++n) {
      const ElementPoint p = embed_fine_node(fine, coarse, n);
      t.coarse_element[static_cast<std::size_t>(n)] = static_cast<std::int32_t>(p.element);
      const std::array<double, 8> weights = conforming_weights(coarse, p);
      for (std::size_t b = 0; b < 8; ++b) {
        const auto single = static_cast<float>(weights[b]);
        if (static_cast<double>(single) != weights[b]) {
          throw std::logic_error("make_transfer: weight " + std::to_string(weights[b]) + " of fine node " +
                                 std::to_string(n) + " is not exact in single precision");
        }
        t.weights[static_cast<std::size_t>(n)][b] = single;
      }
    }
  });
  build_restriction_pattern(t, coarse);
  return t;
}

std::vector<Index> coarse_elements_of(const OctreeMesh& fine, const OctreeMesh& coarse, int threads) {
  check_nested(fine, coarse, "coarse_elements_of");
  std::vector<Index> parent(static_cast<std::size_t>(fine.element_count()));
  linalg::parallel_chunks(fine.element_count(), threads, [&](Index begin, Index end) {
    for (Index e = begin; e < end; ++e) {
      const Octant& o = fine.elements[static_cast<std::size_t>(e)];
      const std::optional<Index> c = element_containing_cell(coarse, {o.x, o.y, o.z});
      if (!c || coarse.elements[static_cast<std::size_t>(*c)].level < o.level) {
        throw std::logic_error("coarse_elements_of: fine element " + std::to_string(e) + " lies in no coarse element");
      }
      parent[static_cast<std::size_t>(e)] = *c;
    }
  });
  return parent;
}

}  // namespace cholsim::fem::octree
