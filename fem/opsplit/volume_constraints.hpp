#pragma once
// Compliant (XPBD) volume constraints of seed 003 §3.2, eq. 13–16: one constraint per tet,
//   C_t(x) = det F_t − 1 = [(x₁−x₀)×(x₂−x₀)]·(x₃−x₀) / (6V_t) − 1          (eq. 14)
// with compliance α_t = 1/(λ_t V_t Δt²) (eq. 13: ½ C α⁻¹ C = λ/2 V (det F − 1)²), solved by
// Gauss–Seidel sweeps that start from κ = 0 every time step (Algorithm 2, lines 10–14).
//
// Sweeps run colour by colour: the tets are greedily coloured so that no two tets of one
// colour share a node, so the tets of a colour can be projected in parallel without races and
// the result does not depend on the thread count. (Gauss–Seidel in colour order instead of
// mesh order — the same method, a different ordering.) Within a colour the constraints are
// projected a vector at a time in SIMD lanes (8 in double, 16 in float: `Real`, the
// arithmetic of the projection; the edges are formed in double and the positions stay double,
// moved by displacements computed in Real); sharing no node, they do not see each other, so this
// is the sequential update of each. Threads split each colour and finish it before the
// next (fem/opsplit_color_loops). Eq. 15 is evaluated with the stiffness α⁻¹ = λVΔt² in place
// of the compliance α: finite also for λ = 0 (ν = 0), where the constraint then never moves a
// node (α = ∞ would give ∞/∞).
#include <array>
#include <memory>
#include <span>
#include <vector>

#include "fem/elements/elastic_body.hpp"

namespace cholsim::fem {

template <typename Real>
class VolumeConstraintsOf {
 public:
  /// Constraints per block: one 64-byte vector of Real.
  static constexpr Index kLanes = static_cast<Index>(64 / sizeof(Real));

  VolumeConstraintsOf() = default;
  /// Constraints of every element of `body` for time step Δt > 0, moving node v by
  /// w_v·∇C·Δκ (eq. 16) with inverse mass w_v = inverse_masses[v] (0 keeps a node fixed).
  /// Throws std::invalid_argument for a bad Δt or one inverse mass per node missing. A copy
  /// shares the constraints and has its own multipliers.
  VolumeConstraintsOf(const ElasticBody& body, double time_step, std::span<const double> inverse_masses);

  /// Runs `iterations` Gauss–Seidel sweeps over all constraints on `positions` (3·nodes).
  /// Multipliers start at 0. `threads` ≥ 1 splits each colour. Throws std::invalid_argument on
  /// a size mismatch.
  void project(std::span<double> positions, int iterations, int threads = 1);

  [[nodiscard]] Index size() const { return static_cast<Index>(constraints_->nodes.size() / 4); }
  [[nodiscard]] Index color_count() const { return static_cast<Index>(constraints_->color_begin.size()) - 1; }

 private:
  void project_range(std::span<double> positions, Index begin, Index end);

  /// What stays the same from step to step, in colour order (constraint c acts on nodes
  /// [4c, 4c+4)), shared by copies. The per-constraint arrays have kLanes zero entries past the
  /// end (whole vectors for the last block).
  struct Constraints {
    Index node_count = 0;
    std::vector<Index> nodes;
    std::array<std::vector<Real>, 4> inverse_masses;  ///< of each constraint's four nodes
    std::vector<Real> inverse_six_volume;             ///< 1/(6V_t)
    std::vector<Real> stiffness;                      ///< α_t⁻¹ = λ_t V_t Δt² (eq. 13)
    std::vector<Index> color_begin{0};  ///< constraints of colour k at [color_begin[k], color_begin[k+1])
  };
  std::shared_ptr<const Constraints> constraints_ = std::make_shared<const Constraints>();
  std::vector<Real> multipliers_;  ///< κ_t of the current sweep set, padded like the constraints
};

using VolumeConstraints = VolumeConstraintsOf<double>;
extern template class VolumeConstraintsOf<double>;
extern template class VolumeConstraintsOf<float>;

/// Greedy colouring of the elements of `mesh`, in element order: no two elements that share a
/// node get the same colour. Returns each element's colour; the colours are 0, 1, … without gaps.
std::vector<Index> greedy_element_colors(const TetMesh& mesh);

/// det F of every element at `positions` (3·nodes): the volume ratio V_t(x)/V_t(rest),
/// negative for an inverted element. Writes element_count values into `ratios`.
void volume_ratios(const ElasticBody& body, std::span<const double> positions, std::span<double> ratios);

/// max_t |det F_t − 1| at `positions`.
double max_volume_error(const ElasticBody& body, std::span<const double> positions);

}  // namespace cholsim::fem
