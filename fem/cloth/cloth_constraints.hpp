#pragma once
// The velocity constraints of a cloth step (seed 002 §2.5): A_eq q̇ = e and A_ineq q̇ ≥ c of
// the step QP, eq. 2.12.
//
//  * free vertices touching a box face: nᵀẋ ≥ nᵀv_box − gap/h (the position-level
//    non-penetration gap + h·nᵀ(ẋ − v_box) ≥ 0 linearized; a moving box pushes);
//  * vertices on a sharp feature, by method:
//      - EOL (Algorithm 2.2): the normal cone nᵢᵀẋ ≥ nᵢᵀv_box (two normals on an edge, three on
//        a box corner, one on a nail), plus on an edge the Eulerian equality b̄ᵀẊ = 0 (border
//        vertex: b̄ the material normal of the border) or t̄ᵀẊ = 0 (interior: t̄ the averaged
//        material tangent of its conformal edges), X kept inside the material domain, and no
//        triangle with EOL vertices shrinking below a quarter of its material area in a step;
//      - conformal Lagrangian: the averaged normal (Fig. 2.3(e)), or with `cone` both normals
//        (Fig. 2.3(d)), which locks a sliding cloth (§2.7 EDGE);
//  * scripted vertices: ẋ_k = v_k on each scripted axis (fixed corners: v = 0).
#include <vector>

#include "fem/cloth/cloth_collisions.hpp"
#include "fem/cloth/cloth_dofs.hpp"
#include "fem/cloth/cloth_mesh.hpp"
#include "fem/cloth/cloth_obstacles.hpp"
#include "linalg/csc_matrix.hpp"

namespace cholsim::fem::cloth {

enum class ClothMethod {
  lagrangian_regular,    ///< static mesh, faces only (no feature tracking)
  lagrangian_conformal,  ///< conformal remeshing, averaged normals at features
  eol,                   ///< Eulerian-on-Lagrangian vertices at features (the thesis' method)
};

/// A vertex moved by script on some axes (a fixed corner has zero velocity on all three).
struct ScriptedVertex {
  Index vertex = 0;
  Vec3 velocity;
  std::array<bool, 3> axes{true, true, true};
};

/// What a constraint row stands for (friction and statistics read it).
enum class RowKind : unsigned char { face_contact, feature_normal, eulerian, material_domain, scripted };

struct ClothConstraints {
  linalg::CscMatrix equality;  ///< p × dofs
  std::vector<double> equality_rhs;
  linalg::CscMatrix inequality;  ///< q × dofs
  std::vector<double> inequality_rhs;
  std::vector<Index> inequality_vertex;  ///< per inequality row: its vertex
  std::vector<RowKind> inequality_kind;
  std::vector<Vec3> inequality_normal;   ///< per inequality row: its world normal (zero for material rows)
  std::vector<int> inequality_obstacle;  ///< per inequality row: the obstacle it touches (−1 for material rows)
};

struct ConstraintOptions {
  ClothMethod method = ClothMethod::eol;
  bool cone = false;  ///< conformal Lagrangian: both normals instead of their average
};

ClothConstraints build_constraints(const ClothMesh& cloth, const ClothDofs& dofs, const ClothObstacles& obstacles,
                                   std::span<const VertexContact> contacts, std::span<const ScriptedVertex> scripted,
                                   double t, double h, const ConstraintOptions& options);

/// The Eulerian equality direction of EOL vertex v on an edge feature (Algorithm 2.2): b̄
/// (border) or t̄ (interior), unit, in material space; zero for a corner vertex. Also used by
/// the velocity transfer of a new EOL vertex (eq. 2.13).
std::array<double, 2> eulerian_constraint_direction(const ClothMesh& cloth, Index v);

}  // namespace cholsim::fem::cloth
