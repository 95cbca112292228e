#pragma once
// The projective-dynamics model of seed 004 §3.2 (Bouaziz et al. 2014): the energy
//   E(x, R) = Σ_e W_e‖F_e − R_e‖²  (+ Σ_e W'_e‖F_e − T_e‖², biphasic strain limiting, §5.3)
//           + Σ_a ½k_a‖w_aᵀx − t_a‖²   (bone attachments, §5.1)
//           + [backward Euler] 1/(2h²)‖x − y‖²_M,
// W_e = μV_e. With the projections R_e, T_e and targets t_a fixed it is quadratic in x with a
// Hessian that is the same scalar n×n matrix K for x, y and z (§3.2, last paragraph), so K is
// assembled once over the free nodes (Dirichlet nodes eliminated) and each global step solves
// K·X = B for three right-hand sides.
//
// The right-hand side is split the way Algorithm 1 (§4.5) needs it: the elements' part
// B_e = Σ_e 2W_e·R_e·g_{e,a} is gathered per node over any subset of elements (the
// collision-safe E_s in the outer loop, the collision-prone E_c in the inner loop), the rest —
// Dirichlet couplings, attachment targets, inertia — is one per-frame term.
#include <array>
#include <span>
#include <vector>

#include "fem/pd/pd_scene.hpp"
#include "fem/pd/pd_springs.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/dense_matrix.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

enum class PdIntegrator {
  quasistatic,     ///< seed 004's case: min_x E(x) each frame
  backward_euler,  ///< + 1/(2h²)‖x − y‖²_M, y = x_n + h·v_n + h²·g (§6 "straightforward")
};

struct PdModelOptions {
  PdIntegrator integrator = PdIntegrator::quasistatic;
  double time_step = 1.0 / 30.0;  ///< h, s (backward Euler)
  Vec3 gravity{0.0, 0.0, 0.0};    ///< m/s² (backward Euler; quasistatic scenes are driven by bones)
  int threads = 2;
};

/// Node incidences of a subset of elements: for each node, the (element, corner) pairs of the
/// subset that touch it, so the right-hand side is gathered per node without write conflicts.
struct ElementIncidence {
  std::vector<Index> nodes;          ///< the nodes touched, increasing
  std::vector<Index> offsets;        ///< size nodes.size() + 1
  std::vector<Index> element_corner; ///< 4·element + corner
};

class PdModel {
 public:
  /// Checks the scene (positive μ and stiffnesses, finite values, nodes and tets in range,
  /// barycentric embeddings) and throws std::invalid_argument naming the offending item.
  /// Then assembles K over the free nodes.
  PdModel(const PdScene& scene, PdModelOptions options);

  [[nodiscard]] const PdScene& scene() const { return *scene_; }
  [[nodiscard]] const PdModelOptions& options() const { return options_; }
  [[nodiscard]] Index node_count() const { return static_cast<Index>(free_index_.size()); }
  [[nodiscard]] Index element_count() const { return static_cast<Index>(weights_.size()); }
  [[nodiscard]] Index free_count() const { return static_cast<Index>(free_nodes_.size()); }
  /// The free index of `node`, or −1 for a Dirichlet node.
  [[nodiscard]] Index free_index(Index node) const { return free_index_[static_cast<std::size_t>(node)]; }
  [[nodiscard]] std::span<const Index> free_nodes() const { return free_nodes_; }
  [[nodiscard]] std::span<const Index> element_nodes(Index element) const {
    return {scene_->mesh.tets.data() + 4 * element, 4};
  }
  /// K (free × free, lower triangle): elements, strain limits, attachments, mass/h².
  [[nodiscard]] const linalg::SymmetricCscMatrix& matrix() const { return matrix_; }
  [[nodiscard]] double mean_edge_length() const { return mean_edge_length_; }
  /// Lumped mass ρV/4 summed over the node's tets.
  [[nodiscard]] double node_mass(Index node) const { return node_masses_[static_cast<std::size_t>(node)]; }

  /// The attachment springs of the scene at `frame` (targets moved with their bones).
  [[nodiscard]] std::vector<SpringRow> attachment_springs(double frame) const;

  /// Local step (§3.2) on `elements` at `positions` (3 per node): R_e = polar(F_e) with
  /// det R_e = +1 also for inverted elements (svd3), and the strain-limit projection T_e
  /// (singular values clamped). Runs on options().threads threads.
  void local_step(std::span<const double> positions, std::span<const Index> elements);
  /// The same for every element.
  void local_step(std::span<const double> positions) { local_step(positions, all_elements_); }
  /// 0, 1, …, element_count() − 1.
  [[nodiscard]] std::span<const Index> all_elements() const { return all_elements_; }

  /// Node incidences of `elements` (all when empty is not meant: pass every index).
  [[nodiscard]] ElementIncidence incidence(std::span<const Index> elements) const;
  /// B(free(a), :) += Σ over the incidence's (e, corner a) of 2W_e·R_e·g_{e,a}
  /// (+ 2W'_e·T_e·g_{e,a}); `b` is free_count × 3, rows in free numbering.
  void add_element_forces(const ElementIncidence& incidence, linalg::DenseView b) const;
  /// The per-frame rest of B: element couplings to Dirichlet nodes and, for backward Euler,
  /// M·y/h² with `inertia_target` y (3 per node; ignored by the quasistatic integrator).
  void add_constant_forces(std::span<const double> inertia_target, linalg::DenseView b) const;
  /// B(free(i), :) += k·wᵢ·(t − Σ_fixed w·x̄) for every spring row: the free parts pulled to
  /// their targets, the Dirichlet parts moved to the right.
  void add_spring_forces(std::span<const SpringRow> springs, linalg::DenseView b) const;
  /// Σ over spring rows of k·(free part)ᵀ(free part): the springs' share of the matrix, as
  /// triplets in free numbering (lower triangle), for assembling K + ΔK.
  void add_spring_triplets(std::span<const SpringRow> springs, linalg::Triplets& triplets) const;

  /// E(x) with the projections at their current values (after local_step) plus `springs`
  /// evaluated at x: the quantity PD's steps never increase.
  [[nodiscard]] double energy(std::span<const double> positions, std::span<const SpringRow> springs,
                              std::span<const double> inertia_target) const;

  /// Current rotation / strain-limit projection of element e.
  [[nodiscard]] const linalg::Mat3& rotation(Index element) const { return rotations_[static_cast<std::size_t>(element)]; }
  /// det F_e at `positions` (≤ 0 for an inverted element).
  [[nodiscard]] double deformation_determinant(std::span<const double> positions, Index element) const;
  /// Largest principal-stretch deviation |σ − 1| of element e at `positions` (for output).
  [[nodiscard]] double strain_measure(std::span<const double> positions, Index element) const;
  [[nodiscard]] linalg::Mat3 deformation_gradient(std::span<const double> positions, Index element) const;

 private:
  void assemble_matrix();
  bool strain_limited() const { return scene_->strain_limit.stiffness_ratio > 0.0; }

  const PdScene* scene_;
  PdModelOptions options_;
  std::vector<Index> free_index_;
  std::vector<Index> free_nodes_;
  std::vector<Index> all_elements_;
  std::vector<std::array<Vec3, 4>> gradients_;  ///< g_{e,a} = ∇N_a, rest
  std::vector<double> weights_;                 ///< W_e = μ·V_e
  std::vector<double> node_masses_;             ///< lumped ρV/4
  std::vector<linalg::Mat3> rotations_;         ///< R_e
  std::vector<linalg::Mat3> limited_;           ///< T_e (strain limiting only)
  linalg::SymmetricCscMatrix matrix_;
  double mean_edge_length_ = 0.0;
};

}  // namespace cholsim::fem
