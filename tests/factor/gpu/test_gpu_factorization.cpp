// The GPU factorization (issue 22, factor/gpu/): the device split, the choice of device, and —
// on a machine with a CUDA GPU — the hybrid factor against the CPU factor with the same
// ordering, refactorization, pivot failures and device-memory exhaustion. Without a GPU the
// device tests skip, saying why, and the tests of what happens without one run instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "factor/analysis/symbolic.hpp"
#include "factor/gpu/device_split.hpp"
#include "factor/gpu/gpu_factorization.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/generators.hpp"
#include "tests/factor/factor_test_matrices.hpp"

namespace cholsim::factor {
namespace {

using testing::relative_max_difference;

std::shared_ptr<const Symbolic> analyze_elasticity(const linalg::SymmetricCscMatrix& a) {
  AnalyzeOptions options;
  options.ordering = OrderingMethod::nested_dissection;
  options.dofs_per_node = 3;
  return analyze(a, options);
}

// Skips the calling test, with the reason, unless a CUDA GPU is usable.
#define REQUIRE_GPU()                                                 \
  do {                                                                \
    std::string why_not;                                              \
    if (!gpu_available(&why_not)) GTEST_SKIP() << "no GPU: " << why_not; \
  } while (false)

FactorOptions gpu_options(double min_supernode_flops) {
  FactorOptions options;
  options.device = FactorDevice::gpu;
  options.gpu_min_supernode_flops = min_supernode_flops;
  options.gpu_fallback_to_cpu = false;
  return options;
}

TEST(DeviceSplit, MarksExpensiveSupernodesAndAllTheirAncestors) {
  const auto a = testing::elasticity_cube(6);
  const auto symbolic = analyze_elasticity(a);
  double largest = 0.0;
  for (Index s = 0; s < symbolic->supernode_count(); ++s) largest = std::max(largest, symbolic->supernode_flops(s));
  const double threshold = largest / 20;
  const std::vector<char> on_device = supernodes_on_device(*symbolic, threshold);
  Index marked = 0;
  for (Index s = 0; s < symbolic->supernode_count(); ++s) {
    if (symbolic->supernode_flops(s) >= threshold) {
      EXPECT_TRUE(on_device[s]) << "supernode " << s;
    }
    const Index p = symbolic->parent(s);
    if (on_device[s] && p != -1) {
      EXPECT_TRUE(on_device[p]) << "parent of " << s;
    }
    marked += on_device[s];
  }
  EXPECT_GT(marked, 1);
  EXPECT_LT(marked, symbolic->supernode_count());  // the subtrees below stay on the CPU
  EXPECT_GT(marked_flops(*symbolic, on_device), 0.0);
  const std::vector<char> none = supernodes_on_device(*symbolic, 2 * largest);
  EXPECT_EQ(std::count(none.begin(), none.end(), 1), 0);
}

TEST(DeviceSplit, APartialFactorizationStaysOnTheCpu) {
  const auto a = testing::elasticity_cube(4);
  AnalyzeOptions options;
  options.dofs_per_node = 3;
  options.schur_set = {0, 1, 2, 3, 4, 5};
  const auto symbolic = analyze(a, options);
  const std::vector<char> on_device = supernodes_on_device(*symbolic, 0.0);
  EXPECT_EQ(std::count(on_device.begin(), on_device.end(), 1), 0);
}

TEST(GpuChoice, WithoutAGpuGpuIsAnErrorValueAndAutomaticUsesTheCpu) {
  std::string why_not;
  if (gpu_available(&why_not)) GTEST_SKIP() << "a GPU is present: the no-GPU behaviour is not observable here";
  EXPECT_FALSE(why_not.empty());
  const auto a = testing::elasticity_cube(4);
  Factor factor(analyze_elasticity(a));
  FactorOptions options;
  options.device = FactorDevice::gpu;
  const FactorStatus& status = factor.factorize(a, options);
  EXPECT_EQ(status.code, FactorStatusCode::device_unavailable);
  EXPECT_NE(status.message.find(why_not), std::string::npos) << status.message;
  EXPECT_THROW(GpuFactorization(factor.symbolic_ptr(), std::vector<char>(factor.symbolic().supernode_count(), 1), 0),
               GpuError);

  options.device = FactorDevice::automatic;
  options.gpu_min_total_flops = 0.0;
  ASSERT_TRUE(factor.factorize(a, options).ok());
  EXPECT_EQ(factor.stats().device, "cpu");
  EXPECT_EQ(factor.stats().gpu.supernodes, 0);
}

// GPU factor = CPU factor (same analysis) to 1e-12 relative, for several splits: nearly
// everything on the device, the top only, and everything (threshold 0).
TEST(GpuFactorization, EqualsTheCpuFactorForEverySplit) {
  REQUIRE_GPU();
  const auto a = testing::elasticity_cube(12);
  const auto symbolic = analyze_elasticity(a);
  Factor cpu(symbolic);
  ASSERT_TRUE(cpu.factorize(a).ok());
  for (const double threshold : {0.0, 1e5, 1e7}) {
    Factor gpu(symbolic);
    ASSERT_TRUE(gpu.factorize(a, gpu_options(threshold)).ok()) << gpu.status().message;
    EXPECT_GT(gpu.stats().gpu.supernodes, 0);
    EXPECT_NE(gpu.stats().device.find("gpu"), std::string::npos);
    EXPECT_LE(relative_max_difference(gpu.values(), cpu.values()), 1e-12) << "threshold " << threshold;
    std::vector<double> x(static_cast<std::size_t>(a.size()), 1.0);
    gpu.solve(x);
    std::vector<double> y(static_cast<std::size_t>(a.size()), 1.0);
    cpu.solve(y);
    EXPECT_LE(relative_max_difference(x, y), 1e-10);
  }
}

TEST(GpuFactorization, EqualsTheCpuFactorOnTheFactorTestMatrices) {
  REQUIRE_GPU();
  for (const auto& named : testing::spd_test_matrices()) {
    const auto symbolic = analyze(named.matrix);
    Factor cpu(symbolic);
    ASSERT_TRUE(cpu.factorize(named.matrix).ok()) << named.name;
    Factor gpu(symbolic);
    ASSERT_TRUE(gpu.factorize(named.matrix, gpu_options(0.0)).ok()) << named.name << ": " << gpu.status().message;
    ASSERT_EQ(gpu.values().size(), cpu.values().size()) << named.name;
    if (cpu.values().empty()) continue;  // n = 0: nothing to compare (the ratio would be 0/0)
    EXPECT_LE(relative_max_difference(gpu.values(), cpu.values()), 1e-12) << named.name;
  }
}

TEST(GpuFactorization, RefactorizeOnTheGpuEqualsAFreshFactorization) {
  REQUIRE_GPU();
  auto a = testing::elasticity_cube(10);
  const auto symbolic = analyze_elasticity(a);
  FactorOptions options = gpu_options(1e5);
  options.retain_update_blocks = true;
  Factor factor(symbolic);
  ASSERT_TRUE(factor.factorize(a, options).ok()) << factor.status().message;
  EXPECT_GT(factor.stats().gpu.retained_device_bytes, 0);
  // Change the columns of a few nodes (a corner of the box), keeping the matrix SPD.
  std::vector<Index> changed;
  for (Index c = 0; c < a.size(); ++c) {
    for (auto p = a.lower.col_ptr[c]; p < a.lower.col_ptr[c + 1]; ++p) {
      if (c < 30) a.lower.values[p] *= a.lower.row_idx[p] == c ? 1.5 : 1.1;
    }
    if (c < 30) changed.push_back(c);
  }
  ASSERT_TRUE(factor.refactorize(ChangedEntries::columns(changed), a, options).ok()) << factor.status().message;
  EXPECT_GT(factor.stats().gpu.supernodes, 0);
  EXPECT_LT(factor.stats().recomputed_flops, symbolic->stats().flops);
  Factor fresh(symbolic);
  ASSERT_TRUE(fresh.factorize(a).ok());
  EXPECT_LE(relative_max_difference(factor.values(), fresh.values()), 1e-12);
}

TEST(GpuFactorization, ReportsTheSameFailingColumnAsTheCpu) {
  REQUIRE_GPU();
  auto a = testing::elasticity_cube(8);
  const auto symbolic = analyze_elasticity(a);
  // A negative diagonal at the last eliminated column: its supernode is the root, on the GPU.
  const Index column = symbolic->permutation()[a.size() - 1];
  for (auto p = a.lower.col_ptr[column]; p < a.lower.col_ptr[column + 1]; ++p) {
    if (a.lower.row_idx[p] == column) a.lower.values[p] = -1.0;
  }
  Factor cpu(symbolic);
  EXPECT_EQ(cpu.factorize(a).code, FactorStatusCode::not_positive_definite);
  Factor gpu(symbolic);
  const FactorStatus& status = gpu.factorize(a, gpu_options(1e5));
  EXPECT_EQ(status.code, FactorStatusCode::not_positive_definite);
  EXPECT_EQ(status.column, cpu.status().column);
  EXPECT_EQ(status.column, column);
}

TEST(GpuFactorization, DeviceMemoryExhaustionIsAnErrorValueOrACpuFallback) {
  REQUIRE_GPU();
  const auto a = testing::elasticity_cube(8);
  const auto symbolic = analyze_elasticity(a);
  Factor cpu(symbolic);
  ASSERT_TRUE(cpu.factorize(a).ok());
  FactorOptions options = gpu_options(1e5);
  options.gpu_memory_limit_bytes = 1 << 20;  // 1 MiB: the top fronts do not fit
  Factor gpu(symbolic);
  EXPECT_EQ(gpu.factorize(a, options).code, FactorStatusCode::device_out_of_memory);
  EXPECT_FALSE(gpu.status().message.empty());
  options.gpu_fallback_to_cpu = true;
  ASSERT_TRUE(gpu.factorize(a, options).ok()) << gpu.status().message;
  EXPECT_FALSE(gpu.stats().device_fallback.empty());
  EXPECT_EQ(gpu.stats().device, "cpu");
  EXPECT_LE(relative_max_difference(gpu.values(), cpu.values()), 1e-14);
}

}  // namespace
}  // namespace cholsim::factor
