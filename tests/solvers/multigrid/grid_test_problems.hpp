#pragma once
// Test hierarchies for the multigrid module: 3D problems on the n³ interior nodes of a uniform
// grid over the unit cube with a Dirichlet boundary, n = 2^k − 1, so that the coarse grid of
// (n − 1)/2 nodes per side is nested in it. Coarse operators are re-discretized on the coarse
// grid (seed 001 §7.3, not Galerkin), prolongation is trilinear interpolation and restriction
// its transpose, both looping over the fine nodes (§7.2).
//
// Scaling: every operator is the finite-element one (∝ h for a 3D second-order problem), so
// that Pᵀ·A_h·P ≈ A_2h and the coarse correction has the right size. The 7-point stencil is
// scaled the same way (h·[6, −1]).
#include <memory>
#include <vector>

#include "linalg/csc_matrix.hpp"
#include "solvers/multigrid/multigrid_level.hpp"

namespace cholsim::solvers::testing {

enum class GridProblem {
  poisson_7_point,  ///< scalar, finite-difference 7-point Laplacian
  q1_laplacian,     ///< scalar, trilinear (Q1) finite elements, 27-point stencil
  q1_elasticity,    ///< 3 unknowns per node, Q1 linear elasticity (λ, μ), 27-point 3×3 blocks
};

struct GridMaterial {
  double lambda = 1.0;  ///< Lamé's first parameter (q1_elasticity)
  double mu = 1.0;      ///< shear modulus (q1_elasticity)
  /// q1_elasticity: adds coupling·∫∇(u_x + u_y + u_z)·∇(v_x + v_y + v_z), a positive
  /// semidefinite term that couples a node's three unknowns in its diagonal block. Without it
  /// the uniform grid's blocks are diagonal (the 8 elements' off-diagonal terms cancel) and
  /// block Jacobi would be point Jacobi; seed 001's corotated elements couple them by rotation.
  double coupling = 0.0;
};

/// Unknowns per node of a problem.
int components(GridProblem problem);

/// A's stencil on nodes_per_side³ interior nodes assembled as a lower-stored CSC matrix, rows
/// sorted; the pattern depends only on the problem and the size (never on the material).
linalg::SymmetricCscMatrix grid_matrix(GridProblem problem, int nodes_per_side, const GridMaterial& material = {});

/// A hierarchy of `level_count` levels whose finest has n³ nodes; each level's operator is
/// its assembled matrix (kept alive by the level), with diag(A) and the 3×3 node blocks.
struct GridHierarchy {
  std::vector<std::shared_ptr<const linalg::SymmetricCscMatrix>> matrices;  ///< finest first
  std::vector<MultigridLevel> levels;
  std::vector<int> nodes_per_side;
};
GridHierarchy grid_hierarchy(GridProblem problem, int n, int level_count, const GridMaterial& material = {});

/// Levels down to the coarsest grid of 1 node per side: log2(n + 1).
int full_depth(int n);

}  // namespace cholsim::solvers::testing
