#include "fem/materials/hyperelastic.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include "fem/materials/symmetric_eigensystem.hpp"
#include "linalg/svd3.hpp"
#include "solvers/nonlinear/named_choices.hpp"

namespace cholsim::fem {
namespace {

/// Eigenvalues of ∂P/∂F above −kRoundingEigenvalue·(largest |eigenvalue|) are zero to
/// rounding — the rigid rotation modes every isotropic model has at F = R — and the projection
/// leaves them alone, so clamped_eigenvalues counts only real indefiniteness.
constexpr double kRoundingEigenvalue = 1e-12;
/// ∂R/∂F = Σ 2/(σᵢ + σⱼ)·t·tᵀ over the twist modes t; σᵢ + σⱼ ≥ 0 with svd3's signs and
/// vanishes only for a degenerate inverted element, where ∂R/∂F is unbounded. Flooring the
/// denominator keeps the kernels finite there (F is dimensionless, so the floor is absolute).
constexpr double kTwistDenominatorFloor = 1e-8;

/// Every model as a sum of the terms below (their weights from the Lamé parameters); the
/// kernels evaluate the terms, so the models that share one (the ARAP term of both corotated
/// models, the volume term of fixed corotated and stable Neo-Hookean) share its code.
struct EnergyTerms {
  double rotation_weight = 0.0;   ///< w·‖F − R‖²
  double dirichlet_weight = 0.0;  ///< w·(‖F‖² − 3)
  double trace_weight = 0.0;      ///< w/2·(tr(RᵀF) − 3)²
  double volume_stiffness = 0.0;  ///< κ in κ/2·(J − 1)² − β·(J − 1)
  double volume_shift = 0.0;      ///< β: −μ(J − 1) makes stable Neo-Hookean stress free at rest
  linalg::LameParameters stvk;    ///< μ‖E‖² + λ/2·tr(E)²
};

EnergyTerms energy_terms(const HyperelasticMaterial& material) {
  const double lambda = material.lame.lambda, mu = material.lame.mu;
  EnergyTerms terms;
  switch (material.model) {
    case HyperelasticModel::corotated:
      terms.rotation_weight = mu;
      terms.trace_weight = lambda;
      break;
    case HyperelasticModel::fixed_corotated:
      terms.rotation_weight = mu;
      terms.volume_stiffness = lambda;
      break;
    case HyperelasticModel::stvk:
      terms.stvk = material.lame;
      break;
    case HyperelasticModel::stable_neo_hookean:
      terms.dirichlet_weight = 0.5 * mu;
      terms.volume_stiffness = lambda;
      terms.volume_shift = mu;
      break;
  }
  return terms;
}

bool needs_rotation(const EnergyTerms& terms) { return terms.rotation_weight != 0.0 || terms.trace_weight != 0.0; }
bool has_stvk(const EnergyTerms& terms) { return terms.stvk.mu != 0.0 || terms.stvk.lambda != 0.0; }
bool is_anisotropic(const HyperelasticMaterial& material) { return material.fibre_stiffness != 0.0; }

/// F and what the terms need of it, computed once per kernel call.
struct Kinematics {
  Mat3 f;
  double j = 0.0;    ///< det F
  Mat3 cofactor;     ///< ∂J/∂F
  linalg::Svd3 svd;  ///< F = U·Σ·Vᵀ, σ₃ signed; only if computed (kinematics' with_svd)
  Mat3 rotation;     ///< R = U·Vᵀ; likewise
};

/// cof F: columns c₁×c₂, c₂×c₀, c₀×c₁ of F's columns c₀, c₁, c₂.
Mat3 cofactor(const Mat3& f) {
  const Vec3 c0 = f.col(0), c1 = f.col(1), c2 = f.col(2);
  return Mat3::from_columns(cross(c1, c2), cross(c2, c0), cross(c0, c1));
}

Kinematics kinematics(const Mat3& f, bool with_svd) {
  Kinematics k;
  k.f = f;
  k.j = determinant(f);
  k.cofactor = cofactor(f);
  if (with_svd) {
    k.svd = linalg::svd3(f);
    k.rotation = k.svd.u * transpose(k.svd.v);
  }
  return k;
}

/// Σσᵢ − 3 = tr(RᵀF − I), the corotated volume measure.
double trace_strain(const linalg::Svd3& svd) {
  const Vec3 s = svd.singular_values;
  return s.x + s.y + s.z - 3.0;
}

/// The volume term's g(J) = κ/2·(J − 1)² − β·(J − 1) and g'(J).
double volume_energy(const EnergyTerms& terms, double j) {
  return (0.5 * terms.volume_stiffness * (j - 1.0) - terms.volume_shift) * (j - 1.0);
}
double volume_slope(const EnergyTerms& terms, double j) {
  return terms.volume_stiffness * (j - 1.0) - terms.volume_shift;
}

Mat3 green_strain(const Mat3& f) { return 0.5 * (transpose_times(f, f) - Mat3::identity()); }

/// The StVK second Piola–Kirchhoff stress S = 2μE + λ·tr(E)·I.
Mat3 stvk_second_piola(linalg::LameParameters lame, const Mat3& green) {
  return 2.0 * lame.mu * green + (lame.lambda * trace(green)) * Mat3::identity();
}

double isotropic_energy(const EnergyTerms& terms, const Kinematics& k) {
  double psi = terms.dirichlet_weight * (squared_frobenius_norm(k.f) - 3.0) + volume_energy(terms, k.j);
  if (needs_rotation(terms)) {
    // ‖F − R‖² = Σ(σᵢ − 1)² with R = U·Vᵀ.
    const Vec3 s = k.svd.singular_values;
    const double strain = trace_strain(k.svd);
    psi += terms.rotation_weight * squared_norm(s - Vec3{1.0, 1.0, 1.0}) + 0.5 * terms.trace_weight * strain * strain;
  }
  if (has_stvk(terms)) {
    const Mat3 green = green_strain(k.f);
    const double tr = trace(green);
    psi += terms.stvk.mu * squared_frobenius_norm(green) + 0.5 * terms.stvk.lambda * tr * tr;
  }
  return psi;
}

Mat3 isotropic_stress(const EnergyTerms& terms, const Kinematics& k) {
  // ∂J/∂F = cof F, ∂‖F‖²/∂F = 2F, and ∂tr(RᵀF)/∂F = R (R maximizes tr(RᵀF) over SO(3), so
  // R's own variation does not contribute: the envelope theorem).
  Mat3 p = (2.0 * terms.dirichlet_weight) * k.f + volume_slope(terms, k.j) * k.cofactor;
  if (needs_rotation(terms)) {
    p += (2.0 * terms.rotation_weight) * (k.f - k.rotation) + (terms.trace_weight * trace_strain(k.svd)) * k.rotation;
  }
  if (has_stvk(terms)) p += k.f * stvk_second_piola(terms.stvk, green_strain(k.f));
  return p;
}

/// The fibre term Ψ_f = k_f/8·(I₅ − 1)², I₅ = ‖F·a‖² (seed 002 §5.5.1.4).
double fibre_energy(const HyperelasticMaterial& material, const Mat3& f) {
  const double stretch = squared_norm(f * material.fibre_direction) - 1.0;
  return 0.125 * material.fibre_stiffness * stretch * stretch;
}
/// P_f = k_f/2·(I₅ − 1)·F·a·aᵀ.
Mat3 fibre_stress(const HyperelasticMaterial& material, const Mat3& f) {
  const Vec3 fa = f * material.fibre_direction;
  return (0.5 * material.fibre_stiffness * (squared_norm(fa) - 1.0)) * outer(fa, material.fibre_direction);
}

double density(const HyperelasticMaterial& material, const EnergyTerms& terms, const Kinematics& k) {
  double psi = isotropic_energy(terms, k);
  if (is_anisotropic(material)) psi += fibre_energy(material, k.f);
  return psi;
}

Mat3 stress(const HyperelasticMaterial& material, const EnergyTerms& terms, const Kinematics& k) {
  Mat3 p = isotropic_stress(terms, k);
  if (is_anisotropic(material)) p += fibre_stress(material, k.f);
  return p;
}

// ---- ∂P/∂F, entry [9·(3a + b) + 3c + d] = ∂P_ab/∂F_cd -------------------------------------

double& entry(StressDerivative& h, int a, int b, int c, int d) {
  return h[static_cast<std::size_t>(9 * (3 * a + b) + 3 * c + d)];
}

/// h += weight·vec(m)·vec(m)ᵀ.
void add_outer(StressDerivative& h, double weight, const Mat3& m) {
  for (std::size_t r = 0; r < 9; ++r) {
    const double scaled = weight * m.entries[r];
    for (std::size_t c = 0; c < 9; ++c) h[9 * r + c] += scaled * m.entries[c];
  }
}

/// h += weight·I.
void add_identity(StressDerivative& h, double weight) {
  for (std::size_t r = 0; r < 9; ++r) h[9 * r + r] += weight;
}

/// h += weight·∂²J/∂F², where ∂²J/∂F_ab∂F_cd = ε_ace·ε_bdf·F_ef: non-zero only for a ≠ c and
/// b ≠ d, e and f then being the remaining indices.
void add_determinant_hessian(StressDerivative& h, double weight, const Mat3& f) {
  const auto levi_civita = [](int first, int second) { return second == (first + 1) % 3 ? 1.0 : -1.0; };
  for (int a = 0; a < 3; ++a) {
    for (int c = 0; c < 3; ++c) {
      if (c == a) continue;
      const int e = 3 - a - c;
      for (int b = 0; b < 3; ++b) {
        for (int d = 0; d < 3; ++d) {
          if (d == b) continue;
          entry(h, a, b, c, d) += weight * levi_civita(a, c) * levi_civita(b, d) * f(e, 3 - b - d);
        }
      }
    }
  }
}

/// The singular-value pair (i, j), i < j, of twist and flip mode k (k the third index).
struct ModePair {
  int i, j;
};
constexpr std::array<ModePair, 3> kModePairs = {{{1, 2}, {0, 2}, {0, 1}}};
constexpr double kInverseSqrt2 = 1.0 / std::numbers::sqrt2;

/// The twist mode (uᵢvⱼᵀ − uⱼvᵢᵀ)/√2 and the flip mode (uᵢvⱼᵀ + uⱼvᵢᵀ)/√2 of pair k, unit
/// eigenvectors of every isotropic ∂P/∂F (Smith, de Goes, Kim 2019: its T and L matrices).
Mat3 twist_mode(const linalg::Svd3& svd, int k) {
  const auto [i, j] = kModePairs[static_cast<std::size_t>(k)];
  return kInverseSqrt2 * (outer(svd.u.col(i), svd.v.col(j)) - outer(svd.u.col(j), svd.v.col(i)));
}
Mat3 flip_mode(const linalg::Svd3& svd, int k) {
  const auto [i, j] = kModePairs[static_cast<std::size_t>(k)];
  return kInverseSqrt2 * (outer(svd.u.col(i), svd.v.col(j)) + outer(svd.u.col(j), svd.v.col(i)));
}
/// U·diag(z)·Vᵀ, the scaling mode of the unit vector z.
Mat3 scaling_mode(const linalg::Svd3& svd, const Vec3& z) { return svd.u * Mat3::diagonal(z) * transpose(svd.v); }

/// σᵢ + σⱼ of pair k, floored (kTwistDenominatorFloor).
double twist_denominator(const linalg::Svd3& svd, int k) {
  const auto [i, j] = kModePairs[static_cast<std::size_t>(k)];
  return std::max(svd.singular_values[i] + svd.singular_values[j], kTwistDenominatorFloor);
}

/// h += weight·∂R/∂F. Perturbing F = U·Σ·Vᵀ along a twist mode rotates it: dR = 2/(σᵢ + σⱼ)·dF;
/// along flip and scaling modes R does not change (the rotation gradient of Smith et al. 2019).
void add_rotation_derivative(StressDerivative& h, double weight, const linalg::Svd3& svd) {
  for (int k = 0; k < 3; ++k) add_outer(h, weight * 2.0 / twist_denominator(svd, k), twist_mode(svd, k));
}

/// h += weight·(a⊗b + b⊗a) (vec order).
void add_symmetric_outer(StressDerivative& h, double weight, const Mat3& a, const Mat3& b) {
  for (std::size_t r = 0; r < 9; ++r) {
    for (std::size_t c = 0; c < 9; ++c) {
      h[9 * r + c] += weight * (a.entries[r] * b.entries[c] + b.entries[r] * a.entries[c]);
    }
  }
}

/// The StVK pattern h_abcd += δ_ac·s_db + b_ac·δ_bd + μ·(f1_ad·f2_cb + f2_ad·f1_cb). With
/// (S, μ·FFᵀ, μ/2, F, F) it is ∂P/∂F of P = F·S less its λ·F⊗F part; with the rates
/// (Ṡ, μ·(ḞFᵀ + FḞᵀ), μ, Ḟ, F) it is that part's rate.
void add_stvk_pattern(StressDerivative& h, const Mat3& s, const Mat3& b, double mu, const Mat3& f1, const Mat3& f2) {
  for (int row = 0; row < 3; ++row) {
    for (int col = 0; col < 3; ++col) {
      for (int c = 0; c < 3; ++c) {
        for (int d = 0; d < 3; ++d) {
          double value = mu * (f1(row, d) * f2(c, col) + f2(row, d) * f1(c, col));
          if (row == c) value += s(d, col);
          if (col == d) value += b(row, c);
          entry(h, row, col, c, d) += value;
        }
      }
    }
  }
}

/// ∂P_ab/∂F_cd of StVK, P = F·S: δ_ac·S_db + μ(F_ad·F_cb + (FFᵀ)_ac·δ_bd) + λ·F_ab·F_cd.
void add_stvk_stress_derivative(StressDerivative& h, linalg::LameParameters lame, const Mat3& f) {
  add_stvk_pattern(h, stvk_second_piola(lame, green_strain(f)), lame.mu * (f * transpose(f)), 0.5 * lame.mu, f, f);
  add_outer(h, lame.lambda, f);
}

/// The terms without R: Dirichlet, volume and StVK.
void add_polynomial_stress_derivative(StressDerivative& h, const EnergyTerms& terms, const Kinematics& k) {
  add_identity(h, 2.0 * terms.dirichlet_weight);
  // g(J): g''·cof⊗cof + g'·∂²J/∂F².
  add_outer(h, terms.volume_stiffness, k.cofactor);
  add_determinant_hessian(h, volume_slope(terms, k.j), k.f);
  if (has_stvk(terms)) add_stvk_stress_derivative(h, terms.stvk, k.f);
}

/// The terms with R (k must hold the SVD).
void add_rotation_stress_derivative(StressDerivative& h, const EnergyTerms& terms, const Kinematics& k) {
  // 2w(F − R) → 2w(I − ∂R/∂F); w_T·(Σσ − 3)·R → w_T·(R⊗R + (Σσ − 3)·∂R/∂F).
  add_identity(h, 2.0 * terms.rotation_weight);
  add_rotation_derivative(h, terms.trace_weight * trace_strain(k.svd) - 2.0 * terms.rotation_weight, k.svd);
  add_outer(h, terms.trace_weight, k.rotation);
}

void add_isotropic_stress_derivative(StressDerivative& h, const EnergyTerms& terms, const Kinematics& k) {
  add_polynomial_stress_derivative(h, terms, k);
  if (needs_rotation(terms)) add_rotation_stress_derivative(h, terms, k);
}

/// h += weight·I ⊗ a·aᵀ, i.e. h_abcd += weight·δ_ac·a_b·a_d.
void add_fibre_block(StressDerivative& h, double weight, const Vec3& a) {
  for (int row = 0; row < 3; ++row) {
    for (int b = 0; b < 3; ++b) {
      for (int d = 0; d < 3; ++d) entry(h, row, b, row, d) += weight * a[b] * a[d];
    }
  }
}

/// ∂P_f/∂F = k_f/2·(I₅ − 1)·I ⊗ a·aᵀ + k_f·vec(F·a·aᵀ)·vec(F·a·aᵀ)ᵀ.
void add_fibre_stress_derivative(StressDerivative& h, const HyperelasticMaterial& material, const Mat3& f) {
  const Vec3 a = material.fibre_direction;
  const Vec3 fa = f * a;
  add_fibre_block(h, 0.5 * material.fibre_stiffness * (squared_norm(fa) - 1.0), a);
  add_outer(h, material.fibre_stiffness, outer(fa, a));
}

// ---- the rate d/dt ∂P/∂F(F + t·Ḟ) -----------------------------------------------------------

/// d/dt cof(F + t·Ḟ): columns ḟ₁×f₂ + f₁×ḟ₂, ḟ₂×f₀ + f₂×ḟ₀, ḟ₀×f₁ + f₀×ḟ₁.
Mat3 cofactor_rate(const Mat3& f, const Mat3& f_dot) {
  const Vec3 c0 = f.col(0), c1 = f.col(1), c2 = f.col(2);
  const Vec3 d0 = f_dot.col(0), d1 = f_dot.col(1), d2 = f_dot.col(2);
  return Mat3::from_columns(cross(d1, c2) + cross(c1, d2), cross(d2, c0) + cross(c2, d0),
                            cross(d0, c1) + cross(c0, d1));
}

double frobenius_product(const Mat3& a, const Mat3& b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < 9; ++i) sum += a.entries[i] * b.entries[i];
  return sum;
}

/// The rate of the terms without R. The volume term's g‴ = 0 and ∂²J/∂F² is linear in F, so
/// d/dt [κ·cof⊗cof + g'·∂²J/∂F²] = κ(ċof⊗cof + cof⊗ċof) + κ·J̇·∂²J/∂F² + g'·∂²J/∂F²(Ḟ),
/// J̇ = cof:Ḟ; StVK's is the pattern above with the rates Ė = sym(FᵀḞ), Ṡ = 2μĖ + λ·tr(Ė)·I.
void add_polynomial_rate(StressDerivative& rate, const EnergyTerms& terms, const Kinematics& k, const Mat3& f_dot) {
  const double j_dot = frobenius_product(k.cofactor, f_dot);
  add_symmetric_outer(rate, terms.volume_stiffness, cofactor_rate(k.f, f_dot), k.cofactor);
  add_determinant_hessian(rate, terms.volume_stiffness * j_dot, k.f);
  add_determinant_hessian(rate, volume_slope(terms, k.j), f_dot);
  if (has_stvk(terms)) {
    const linalg::LameParameters lame = terms.stvk;
    const Mat3 green_rate = symmetric_part(transpose_times(k.f, f_dot));
    const Mat3 left_cauchy_green_rate = f_dot * transpose(k.f) + k.f * transpose(f_dot);
    add_stvk_pattern(rate, stvk_second_piola(lame, green_rate), lame.mu * left_cauchy_green_rate, lame.mu, f_dot, k.f);
    add_symmetric_outer(rate, lame.lambda, f_dot, k.f);
  }
}

/// d/dt [k_f/2·(I₅ − 1)·I⊗aaᵀ + k_f·m⊗m] = k_f/2·İ₅·I⊗aaᵀ + k_f(ṁ⊗m + m⊗ṁ), m = F·a·aᵀ,
/// ṁ = Ḟ·a·aᵀ, İ₅ = 2(F·a)·(Ḟ·a).
void add_fibre_rate(StressDerivative& rate, const HyperelasticMaterial& material, const Mat3& f, const Mat3& f_dot) {
  const Vec3 a = material.fibre_direction;
  const Vec3 fa = f * a, fa_dot = f_dot * a;
  add_fibre_block(rate, material.fibre_stiffness * dot(fa, fa_dot), a);
  add_symmetric_outer(rate, material.fibre_stiffness, outer(fa_dot, a), outer(fa, a));
}

/// The rate of the R terms, by a central difference along Ḟ (∂R/∂F has no cheap closed-form
/// derivative); step ∛u·max(‖F‖, 1)/‖Ḟ‖, the usual balance of truncation and rounding.
void add_rotation_rate(StressDerivative& rate, const EnergyTerms& terms, const Mat3& f, const Mat3& f_dot) {
  const double step =
      std::cbrt(std::numeric_limits<double>::epsilon()) * std::max(frobenius_norm(f), 1.0) / frobenius_norm(f_dot);
  StressDerivative ahead{}, behind{};
  add_rotation_stress_derivative(ahead, terms, kinematics(f + step * f_dot, true));
  add_rotation_stress_derivative(behind, terms, kinematics(f - step * f_dot, true));
  for (std::size_t i = 0; i < 81; ++i) rate[i] += (ahead[i] - behind[i]) / (2.0 * step);
}

// ---- the definiteness fix ------------------------------------------------------------------

/// The eigenvalues of an isotropic ∂P/∂F in the frame of F's SVD (Smith, de Goes, Kim 2019,
/// "Analytic eigensystems for isotropic distortion energies"): the 3×3 block ∂²Ψ/∂σ²
/// acting on the scaling modes U·diag(z)·Vᵀ, and, for each pair (i, j) with k the third
/// index, the twist eigenvalue (ψᵢ + ψⱼ)/(σᵢ + σⱼ) and the flip eigenvalue
/// (ψᵢ − ψⱼ)/(σᵢ − σⱼ), ψ = ∂Ψ/∂σ — in closed form per term, so repeated singular values
/// need no limit.
struct SingularValueEigensystem {
  Mat3 scaling;  ///< ∂²Ψ/∂σᵢ∂σⱼ
  Vec3 twist;    ///< component k: pair k's twist eigenvalue
  Vec3 flip;
};

void add_volume_eigensystem(SingularValueEigensystem& e, const EnergyTerms& terms, const Vec3& s) {
  const double j = s.x * s.y * s.z;
  const double slope = volume_slope(terms, j);
  for (int k = 0; k < 3; ++k) {
    const auto [a, b] = kModePairs[static_cast<std::size_t>(k)];
    const double cofactor_k = s[a] * s[b];  // ∂J/∂σ_k
    e.scaling(k, k) += terms.volume_stiffness * cofactor_k * cofactor_k;
    e.scaling(a, b) += s[k] * (terms.volume_stiffness * j + slope);  // g''·∂J/∂σₐ·∂J/∂σ_b + g'·σ_k
    e.scaling(b, a) = e.scaling(a, b);
    e.twist[k] += slope * s[k];
    e.flip[k] -= slope * s[k];
  }
}

void add_stvk_eigensystem(SingularValueEigensystem& e, linalg::LameParameters lame, const Vec3& s) {
  const Vec3 green{0.5 * (s.x * s.x - 1.0), 0.5 * (s.y * s.y - 1.0), 0.5 * (s.z * s.z - 1.0)};
  const double tr = green.x + green.y + green.z;
  for (int k = 0; k < 3; ++k) {
    const auto [a, b] = kModePairs[static_cast<std::size_t>(k)];
    e.scaling(k, k) += 2.0 * lame.mu * green[k] + lame.lambda * tr + (2.0 * lame.mu + lame.lambda) * s[k] * s[k];
    e.scaling(a, b) += lame.lambda * s[a] * s[b];
    e.scaling(b, a) = e.scaling(a, b);
    const double squares = s[a] * s[a] + s[b] * s[b] - 1.0;
    e.twist[k] += lame.mu * (squares - s[a] * s[b]) + lame.lambda * tr;
    e.flip[k] += lame.mu * (squares + s[a] * s[b]) + lame.lambda * tr;
  }
}

SingularValueEigensystem isotropic_eigensystem(const EnergyTerms& terms, const linalg::Svd3& svd) {
  const Vec3 s = svd.singular_values;
  SingularValueEigensystem e;
  // ‖F‖² and ‖F − R‖² = Σ(σᵢ − 1)²: 2w on the scaling and flip modes; the twist mode of the
  // latter loses w·4/(σᵢ + σⱼ) (the rotation following F).
  const double diagonal = 2.0 * (terms.dirichlet_weight + terms.rotation_weight);
  e.scaling = diagonal * Mat3::identity();
  e.flip = {diagonal, diagonal, diagonal};
  e.twist = e.flip;
  const double strain = trace_strain(svd);
  for (int k = 0; k < 3; ++k) {
    const double denominator = twist_denominator(svd, k);
    e.twist[k] += (2.0 * terms.trace_weight * strain - 4.0 * terms.rotation_weight) / denominator;
  }
  // w_T/2·(Σσ − 3)²: w_T on every entry of the scaling block.
  for (double& value : e.scaling.entries) value += terms.trace_weight;
  add_volume_eigensystem(e, terms, s);
  if (has_stvk(terms)) add_stvk_eigensystem(e, terms.stvk, s);
  return e;
}

/// Subtracts eigenvalue·mode⊗mode (mode of unit norm) from h when the eigenvalue is negative
/// beyond rounding; returns whether it did.
bool clamp_mode(StressDerivative& h, double eigenvalue, const Mat3& mode, double rounding) {
  if (!(eigenvalue < -rounding)) return false;
  add_outer(h, -eigenvalue, mode);
  return true;
}

/// The analytic definiteness fix of an isotropic ∂P/∂F.
int clamp_isotropic(StressDerivative& h, const EnergyTerms& terms, const linalg::Svd3& svd) {
  const SingularValueEigensystem e = isotropic_eigensystem(terms, svd);
  const SymmetricEigensystem<3> scaling = symmetric_eigensystem<3>(e.scaling.entries);
  double largest = 0.0;
  for (int k = 0; k < 3; ++k) {
    largest = std::max({largest, std::abs(scaling.eigenvalues[static_cast<std::size_t>(k)]), std::abs(e.twist[k]),
                        std::abs(e.flip[k])});
  }
  const double rounding = kRoundingEigenvalue * largest;
  const Mat3 scaling_vectors{scaling.eigenvectors};
  int clamped = 0;
  for (int k = 0; k < 3; ++k) {
    clamped += clamp_mode(h, scaling.eigenvalues[static_cast<std::size_t>(k)],
                          scaling_mode(svd, scaling_vectors.col(k)), rounding);
    clamped += clamp_mode(h, e.twist[k], twist_mode(svd, k), rounding);
    clamped += clamp_mode(h, e.flip[k], flip_mode(svd, k), rounding);
  }
  return clamped;
}

/// The numerical definiteness fix (Jacobi), for the anisotropic models.
int clamp_numerically(StressDerivative& h) {
  const SymmetricEigensystem<9> eigen = symmetric_eigensystem<9>(h);
  double largest = 0.0;
  for (double value : eigen.eigenvalues) largest = std::max(largest, std::abs(value));
  int clamped = 0;
  for (std::size_t m = 0; m < 9; ++m) {
    Mat3 mode;
    for (std::size_t r = 0; r < 9; ++r) mode.entries[r] = eigen.eigenvectors[9 * r + m];
    clamped += clamp_mode(h, eigen.eigenvalues[m], mode, kRoundingEigenvalue * largest);
  }
  return clamped;
}

/// ∂P/∂F is symmetric (a Hessian), but products summed in different orders leave its two
/// triangles ε apart; the averaging makes them one matrix again, whichever triangle a caller reads.
void symmetrize(StressDerivative& h) {
  for (std::size_t r = 0; r < 9; ++r) {
    for (std::size_t c = r + 1; c < 9; ++c) h[9 * r + c] = h[9 * c + r] = 0.5 * (h[9 * r + c] + h[9 * c + r]);
  }
}

/// The SVD where the kernels will need it: for the rotation terms, and for the analytic
/// definiteness fix of an isotropic material.
bool needs_svd(const HyperelasticMaterial& material, const EnergyTerms& terms, bool will_project) {
  return needs_rotation(terms) || (will_project && !is_anisotropic(material));
}

StressDerivativeResult stress_derivative_of(const HyperelasticMaterial& material, const EnergyTerms& terms,
                                            const Kinematics& k, bool project_to_psd) {
  StressDerivativeResult result;
  add_isotropic_stress_derivative(result.dp_df, terms, k);
  if (is_anisotropic(material)) add_fibre_stress_derivative(result.dp_df, material, k.f);
  if (project_to_psd) {
    result.clamped_eigenvalues =
        is_anisotropic(material) ? clamp_numerically(result.dp_df) : clamp_isotropic(result.dp_df, terms, k.svd);
  }
  symmetrize(result.dp_df);
  return result;
}

/// K[(3a+s), (3b+t)] = V·Σ_{c,d} ∂P_sc/∂F_td·g_a[c]·g_b[d] (∂F_sc/∂x_{a,s} = g_a[c]), in two
/// contractions: W[(3s+c), (3b+t)] = Σ_d ∂P_sc/∂F_td·g_b[d], then K = Σ_c g_a[c]·W.
void contract_with_shape_gradients(const StressDerivative& h, const std::array<Vec3, 4>& grads, double volume,
                                   std::array<double, 144>& hessian) {
  std::array<double, 9 * 12> half{};  // W, row-major 9×12
  for (std::size_t row = 0; row < 9; ++row) {
    for (std::size_t b = 0; b < 4; ++b) {
      for (std::size_t t = 0; t < 3; ++t) {
        const double* dp = &h[9 * row + 3 * t];
        half[12 * row + 3 * b + t] = dp[0] * grads[b].x + dp[1] * grads[b].y + dp[2] * grads[b].z;
      }
    }
  }
  for (std::size_t column = 0; column < 12; ++column) {
    for (std::size_t a = 0; a < 4; ++a) {
      for (std::size_t s = 0; s < 3; ++s) {
        const double* w = &half[12 * (3 * s) + column];
        hessian[(3 * a + s) + 12 * column] = volume * (grads[a].x * w[0] + grads[a].y * w[12] + grads[a].z * w[24]);
      }
    }
  }
}

}  // namespace

std::array<double, 144> element_matrix(const StressDerivative& dp_df, const TetRestShape& rest) {
  std::array<double, 144> matrix{};
  contract_with_shape_gradients(dp_df, shape_gradients(rest), rest.rest_volume, matrix);
  return matrix;
}

// The first name of each model is the one model_name gives.
constexpr solvers::NameTable<HyperelasticModel, 5> model_names{{
    {HyperelasticModel::corotated, "corotated"},
    {HyperelasticModel::fixed_corotated, "fixed-corotated"},
    {HyperelasticModel::stvk, "stvk"},
    {HyperelasticModel::stable_neo_hookean, "snh"},
    {HyperelasticModel::stable_neo_hookean, "stable-neo-hookean"},
}};

std::string_view model_name(HyperelasticModel model) { return solvers::choice_name(model_names, model, "model_name"); }

HyperelasticModel parse_model(std::string_view name) {
  return solvers::parse_choice(model_names, name, "hyperelastic model");
}

double energy_density(const HyperelasticMaterial& material, const Mat3& f) {
  const EnergyTerms terms = energy_terms(material);
  return density(material, terms, kinematics(f, needs_rotation(terms)));
}

Mat3 first_piola_stress(const HyperelasticMaterial& material, const Mat3& f) {
  const EnergyTerms terms = energy_terms(material);
  return stress(material, terms, kinematics(f, needs_rotation(terms)));
}

StressDerivativeResult stress_derivative(const HyperelasticMaterial& material, const Mat3& f, bool project_to_psd) {
  const EnergyTerms terms = energy_terms(material);
  return stress_derivative_of(material, terms, kinematics(f, needs_svd(material, terms, project_to_psd)),
                              project_to_psd);
}

StressDerivative stress_derivative_rate(const HyperelasticMaterial& material, const Mat3& f, const Mat3& f_dot) {
  const EnergyTerms terms = energy_terms(material);
  StressDerivative rate{};
  if (squared_frobenius_norm(f_dot) == 0.0) return rate;
  add_polynomial_rate(rate, terms, kinematics(f, false), f_dot);
  if (is_anisotropic(material)) add_fibre_rate(rate, material, f, f_dot);
  if (needs_rotation(terms)) add_rotation_rate(rate, terms, f, f_dot);
  symmetrize(rate);
  return rate;
}

Mat3 deformation_gradient(const TetRestShape& rest, const std::array<Vec3, 4>& x) {
  return Mat3::from_columns(x[1] - x[0], x[2] - x[0], x[3] - x[0]) * rest.rest_shape_inverse;
}

std::array<Vec3, 4> shape_gradients(const TetRestShape& rest) {
  const Mat3& inverse = rest.rest_shape_inverse;
  const Vec3 g1 = inverse.row(0), g2 = inverse.row(1), g3 = inverse.row(2);
  return {-(g1 + g2 + g3), g1, g2, g3};
}

ElementEnergy element_energy(const HyperelasticMaterial& material, const TetRestShape& rest,
                             const std::array<Vec3, 4>& x, ElementTerms terms_wanted, bool project_to_psd) {
  const EnergyTerms terms = energy_terms(material);
  const bool wants_hessian = terms_wanted == ElementTerms::hessian;
  // One SVD serves energy, stress and the definiteness fix.
  const Kinematics k =
      kinematics(deformation_gradient(rest, x), needs_svd(material, terms, wants_hessian && project_to_psd));
  ElementEnergy result;
  result.energy = rest.rest_volume * density(material, terms, k);
  if (terms_wanted == ElementTerms::energy) return result;
  // ∂(VΨ)/∂x_a = V·P·g_a.
  const std::array<Vec3, 4> grads = shape_gradients(rest);
  const Mat3 p = rest.rest_volume * stress(material, terms, k);
  for (std::size_t a = 0; a < 4; ++a) {
    const Vec3 force = p * grads[a];
    result.gradient[3 * a] = force.x;
    result.gradient[3 * a + 1] = force.y;
    result.gradient[3 * a + 2] = force.z;
  }
  if (!wants_hessian) return result;
  const StressDerivativeResult dp_df = stress_derivative_of(material, terms, k, project_to_psd);
  result.clamped_eigenvalues = dp_df.clamped_eigenvalues;
  contract_with_shape_gradients(dp_df.dp_df, grads, rest.rest_volume, result.hessian);
  return result;
}

}  // namespace cholsim::fem
