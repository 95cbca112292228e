#pragma once
// Hyperelastic energy densities Ψ(F) for linear tetrahedra, with the first Piola–Kirchhoff
// stress P = ∂Ψ/∂F and its derivative ∂P/∂F, optionally projected to positive semi-definite
// (per-element definiteness fix, so a Newton direction assembled from them is a descent
// direction) — the materials of seed 002 §5.5 (Table 5.2) and the element kernels the
// nonlinear dynamics (fem/dynamics/) assembles:
//   corotated          Ψ = μ‖F − R‖² + λ/2·tr(RᵀF − I)²           (McAdams et al. 2011)
//   fixed corotated    Ψ = μ‖F − R‖² + λ/2·(J − 1)²               (Stomakhin et al. 2012)
//   StVK               Ψ = μ‖E‖² + λ/2·tr(E)²,  E = ½(FᵀF − I)
//   stable Neo-Hookean Ψ = μ/2·(I_C − 3) − μ(J − 1) + λ/2·(J − 1)²  (Smith et al. 2018,
//                                                 the rest-stable form of Kim & Eberle 2020)
//   + an anisotropic StVK fibre term on any of them (seed 002 §5.5.1.4):
//                      Ψ_f = k_f/2·(‖F·a‖² − 1)²/4, a the unit rest fibre direction.
// R is the polar rotation of F from the inversion-safe SVD (det R = +1), J = det F,
// I_C = ‖F‖²_F. ∂P/∂F is a 9×9 matrix, entry [9·m + k] = ∂P_m/∂F_k, m, k in Mat3::entries
// order (row-major).
#include <array>
#include <string_view>

#include "linalg/linear_tetrahedron.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

using linalg::Mat3;
using linalg::Vec3;

/// ∂P/∂F as a 9×9 row-major matrix (see above).
using StressDerivative = std::array<double, 81>;

enum class HyperelasticModel { corotated, fixed_corotated, stvk, stable_neo_hookean };

/// "corotated", "fixed-corotated", "stvk", "snh".
std::string_view model_name(HyperelasticModel model);
/// The inverse of model_name (case-insensitive; "stable-neo-hookean" too); throws
/// std::invalid_argument listing the accepted names.
HyperelasticModel parse_model(std::string_view name);

/// One element's material.
struct HyperelasticMaterial {
  HyperelasticModel model = HyperelasticModel::stable_neo_hookean;
  linalg::LameParameters lame;   ///< λ, μ
  double fibre_stiffness = 0.0;  ///< k_f ≥ 0, Pa; 0 = isotropic
  Vec3 fibre_direction{1.0, 0.0, 0.0};  ///< a, unit, in rest coordinates
};

/// Ψ(F).
double energy_density(const HyperelasticMaterial& material, const Mat3& f);
/// P(F) = ∂Ψ/∂F.
Mat3 first_piola_stress(const HyperelasticMaterial& material, const Mat3& f);

struct StressDerivativeResult {
  StressDerivative dp_df{};
  int clamped_eigenvalues = 0;  ///< negative eigenvalues set to zero by the projection
};
/// ∂P/∂F, symmetric; with project_to_psd its negative eigenvalues are clamped to zero
/// (analytic eigensystems where the model has them, a 9×9 symmetric eigensolver otherwise).
StressDerivativeResult stress_derivative(const HyperelasticMaterial& material, const Mat3& f, bool project_to_psd);
/// d/dt ∂P/∂F(F + t·Ḟ) at t = 0, unprojected and symmetric: the rate of the element Hessian
/// along a deformation rate (what MechanicalSystem::potential_hessian_rate assembles). Analytic
/// for the terms polynomial in F (StVK, stable Neo-Hookean, the volume and fibre terms); the
/// R-dependent terms of the two corotated models by a central difference along Ḟ. Ḟ = 0 gives 0.
StressDerivative stress_derivative_rate(const HyperelasticMaterial& material, const Mat3& f, const Mat3& f_dot);

/// A linear tetrahedron's rest data, as in ElasticBody: Dₘ⁻¹ and the rest volume V.
struct TetRestShape {
  Mat3 rest_shape_inverse;
  double rest_volume = 0.0;
};

/// The element's energy V·Ψ(F), its gradient (12 values, dof 3·vertex + component) and
/// Hessian (12×12 column-major, the same dof order), F = Dₛ·Dₘ⁻¹ from the four vertex
/// positions `x`.
struct ElementEnergy {
  double energy = 0.0;
  std::array<double, 12> gradient{};
  std::array<double, 144> hessian{};
  int clamped_eigenvalues = 0;
};
enum class ElementTerms { energy, gradient, hessian };  ///< each includes the ones before
ElementEnergy element_energy(const HyperelasticMaterial& material, const TetRestShape& rest,
                             const std::array<Vec3, 4>& x, ElementTerms terms, bool project_to_psd = true);

/// The 12×12 element matrix V·Gᵀ·(∂P/∂F)·G of a 9×9 stress derivative (or of its rate):
/// entry [(3a+s) + 12·(3b+t)] = V·Σ_{c,d} ∂P_sc/∂F_td·g_a[c]·g_b[d], g the shape gradients.
std::array<double, 144> element_matrix(const StressDerivative& dp_df, const TetRestShape& rest);

/// The deformation gradient F = Dₛ·Dₘ⁻¹ of vertex positions `x`.
Mat3 deformation_gradient(const TetRestShape& rest, const std::array<Vec3, 4>& x);
/// The shape-function gradients g₀..g₃ (rows of Dₘ⁻¹, g₀ = −(g₁ + g₂ + g₃)): F = Σₐ xₐ·gₐᵀ.
std::array<Vec3, 4> shape_gradients(const TetRestShape& rest);

}  // namespace cholsim::fem
