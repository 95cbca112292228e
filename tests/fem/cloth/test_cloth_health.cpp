// The cloth's health check (fem/cloth/cloth_health.hpp): the limit from the cloth's own mass,
// size and gravity, news once, the summary's figures.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "fem/cloth/cloth_health.hpp"
#include "fem/cloth/cloth_inertia.hpp"

namespace cholsim::fem::cloth {
namespace {

/// A flat 1 × 1 m sheet of cells × cells squares.
ClothMesh flat_sheet(int cells) {
  return make_rectangle_cloth(1.0, 1.0, cells, cells, {0.0, 0.0, 0.0}, {1.0, 0.0, 0.0}, {0.0, 1.0, 0.0});
}

TEST(ClothHealth, TheLimitIsTenTimesLiftingTheClothItsOwnSize) {
  const ClothMesh sheet = flat_sheet(8);  // 1 × 1 m, diagonal √2
  const double density = 0.05;
  double mass = 0.0;
  for (const double m : vertex_masses(sheet, density)) mass += m;
  ASSERT_NEAR(mass, density, 1e-12);
  ClothHealth health(sheet, density, {0.0, 0.0, -9.8});
  EXPECT_NEAR(health.limit(), 10.0 * mass * 9.8 * std::sqrt(2.0), 1e-12);
  EXPECT_FALSE(health.check(1, 0.005, 0.5 * health.limit()).has_value());
  EXPECT_TRUE(health.healthy());
  EXPECT_EQ(health.summary(), "ok");
  // Over the limit: news the first time, then only the worst figure moves.
  const auto news = health.check(2, 0.010, 4e4);
  ASSERT_TRUE(news.has_value());
  EXPECT_NE(news->find("step 2"), std::string::npos) << *news;
  EXPECT_NE(news->find("4e+04 J"), std::string::npos) << *news;
  EXPECT_FALSE(health.check(3, 0.015, 4e5).has_value());
  EXPECT_FALSE(health.check(4, 0.020, 0.0).has_value());
  EXPECT_FALSE(health.healthy());
  const std::string summary = health.summary();
  EXPECT_NE(summary.find("from step 2"), std::string::npos) << summary;
  EXPECT_NE(summary.find("worst 4e+05 J, 2 steps over"), std::string::npos) << summary;
  EXPECT_THROW(ClothHealth(sheet, density, {0.0, 0.0, -9.8}, -1.0), std::invalid_argument);
}

TEST(ClothHealth, AMovingClothCountsItsInitialKineticEnergyAndNanIsOverAnyLimit) {
  ClothMesh sheet = flat_sheet(4);
  for (double& v : sheet.velocities) v = 30.0;  // far more than gravity's scale
  double kinetic = 0.0;
  const std::vector<double> mass = vertex_masses(sheet, 0.05);
  for (std::size_t v = 0; v < mass.size(); ++v) kinetic += 0.5 * mass[v] * 3.0 * 30.0 * 30.0;
  ClothHealth health(sheet, 0.05, {0.0, 0.0, -9.8});
  EXPECT_NEAR(health.limit(), 10.0 * kinetic, 1e-9 * kinetic);
  EXPECT_TRUE(health.check(1, 0.005, std::numeric_limits<double>::quiet_NaN()).has_value());
}

}  // namespace
}  // namespace cholsim::fem::cloth
