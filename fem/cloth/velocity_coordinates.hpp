#pragma once
// An exact change of variables for the step QP of EOL cloth (seed 002 eq. 2.12):
//
//   q̇ = T y + q̇₀,   T block-diagonal per vertex (3×r Lagrangian, 2×r Eulerian blocks).
//
// Almost every constraint row of a cloth step touches one vertex (cloth_constraints.hpp): a face
// contact nᵀẋ_v ≥ c, the feature normals nᵢᵀẋ_v ≥ c of an EOL vertex, its Eulerian equality
// dᵀẊ_v = 0 (§2.5.2, Algorithm 2.2), a scripted ẋ_{v,k} = value. Per vertex block the frame is
// built from those rows, in order:
//  * the block's equality rows are eliminated: T_v spans their orthogonal complement and q̇₀
//    carries their (minimum-norm) particular solution — a scripted axis is fixed, a domain
//    corner's Ẋ (two rows) vanishes, an edge EOL vertex keeps Ẋ along d⊥ only;
//  * the inequality normals, Gram–Schmidt orthonormalized in row order, are T_v's first
//    columns, the basis completed by the unit axes farthest from them: the k-th independent
//    normal of a vertex touches k columns (a contact 1, an edge's two normals 2);
//  * a block without single-vertex rows keeps T_v = I and costs nothing.
// Rows over several vertices (the material-area rows) do not shape the frames; they are carried
// over as row·T. T is orthonormal on every block, so the reduced Hessian TᵀHT is exactly as
// well conditioned as H.
//
// The reduced QP (in y) has the original inequality rows in the original order, so its
// multipliers z are those of the original rows (contact forces and friction read them per row);
// only the equality rows that touch several vertices remain, in order (kept_equality_rows()).
// The multipliers of the eliminated equality rows are not recovered (the step does not read
// them). Its constrained columns — the Schur set of the QP back ends — shrink accordingly.
//
//   ReducedVelocityQp reduced = reduce_velocity_qp(problem, dofs);
//   auto result = solvers::qp::solve_interior_point(reduced.problem, options);
//   std::vector<double> qdot = reduced.coordinates.velocities(result.solution.x);
#include <array>
#include <span>
#include <vector>

#include "fem/cloth/cloth_dofs.hpp"
#include "solvers/qp/qp_problem.hpp"

namespace cholsim::fem::cloth {

/// One vertex block of T: DOFs [first, first + size) of q̇ ↔ coordinates
/// [reduced_first, reduced_first + reduced_size) of y.
struct VelocityBlock {
  Index first = 0;
  Index reduced_first = 0;
  int size = 3;          ///< 3 (a vertex's ẋ) or 2 (an EOL vertex's Ẋ)
  int reduced_size = 3;  ///< the columns of T_v: size minus the independent equality rows
  bool identity = true;  ///< T_v = I (then `basis` is not read)
  /// T_v, size × reduced_size, column-major with leading dimension 3; orthonormal columns.
  std::array<double, 9> basis{};
};

/// The map q̇ = T y + q̇₀ of one step.
class VelocityCoordinates {
 public:
  VelocityCoordinates() = default;
  VelocityCoordinates(std::vector<VelocityBlock> blocks, std::vector<double> offset,
                      std::vector<Index> kept_equality_rows);

  [[nodiscard]] Index size() const { return static_cast<Index>(offset_.size()); }  ///< of q̇
  [[nodiscard]] Index reduced_size() const;                                       ///< of y
  /// q̇ = T y + q̇₀. Throws std::invalid_argument when y has not reduced_size() entries.
  [[nodiscard]] std::vector<double> velocities(std::span<const double> y) const;
  /// y = Tᵀ(q̇ − q̇₀), e.g. a warm start from the previous step's q̇ (exact when q̇ meets the
  /// eliminated equalities). Throws std::invalid_argument when q̇ has not size() entries.
  [[nodiscard]] std::vector<double> reduced_velocities(std::span<const double> qdot) const;

  [[nodiscard]] const std::vector<VelocityBlock>& blocks() const { return blocks_; }
  [[nodiscard]] const std::vector<double>& offset() const { return offset_; }  ///< q̇₀
  /// The original equality rows that the reduced problem keeps, in its row order.
  [[nodiscard]] const std::vector<Index>& kept_equality_rows() const { return kept_equality_rows_; }

 private:
  std::vector<VelocityBlock> blocks_;
  std::vector<double> offset_;
  std::vector<Index> kept_equality_rows_;
};

struct ReducedVelocityQp {
  solvers::qp::QpProblem problem;  ///< in y: TᵀHT, Tᵀ(b − Hq̇₀), the kept E·T, C·T
  VelocityCoordinates coordinates;
};

/// The reduced QP of `problem`, a step QP numbered by `dofs` (3 Lagrangian DOFs per vertex,
/// then 2 per EOL vertex). Throws std::invalid_argument when the problem is malformed
/// (check_problem), its size is not dofs.size, or a vertex's equality rows contradict each
/// other. An inequality row whose normal the vertex's equalities already fix becomes a row of
/// zeros with c − C q̇₀ on the right.
ReducedVelocityQp reduce_velocity_qp(const solvers::qp::QpProblem& problem, const ClothDofs& dofs);

}  // namespace cholsim::fem::cloth
