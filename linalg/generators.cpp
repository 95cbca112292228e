#include "linalg/generators.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "linalg/assembly_pattern.hpp"

namespace cholsim::linalg {
namespace {

std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

// Product of the grid extents (each plus `extra`), checked: negative sizes and counts that
// overflow Index are misuse.
Index grid_point_count(const char* routine, std::span<const Index> extent, Index extra) {
  std::int64_t count = 1;
  for (Index size : extent) {
    if (size < 0) {
      throw std::invalid_argument(std::string(routine) + ": negative grid size " +
                                  std::to_string(size));
    }
    count *= std::int64_t{size} + extra;
    if (count > std::numeric_limits<Index>::max()) {
      throw std::invalid_argument(std::string(routine) + ": grid too large for the index type");
    }
  }
  return static_cast<Index>(count);
}

// The 6 Kuhn tets of the unit cube as corner bit masks (bit 0 = x, 1 = y, 2 = z): for each
// ordering (a, b, c) of the axes the path 0 → eₐ → eₐ+e_b → 1. det[eₐ, eₐ+e_b, 1] is the sign
// of the permutation, so odd permutations swap their last two vertices.
constexpr std::array<std::array<int, 4>, 6> kuhn_tets = {{
    {0, 1, 3, 7},  // x, y, z (even)
    {0, 2, 6, 7},  // y, z, x (even)
    {0, 4, 5, 7},  // z, x, y (even)
    {0, 1, 7, 5},  // x, z, y (odd)
    {0, 2, 7, 3},  // y, x, z (odd)
    {0, 4, 7, 6},  // z, y, x (odd)
}};

// One shared assembly loop for both elasticity variants: the pattern is built once from the
// mesh, and each tet's element matrix (from `element_matrix(points, out)`) is scattered.
template <std::size_t ElementDofs, typename ElementMatrix>
SymmetricCscMatrix assemble_on_mesh(const TetMesh& mesh, const ElasticityBoxOptions& options, Index dofs_per_node,
                                    ElementMatrix element_matrix) {
  if (!(options.density >= 0.0) || !(options.time_step > 0.0)) {
    throw std::invalid_argument("elasticity_matrix: need density ≥ 0 and time_step > 0");
  }
  const AssemblyPattern pattern(mesh.node_count(), dofs_per_node, 4, mesh.tets);
  SymmetricCscMatrix matrix = pattern.zero_matrix();
  std::array<double, ElementDofs * ElementDofs> element{};
  for (Index t = 0; t < mesh.tet_count(); ++t) {
    element_matrix(mesh.tet_points(t), element);
    pattern.scatter_add(t, element.data(), matrix.lower.values);
  }
  return matrix;
}

}  // namespace

linear_tet::Points TetMesh::tet_points(Index tet) const {
  linear_tet::Points points;
  for (std::size_t s = 0; s < 4; ++s) {
    const auto v = at(tets[4 * at(tet) + s]);
    points[s] = {positions[3 * v], positions[3 * v + 1], positions[3 * v + 2]};
  }
  return points;
}

TetMesh structured_tet_box(Index nx, Index ny, Index nz, double cell_size) {
  const std::array<Index, 3> cells{nx, ny, nz};
  const Index node_count = grid_point_count("structured_tet_box", cells, 1);
  if (grid_point_count("structured_tet_box", cells, 0) > std::numeric_limits<Index>::max() / 24) {
    throw std::invalid_argument("structured_tet_box: too many tets for the index type");
  }
  if (!(cell_size > 0.0)) {
    throw std::invalid_argument("structured_tet_box: cell size must be > 0, got " +
                                std::to_string(cell_size));
  }
  const std::int64_t tet_count = 6 * std::int64_t{nx} * ny * nz;
  const Index stride_y = nx + 1;
  const Index stride_z = (nx + 1) * (ny + 1);
  TetMesh mesh;
  mesh.positions.reserve(3 * at(node_count));
  for (Index k = 0; k <= nz; ++k) {
    for (Index j = 0; j <= ny; ++j) {
      for (Index i = 0; i <= nx; ++i) {
        mesh.positions.push_back(i * cell_size);
        mesh.positions.push_back(j * cell_size);
        mesh.positions.push_back(k * cell_size);
      }
    }
  }
  mesh.tets.reserve(4 * at(tet_count));
  for (Index k = 0; k < nz; ++k) {
    for (Index j = 0; j < ny; ++j) {
      for (Index i = 0; i < nx; ++i) {
        const Index origin = i + stride_y * j + stride_z * k;
        for (const auto& tet : kuhn_tets) {
          for (int corner : tet) {
            mesh.tets.push_back(origin + (corner & 1) + ((corner >> 1) & 1) * stride_y +
                                ((corner >> 2) & 1) * stride_z);
          }
        }
      }
    }
  }
  return mesh;
}

linear_tet::ElasticStiffness elasticity_element_matrix(const linear_tet::Points& x,
                                                       const ElasticityBoxOptions& options) {
  const LameParameters material =
      lame_from_youngs_poisson(options.youngs_modulus, options.poisson_ratio);
  const double dt2 = options.time_step * options.time_step;
  linear_tet::ElasticStiffness element = linear_tet::elastic_stiffness(x, material);
  const double mass = linear_tet::lumped_vertex_mass(x, options.density);
  for (std::size_t a = 0; a < 12; ++a) {
    for (std::size_t b = 0; b < 12; ++b) element[a + 12 * b] *= dt2;
    element[a + 12 * a] += mass;
  }
  return element;
}

SymmetricCscMatrix elasticity_matrix(const ElasticityBoxOptions& options) {
  return elasticity_matrix(structured_tet_box(options.nx, options.ny, options.nz, options.cell_size), options);
}

SymmetricCscMatrix elasticity_matrix(const TetMesh& mesh, const ElasticityBoxOptions& material) {
  return assemble_on_mesh<12>(mesh, material, 3, [&](const linear_tet::Points& x, auto& element) {
    element = elasticity_element_matrix(x, material);
  });
}

SymmetricCscMatrix scalar_elasticity_matrix(const ElasticityBoxOptions& options) {
  const LameParameters material =
      lame_from_youngs_poisson(options.youngs_modulus, options.poisson_ratio);
  // seed 003 Algorithm 1: K = 2μVₜΔt² per deformation-gradient entry, so DᵀKD = 2μΔt²·V·GᵀG.
  const double scale = 2.0 * material.mu * options.time_step * options.time_step;
  const TetMesh box = structured_tet_box(options.nx, options.ny, options.nz, options.cell_size);
  return assemble_on_mesh<4>(box, options, 1, [&](const linear_tet::Points& x, auto& element) {
    element = linear_tet::scalar_stiffness(x);
    const double mass = linear_tet::lumped_vertex_mass(x, options.density);
    for (std::size_t a = 0; a < 4; ++a) {
      for (std::size_t b = 0; b < 4; ++b) element[a + 4 * b] *= scale;
      element[a + 4 * a] += mass;
    }
  });
}

namespace {

// Lower triangle of a 2·dims-point Laplacian on a grid with `extent[axis]` points per axis
// and unit strides numbered axis 0 fastest: each column holds its diagonal, then the +1
// neighbour along each axis in increasing stride order (hence sorted rows).
SymmetricCscMatrix grid_laplacian(const char* routine, std::span<const Index> extent) {
  const Index n = grid_point_count(routine, extent, 0);
  const auto dims = extent.size();
  std::vector<Index> stride(dims, 1);
  for (std::size_t axis = 1; axis < dims; ++axis) stride[axis] = stride[axis - 1] * extent[axis - 1];

  SymmetricCscMatrix a;
  CscMatrix& lower = a.lower;
  lower.rows = n;
  lower.cols = n;
  lower.col_ptr.assign(at(n) + 1, 0);
  lower.row_idx.reserve(at(n) * (dims + 1));
  lower.values.reserve(at(n) * (dims + 1));
  std::vector<Index> coordinate(dims, 0);
  for (Index c = 0; c < n; ++c) {
    lower.row_idx.push_back(c);
    lower.values.push_back(2.0 * static_cast<double>(dims));
    for (std::size_t axis = 0; axis < dims; ++axis) {
      if (coordinate[axis] + 1 < extent[axis]) {
        lower.row_idx.push_back(c + stride[axis]);
        lower.values.push_back(-1.0);
      }
    }
    lower.col_ptr[at(c) + 1] = static_cast<Offset>(lower.row_idx.size());
    for (std::size_t axis = 0; axis < dims && ++coordinate[axis] == extent[axis]; ++axis) {
      coordinate[axis] = 0;
    }
  }
  return a;
}

}  // namespace

SymmetricCscMatrix laplacian_2d(Index nx, Index ny) {
  const std::array<Index, 2> extent{nx, ny};
  return grid_laplacian("laplacian_2d", extent);
}

SymmetricCscMatrix laplacian_3d(Index nx, Index ny, Index nz) {
  const std::array<Index, 3> extent{nx, ny, nz};
  return grid_laplacian("laplacian_3d", extent);
}

DenseMatrix random_dominant_spd_matrix(Index m, std::uint64_t seed) {
  if (m < 0) throw std::invalid_argument("random_dominant_spd_matrix: negative size " + std::to_string(m));
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  DenseMatrix a(m, m);
  for (Index j = 0; j < m; ++j) {
    for (Index i = j; i < m; ++i) a(i, j) = a(j, i) = uniform(random);
    a(j, j) += static_cast<double>(m);
  }
  return a;
}

std::vector<double> ramp_right_hand_side(const SymmetricCscMatrix& a) {
  std::vector<double> ramp(static_cast<std::size_t>(a.size()));
  std::iota(ramp.begin(), ramp.end(), 1.0);
  std::vector<double> b(ramp.size());
  symmetric_multiply(a, ramp, b);
  return b;
}

}  // namespace cholsim::linalg
