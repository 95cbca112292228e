#include "linalg/element_changes.hpp"

#include <algorithm>
#include <deque>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

namespace cholsim::linalg {
namespace {

void check_count(const char* what, Index count, Index size) {
  if (count < 0 || count > size) {
    throw std::invalid_argument(std::string(what) + ": cannot choose " + std::to_string(count) + " of " +
                                std::to_string(size));
  }
}

Vec3 centroid(const linear_tet::Points& x) {
  Vec3 sum;
  for (const auto& p : x) sum += Vec3{p[0], p[1], p[2]};
  return sum / 4.0;
}

}  // namespace

std::vector<Index> elements_in_ball(const TetMesh& mesh, const Vec3& center, Index count) {
  check_count("elements_in_ball", count, mesh.tet_count());
  std::vector<double> distance(static_cast<std::size_t>(mesh.tet_count()));
  for (Index t = 0; t < mesh.tet_count(); ++t) distance[t] = squared_norm(centroid(mesh.tet_points(t)) - center);
  std::vector<Index> order(distance.size());
  std::iota(order.begin(), order.end(), 0);
  std::nth_element(order.begin(), order.begin() + count, order.end(), [&](Index a, Index b) {
    return distance[a] < distance[b] || (distance[a] == distance[b] && a < b);
  });
  order.resize(static_cast<std::size_t>(count));
  std::sort(order.begin(), order.end());
  return order;
}

std::vector<Index> random_subset(Index size, Index count, std::uint64_t seed) {
  check_count("random_subset", count, size);
  std::vector<Index> all(static_cast<std::size_t>(size));
  std::iota(all.begin(), all.end(), 0);
  std::mt19937_64 rng(seed);
  for (Index i = 0; i < count; ++i) {  // partial Fisher–Yates shuffle
    std::uniform_int_distribution<Index> pick(i, size - 1);
    std::swap(all[i], all[pick(rng)]);
  }
  all.resize(static_cast<std::size_t>(count));
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<Index> columns_in_graph_ball(const SymmetricCscMatrix& a, Index start, Index count) {
  const Index n = a.size();
  check_count("columns_in_graph_ball", count, n);
  if (count == 0) return {};
  if (start < 0 || start >= n) throw std::invalid_argument("columns_in_graph_ball: start outside the matrix");
  std::vector<std::vector<Index>> neighbours(static_cast<std::size_t>(n));
  for (Index c = 0; c < n; ++c) {
    for (Offset p = a.lower.col_ptr[c]; p < a.lower.col_ptr[c + 1]; ++p) {
      if (a.lower.row_idx[p] == c) continue;
      neighbours[c].push_back(a.lower.row_idx[p]);
      neighbours[a.lower.row_idx[p]].push_back(c);
    }
  }
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  std::vector<Index> ball;
  std::deque<Index> queue{start};
  seen[start] = 1;
  // A disconnected graph continues from the next unseen column.
  for (Index next_root = 0; static_cast<Index>(ball.size()) < count;) {
    if (queue.empty()) {
      while (seen[next_root]) ++next_root;
      seen[next_root] = 1;
      queue.push_back(next_root);
    }
    const Index c = queue.front();
    queue.pop_front();
    ball.push_back(c);
    std::sort(neighbours[c].begin(), neighbours[c].end());
    for (Index r : neighbours[c]) {
      if (!seen[r]) {
        seen[r] = 1;
        queue.push_back(r);
      }
    }
  }
  std::sort(ball.begin(), ball.end());
  return ball;
}

std::vector<Index> element_dof_lists(const AssemblyPattern& pattern, std::span<const Index> elements) {
  std::vector<Index> dofs;
  dofs.reserve(elements.size() * static_cast<std::size_t>(pattern.element_dofs()));
  for (Index e : elements) {
    for (Index node : pattern.element_nodes(e)) {
      for (Index c = 0; c < pattern.dofs_per_node(); ++c) dofs.push_back(node * pattern.dofs_per_node() + c);
    }
  }
  return dofs;
}

Mat3 element_rotation(Index element, double angle) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(element) * 0x9e3779b97f4a7c15ULL + 1);
  std::normal_distribution<double> gaussian;
  Vec3 axis{gaussian(rng), gaussian(rng), gaussian(rng)};
  if (squared_norm(axis) == 0.0) axis = {0.0, 0.0, 1.0};
  return to_rotation_matrix(quaternion_from_axis_angle(normalized(axis), angle));
}

linear_tet::ElasticStiffness rotation_change(const linear_tet::ElasticStiffness& k, const Mat3& r) {
  // Block (a, b) of R·K·Rᵀ is R·K_ab·Rᵀ (R acts on every vertex's 3 components).
  linear_tet::ElasticStiffness change{};
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      Mat3 block;
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) block(i, j) = k[static_cast<std::size_t>((3 * a + i) + 12 * (3 * b + j))];
      }
      const Mat3 rotated = r * block * transpose(r) - block;
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) change[static_cast<std::size_t>((3 * a + i) + 12 * (3 * b + j))] = rotated(i, j);
      }
    }
  }
  return change;
}

void rotate_element_blocks(const TetMesh& mesh, const AssemblyPattern& pattern, const ElasticityBoxOptions& box,
                           std::span<const Index> elements, double angle, std::span<double> values) {
  for (Index e : elements) {
    const auto change = rotation_change(elasticity_element_matrix(mesh.tet_points(e), box), element_rotation(e, angle));
    pattern.scatter_add(e, change.data(), values);
  }
}

void scale_columns(SymmetricCscMatrix& a, std::span<const Index> columns, double scale) {
  std::vector<double> d(static_cast<std::size_t>(a.size()), 1.0);
  for (Index c : columns) {
    if (c < 0 || c >= a.size()) throw std::invalid_argument("scale_columns: column " + std::to_string(c) + " outside the matrix");
    d[c] = scale;
  }
  for (Index c = 0; c < a.size(); ++c) {
    for (Offset p = a.lower.col_ptr[c]; p < a.lower.col_ptr[c + 1]; ++p) a.lower.values[p] *= d[a.lower.row_idx[p]] * d[c];
  }
}

}  // namespace cholsim::linalg
