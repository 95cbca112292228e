#pragma once
// The linear system of one Newton step on one octree level, matrix-free (seed 001 §4.2, §7.3,
// §7.4, §8):  A = M/Δt² + K(F) + Σ springs,
// with K the corotated stiffness of the stabilized one-point hexahedra (definiteness-fixed,
// Algorithm 1) summed over elements through the hanging-node interpolation W (§3.2), M the
// lumped masses, and zero-rest-length springs at embedded points (bone attachments, contact).
// The same class serves every multigrid level: a coarse level is re-discretized from the
// averaged Lamé parameters and deformation gradients (§7.3), never Galerkin-multiplied.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "fem/elements/stabilized_hex.hpp"
#include "fem/octree/element_blocks.hpp"
#include "fem/octree/linear_octree.hpp"
#include "linalg/assembly_pattern.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem::octree {

/// A point of the body held where it is embedded: the element of a level that contains it
/// and its weights w.r.t. that element's conforming nodes (Ñ_b(ξ), §8).
struct EmbeddedPoint {
  linalg::Index element = 0;
  std::array<double, 8> weights{};
};

/// A zero-rest-length spring at an embedded point (§8): force −S·(x_p − target) with
/// S = k·I for a bone attachment, k_n·nnᵀ + k_t·(I − nnᵀ) for a frictional contact.
struct EmbeddedSpring {
  linalg::Index point = 0;  ///< into the level's embedded points
  linalg::Mat3 stiffness;
  linalg::Vec3 target;
};

/// A symmetric matrix on the 8 conforming nodes of one element (24×24, node-major) added to a
/// level's operator: the Galerkin correction a coarse level gets for the held nodes of the
/// finer ones (OctreeHierarchy::hold_nodes).
struct ElementCorrection {
  linalg::Index element = 0;
  HexMatrix matrix{};
};

class OctreeElasticOperator {
 public:
  /// `lame` per element and `nodal_mass` per node of `mesh`, which must outlive the operator.
  OctreeElasticOperator(const OctreeMesh& mesh, std::vector<Lame> lame, std::vector<double> nodal_mass,
                        int threads);

  /// 1/Δt² for backward Euler, 0 for a quasistatic solve.
  void set_mass_scale(double scale) { mass_scale_ = scale; }
  /// The springs of this step, springs[k] acting at `at[k]` (its point embedded in this level's
  /// mesh). Throws std::invalid_argument when the sizes differ.
  void set_springs(std::span<const EmbeddedSpring> springs, std::span<const EmbeddedPoint> at);
  /// Per element of a coarse level, which of its 2×2×2 children the finer level holds (bit q:
  /// child q; 0 for an element the finer level has unchanged): those elements are the merged
  /// hexahedra of stabilized_hex.hpp, PᵀAP of their children, not one-point elements. Empty:
  /// every element is a one-point element (the finest level; §7.3's plain re-discretization).
  void set_merged_children(std::vector<std::uint8_t> children);
  /// Nodes held in place (Dirichlet), 1 per held node, one entry per node; empty: none. A held
  /// node's rows and columns are the identity's: (A·x) there is x there, and no other row sees
  /// it, so a right-hand side's held entries are the prescribed update (0 keeps the node).
  /// With held nodes apply() works in a scratch vector of the operator's: one product at a time.
  /// Throws std::invalid_argument when the size is not the node count.
  void set_held_nodes(std::vector<std::uint8_t> held);
  [[nodiscard]] std::span<const std::uint8_t> held_nodes() const { return held_; }
  [[nodiscard]] bool has_held_nodes() const { return !held_list_.empty(); }
  /// Zeroes the held nodes' entries of v (3 per node).
  void zero_held(std::span<double> v) const;
  /// Matrices added on elements' conforming nodes (rows and columns of held nodes ignored).
  void set_corrections(std::vector<ElementCorrection> corrections) { corrections_ = std::move(corrections); }
  [[nodiscard]] std::span<const ElementCorrection> corrections() const { return corrections_; }
  /// Element e's stiffness on its conforming nodes (Wᵀ·K·W, §3.2), as assemble() adds it (held
  /// nodes not masked; no springs, no correction).
  [[nodiscard]] HexMatrix stiffness_matrix(linalg::Index e) const;
  [[nodiscard]] std::span<const std::uint8_t> merged_children() const { return merged_children_; }
  /// The linearization at one deformation gradient per element (§4.2); the gradients are kept
  /// (a coarser level averages them, §7.3).
  void linearize(std::vector<linalg::Mat3> deformation_gradients);
  /// The linearization at nodal positions x: F at every element centre (§4.1.1), then as above.
  void linearize_at(std::span<const double> x);
  [[nodiscard]] std::span<const linalg::Mat3> deformation_gradients() const { return deformation_gradients_; }

  /// y = A·x (3 values per node).
  void apply(std::span<const double> x, std::span<double> y) const;
  /// diag(A): the elements' §7.4 diagonals, masses and springs.
  [[nodiscard]] std::vector<double> diagonal() const;
  /// The Jacobi smoother's diagonal: diag(A) with each spring's rows counted by their l1
  /// norms (l1-Jacobi, Baker et al. 2011, for the springs only). A stiff spring at a point
  /// inside an element is a rank-one term whose D⁻¹-scaled eigenvalue is the number of nodes it
  /// touches, up to 8: the contact springs of the armadillo's feet on the floor make
  /// λmax(D⁻¹A) 3.7 at 64 and 128 cells (2.03 without them), which damping 0.5 smooths by a
  /// factor 0.84 only; with the l1 rows a spring adds at most 1 (2.03; issue 24, stop 47).
  [[nodiscard]] std::vector<double> smoother_diagonal() const;
  /// The block-Jacobi smoother's data, 9 values per node (row-major): A's 3×3 diagonal node
  /// blocks with each spring's couplings to other nodes added, in l1, to the blocks' diagonals
  /// (as smoother_diagonal()).
  [[nodiscard]] std::vector<double> smoother_block_diagonal() const;
  /// A assembled (lower triangle): the coarsest level's matrix for the direct solve, the
  /// `direct` solver, and the tests' oracle. The pattern (every pair of an element's
  /// conforming nodes) is built on the first call and kept, so the factorization sees one
  /// pattern for a whole run (DESIGN.md "Assembly is pattern-stable").
  /// The matrix is kept and refilled by the next call (no allocation per Newton step).
  [[nodiscard]] const linalg::SymmetricCscMatrix& assemble() const;

  /// F at every element centre for nodal positions x (3 per node) (§4.1.1).
  void deformation_gradients(std::span<const double> x, std::span<linalg::Mat3> f) const;
  /// forces += the elastic forces at positions x (§4.1).
  void add_elastic_forces(std::span<const double> x, std::span<double> forces) const;
  /// The same after linearize_at(x), from its rotations: no SVD of its own (a Newton step's
  /// residual and linearization share one per element).
  void add_linearized_forces(std::span<const double> x, std::span<double> forces) const;
  /// The elastic energy at positions x (§4.1).
  [[nodiscard]] double elastic_energy(std::span<const double> x) const;
  /// forces += the springs' forces at positions x; returns their energy.
  double add_spring_forces(std::span<const double> x, std::span<double> forces) const;
  /// The position of a point embedded in this level's mesh for nodal values x.
  [[nodiscard]] linalg::Vec3 point_position(const EmbeddedPoint& point, std::span<const double> x) const;

  [[nodiscard]] const OctreeMesh& mesh() const { return *mesh_; }
  [[nodiscard]] linalg::Index unknowns() const { return 3 * mesh_->node_count(); }
  [[nodiscard]] std::span<const Lame> lame() const { return lame_; }
  [[nodiscard]] std::span<const double> nodal_mass() const { return mass_; }
  [[nodiscard]] const ElementBlocks& blocks() const { return blocks_; }
  [[nodiscard]] int threads() const { return threads_; }
  [[nodiscard]] std::size_t memory_bytes() const;

 private:
  enum class SpringRows { exact, l1 };
  [[nodiscard]] std::vector<double> diagonal(SpringRows spring_rows) const;
  /// The children of a merged element, 0 for a one-point element.
  [[nodiscard]] std::uint8_t children_of(linalg::Index element) const {
    return merged_children_.empty() ? 0 : merged_children_[static_cast<std::size_t>(element)];
  }
  /// The 3×3 diagonal blocks of Wᵀ·K·W of `element`, one per conforming node.
  [[nodiscard]] std::array<linalg::Mat3, 8> element_blocks(linalg::Index element) const;
  /// f̃_b += Σ_a W_ab values_a for the conforming nodes of `element` owned by `block`.
  void scatter_owned(linalg::Index element, linalg::Index block, const HexNodes& values, std::span<double> nodal) const;
  [[nodiscard]] bool is_held(linalg::Index node) const {
    return !held_.empty() && held_[static_cast<std::size_t>(node)] != 0;
  }
  /// x with the held nodes' entries zeroed (held_masked_), or x itself when none are held.
  [[nodiscard]] std::span<const double> without_held(std::span<const double> x) const;
  /// Zeroes the rows and columns of k that belong to held conforming nodes of element e.
  void mask_held(linalg::Index e, HexMatrix& k) const;
  /// nodal += Ñ_b(ξ_p)·value on the conforming nodes of embedded point p (§8: Wᵀ of a point).
  void spread_from_point(const EmbeddedPoint& point, const linalg::Vec3& value, std::span<double> nodal) const;

  /// A spring of this step where its point lies in this level's mesh.
  struct PlacedSpring {
    EmbeddedPoint at;
    linalg::Mat3 stiffness;
    linalg::Vec3 target;
  };

  const OctreeMesh* mesh_;
  ElementBlocks blocks_;
  int threads_;
  std::vector<Lame> lame_;
  std::vector<double> mass_;
  double mass_scale_ = 0.0;
  std::vector<linalg::Mat3> deformation_gradients_;
  std::vector<HexLinearization> linearization_;
  std::vector<PlacedSpring> springs_;
  std::vector<std::uint8_t> merged_children_;  ///< per element, empty: none merged
  std::vector<std::uint8_t> held_;             ///< per node, empty: none held
  std::vector<linalg::Index> held_list_;       ///< the held nodes
  mutable std::vector<double> held_masked_;    ///< apply()'s x without the held nodes
  std::vector<ElementCorrection> corrections_;
  mutable std::unique_ptr<linalg::AssemblyPattern> pattern_;  ///< made by the first assemble()
  mutable linalg::SymmetricCscMatrix assembled_;               ///< assemble()'s matrix, refilled
};

/// Lumped masses: density·h³ of every element split over its 8 primary nodes and carried to
/// the conforming nodes by Wᵀ (§3.2), so a hanging corner's share goes where it is interpolated from.
std::vector<double> lumped_masses(const OctreeMesh& mesh, double density);

}  // namespace cholsim::fem::octree
