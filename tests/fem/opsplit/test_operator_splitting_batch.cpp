// Many bodies in one OperatorSplittingBatch (seed 003 §4's scenes): copies share their
// prototype's setup and step exactly as separate simulations of the same scene do.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "fem/opsplit/operator_splitting.hpp"
#include "linalg/generators.hpp"

namespace cholsim::fem {
namespace {

ElasticBody batch_test_bar() {
  Material material;
  material.youngs_modulus = 2e5;
  material.poisson_ratio = 0.3;
  material.density = 1000.0;
  return make_elastic_body(linalg::structured_tet_box(5, 2, 2, 0.05), material, "test bar");
}

OperatorSplittingOptions options_for(const ElasticBody& body,
                                     ElementPrecision precision = ElementPrecision::double_values,
                                     RotationWarmStart warm_start = RotationWarmStart::previous) {
  OperatorSplittingOptions options;
  options.element_precision = precision;
  options.rotation_warm_start = warm_start;
  options.threads = 1;
  options.volume_iterations = 2;
  options.fixed_nodes = nodes_near_top(body.rest, 0, 0.0);  // the +x end
  options.solve_precision = factor::TiledSolveFactor::Precision::double_values;
  return options;
}

/// Body `index`'s start: the rest pose moved up by 0.1·index and thrown sideways, so that no
/// two bodies share a trajectory.
void place(OperatorSplittingSimulation& sim, int index) {
  std::vector<double> x(sim.positions().begin(), sim.positions().end());
  std::vector<double> v(x.size(), 0.0);
  std::mt19937_64 rng(static_cast<unsigned>(17 + index));
  std::uniform_real_distribution<double> jitter(-0.2, 0.2);
  for (std::size_t i = 0; i < x.size(); i += 3) {
    x[i + 1] += 0.1 * index;
    v[i + 2] = 0.5 * index + jitter(rng);
  }
  sim.set_state(x, v);
}

class OperatorSplittingBatchPrecision
    : public ::testing::TestWithParam<std::tuple<ElementPrecision, RotationWarmStart>> {};

TEST_P(OperatorSplittingBatchPrecision, CopiesStepExactlyAsSeparateSimulations) {
  constexpr int kBodies = 4;
  constexpr int kSteps = 15;
  const ElasticBody body = batch_test_bar();
  OperatorSplittingBatch batch;
  const auto [precision, warm_start] = GetParam();
  batch.add(OperatorSplittingSimulation(body, options_for(body, precision, warm_start)));
  for (int b = 1; b < kBodies; ++b) EXPECT_EQ(batch.add_copy(0), b);
  ASSERT_EQ(batch.size(), kBodies);
  std::vector<OperatorSplittingSimulation> alone;
  for (int b = 0; b < kBodies; ++b) {
    place(batch.body(b), b);
    alone.emplace_back(body, options_for(body, precision, warm_start));
    place(alone.back(), b);
  }
  for (int step = 0; step < kSteps; ++step) {
    const OperatorSplittingStepStatistics stats = batch.step();
    std::int64_t iterations = 0;
    for (OperatorSplittingSimulation& sim : alone) iterations += sim.step().rotation_iterations;
    EXPECT_EQ(stats.rotation_iterations, iterations) << "step " << step;
  }
  double moved = 0.0;
  for (int b = 0; b < kBodies; ++b) {
    const OperatorSplittingSimulation& copy = batch.body(b);
    EXPECT_DOUBLE_EQ(copy.time(), alone[static_cast<std::size_t>(b)].time());
    ASSERT_EQ(copy.positions().size(), alone[static_cast<std::size_t>(b)].positions().size());
    for (std::size_t i = 0; i < copy.positions().size(); ++i) {
      ASSERT_EQ(copy.positions()[i], alone[static_cast<std::size_t>(b)].positions()[i]) << "body " << b << ", entry " << i;
      ASSERT_EQ(copy.velocities()[i], alone[static_cast<std::size_t>(b)].velocities()[i]) << "body " << b << ", entry " << i;
      moved = std::max(moved, std::abs(copy.positions()[i] - body.rest.positions[i]));
    }
    const auto rotations = copy.element_rotations();
    const auto expected = alone[static_cast<std::size_t>(b)].element_rotations();
    for (std::size_t t = 0; t < rotations.size(); ++t) ASSERT_EQ(rotations[t].w, expected[t].w) << "element " << t;
  }
  EXPECT_GT(moved, 0.05);  // the bodies really moved (0.1 m apart, thrown at up to 1.7 m/s)
}

INSTANTIATE_TEST_SUITE_P(ElementPrecisions, OperatorSplittingBatchPrecision,
                         ::testing::Combine(::testing::Values(ElementPrecision::double_values,
                                                              ElementPrecision::single_values),
                                            ::testing::Values(RotationWarmStart::previous,
                                                              RotationWarmStart::extrapolated)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) == ElementPrecision::double_values ? "Double"
                                                                                                        : "Single") +
                                  (std::get<1>(info.param) == RotationWarmStart::extrapolated ? "Extrapolated" : "");
                         });

TEST(OperatorSplittingBatch, CopiesShareTheSetupAndNotTheState) {
  const ElasticBody body = batch_test_bar();
  OperatorSplittingSimulation original(body, options_for(body));
  OperatorSplittingSimulation copy(original);
  EXPECT_EQ(&copy.system_matrix(), &original.system_matrix());
  EXPECT_EQ(&copy.body(), &original.body());
  place(copy, 3);
  copy.step();
  EXPECT_EQ(original.time(), 0.0);
  for (std::size_t i = 0; i < body.rest.positions.size(); ++i) ASSERT_EQ(original.positions()[i], body.rest.positions[i]);
  const auto rotations = original.element_rotations();
  for (const auto& q : rotations) ASSERT_EQ(q.w, 1.0);  // the copy's APD left the original's alone
}

TEST(OperatorSplittingBatch, RejectsBadIndices) {
  const ElasticBody body = batch_test_bar();
  OperatorSplittingBatch batch;
  EXPECT_THROW(batch.add_copy(0), std::out_of_range);
  batch.add(OperatorSplittingSimulation(body, options_for(body)));
  EXPECT_THROW(batch.add_copy(1), std::out_of_range);
  EXPECT_THROW((void)batch.body(-1), std::out_of_range);
  EXPECT_NO_THROW(batch.step());
}

}  // namespace
}  // namespace cholsim::fem
