// CONJAC (seed 002 ch. 4, fem/conjac/): the condensation Jacobian from the partial
// factorization against the dense −K_qq⁻¹K_qd, JᵀHJ against S, every DOF dynamic against
// the full model, and the static state CONJAC settles to against the full model's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "fem/conjac/adaptive_conjac.hpp"
#include "fem/conjac/conjac_stepper.hpp"
#include "fem/conjac/dynamic_nodes.hpp"
#include "fem/dynamics/dynamics_scenes.hpp"
#include "fem/dynamics/elastic_system.hpp"
#include "linalg/blas.hpp"
#include "linalg/vector_norms.hpp"

namespace cholsim::fem {
namespace {

using linalg::max_abs;
using linalg::max_abs_difference;

// A cantilever: the thesis' BAR clamped at x = 0, the far end free, under gravity.
std::unique_ptr<ElasticSystem> cantilever(double resolution, bool heterogeneous = false) {
  DynamicsSceneOptions options;
  options.kind = DynamicsSceneKind::bar;
  options.resolution = resolution;
  options.heterogeneous = heterogeneous;
  options.youngs_modulus = 2e5;
  DynamicsScene scene = make_dynamics_scene(options);
  scene.system.prescribed.resize(1);  // the clamped end only
  scene.system.gravity = {0.0, -9.81, 0.0};
  return make_scene_system(scene);
}

std::vector<Index> dynamic_dofs_along_axis(const ElasticSystem& system, int count) {
  std::vector<Vec3> points;
  for (int i = 1; i <= count; ++i) points.push_back({0.44 * i / count, 0.07, 0.07});
  return free_dofs_of_nodes(system, nodes_nearest(system.body().rest, points));
}

TEST(Conjac, JacobianEqualsTheDenseCondensationAndJtHJEqualsS) {
  auto system = cantilever(0.12);
  const std::vector<double> x = system->free_values(system->body().rest.positions);
  const std::vector<Index> dynamic = dynamic_dofs_along_axis(*system, 2);
  ConjacStepper conjac(*system, dynamic, {});
  const auto condensation = conjac.condensation(x);

  linalg::SymmetricCscMatrix hessian = system->pattern();
  system->potential_hessian(x, hessian);
  const linalg::DenseMatrix h = linalg::to_dense(hessian);
  const Index n = h.rows();
  const auto nd = static_cast<Index>(dynamic.size());
  std::vector<char> is_dynamic(static_cast<std::size_t>(n), 0);
  for (Index d : dynamic) is_dynamic[d] = 1;
  std::vector<Index> quasistatic;
  for (Index i = 0; i < n; ++i) {
    if (!is_dynamic[i]) quasistatic.push_back(i);
  }
  const auto nq = static_cast<Index>(quasistatic.size());
  // Dense J_qd = −H_qq⁻¹H_qd by LAPACK.
  linalg::DenseMatrix hqq(nq, nq);
  linalg::DenseMatrix hqd(nq, nd);
  for (Index a = 0; a < nq; ++a) {
    for (Index b = 0; b < nq; ++b) hqq(a, b) = h(quasistatic[a], quasistatic[b]);
    for (Index b = 0; b < nd; ++b) hqd(a, b) = -h(quasistatic[a], dynamic[b]);
  }
  ASSERT_EQ(linalg::blas::potrf(hqq.view()), 0);
  linalg::blas::potrs(hqq.view(), hqd.view());
  double difference = 0.0;
  for (Index a = 0; a < nq; ++a) {
    for (Index b = 0; b < nd; ++b) difference = std::max(difference, std::abs(hqd(a, b) - condensation.jacobian(quasistatic[a], b)));
  }
  EXPECT_LE(difference, 1e-10 * std::max(1.0, max_abs(hqd.storage())));
  for (Index a = 0; a < nd; ++a) {
    for (Index b = 0; b < nd; ++b) EXPECT_EQ(condensation.jacobian(dynamic[a], b), a == b ? 1.0 : 0.0);
  }
  // JᵀHJ = S.
  linalg::DenseMatrix hj(n, nd);
  linalg::blas::gemm(linalg::blas::Transpose::no, linalg::blas::Transpose::no, 1.0, h.view(), condensation.jacobian.view(),
                     0.0, hj.view());
  linalg::DenseMatrix jthj(nd, nd);
  linalg::blas::gemm(linalg::blas::Transpose::yes, linalg::blas::Transpose::no, 1.0, condensation.jacobian.view(),
                     hj.view(), 0.0, jthj.view());
  const double scale = max_abs(condensation.reduced_hessian.storage());
  for (Index a = 0; a < nd; ++a) {
    for (Index b = 0; b < nd; ++b) EXPECT_NEAR(jthj(a, b), condensation.reduced_hessian(a, b), 1e-10 * scale);
  }
}

TEST(Conjac, EveryDofDynamicIsTheFullModel) {
  auto system = cantilever(0.08);
  const Index n = system->size();
  std::vector<Index> all(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) all[i] = i;
  const ConjacOptions options{.time_step = 1e-2, .beta = 1.0, .gamma = 1.0 / 3.0, .threads = 1};
  ConjacStepper conjac(*system, all, options);
  LinearlyImplicitStepper full(*system, options);
  std::vector<double> x1 = system->free_values(system->body().rest.positions);
  std::vector<double> v1(x1.size(), 0.0);
  std::vector<double> x2 = x1;
  std::vector<double> v2 = v1;
  for (int step = 0; step < 5; ++step) {
    conjac.step(step * options.time_step, x1, v1);
    full.step(step * options.time_step, x2, v2);
  }
  double dx = 0.0;
  double scale = 0.0;
  for (Index i = 0; i < n; ++i) {
    dx = std::max(dx, std::abs(x1[i] - x2[i]));
    scale = std::max(scale, std::abs(v2[i]) * options.time_step);
  }
  EXPECT_GT(scale, 0.0);  // the bar moved
  EXPECT_LE(dx, 1e-10 * scale * 5);
}

// The full model run to rest (β large, long steps) and CONJAC with two dynamic nodes settle to
// the same static state: the quasistatic DOFs are driven to zero net force by the
// stabilization, the dynamic ones by the damped dynamics. Heterogeneous bands, as HETERO.
TEST(Conjac, SettlesToTheFullModelsStaticState) {
  auto system = cantilever(0.12, true);
  const ConjacOptions options{.time_step = 0.05, .beta = 4.0, .gamma = 1.0 / 3.0, .threads = 1};
  std::vector<double> reference = system->free_values(system->body().rest.positions);
  std::vector<double> velocity(reference.size(), 0.0);
  LinearlyImplicitStepper full(*system, options);
  for (int step = 0; step < 200; ++step) full.step(0.0, reference, velocity);

  ConjacStepper conjac(*system, dynamic_dofs_along_axis(*system, 2), options);
  std::vector<double> x = system->free_values(system->body().rest.positions);
  std::vector<double> v(x.size(), 0.0);
  for (int step = 0; step < 200; ++step) conjac.step(0.0, x, v);
  double difference = 0.0;
  double deflection = 0.0;
  const std::vector<double> rest = system->free_values(system->body().rest.positions);
  for (std::size_t i = 0; i < x.size(); ++i) {
    difference = std::max(difference, std::abs(x[i] - reference[i]));
    deflection = std::max(deflection, std::abs(reference[i] - rest[i]));
  }
  EXPECT_GT(deflection, 1e-3);  // gravity bent the bar
  EXPECT_LE(difference, 1e-8 * deflection);
  EXPECT_LE(conjac.last_quasistatic_force(), 1e-9);
}

// Adaptivity (§4.4): with four representative nodes in the Schur set and two of them active,
// the dense split of S gives what a stepper with only the two active nodes dynamic computes —
// J, the reduced stiffness (eq. 4.21's split) and the step itself.
TEST(Conjac, InactiveRepresentativesCondenseLikeQuasistaticNodes) {
  auto system = cantilever(0.12);
  const std::vector<Index> all = dynamic_dofs_along_axis(*system, 4);
  std::vector<char> active(all.size(), 0);
  std::vector<Index> active_dofs;
  for (std::size_t a = 0; a < all.size(); ++a) {
    const bool on = a / 3 == 1 || a / 3 == 3;  // nodes 2 and 4
    active[a] = on ? 1 : 0;
    if (on) active_dofs.push_back(all[a]);
  }
  const ConjacOptions options{.time_step = 1e-2, .beta = 1.0, .gamma = 1.0 / 3.0, .threads = 2};
  ConjacStepper adaptive(*system, all, options);
  adaptive.set_active(active);
  ConjacStepper reference(*system, active_dofs, options);
  // A deformed state, so that the quasistatic forces are not zero.
  std::vector<double> x = system->free_values(system->body().rest.positions);
  std::vector<double> v(x.size(), 0.0);
  for (int step = 0; step < 3; ++step) reference.step(step * options.time_step, x, v);

  const auto split = adaptive.condensation(x);
  const auto direct = reference.condensation(x);
  ASSERT_EQ(split.jacobian.cols(), direct.jacobian.cols());
  EXPECT_LE(max_abs_difference(split.jacobian.storage(), direct.jacobian.storage()),
            1e-10 * max_abs(direct.jacobian.storage()));
  EXPECT_LE(max_abs_difference(split.reduced_hessian.storage(), direct.reduced_hessian.storage()),
            1e-10 * max_abs(direct.reduced_hessian.storage()));

  std::vector<double> x1 = x, v1 = v, x2 = x, v2 = v;
  adaptive.step(0.03, x1, v1);
  reference.step(0.03, x2, v2);
  double dx = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    dx = std::max(dx, std::abs(x1[i] - x2[i]));
    scale = std::max(scale, std::abs(x2[i] - x[i]));
  }
  EXPECT_GT(scale, 0.0);
  EXPECT_LE(dx, 1e-9 * scale);
  EXPECT_THROW(adaptive.set_active(std::vector<char>(2, 1)), std::invalid_argument);
}

// Alg. 4.3: the representatives start dynamic with a push, the motion is damped out (β large)
// and the liveliness metric turns them quasistatic one by one; never switched on, they stay
// quasistatic and the body does not move.
TEST(Conjac, AdaptiveRepresentativesCalmDownToQuasistatic) {
  auto system = cantilever(0.12);
  std::vector<Vec3> points{{0.44, 0.07, 0.07}, {0.22, 0.07, 0.07}};
  const std::vector<Index> representatives = nodes_nearest(system->body().rest, points);
  const ConjacOptions options{.time_step = 1e-2, .beta = 8.0, .gamma = 1.0 / 3.0, .threads = 2};
  AdaptiveConjac adaptive(*system, representatives, options, {.window = 3, .activate = 0.10, .deactivate = 0.02});
  EXPECT_EQ(adaptive.active_count(), 2);
  std::vector<double> x = system->free_values(system->body().rest.positions);
  std::vector<double> v(x.size(), 0.0);
  // A push sideways (z) growing along the bar: bending, not a rigid translation (whose
  // stretch rate, and metric, is zero).
  for (std::size_t i = 2; i < v.size(); i += 3) v[i] = 2.0 * x[i - 2];
  Index most_active = 0;
  int steps = 0;
  for (; steps < 400 && (steps < 5 || adaptive.active_count() > 0); ++steps) {
    adaptive.step(steps * options.time_step, x, v);
    most_active = std::max(most_active, adaptive.active_count());
  }
  EXPECT_EQ(most_active, 2);
  EXPECT_EQ(adaptive.active_count(), 0) << "after " << steps << " steps, metrics " << adaptive.metrics()[0] << ", "
                                        << adaptive.metrics()[1];
  EXPECT_LT(steps, 400);

  AdaptiveConjac never(*system, representatives, options, {.window = 3, .activate = 1e300, .deactivate = 0.02}, false);
  std::vector<double> y = system->free_values(system->body().rest.positions);
  std::vector<double> w(y.size(), 0.0);
  for (int step = 0; step < 5; ++step) never.step(step * options.time_step, y, w);
  EXPECT_EQ(never.active_count(), 0);
  // Every node quasistatic: no velocity, the sag under gravity by stabilization steps alone.
  EXPECT_EQ(*std::max_element(w.begin(), w.end()), 0.0);
  EXPECT_EQ(*std::min_element(w.begin(), w.end()), 0.0);
}

TEST(Conjac, RejectsBadDynamicDofsAndOptions) {
  auto system = cantilever(0.08);
  EXPECT_THROW(ConjacStepper(*system, {0, 0}, {}), std::invalid_argument);
  EXPECT_THROW(ConjacStepper(*system, {system->size()}, {}), std::invalid_argument);
  EXPECT_THROW(ConjacStepper(*system, {}, ConjacOptions{.time_step = -1.0}), std::invalid_argument);
  EXPECT_THROW(free_dofs_of_nodes(*system, std::vector<Index>{0}), std::invalid_argument);  // node 0 is clamped
}

}  // namespace
}  // namespace cholsim::fem
