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
// projected eight at a time in SIMD lanes; sharing no node, they do not see each other, so this
// is the sequential update of each. Threads split each colour and finish it before the
// next (fem/opsplit_color_loops). Eq. 15 is evaluated with the stiffness α⁻¹ = λVΔt² in place
// of the compliance α: finite also for λ = 0 (ν = 0), where the constraint then never moves a
// node (α = ∞ would give ∞/∞).
#include <array>
#include <span>
#include <vector>

#include "fem/elements/elastic_body.hpp"

namespace cholsim::fem {

class VolumeConstraints {
 public:
  VolumeConstraints() = default;
  /// Constraints of every element of `body` for time step Δt > 0 (std::invalid_argument
  /// otherwise).
  VolumeConstraints(const ElasticBody& body, double time_step);

  /// Runs `iterations` Gauss–Seidel sweeps over all constraints on `positions` (3·nodes),
  /// moving node v by w_v·∇C·Δκ (eq. 16) with inverse mass w_v = inverse_masses[v] (0 keeps a
  /// node fixed). Multipliers start at 0. `threads` ≥ 1 splits each colour. Throws
  /// std::invalid_argument on size mismatches.
  void project(std::span<double> positions, std::span<const double> inverse_masses, int iterations,
               int threads = 1);

  [[nodiscard]] Index size() const { return static_cast<Index>(nodes_.size() / 4); }
  [[nodiscard]] Index color_count() const { return static_cast<Index>(color_begin_.size()) - 1; }

 private:
  void project_range(std::span<double> positions, Index begin, Index end);
  /// Keeps `inverse_masses` and each constraint's four (constraint_inverse_masses_).
  void set_inverse_masses(std::span<const double> inverse_masses);

  Index node_count_ = 0;
  // Structure of arrays in colour order: constraint c acts on nodes_[4c..4c+4).
  std::vector<Index> nodes_;
  // Per constraint, with kLanes zero entries past the end (whole vectors for the last block).
  std::array<std::vector<double>, 4> constraint_inverse_masses_;  ///< of its four nodes
  std::vector<double> inverse_six_volume_;  ///< 1/(6V_t)
  std::vector<double> stiffness_;           ///< α_t⁻¹ = λ_t V_t Δt² (eq. 13)
  std::vector<double> multipliers_;         ///< κ_t of the current sweep set
  std::vector<Index> color_begin_{0};
  /// The inverse masses constraint_inverse_masses_ was made from: rebuilt when a call passes
  /// others (a simulation passes the same every step).
  std::vector<double> inverse_masses_;       ///< constraints of colour k at [color_begin_[k], color_begin_[k+1])
};

/// Greedy colouring of the elements of `mesh`, in element order: no two elements that share a
/// node get the same colour. Returns each element's colour; the colours are 0, 1, … without gaps.
std::vector<Index> greedy_element_colors(const TetMesh& mesh);

/// det F of every element at `positions` (3·nodes): the volume ratio V_t(x)/V_t(rest),
/// negative for an inverted element. Writes element_count values into `ratios`.
void volume_ratios(const ElasticBody& body, std::span<const double> positions, std::span<double> ratios);

/// max_t |det F_t − 1| at `positions`.
double max_volume_error(const ElasticBody& body, std::span<const double> positions);

}  // namespace cholsim::fem
