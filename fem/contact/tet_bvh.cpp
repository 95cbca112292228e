#include "fem/contact/tet_bvh.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "fem/mesh/tet_mesh.hpp"
#include "linalg/parallel_loops.hpp"
#include "linalg/simd_clones.hpp"
#include "linalg/unaligned_vector.hpp"

namespace cholsim::fem {

using linalg::Index;
using linalg::Vec3;

namespace {

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

Vec3 component_min(const Vec3& a, const Vec3& b) {
  return {std::min(a.x, b.x), std::min(a.y, b.y), std::min(a.z, b.z)};
}

Vec3 component_max(const Vec3& a, const Vec3& b) {
  return {std::max(a.x, b.x), std::max(a.y, b.y), std::max(a.z, b.z)};
}

double largest_component(const Vec3& v) { return std::max({v.x, v.y, v.z}); }

// Six comparisons and one branch: a query's box tests go either way about as often, and
// short-circuiting them cost a mispredicted branch per comparison.
bool box_contains(const Vec3& lower, const Vec3& upper, const Vec3& point) {
  return static_cast<bool>(static_cast<int>(point.x >= lower.x) & static_cast<int>(point.x <= upper.x) &
                           static_cast<int>(point.y >= lower.y) & static_cast<int>(point.y <= upper.y) &
                           static_cast<int>(point.z >= lower.z) & static_cast<int>(point.z <= upper.z));
}

double smallest_weight(const std::array<double, 4>& weights) {
  return std::min({weights[0], weights[1], weights[2], weights[3]});
}

// Deep enough for a median-split tree over 2⁶⁰ tets; locate keeps its stack on the call stack so
// that concurrent queries share nothing.
constexpr std::size_t kMaxTreeDepth = 64;

// Scale-free: a flat tet of any size is degenerate, a tiny well-shaped one is not.
bool is_degenerate(const std::array<Vec3, 4>& vertices, double det) {
  const Vec3 lower = component_min(component_min(vertices[0], vertices[1]), component_min(vertices[2], vertices[3]));
  const Vec3 upper = component_max(component_max(vertices[0], vertices[1]), component_max(vertices[2], vertices[3]));
  const double size = largest_component(upper - lower);
  return !(std::abs(det) > 1e-12 * size * size * size);
}

// How far below zero a weight from an affine map may be while the point still gets the exact
// test: the map and Cramer's rule round differently (by about ε·κ of the tet), and the exact
// test accepts weights down to −kWeightTolerance.
constexpr double kAffineMapMargin = 1e-6;

// The box of `count` tets' corners (local ids into `vertices`, each x, y, z, 0), a vertex at a
// time in vector registers: the safe tets' tree of the 650K-tet elbow (625K tets) took 4.8 ms
// a refit on two threads with the minima and maxima taken a coordinate at a time. Cloned for
// the vector width.
CHOLSIM_UNALIGNED_VECTOR(FourDoubles, double, 4, may_alias);

[[gnu::always_inline]] inline void take_min(FourDoubles& into, const FourDoubles& other) {
  into = other < into ? other : into;
}

[[gnu::always_inline]] inline void take_max(FourDoubles& into, const FourDoubles& other) {
  into = other > into ? other : into;
}

// Corners pairwise, then the tets' boxes into the leaf's: short chains of dependent minima.
CHOLSIM_SIMD_CLONES void fit_leaf_box(const std::array<double, 4>* vertices, const std::array<Index, 4>* corners,
                                      Index count, Vec3& lower, Vec3& upper) {
  const auto vertex = [&](Index tet, int corner) -> const FourDoubles& {  // a reference: no vector crosses an ABI
    return *reinterpret_cast<const FourDoubles*>(&vertices[at(corners[tet][static_cast<std::size_t>(corner)])]);
  };
  FourDoubles low = vertex(0, 0);
  FourDoubles high = low;
  for (Index tet = 0; tet < count; ++tet) {
    FourDoubles low01 = vertex(tet, 0);
    FourDoubles high01 = low01;
    take_min(low01, vertex(tet, 1));
    take_max(high01, vertex(tet, 1));
    FourDoubles low23 = vertex(tet, 2);
    FourDoubles high23 = low23;
    take_min(low23, vertex(tet, 3));
    take_max(high23, vertex(tet, 3));
    take_min(low01, low23);
    take_max(high01, high23);
    take_min(low, low01);
    take_max(high, high01);
  }
  lower = {low[0], low[1], low[2]};
  upper = {high[0], high[1], high[2]};
}

// A tet's edges from its first vertex, [e₁ e₂ e₃]'s determinant, and whether it is degenerate.
struct TetEdges {
  Vec3 edge1, edge2, edge3;
  Vec3 normal1;  ///< e₂ × e₃
  double det = 0.0;
  bool degenerate = false;
};

TetEdges tet_edges(const std::array<Vec3, 4>& vertices) {
  TetEdges t{vertices[1] - vertices[0], vertices[2] - vertices[0], vertices[3] - vertices[0], {}, 0.0, false};
  t.normal1 = linalg::cross(t.edge2, t.edge3);
  t.det = linalg::dot(t.edge1, t.normal1);
  t.degenerate = is_degenerate(vertices, t.det);
  return t;
}

}  // namespace

std::optional<std::array<double, 4>> barycentric_weights(const std::array<Vec3, 4>& vertices, const Vec3& point) {
  const TetEdges t = tet_edges(vertices);
  if (t.degenerate) return std::nullopt;
  // Cramer's rule on [e₁ e₂ e₃]·w = point − x₀: wᵢ replaces column i by the offset.
  const Vec3 offset = point - vertices[0];
  const double w1 = linalg::dot(offset, t.normal1) / t.det;
  const double w2 = linalg::dot(t.edge1, linalg::cross(offset, t.edge3)) / t.det;
  const double w3 = linalg::dot(t.edge1, linalg::cross(t.edge2, offset)) / t.det;
  return std::array<double, 4>{1.0 - w1 - w2 - w3, w1, w2, w3};
}

TetAffineMap TetAffineMap::of(const std::array<Vec3, 4>& vertices) {
  const TetEdges t = tet_edges(vertices);
  if (t.degenerate) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {{Vec3{nan, nan, nan}, Vec3{nan, nan, nan}, Vec3{nan, nan, nan}}, vertices[0]};
  }
  // The rows of [e₁ e₂ e₃]⁻¹ are the faces' normals over the determinant.
  const double inverse = 1.0 / t.det;
  return {{inverse * t.normal1, inverse * linalg::cross(t.edge3, t.edge1), inverse * linalg::cross(t.edge1, t.edge2)},
          vertices[0]};
}

bool TetAffineMap::may_contain(const Vec3& point) const {
  const Vec3 offset = point - origin;
  const double w1 = linalg::dot(rows[0], offset);
  const double w2 = linalg::dot(rows[1], offset);
  const double w3 = linalg::dot(rows[2], offset);
  const double w0 = 1.0 - w1 - w2 - w3;
  // Written so that NaN (a degenerate tet) rejects.
  return w0 >= -kAffineMapMargin && w1 >= -kAffineMapMargin && w2 >= -kAffineMapMargin && w3 >= -kAffineMapMargin;
}

void BestTetLocation::consider(Index tet, const std::array<Vec3, 4>& vertices, const Vec3& point) {
  const auto weights = barycentric_weights(vertices, point);
  if (!weights) return;
  const double smallest = smallest_weight(*weights);
  if (smallest >= -kTetWeightTolerance && (!best_ || smallest > best_smallest_weight_)) {
    best_smallest_weight_ = smallest;
    best_ = TetLocation{tet, *weights};
  }
}

std::vector<std::array<Index, 4>> checked_tet_corners(std::span<const Index> tet_connectivity,
                                                      std::span<const Index> tet_ids, std::span<const double> positions,
                                                      const char* who) {
  const std::size_t mesh_tets = tet_connectivity.size() / 4;
  const std::size_t mesh_nodes = positions.size() / 3;
  std::vector<std::array<Index, 4>> corners;
  corners.reserve(tet_ids.size());
  for (const Index tet : tet_ids) {
    if (tet < 0 || at(tet) >= mesh_tets) {
      throw std::invalid_argument(std::string(who) + ": tet id " + std::to_string(tet) + " outside 0.." +
                                  std::to_string(static_cast<long long>(mesh_tets) - 1));
    }
    std::array<Index, 4> nodes{};
    for (std::size_t corner = 0; corner < 4; ++corner) {
      nodes[corner] = tet_connectivity[4 * at(tet) + corner];
      if (nodes[corner] < 0 || at(nodes[corner]) >= mesh_nodes) {
        throw std::invalid_argument(std::string(who) + ": tet " + std::to_string(tet) + " has node " +
                                    std::to_string(nodes[corner]) + " outside the " + std::to_string(mesh_nodes) +
                                    " nodes of `positions`");
      }
    }
    corners.push_back(nodes);
  }
  return corners;
}

TetBvh::TetBvh(std::span<const Index> tet_connectivity, std::vector<Index> tet_ids, std::span<const double> positions)
    : tet_ids_(std::move(tet_ids)) {
  tet_corners_ = checked_tet_corners(tet_connectivity, tet_ids_, positions, "TetBvh");  // mesh node ids until
                                                                                      // number_vertices_in_leaf_order
  Index largest_node = -1;
  for (const auto& nodes : tet_corners_) largest_node = std::max({largest_node, nodes[0], nodes[1], nodes[2], nodes[3]});
  required_position_count_ = 3 * at(largest_node + 1);
  if (tet_ids_.empty()) return;

  std::vector<Vec3> centroids;
  centroids.reserve(tet_ids_.size());
  for (const auto& nodes : tet_corners_) {
    Vec3 sum;
    for (const Index node : nodes) sum += node_position(positions, node);
    centroids.push_back(0.25 * sum);
  }
  nodes_.reserve(2 * (tet_ids_.size() / kLeafSize + 1));
  build_subtree(centroids, 0, static_cast<Index>(tet_ids_.size()));
  number_vertices_in_leaf_order();
  refit(positions);
}

void TetBvh::number_vertices_in_leaf_order() {
  std::vector<Index> local(required_position_count_ / 3, -1);
  for (auto& corners : tet_corners_) {
    for (Index& corner : corners) {
      Index& id = local[at(corner)];
      if (id < 0) {
        id = static_cast<Index>(vertex_nodes_.size());
        vertex_nodes_.push_back(corner);
      }
      corner = id;
    }
  }
  vertex_positions_.resize(vertex_nodes_.size());
}

Index TetBvh::build_subtree(std::vector<Vec3>& centroids, Index begin, Index end) {
  const Index node = static_cast<Index>(nodes_.size());
  nodes_.push_back({});
  const Index count = end - begin;
  if (at(count) <= kLeafSize) {
    nodes_[at(node)].first = begin;
    nodes_[at(node)].leaf_count = count;
    return node;
  }
  Vec3 lower = centroids[at(begin)];
  Vec3 upper = lower;
  for (Index entry = begin; entry < end; ++entry) {
    lower = component_min(lower, centroids[at(entry)]);
    upper = component_max(upper, centroids[at(entry)]);
  }
  const Vec3 extent = upper - lower;
  const int axis = extent.x >= extent.y && extent.x >= extent.z ? 0 : (extent.y >= extent.z ? 1 : 2);
  // Median split: balanced depth (log₂ of the leaves) whatever the tets' size distribution.
  // The three arrays are permuted together through an index order, then applied.
  const Index middle = begin + count / 2;
  std::vector<Index> order(at(count));
  for (Index k = 0; k < count; ++k) order[at(k)] = begin + k;
  std::nth_element(order.begin(), order.begin() + (middle - begin), order.end(),
                   [&](Index a, Index b) { return centroids[at(a)][axis] < centroids[at(b)][axis]; });
  auto permute = [&](auto& values) {
    std::vector<typename std::decay_t<decltype(values)>::value_type> reordered;
    reordered.reserve(order.size());
    for (const Index entry : order) reordered.push_back(values[at(entry)]);
    std::copy(reordered.begin(), reordered.end(), values.begin() + begin);
  };
  permute(centroids);
  permute(tet_ids_);
  permute(tet_corners_);
  build_subtree(centroids, begin, middle);
  const Index right = build_subtree(centroids, middle, end);
  nodes_[at(node)].first = right;
  return node;
}

void TetBvh::check_positions(std::span<const double> positions, const char* caller) const {
  if (positions.size() < required_position_count_) {
    throw std::invalid_argument(std::string("TetBvh::") + caller + ": " + std::to_string(positions.size()) +
                                " coordinates given, the tree's tets need " +
                                std::to_string(required_position_count_));
  }
}

std::array<Vec3, 4> TetBvh::tet_vertices(std::size_t entry) const {
  const auto& corners = tet_corners_[entry];
  std::array<Vec3, 4> vertices;
  for (std::size_t c = 0; c < 4; ++c) {
    const auto& position = vertex_positions_[at(corners[c])];
    vertices[c] = {position[0], position[1], position[2]};
  }
  return vertices;
}

void TetBvh::refit(std::span<const double> positions, int threads) {
  check_positions(positions, "refit");
  if (nodes_.empty()) return;
  // The subtrees below the top levels are contiguous ranges of the depth-first array and are
  // refit in parallel, each in one backward pass (children lie after their parent, so a node's
  // children are done when it is reached, in cache); then the few nodes above them. 625K
  // safe tets took 7.7 ms on two threads when the leaves went in parallel and the inner nodes
  // in one serial sweep over the whole array.
  const int workers = nodes_.size() < static_cast<std::size_t>(linalg::kMinParallelIterations)
                          ? 1
                          : linalg::resolve_thread_count(threads);
  int depth = 0;
  while (workers > 1 && (1 << depth) < kSubtreesPerThread * workers) ++depth;
  std::vector<Index> subtrees;
  collect_subtrees(0, depth, subtrees);
  linalg::parallel_chunks(static_cast<Index>(vertex_nodes_.size()), workers, [&](Index first, Index last) {
    for (Index vertex = first; vertex < last; ++vertex) {
      const std::size_t node = 3 * at(vertex_nodes_[at(vertex)]);
      vertex_positions_[at(vertex)] = {positions[node], positions[node + 1], positions[node + 2], 0.0};
    }
  });
  linalg::parallel_chunks(static_cast<Index>(subtrees.size()), workers, [&](Index first, Index last) {
    for (Index k = first; k < last; ++k) {
      const Index root = subtrees[at(k)];
      for (Index index = subtree_end(root); index-- > root;) fit_node(index);
    }
  }, 1);
  fit_above_subtrees(0, depth);
}

void TetBvh::collect_subtrees(Index node, int depth, std::vector<Index>& roots) const {
  if (depth == 0 || nodes_[at(node)].leaf_count > 0) {
    roots.push_back(node);
    return;
  }
  collect_subtrees(node + 1, depth - 1, roots);
  collect_subtrees(nodes_[at(node)].first, depth - 1, roots);
}

Index TetBvh::subtree_end(Index node) const {
  // Depth-first: the subtree ends with the leaf at the end of its right spine.
  while (nodes_[at(node)].leaf_count == 0) node = nodes_[at(node)].first;
  return node + 1;
}

void TetBvh::fit_above_subtrees(Index node, int depth) {
  if (depth == 0 || nodes_[at(node)].leaf_count > 0) return;
  fit_above_subtrees(node + 1, depth - 1);
  fit_above_subtrees(nodes_[at(node)].first, depth - 1);
  fit_node(node);
}

void TetBvh::fit_node(Index index) {
  Node& node = nodes_[at(index)];
  if (node.leaf_count == 0) {
    const Node& left = nodes_[at(index + 1)];
    const Node& right = nodes_[at(node.first)];
    node.lower = component_min(left.lower, right.lower);
    node.upper = component_max(left.upper, right.upper);
    return;
  }
  fit_leaf_box(vertex_positions_.data(), &tet_corners_[at(node.first)], node.leaf_count, node.lower, node.upper);
  // Grow the leaf box as far as the weight tolerance lets a point stray outside a tet, so
  // that the box test never rejects a point locate would accept.
  const double padding = 4.0 * kWeightTolerance * largest_component(node.upper - node.lower);
  node.lower -= Vec3{padding, padding, padding};
  node.upper += Vec3{padding, padding, padding};
}

std::optional<TetLocation> TetBvh::locate(const Vec3& point, const std::function<bool(Index tet)>& skip) const {
  if (nodes_.empty()) return std::nullopt;
  BestTetLocation best;
  std::array<Index, kMaxTreeDepth> pending{};
  std::size_t pending_count = 0;
  pending[pending_count++] = 0;
  while (pending_count > 0) {
    const Node& node = nodes_[at(pending[--pending_count])];
    if (!box_contains(node.lower, node.upper, point)) continue;
    if (node.leaf_count == 0) {
      pending[pending_count++] = node.first;
      pending[pending_count++] = static_cast<Index>(&node - nodes_.data()) + 1;
      continue;
    }
    for (Index entry = node.first; entry < node.first + node.leaf_count; ++entry) {
      const Index tet = tet_ids_[at(entry)];
      if (skip && skip(tet)) continue;
      best.consider(tet, tet_vertices(at(entry)), point);
    }
  }
  return best.result();
}

std::array<double, 6> TetBvh::bounds() const {
  if (nodes_.empty()) return {};
  const Node& root = nodes_.front();
  return {root.lower.x, root.lower.y, root.lower.z, root.upper.x, root.upper.y, root.upper.z};
}

}  // namespace cholsim::fem
