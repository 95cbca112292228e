// The hyperelastic kernels (fem/materials/hyperelastic), every model with and without the
// fibre term: the rest state is stress free, P is the gradient of Ψ and ∂P/∂F the derivative
// of P (central differences on rotated, stretched, compressed, near-inverted and inverted F),
// the definiteness fix gives a positive semidefinite matrix that equals the numerical
// projection and leaves definite matrices alone, and the element kernel's gradient and
// Hessian are the derivatives of its energy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "fem/materials/hyperelastic.hpp"
#include "fem/materials/symmetric_eigensystem.hpp"
#include "linalg/polar_decomposition.hpp"

namespace cholsim::fem {
namespace {

const linalg::LameParameters kLame{3.0e5, 1.5e5};  // λ, μ
constexpr double kFibreStiffness = 2.0e5;

/// A deformation gradient and what it is.
struct Sample {
  std::string label;
  Mat3 f;
};

Mat3 random_rotation_matrix(std::mt19937_64& rng) {
  return linalg::to_rotation_matrix(linalg::random_rotation(rng, std::numbers::pi));
}

/// U·diag(σ)·Vᵀ with random rotations U, V: F with prescribed (signed) singular values.
Mat3 with_singular_values(std::mt19937_64& rng, const Vec3& sigma) {
  return random_rotation_matrix(rng) * Mat3::diagonal(sigma) * transpose(random_rotation_matrix(rng));
}

std::vector<Sample> samples() {
  std::mt19937_64 rng(17);
  linalg::NearRotationSampling sampling;
  sampling.max_rotation_degrees = 90.0;
  std::vector<Sample> result;
  result.push_back({"near rotation", linalg::random_near_rotation(rng, sampling)});
  result.push_back({"near rotation", linalg::random_near_rotation(rng, sampling)});
  result.push_back({"mild tension", with_singular_values(rng, {1.12, 1.1, 1.08})});
  result.push_back({"stretched", with_singular_values(rng, {1.5, 1.3, 1.15})});
  result.push_back({"compressed", with_singular_values(rng, {0.7, 0.6, 0.5})});
  result.push_back({"near-inverted (J = 0.05)", with_singular_values(rng, {1.0, 0.5, 0.1})});
  result.push_back({"inverted (J < 0)", with_singular_values(rng, {1.1, 0.8, -0.4})});
  return result;
}

double squared_distance(const Mat3& a, const Mat3& b) { return squared_frobenius_norm(a - b); }

/// One element: its rest shape and deformed vertex positions.
struct ElementCase {
  TetRestShape rest;
  std::array<Vec3, 4> x;
};

class Hyperelastic : public ::testing::TestWithParam<std::tuple<HyperelasticModel, bool>> {
 protected:
  [[nodiscard]] static HyperelasticMaterial material() {
    HyperelasticMaterial m;
    m.model = std::get<0>(GetParam());
    m.lame = kLame;
    if (std::get<1>(GetParam())) {
      m.fibre_stiffness = kFibreStiffness;
      m.fibre_direction = normalized(Vec3{1.0, 2.0, -1.0});
    }
    return m;
  }
  /// The stiffness scale the tolerances are relative to.
  [[nodiscard]] static double stiffness() { return kLame.lambda + kLame.mu + material().fibre_stiffness; }
  /// An element's gradient and Hessian scales: V·stiffness·‖g‖ and V·stiffness·‖g‖², the shape
  /// gradients g measured by ‖Dₘ⁻¹‖.
  [[nodiscard]] static double gradient_scale(const ElementCase& c) {
    return c.rest.rest_volume * stiffness() * frobenius_norm(c.rest.rest_shape_inverse);
  }
  [[nodiscard]] static double hessian_scale(const ElementCase& c) {
    return gradient_scale(c) * frobenius_norm(c.rest.rest_shape_inverse);
  }
};

TEST_P(Hyperelastic, RestAndRotationsAreEnergyAndStressFree) {
  std::mt19937_64 rng(3);
  std::vector<Mat3> rigid = {Mat3::identity()};
  for (int k = 0; k < 3; ++k) rigid.push_back(random_rotation_matrix(rng));
  for (const Mat3& r : rigid) {
    // The fibre term too: ‖R·a‖ = ‖a‖ = 1.
    EXPECT_NEAR(energy_density(material(), r), 0.0, 1e-12 * stiffness());
    EXPECT_LE(frobenius_norm(first_piola_stress(material(), r)), 1e-10 * stiffness());
  }
}

TEST_P(Hyperelastic, StressIsTheEnergyGradient) {
  for (const Sample& sample : samples()) {
    const Mat3 p = first_piola_stress(material(), sample.f);
    for (std::size_t k = 0; k < 9; ++k) {
      const double h = 1e-6;
      Mat3 plus = sample.f, minus = sample.f;
      plus.entries[k] += h;
      minus.entries[k] -= h;
      const double numeric = (energy_density(material(), plus) - energy_density(material(), minus)) / (2.0 * h);
      EXPECT_NEAR(p.entries[k], numeric, 1e-7 * stiffness()) << sample.label << ", entry " << k;
    }
  }
}

TEST_P(Hyperelastic, StressDerivativeIsSymmetricAndMatchesFiniteDifferences) {
  for (const Sample& sample : samples()) {
    const StressDerivativeResult exact = stress_derivative(material(), sample.f, false);
    EXPECT_EQ(exact.clamped_eigenvalues, 0);
    for (std::size_t k = 0; k < 9; ++k) {
      const double h = 1e-6;
      Mat3 plus = sample.f, minus = sample.f;
      plus.entries[k] += h;
      minus.entries[k] -= h;
      const Mat3 dp =
          (1.0 / (2.0 * h)) * (first_piola_stress(material(), plus) - first_piola_stress(material(), minus));
      for (std::size_t m = 0; m < 9; ++m) {
        EXPECT_NEAR(exact.dp_df[9 * m + k], dp.entries[m], 1e-6 * stiffness()) << sample.label << ", " << m << "," << k;
        EXPECT_EQ(exact.dp_df[9 * m + k], exact.dp_df[9 * k + m]);
      }
    }
  }
}

TEST_P(Hyperelastic, StressDerivativeRateMatchesFiniteDifferences) {
  std::mt19937_64 rng(23);
  std::normal_distribution<double> normal(0.0, 0.5);
  for (const Sample& sample : samples()) {
    Mat3 f_dot;
    for (double& e : f_dot.entries) e = normal(rng);
    const StressDerivative rate = stress_derivative_rate(material(), sample.f, f_dot);
    const double h = 1e-6;
    const StressDerivative plus = stress_derivative(material(), sample.f + h * f_dot, false).dp_df;
    const StressDerivative minus = stress_derivative(material(), sample.f - h * f_dot, false).dp_df;
    for (std::size_t i = 0; i < 81; ++i) {
      EXPECT_NEAR(rate[i], (plus[i] - minus[i]) / (2.0 * h), 1e-6 * stiffness() * frobenius_norm(f_dot))
          << sample.label << ", entry " << i;
    }
  }
  const StressDerivative at_rest = stress_derivative_rate(material(), samples().front().f, Mat3::zero());
  EXPECT_EQ(*std::max_element(at_rest.begin(), at_rest.end()), 0.0);
  EXPECT_EQ(*std::min_element(at_rest.begin(), at_rest.end()), 0.0);
}

double smallest_eigenvalue(const StressDerivative& h) {
  const SymmetricEigensystem<9> eigen = symmetric_eigensystem<9>(h);
  return *std::min_element(eigen.eigenvalues.begin(), eigen.eigenvalues.end());
}

/// Q·max(Λ, 0)·Qᵀ from the Jacobi eigensystem: the reference projection.
StressDerivative numerical_projection(const StressDerivative& h) {
  const SymmetricEigensystem<9> eigen = symmetric_eigensystem<9>(h);
  StressDerivative projected{};
  for (std::size_t i = 0; i < 9; ++i) {
    for (std::size_t j = 0; j < 9; ++j) {
      for (std::size_t m = 0; m < 9; ++m) {
        projected[9 * i + j] +=
            eigen.eigenvectors[9 * i + m] * std::max(eigen.eigenvalues[m], 0.0) * eigen.eigenvectors[9 * j + m];
      }
    }
  }
  return projected;
}

TEST_P(Hyperelastic, DefinitenessFixIsTheProjectionOntoThePositiveSemidefiniteCone) {
  int definite = 0, indefinite = 0;
  for (const Sample& sample : samples()) {
    const StressDerivativeResult raw = stress_derivative(material(), sample.f, false);
    const StressDerivativeResult fixed = stress_derivative(material(), sample.f, true);
    const double raw_smallest = smallest_eigenvalue(raw.dp_df);
    EXPECT_GE(smallest_eigenvalue(fixed.dp_df), -1e-9 * stiffness()) << sample.label;
    // Equal to the reference projection (the analytic eigensystem for isotropic models).
    const StressDerivative reference = numerical_projection(raw.dp_df);
    for (std::size_t i = 0; i < 81; ++i) EXPECT_NEAR(fixed.dp_df[i], reference[i], 1e-8 * stiffness()) << sample.label;
    if (raw_smallest >= 0.0) {
      ++definite;
      EXPECT_EQ(fixed.clamped_eigenvalues, 0) << sample.label;
      EXPECT_EQ(fixed.dp_df, raw.dp_df) << sample.label;
    } else if (raw_smallest < -1e-6 * stiffness()) {
      ++indefinite;
      EXPECT_GE(fixed.clamped_eigenvalues, 1) << sample.label;
    }
  }
  // The samples exercise both branches.
  EXPECT_GE(definite, 1);
  EXPECT_GE(indefinite, 1);
}

/// A regular tetrahedron with jittered vertices, deformed by X ↦ A·X + t and jittered again.
ElementCase element_case(std::mt19937_64& rng, const Mat3& deformation) {
  std::uniform_real_distribution<double> jitter(-0.02, 0.02);
  std::array<Vec3, 4> rest = {Vec3{1.0, 1.0, 1.0}, Vec3{-1.0, 1.0, -1.0}, Vec3{1.0, -1.0, -1.0},
                              Vec3{-1.0, -1.0, 1.0}};  // positively oriented
  for (Vec3& p : rest) p = 0.1 * p + Vec3{jitter(rng), jitter(rng), jitter(rng)};
  const Mat3 rest_shape = Mat3::from_columns(rest[1] - rest[0], rest[2] - rest[0], rest[3] - rest[0]);
  ElementCase c;
  c.rest = {linalg::inverse(rest_shape), determinant(rest_shape) / 6.0};
  for (std::size_t a = 0; a < 4; ++a) {
    c.x[a] = deformation * rest[a] + Vec3{0.3, -0.2, 0.5} + 0.05 * Vec3{jitter(rng), jitter(rng), jitter(rng)};
  }
  return c;
}

/// The element kernel with dof `dof` moved by `offset` (energy and gradient).
ElementEnergy element_energy_moved(const HyperelasticMaterial& material, const ElementCase& c, std::size_t dof,
                                   double offset) {
  std::array<Vec3, 4> x = c.x;
  x[dof / 3][static_cast<int>(dof % 3)] += offset;
  return element_energy(material, c.rest, x, ElementTerms::gradient);
}

TEST_P(Hyperelastic, ElementGradientAndHessianAreDerivativesOfTheElementEnergy) {
  std::mt19937_64 rng(11);
  for (const Sample& sample : samples()) {
    const ElementCase c = element_case(rng, sample.f);
    const ElementEnergy exact = element_energy(material(), c.rest, c.x, ElementTerms::hessian, false);
    const double f_energy = energy_density(material(), deformation_gradient(c.rest, c.x));
    EXPECT_NEAR(exact.energy, c.rest.rest_volume * f_energy, 1e-12 * std::abs(exact.energy) + 1e-300);
    const double h = 1e-6;  // positions are ≈ 0.1
    for (std::size_t i = 0; i < 12; ++i) {
      const ElementEnergy plus = element_energy_moved(material(), c, i, h);
      const ElementEnergy minus = element_energy_moved(material(), c, i, -h);
      EXPECT_NEAR(exact.gradient[i], (plus.energy - minus.energy) / (2.0 * h), 1e-7 * gradient_scale(c))
          << sample.label << ", dof " << i;
      for (std::size_t j = 0; j < 12; ++j) {
        EXPECT_NEAR(exact.hessian[j + 12 * i], (plus.gradient[j] - minus.gradient[j]) / (2.0 * h),
                    1e-7 * hessian_scale(c))
            << sample.label << ", " << j << "," << i;
      }
    }
  }
}

TEST_P(Hyperelastic, ElementGradientIsTranslationInvariantAndProjectedHessianIsPositiveSemidefinite) {
  std::mt19937_64 rng(13);
  for (const Sample& sample : samples()) {
    const ElementCase c = element_case(rng, sample.f);
    const ElementEnergy fixed = element_energy(material(), c.rest, c.x, ElementTerms::hessian, true);
    for (std::size_t component = 0; component < 3; ++component) {
      double net_force = 0.0;
      for (std::size_t a = 0; a < 4; ++a) net_force += fixed.gradient[3 * a + component];
      EXPECT_NEAR(net_force, 0.0, 1e-12 * gradient_scale(c)) << sample.label;
    }
    const SymmetricEigensystem<12> eigen = symmetric_eigensystem<12>(fixed.hessian);
    EXPECT_GE(*std::min_element(eigen.eigenvalues.begin(), eigen.eigenvalues.end()), -1e-9 * hessian_scale(c))
        << sample.label;
    EXPECT_EQ(fixed.clamped_eigenvalues,
              stress_derivative(material(), deformation_gradient(c.rest, c.x), true).clamped_eigenvalues);
  }
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<HyperelasticModel, bool>>& info) {
  std::string name(model_name(std::get<0>(info.param)));
  std::replace(name.begin(), name.end(), '-', '_');
  return name + (std::get<1>(info.param) ? "_with_fibre" : "");
}

INSTANTIATE_TEST_SUITE_P(
    Models, Hyperelastic,
    ::testing::Combine(::testing::Values(HyperelasticModel::corotated, HyperelasticModel::fixed_corotated,
                                         HyperelasticModel::stvk, HyperelasticModel::stable_neo_hookean),
                       ::testing::Bool()),
    case_name);

TEST(HyperelasticElement, DeformationGradientAndShapeGradientsOfAnAffineMap) {
  std::mt19937_64 rng(5);
  const Mat3 a = with_singular_values(rng, {1.3, 0.9, -0.4});
  const ElementCase c = element_case(rng, Mat3::identity());
  std::array<Vec3, 4> x;
  const Mat3 rest_shape = linalg::inverse(c.rest.rest_shape_inverse);
  const std::array<Vec3, 4> rest = {Vec3{}, rest_shape.col(0), rest_shape.col(1), rest_shape.col(2)};
  for (std::size_t k = 0; k < 4; ++k) x[k] = a * rest[k] + Vec3{1.0, 2.0, 3.0};
  EXPECT_LE(squared_distance(deformation_gradient(c.rest, x), a), 1e-24);
  // F = Σₐ xₐ·gₐᵀ, and Σₐ gₐ = 0 (a translation does not deform).
  const std::array<Vec3, 4> g = shape_gradients(c.rest);
  Mat3 from_gradients;
  for (std::size_t k = 0; k < 4; ++k) from_gradients += outer(x[k], g[k]);
  EXPECT_LE(squared_distance(from_gradients, a), 1e-24);
  EXPECT_LE(norm(g[0] + g[1] + g[2] + g[3]), 1e-12 * norm(g[0]));
}

TEST(HyperelasticModelNames, RoundTripAndErrors) {
  for (HyperelasticModel model : {HyperelasticModel::corotated, HyperelasticModel::fixed_corotated,
                                  HyperelasticModel::stvk, HyperelasticModel::stable_neo_hookean}) {
    EXPECT_EQ(parse_model(model_name(model)), model);
  }
  EXPECT_EQ(parse_model("Stable-Neo-Hookean"), HyperelasticModel::stable_neo_hookean);
  EXPECT_EQ(parse_model("SNH"), HyperelasticModel::stable_neo_hookean);
  EXPECT_EQ(parse_model("StVK"), HyperelasticModel::stvk);
  try {
    (void)parse_model("neo-hookean");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("neo-hookean"), std::string::npos) << message;
    EXPECT_NE(message.find("fixed-corotated"), std::string::npos) << message;
    EXPECT_NE(message.find("stable-neo-hookean"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace cholsim::fem
