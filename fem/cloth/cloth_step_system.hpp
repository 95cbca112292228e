#pragma once
// The per-step linear system of EOL cloth: the Baraff–Witkin linearly implicit step at the
// velocity level (seed 002 §2.4.3),
//   (M − h²K) q̇ᵏ⁺¹ = M q̇ᵏ + h f                                               (eq. 2.11)
// over the generalized velocities q̇ = (ẋ of every vertex, Ẋ of every EOL vertex) (cloth_dofs.hpp),
// whose M̃ = M − h²K and f̃ = M q̇ᵏ + h f are the objective of the constrained QP of eq. 2.12.
//
//  * M: per triangle the generalized inertia of eq. 2.8 (cloth_inertia.hpp) with the triangle's
//    F; only the EOL vertices' Eulerian rows and columns exist (a Lagrangian vertex's X is fixed).
//  * f: membrane (membrane.hpp) + bending (bending.hpp) + gravity m_v g (m_v = ρ·area/3, the
//    row sums of either mass model) + optional external world forces, all computed as world
//    forces per vertex and mapped to generalized forces by eq. 2.9 with the vertex's averaged F.
//  * K: the membrane and bending stiffnesses, mapped per vertex pair by eq. 2.10 (eol_mapping.hpp).
//
// M̃ is symmetric positive semi-definite, not definite: at an EOL vertex the motion ẋ = F Ẋ moves
// no material (§2.5.2), so M has a null space there; the QP's EOL constraints remove it.
//
// The matrix pattern is written once per mesh from the vertex graph (every DOF of a vertex
// couples with every DOF of the vertices it shares a triangle or hinge with); while the
// triangles and the EOL flags stay the same (between remeshings) a ClothStepAssembler keeps the
// pattern and the position of every element entry in it and only refills the values.
#include <span>
#include <vector>

#include "fem/cloth/bending.hpp"
#include "fem/cloth/cloth_dofs.hpp"
#include "fem/cloth/cloth_inertia.hpp"
#include "fem/cloth/cloth_mesh.hpp"
#include "linalg/csc_matrix.hpp"

namespace cholsim::fem::cloth {

/// The cloth's material; defaults are the public EDGE scene's.
struct ClothMaterial {
  double density = 0.05;   ///< area density ρ, kg/m²
  double youngs = 50;      ///< membrane Young's modulus E, N/m (plane stress)
  double poisson = 0.01;   ///< Poisson ratio ν
  double bending = 1e-5;   ///< bending stiffness k_b, N·m
  bool lumped_mass = false;  ///< ρA/3 per vertex instead of eq. 2.8's consistent inertia
};

struct ClothStepOptions {
  double time_step = 1e-2;                  ///< h, s
  Vec3 gravity{0.0, 0.0, -9.81};            ///< m/s²
  /// Extra world forces, 3 per vertex (N), e.g. pulling a corner; empty for none. Must outlive
  /// the assemble call.
  std::span<const double> external_forces;
};

struct ClothStepSystem {
  ClothDofs dofs;
  linalg::SymmetricCscMatrix matrix;  ///< M̃ = M − h²K, lower triangle, dofs.size square
  std::vector<double> rhs;            ///< f̃ = M q̇ + h f
  std::vector<double> forces;         ///< f, the generalized force (eq. 2.9)
  double kinetic_energy = 0.0;        ///< ½ q̇ᵀ M q̇
  double membrane_energy = 0.0;
  double bending_energy = 0.0;
  double gravity_energy = 0.0;  ///< −Σ_v m_v g·x_v
  double fill_seconds = 0.0;    ///< wall time of the assembly (elements, forces and matrix)
  bool pattern_rebuilt = false;  ///< the mesh changed (or was new), so the pattern was rebuilt

  [[nodiscard]] double potential_energy() const { return membrane_energy + bending_energy + gravity_energy; }
};

/// Assembles ClothStepSystems for successive steps of one simulation, reusing the matrix pattern
/// while the mesh's triangles and EOL flags do not change.
class ClothStepAssembler {
 public:
  /// The system for the cloth's current x, X, ẋ, Ẋ, valid until the next call. Throws std::invalid_argument on arrays whose
  /// sizes disagree, a vertex index out of range, a degenerate material triangle, h ≤ 0, a
  /// non-positive density, a negative bending stiffness or Young's modulus, ν outside (−1, 0.5], or
  /// external forces that are not 3 per vertex.
  const ClothStepSystem& assemble(const ClothMesh& cloth, const ClothMaterial& material,
                                  const ClothStepOptions& options);

  [[nodiscard]] const ClothStepSystem& system() const { return system_; }

 private:
  struct ElementPass;

  [[nodiscard]] bool same_mesh(const ClothMesh& cloth) const;
  void rebuild_topology(const ClothMesh& cloth);

  ClothStepSystem system_;
  std::vector<Index> mesh_triangles_;
  std::vector<unsigned char> mesh_eulerian_;
  std::vector<BendingHinge> hinges_;
  /// For each element entry in emission order, its position in system_.matrix's values.
  std::vector<linalg::Offset> entry_positions_;
  bool has_pattern_ = false;
};

/// One-off assembly (a fresh ClothStepAssembler).
ClothStepSystem assemble_cloth_step(const ClothMesh& cloth, const ClothMaterial& material,
                                    const ClothStepOptions& options);

}  // namespace cholsim::fem::cloth
