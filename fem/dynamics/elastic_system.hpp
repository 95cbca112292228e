#pragma once
// A hyperelastic tet-mesh body (or several in one mesh) as a solvers::MechanicalSystem — what
// the implicit integrators and Newton-type solvers of seed 002 ch. 5 / app. C step in time:
//  * per-element materials (fem/materials/hyperelastic.hpp: corotated, fixed corotated, StVK,
//    stable Neo-Hookean, with an optional StVK fibre), lumped masses from per-material density;
//  * gravity;
//  * prescribed nodes moved by scripted rigid motions (the BAR's clamped and driven ends, the
//    ARMADILLO's shaken platform), eliminated from the unknowns: the system's DOFs are the
//    free ones, in node order;
//  * damping frozen over a step (so every solve minimizes a potential): Rayleigh
//    D = α·M + β·∇²V_elastic(x_k), or Green damping, the viscous potential
//    k·V·‖Ė‖², Ė = ½(FᵀḞ + ḞᵀF), with F frozen at the step's start (seed 002 Table 4.1's
//    kind), both positive semi-definite;
//  * contact through an optional fem::ContactPotential (obstacles, body–body), whose Hessian
//    blocks are each vertex's own 3×3 block, inside the mesh's pattern.
// The Hessian pattern is the mesh's node-block pattern restricted to free DOFs, built once.
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fem/elements/elastic_body.hpp"
#include "fem/materials/hyperelastic.hpp"
#include "solvers/integrators/mechanical_system.hpp"

namespace cholsim::fem {

class ContactPotential;

/// A material of the dynamics: elastic constants and density (fem::Material) plus the energy
/// model and the optional fibre.
struct DynamicsMaterial {
  Material elastic;
  HyperelasticModel model = HyperelasticModel::stable_neo_hookean;
  double fibre_stiffness = 0.0;         ///< Pa; 0 = isotropic
  Vec3 fibre_direction{1.0, 0.0, 0.0};  ///< rest coordinates (normalized on use)
};

/// Nodes whose positions are scripted: position(rest position, time).
struct PrescribedMotion {
  std::vector<Index> nodes;
  std::function<Vec3(const Vec3& rest, double time)> position;
};

enum class DampingModel { none, rayleigh, green };

struct DampingOptions {
  DampingModel model = DampingModel::none;
  double mass_coefficient = 0.0;       ///< Rayleigh α, 1/s
  double stiffness_coefficient = 0.0;  ///< Rayleigh β, s; Green: k/μ, s (k = coefficient·μ of each element)
};

struct ElasticSystemOptions {
  Vec3 gravity{0.0, -9.81, 0.0};
  std::vector<PrescribedMotion> prescribed;
  DampingOptions damping;
  /// potential_hessian_rate from the materials' analytic d/dt ∂P/∂F (stress_derivative_rate)
  /// instead of the forward difference of the projected Hessian (seed 002 eq. 5.5–5.7). The
  /// analytic rate is that of the unprojected element Hessians, so the two agree wherever no
  /// eigenvalue is clamped; contact blocks contribute no rate.
  bool analytic_hessian_rate = false;
  int threads = 2;
};

/// What the last evaluation saw (for the per-frame report and the .vtu output).
struct ElasticSystemStatistics {
  Index clamped_elements = 0;   ///< elements whose ∂P/∂F had a negative eigenvalue clamped (last Hessian)
  Index inverted_elements = 0;  ///< det F ≤ 0 (last Hessian)
};

class ElasticSystem final : public solvers::MechanicalSystem {
 public:
  /// `materials[element_material[e]]` is element e's. Validates the mesh (naming `source`)
  /// and the materials (E > 0, ν in (−1, ½), ρ > 0, fibre stiffness ≥ 0, a nonzero fibre
  /// direction), the prescribed nodes (in range, no node in two motions) and the damping
  /// coefficients (≥ 0); std::invalid_argument otherwise. At least one node must be free.
  ElasticSystem(TetMesh rest, std::vector<DynamicsMaterial> materials, std::vector<Index> element_material,
                ElasticSystemOptions options, std::string_view source = "mesh");
  ~ElasticSystem() override;
  ElasticSystem(ElasticSystem&&) noexcept;
  ElasticSystem& operator=(ElasticSystem&&) noexcept;

  /// Adds contact (the potential must have been built on this system's rest mesh).
  void set_contact(std::unique_ptr<ContactPotential> contact);
  [[nodiscard]] const ContactPotential* contact() const;

  // solvers::MechanicalSystem
  [[nodiscard]] Index size() const override;
  [[nodiscard]] std::span<const double> masses() const override;
  void set_time(double time) override;
  void begin_solve(std::span<const double> x, std::span<const double> velocity, double time_step) override;
  double potential(std::span<const double> x) override;
  void potential_gradient(std::span<const double> x, std::span<double> gradient) override;
  [[nodiscard]] const linalg::SymmetricCscMatrix& pattern() const override;
  void potential_hessian(std::span<const double> x, linalg::SymmetricCscMatrix& hessian) override;
  bool damping_matrix(std::span<const double> x, std::span<const double> velocity,
                      linalg::SymmetricCscMatrix& damping) override;
  /// The forward difference (MechanicalSystem's default), or with analytic_hessian_rate the
  /// analytic rate; prescribed nodes do not move (x + t·v moves the free DOFs only).
  void potential_hessian_rate(std::span<const double> x, std::span<const double> velocity,
                              linalg::SymmetricCscMatrix& rate) override;
  /// The blocks are the elements' (stiffness_scale·∇²V_e + damping_scale·D_e, 12×12) and each
  /// contact vertex's (3×3); a block is taken anew when ‖new − taken‖_F > tolerance·‖taken‖_F.
  bool selective_potential_hessian(std::span<const double> x, double stiffness_scale, double damping_scale,
                                   double tolerance, linalg::SymmetricCscMatrix& hessian,
                                   linalg::SymmetricCscMatrix& factored, std::vector<Index>& changed_dofs) override;
  void reset_selective_hessian() override;

  /// The free DOFs of a full position array (3 per node) and back: full_positions fills the
  /// prescribed nodes at the current time.
  [[nodiscard]] std::vector<double> free_values(std::span<const double> full) const;
  void full_positions(std::span<const double> x, std::span<double> full) const;
  /// Full velocities: free ones from `velocity`, prescribed ones by differencing their motion.
  void full_velocities(std::span<const double> velocity, std::span<double> full) const;

  /// Per element: energy density Ψ(F) at the full positions (for the .vtu output).
  [[nodiscard]] std::vector<double> energy_densities(std::span<const double> full_positions) const;
  /// Per element: how many eigenvalues of ∂P/∂F the last Hessian pass clamped to zero.
  [[nodiscard]] std::span<const unsigned char> clamped_eigenvalues() const;
  /// Elastic, gravity and kinetic energy parts at a state (kinetic from free velocities).
  struct EnergyParts {
    double elastic = 0.0, gravity = 0.0, kinetic = 0.0, contact = 0.0;
  };
  [[nodiscard]] EnergyParts energy_parts(std::span<const double> x, std::span<const double> velocity);

  [[nodiscard]] const ElasticBody& body() const;
  [[nodiscard]] double time() const;
  [[nodiscard]] Index free_node_count() const;
  [[nodiscard]] const ElasticSystemStatistics& statistics() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cholsim::fem
