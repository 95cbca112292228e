#pragma once
// Procedural meshes and SPD test matrices: structured tet boxes, the implicit-elasticity
// system M + Δt²K on such a box (full 3-dof and the per-coordinate scalar variant of seed 003),
// finite-difference Laplacians, and dense random SPD matrices. Used by tests, benchmarks and
// demo scenes.
#include <cstdint>
#include <vector>

#include "linalg/csc_matrix.hpp"
#include "linalg/dense_matrix.hpp"
#include "linalg/index_types.hpp"
#include "linalg/linear_tetrahedron.hpp"

namespace cholsim::linalg {

/// A tetrahedral mesh as flat arrays (structure of arrays, ready for AssemblyPattern).
struct TetMesh {
  std::vector<double> positions;  ///< 3·node_count, node v at [3v, 3v+3)
  std::vector<Index> tets;        ///< 4·tet_count, tet t's vertices at [4t, 4t+4)

  [[nodiscard]] Index node_count() const { return static_cast<Index>(positions.size() / 3); }
  [[nodiscard]] Index tet_count() const { return static_cast<Index>(tets.size() / 4); }
  /// The vertex positions of tet t.
  [[nodiscard]] linear_tet::Points tet_points(Index tet) const;
};

/// The box [0, nx·h]×[0, ny·h]×[0, nz·h] (h = cell_size) on a grid of (nx+1)(ny+1)(nz+1)
/// nodes, node (i, j, k) numbered i + (nx+1)·(j + (ny+1)·k), each cube cell cut into 6 tets
/// by the Kuhn (Freudenthal) subdivision along its (0,0,0)→(1,1,1) diagonal. The same cut in
/// every cell makes the mesh conforming; every tet is positively oriented with volume h³/6.
/// Throws std::invalid_argument for a negative count, a non-positive cell size, or a mesh
/// whose node count overflows Index.
TetMesh structured_tet_box(Index nx, Index ny, Index nz, double cell_size);

/// Parameters of elasticity_matrix / scalar_elasticity_matrix. The defaults are a 1 m cube of
/// soft rubber-like material stepped at 60 Hz. With density = 0 and time_step = 1 the result
/// is the stiffness matrix K alone (singular: rigid-body modes).
struct ElasticityBoxOptions {
  Index nx = 10;                 ///< cells along x
  Index ny = 10;                 ///< cells along y
  Index nz = 10;                 ///< cells along z
  double cell_size = 0.1;        ///< edge of one cube cell, m (10 cells → a 1 m box)
  double youngs_modulus = 1e7;   ///< E, Pa (stiff rubber)
  double poisson_ratio = 0.4;    ///< ν, nearly incompressible but well conditioned
  double density = 1000.0;       ///< ρ, kg/m³ (water, soft tissue)
  double time_step = 1.0 / 60.0; ///< Δt, s (one frame at 60 Hz)
};

/// M + Δt²·K on structured_tet_box(nx, ny, nz, cell_size): K the linear-elastic stiffness of
/// linear tets (linear_tet::elastic_stiffness), M the lumped mass ρV/4 per vertex and
/// component. 3 dofs per node, dof = 3·node + component. SPD when density > 0. Assembled
/// through AssemblyPattern::scatter_add.
SymmetricCscMatrix elasticity_matrix(const ElasticityBoxOptions& options = {});

/// The same M + Δt²·K on any tet mesh (positively oriented tets), with the material and
/// time step of `material` (its nx, ny, nz and cell_size are not used).
SymmetricCscMatrix elasticity_matrix(const TetMesh& mesh, const ElasticityBoxOptions& material);

/// One tet's 12×12 block of elasticity_matrix (column-major, dof 3·vertex + component):
/// Δt²·Kₑ plus the lumped mass ρV/4 on the diagonal.
linear_tet::ElasticStiffness elasticity_element_matrix(const linear_tet::Points& x,
                                                       const ElasticityBoxOptions& options);

/// The per-coordinate matrix of seed 003 (§3.1, Algorithm 1: M + DᵀKD): one dof per node,
/// lumped M (ρV/4 per vertex) + Δt²·2μ·Σₑ Vₑ GₑᵀGₑ (linear_tet::scalar_stiffness), with
/// μ from youngs_modulus and poisson_ratio. Each of x, y, z is solved with this same matrix.
SymmetricCscMatrix scalar_elasticity_matrix(const ElasticityBoxOptions& options = {});

/// 5-point Laplacian on an nx×ny grid with homogeneous Dirichlet boundary (SPD): 4 on the
/// diagonal, -1 for each grid neighbour; unknown (i, j) is i + nx·j.
SymmetricCscMatrix laplacian_2d(Index nx, Index ny);

/// 7-point Laplacian on an nx×ny×nz grid with homogeneous Dirichlet boundary (SPD): 6 on the
/// diagonal, -1 for each grid neighbour; unknown (i, j, k) is i + nx·(j + ny·k).
SymmetricCscMatrix laplacian_3d(Index nx, Index ny, Index nz);

/// A dense m×m symmetric matrix (both triangles) with entries uniform in (−1, 1) from `seed`
/// and m added to the diagonal: strictly diagonally dominant, hence SPD — the stand-in for a
/// Schur complement in tests and benchmarks of dense updates.
DenseMatrix random_dominant_spd_matrix(Index m, std::uint64_t seed);

/// b = A·(1, 2, …, n): a right-hand side whose solution is known and has no symmetry (the
/// solves compared against CHOLMOD and MUMPS in tests/ and bench/).
std::vector<double> ramp_right_hand_side(const SymmetricCscMatrix& a);

}  // namespace cholsim::linalg
