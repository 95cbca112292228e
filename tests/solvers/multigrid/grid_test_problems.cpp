#include "tests/solvers/multigrid/grid_test_problems.hpp"

#include <array>
#include <cmath>
#include <stdexcept>

namespace cholsim::solvers::testing {

namespace {

using linalg::Index;

// The coupling of a node to its 27 neighbours (offsets in {−1, 0, 1}³), c×c blocks:
// block(o)[i·c + j] couples component i of node p to component j of node p + o.
struct Stencil {
  int c = 1;
  std::vector<double> blocks;  // 27·c·c

  explicit Stencil(int components) : c(components), blocks(static_cast<std::size_t>(27 * c * c), 0.0) {}
  static int offset_index(int dx, int dy, int dz) { return (dz + 1) * 9 + (dy + 1) * 3 + (dx + 1); }
  double& at(int offset, int i, int j) { return blocks[static_cast<std::size_t>((offset * c + i) * c + j)]; }
  [[nodiscard]] double at(int offset, int i, int j) const {
    return blocks[static_cast<std::size_t>((offset * c + i) * c + j)];
  }
  [[nodiscard]] bool block_is_zero(int offset) const {
    for (int k = 0; k < c * c; ++k) {
      if (blocks[static_cast<std::size_t>(offset * c * c + k)] != 0.0) return false;
    }
    return true;
  }
};

Stencil seven_point(double h) {
  Stencil s(1);
  s.at(Stencil::offset_index(0, 0, 0), 0, 0) = 6.0 * h;
  for (int axis = 0; axis < 3; ++axis) {
    for (int side : {-1, 1}) {
      std::array<int, 3> d{0, 0, 0};
      d[static_cast<std::size_t>(axis)] = side;
      s.at(Stencil::offset_index(d[0], d[1], d[2]), 0, 0) = -h;
    }
  }
  return s;
}

// ∂N_a/∂ξ_d at ξ for the trilinear shape function of corner a (bit d of a: ξ_d = 1 side).
std::array<double, 3> shape_gradient(int corner, const std::array<double, 3>& xi) {
  std::array<double, 3> value{}, slope{};
  for (std::size_t d = 0; d < 3; ++d) {
    const bool upper = ((corner >> d) & 1) != 0;
    value[d] = upper ? xi[d] : 1.0 - xi[d];
    slope[d] = upper ? 1.0 : -1.0;
  }
  return {slope[0] * value[1] * value[2], value[0] * slope[1] * value[2], value[0] * value[1] * slope[2]};
}

// The element bilinear form of corners a, b on the unit cube, components i, j, by 2×2×2 Gauss
// quadrature (exact for Q1): Laplacian ∇N_a·∇N_b, elasticity
// λ ∂_iN_a ∂_jN_b + μ (δ_ij ∇N_a·∇N_b + ∂_jN_a ∂_iN_b) + coupling ∇N_a·∇N_b. On a cube of
// side h it scales by h.
double unit_element_entry(GridProblem problem, const GridMaterial& material, int a, int b, int i, int j) {
  const double offset = 0.5 / std::sqrt(3.0);
  double sum = 0.0;
  for (int q = 0; q < 8; ++q) {
    const std::array<double, 3> xi{0.5 + ((q & 1) ? offset : -offset), 0.5 + ((q & 2) ? offset : -offset),
                                   0.5 + ((q & 4) ? offset : -offset)};
    const auto ga = shape_gradient(a, xi), gb = shape_gradient(b, xi);
    const double gradients = ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2];
    const auto ui = static_cast<std::size_t>(i), uj = static_cast<std::size_t>(j);
    const double integrand = problem == GridProblem::q1_laplacian
                                 ? gradients
                                 : material.lambda * ga[ui] * gb[uj] +
                                       material.mu * ((i == j ? gradients : 0.0) + ga[uj] * gb[ui]) +
                                       material.coupling * gradients;
    sum += integrand / 8.0;  // Gauss weights (1/2)³
  }
  return sum;
}

// Sums the element matrices of the 8 elements around a node: in each, the node is some
// corner a, and its neighbour at corner b sits at offset b − a.
Stencil q1_stencil(GridProblem problem, const GridMaterial& material, double h) {
  const int c = components(problem);
  Stencil s(c);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      const int offset =
          Stencil::offset_index((b & 1) - (a & 1), ((b >> 1) & 1) - ((a >> 1) & 1), ((b >> 2) & 1) - ((a >> 2) & 1));
      for (int i = 0; i < c; ++i) {
        for (int j = 0; j < c; ++j) s.at(offset, i, j) += h * unit_element_entry(problem, material, a, b, i, j);
      }
    }
  }
  return s;
}

Stencil stencil_for(GridProblem problem, const GridMaterial& material, int nodes_per_side) {
  const double h = 1.0 / (nodes_per_side + 1);
  return problem == GridProblem::poisson_7_point ? seven_point(h) : q1_stencil(problem, material, h);
}

// Rows of column (q, j) in increasing order: neighbours p = q + o with p ≥ q, offsets in
// (dz, dy, dx) order (increasing node numbers for in-grid neighbours of odd n ≥ 3: a step
// along one axis is shorter than the next axis' stride), then components. A(p·c+i, q·c+j) = block(q − p)[i][j] = block(p − q)[j][i].
linalg::SymmetricCscMatrix assemble(const Stencil& s, int n) {
  const int c = s.c;
  const Index nodes = n * n * n;
  linalg::SymmetricCscMatrix a;
  a.lower.rows = a.lower.cols = nodes * c;
  a.lower.col_ptr.assign(1, 0);
  for (Index q = 0; q < nodes; ++q) {
    const int qx = q % n, qy = (q / n) % n, qz = q / (n * n);
    for (int j = 0; j < c; ++j) {
      for (int dz = -1; dz <= 1; ++dz) {
        for (int dy = -1; dy <= 1; ++dy) {
          for (int dx = -1; dx <= 1; ++dx) {
            const int px = qx + dx, py = qy + dy, pz = qz + dz;
            if (px < 0 || py < 0 || pz < 0 || px >= n || py >= n || pz >= n) continue;  // Dirichlet
            const int offset = Stencil::offset_index(dx, dy, dz);
            const Index p = px + n * (py + n * pz);
            if (p < q || s.block_is_zero(offset)) continue;
            for (int i = (p == q ? j : 0); i < c; ++i) {
              a.lower.row_idx.push_back(p * c + i);
              a.lower.values.push_back(s.at(offset, j, i));
            }
          }
        }
      }
      a.lower.col_ptr.push_back(static_cast<linalg::Offset>(a.lower.row_idx.size()));
    }
  }
  linalg::check_valid(a);
  return a;
}

// Trilinear interpolation from the coarse grid (m nodes per side) to the fine one
// (n = 2m + 1): fine node at grid position x (1-based, boundary at 0 and n + 1) takes coarse
// position x/2 when x is even, the mean of (x ± 1)/2 when odd; boundary positions are 0
// (Dirichlet). Stored per fine node as in seed 001 §7.2 (up to 8 coarse nodes and weights), and
// both directions loop over the fine nodes with these weights, so R = Pᵀ exactly.
struct TrilinearTransfer {
  int c = 1;
  Index fine_nodes = 0;
  std::vector<Index> coarse_node;  // 8 per fine node, −1 where absent
  std::vector<double> weight;      // 8 per fine node

  TrilinearTransfer(int components, int n) : c(components), fine_nodes(n * n * n) {
    const int m = (n - 1) / 2;
    coarse_node.assign(8 * static_cast<std::size_t>(fine_nodes), -1);
    weight.assign(8 * static_cast<std::size_t>(fine_nodes), 0.0);
    for (Index f = 0; f < fine_nodes; ++f) {
      const std::array<int, 3> position{f % n + 1, (f / n) % n + 1, f / (n * n) + 1};
      std::array<std::array<int, 2>, 3> parents{};
      std::array<std::array<double, 2>, 3> parent_weight{};
      for (std::size_t d = 0; d < 3; ++d) {
        const int x = position[d];
        parents[d] = x % 2 == 0 ? std::array<int, 2>{x / 2 - 1, -1} : std::array<int, 2>{(x - 1) / 2 - 1, (x + 1) / 2 - 1};
        parent_weight[d] = x % 2 == 0 ? std::array<double, 2>{1.0, 0.0} : std::array<double, 2>{0.5, 0.5};
      }
      for (int k = 0; k < 8; ++k) {
        const int ix = parents[0][k & 1], iy = parents[1][(k >> 1) & 1], iz = parents[2][(k >> 2) & 1];
        const double w = parent_weight[0][k & 1] * parent_weight[1][(k >> 1) & 1] * parent_weight[2][(k >> 2) & 1];
        if (w == 0.0 || ix < 0 || iy < 0 || iz < 0 || ix >= m || iy >= m || iz >= m) continue;
        coarse_node[8 * static_cast<std::size_t>(f) + static_cast<std::size_t>(k)] = ix + m * (iy + m * iz);
        weight[8 * static_cast<std::size_t>(f) + static_cast<std::size_t>(k)] = w;
      }
    }
  }

  void prolong(std::span<const double> coarse, std::span<double> fine) const {
    for (Index f = 0; f < fine_nodes; ++f) {
      for (int i = 0; i < c; ++i) fine[static_cast<std::size_t>(f * c + i)] = 0.0;
      for_each_parent(f, [&](Index parent, double w) {
        for (int i = 0; i < c; ++i) {
          fine[static_cast<std::size_t>(f * c + i)] += w * coarse[static_cast<std::size_t>(parent * c + i)];
        }
      });
    }
  }

  void restrict_to_coarse(std::span<const double> fine, std::span<double> coarse) const {
    std::fill(coarse.begin(), coarse.end(), 0.0);
    for (Index f = 0; f < fine_nodes; ++f) {
      for_each_parent(f, [&](Index parent, double w) {
        for (int i = 0; i < c; ++i) {
          coarse[static_cast<std::size_t>(parent * c + i)] += w * fine[static_cast<std::size_t>(f * c + i)];
        }
      });
    }
  }

  template <typename Body>
  void for_each_parent(Index f, const Body& body) const {
    for (std::size_t k = 8 * static_cast<std::size_t>(f); k < 8 * static_cast<std::size_t>(f) + 8; ++k) {
      if (coarse_node[k] >= 0) body(coarse_node[k], weight[k]);
    }
  }
};

MultigridLevel level_from_matrix(std::shared_ptr<const linalg::SymmetricCscMatrix> a, int c) {
  MultigridLevel level;
  level.unknowns = a->size();
  level.diagonal.assign(static_cast<std::size_t>(level.unknowns), 0.0);
  if (c == 3) level.block_diagonal.assign(3 * static_cast<std::size_t>(level.unknowns), 0.0);
  for (Index col = 0; col < a->size(); ++col) {
    for (auto k = a->lower.col_ptr[static_cast<std::size_t>(col)]; k < a->lower.col_ptr[static_cast<std::size_t>(col) + 1];
         ++k) {
      const Index row = a->lower.row_idx[static_cast<std::size_t>(k)];
      const double value = a->lower.values[static_cast<std::size_t>(k)];
      if (row == col) level.diagonal[static_cast<std::size_t>(row)] = value;
      if (c == 3 && row / 3 == col / 3) {  // inside the node's block: both triangles
        const auto base = 9 * static_cast<std::size_t>(row / 3);
        level.block_diagonal[base + static_cast<std::size_t>(3 * (row % 3) + col % 3)] = value;
        level.block_diagonal[base + static_cast<std::size_t>(3 * (col % 3) + row % 3)] = value;
      }
    }
  }
  level.apply = [a](std::span<const double> x, std::span<double> y) { linalg::symmetric_multiply(*a, x, y); };
  return level;
}

}  // namespace

int components(GridProblem problem) { return problem == GridProblem::q1_elasticity ? 3 : 1; }

linalg::SymmetricCscMatrix grid_matrix(GridProblem problem, int nodes_per_side, const GridMaterial& material) {
  return assemble(stencil_for(problem, material, nodes_per_side), nodes_per_side);
}

int full_depth(int n) {
  int levels = 1;
  while (n > 1) {
    n = (n - 1) / 2;
    ++levels;
  }
  return levels;
}

GridHierarchy grid_hierarchy(GridProblem problem, int n, int level_count, const GridMaterial& material) {
  if (level_count < 1 || level_count > full_depth(n) || ((n + 1) & n) != 0) {
    throw std::invalid_argument("grid_hierarchy: n must be 2^k − 1 and levels ≤ k");
  }
  GridHierarchy hierarchy;
  const int c = components(problem);
  for (int l = 0; l < level_count; ++l, n = (n - 1) / 2) {
    auto a = std::make_shared<const linalg::SymmetricCscMatrix>(grid_matrix(problem, n, material));
    hierarchy.levels.push_back(level_from_matrix(a, c));
    hierarchy.matrices.push_back(std::move(a));
    hierarchy.nodes_per_side.push_back(n);
    if (l + 1 < level_count) {
      auto transfer = std::make_shared<const TrilinearTransfer>(c, n);
      hierarchy.levels.back().prolong_from_coarser = [transfer](std::span<const double> coarse, std::span<double> fine) {
        transfer->prolong(coarse, fine);
      };
      hierarchy.levels.back().restrict_to_coarser = [transfer](std::span<const double> fine, std::span<double> coarse) {
        transfer->restrict_to_coarse(fine, coarse);
      };
    }
  }
  return hierarchy;
}

}  // namespace cholsim::solvers::testing
