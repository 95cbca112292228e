#include "fem/contact/rest_distance_field.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <limits>
#include <random>

#include "fem/mesh/procedural_meshes.hpp"

namespace cholsim::fem {
namespace {

using linalg::Vec3;

/// The boundary nodes of make_sphere_mesh lie on the sphere and its faces are chords of about
/// 2/cells_across·π/2 of arc, so the mesh surface is inside the sphere by at most the sagitta
/// e²/(8r) of its longest edges; 0.01 bounds it at 16 cells across with room to spare.
constexpr double kSphereInscribingError = 0.01;

std::vector<Vec3> random_points_in_shell(double inner, double outer, int count, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> coordinate(-outer, outer);
  std::vector<Vec3> points;
  while (static_cast<int>(points.size()) < count) {
    const Vec3 point{coordinate(random), coordinate(random), coordinate(random)};
    const double radius = linalg::norm(point);
    if (radius >= inner && radius <= outer) points.push_back(point);
  }
  return points;
}

double distance_to_segment(const Vec3& point, const Vec3& a, const Vec3& b) {
  const Vec3 along = b - a;
  const double t = std::clamp(linalg::dot(point - a, along) / linalg::squared_norm(along), 0.0, 1.0);
  return linalg::norm(point - (a + t * along));
}

/// Unsigned distance to a triangle by a route other than the library's Voronoi regions: the
/// plane distance when the point projects inside, else the nearest of the three edges.
double distance_to_triangle(const Vec3& point, const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 normal = linalg::normalized(linalg::cross(b - a, c - a));
  const double height = linalg::dot(point - a, normal);
  const Vec3 projected = point - height * normal;
  const bool inside = linalg::dot(linalg::cross(b - a, projected - a), normal) >= 0.0 &&
                      linalg::dot(linalg::cross(c - b, projected - b), normal) >= 0.0 &&
                      linalg::dot(linalg::cross(a - c, projected - c), normal) >= 0.0;
  if (inside) return std::abs(height);
  return std::min({distance_to_segment(point, a, b), distance_to_segment(point, b, c), distance_to_segment(point, c, a)});
}

/// The exact unsigned distance to the mesh's boundary, by brute force over its triangles.
double distance_to_boundary(const SurfaceMesh& surface, const Vec3& point) {
  const auto corner = [&](Index triangle, Index s) {
    const Index node = surface.triangles[3 * triangle + s];
    return Vec3{surface.positions[3 * node], surface.positions[3 * node + 1], surface.positions[3 * node + 2]};
  };
  double nearest = std::numeric_limits<double>::infinity();
  for (Index triangle = 0; triangle < surface.triangle_count(); ++triangle) {
    nearest = std::min(nearest, distance_to_triangle(point, corner(triangle, 0), corner(triangle, 1), corner(triangle, 2)));
  }
  return nearest;
}

/// The exact signed distance to the box [0, size]: negative inside.
double box_signed_distance(const Vec3& point, const Vec3& size) {
  Vec3 outside;
  double deepest = -std::numeric_limits<double>::infinity();
  for (int axis = 0; axis < 3; ++axis) {
    const double beyond = std::max(-point[axis], point[axis] - size[axis]);
    outside[axis] = std::max(beyond, 0.0);
    deepest = std::max(deepest, beyond);
  }
  return deepest > 0.0 ? linalg::norm(outside) : deepest;
}

class SphereDistanceField : public ::testing::Test {
 protected:
  static constexpr double kSpacing = 0.05;
  // Built on first use and shared by the suite's tests — not as static members, which every
  // process of this test binary (CTest runs each test suite in its own) would build at start-up.
  static const TetMesh& sphere() {
    static const TetMesh mesh = make_sphere_mesh(1.0, 16);
    return mesh;
  }
  static const RestDistanceField& sphere_field() {
    static const RestDistanceField field{sphere(), kSpacing};
    return field;
  }
  const TetMesh& mesh_ = sphere();
  const RestDistanceField& field_ = sphere_field();
};

TEST_F(SphereDistanceField, GridSamplesAreTheDistanceToTheMeshBoundary) {
  const auto [nx, ny, nz] = field_.sample_counts();
  EXPECT_EQ(nx, 2 * 20 + 2 * 2 + 1);  // 2 m / 0.05 cells plus a 2-cell margin each side
  EXPECT_NEAR(field_.origin().x, -1.1, 1e-12);
  const SurfaceMesh surface = boundary_surface(mesh_);
  const double band = RestDistanceField::kBandCells * kSpacing;
  int beyond_band = 0;
  // Every third sample along each axis (brute force is slow), offset so the centre is included.
  for (Index k = 1; k < nz; k += 3) {
    for (Index j = 1; j < ny; j += 3) {
      for (Index i = 1; i < nx; i += 3) {
        const Vec3 position = field_.sample_position(i, j, k);
        const double exact = distance_to_boundary(surface, position);
        const double value = field_.sample_value(i, j, k);
        // The sign: inside the sphere less the inscribing error is inside, outside it outside.
        if (linalg::norm(position) < 1.0 - kSphereInscribingError) {
          EXPECT_LT(value, 0.0) << i << " " << j << " " << k;
        }
        if (linalg::norm(position) > 1.0) {
          EXPECT_GT(value, 0.0) << i << " " << j << " " << k;
        }
        // Exact in the narrow band; beyond it a distance to some boundary triangle: never
        // below the true distance and above it by a fraction of a cell at most.
        if (exact <= band) {
          EXPECT_NEAR(std::abs(value), exact, 1e-12) << i << " " << j << " " << k;
        } else {
          ++beyond_band;
          EXPECT_GE(std::abs(value), exact - 1e-12) << i << " " << j << " " << k;
          EXPECT_LE(std::abs(value), exact + 0.25 * kSpacing) << i << " " << j << " " << k;
        }
      }
    }
  }
  EXPECT_GT(beyond_band, 1000);
}

TEST_F(SphereDistanceField, InterpolatesBetweenSamplesWithTheRightSign) {
  for (const Vec3& point : random_points_in_shell(0.0, 1.4, 4000, 11)) {
    const double to_sphere = linalg::norm(point) - 1.0;
    const DistanceSample sample = field_.sample(point);
    // Trilinear interpolation of a distance is off by at most a fraction of a cell away from
    // the centre, where |x| has its kink.
    EXPECT_NEAR(sample.distance, to_sphere, 0.5 * kSpacing + kSphereInscribingError) << linalg::norm(point);
    if (to_sphere < -kSphereInscribingError - kSpacing) {
      EXPECT_LT(sample.distance, 0.0);
    }
    if (to_sphere > kSpacing) {
      EXPECT_GT(sample.distance, 0.0);
    }
  }
  EXPECT_NEAR(field_.sample({0.0, 0.0, 0.0}).distance, -1.0, kSpacing);
}

TEST_F(SphereDistanceField, GradientIsTheUnitRadialDirection) {
  for (const Vec3& point : random_points_in_shell(0.3, 1.3, 2000, 12)) {
    const DistanceSample sample = field_.sample(point);
    EXPECT_NEAR(linalg::norm(sample.gradient), 1.0, 1e-12);
    EXPECT_GT(linalg::dot(sample.gradient, point / linalg::norm(point)), 0.98) << linalg::norm(point);
  }
}

TEST_F(SphereDistanceField, ProjectionLandsOnTheSurface) {
  for (const Vec3& point : random_points_in_shell(0.4, 1.3, 2000, 13)) {
    const Vec3 projected = field_.project_to_surface(point);
    EXPECT_LT(std::abs(field_.sample(projected).distance), 0.05 * kSpacing);
    EXPECT_NEAR(linalg::norm(projected), 1.0, kSphereInscribingError + 0.05 * kSpacing);
    // A closest-point projection: it moved by the point's distance to the surface, outward
    // from inside and inward from outside.
    const double distance = field_.sample(point).distance;
    EXPECT_NEAR(linalg::norm(projected - point), std::abs(distance), 0.1 * kSpacing);
    EXPECT_EQ(linalg::norm(projected) > linalg::norm(point), distance < 0.0);
  }
}

TEST_F(SphereDistanceField, OutsideTheGridTheDistanceGrowsWithTheGap) {
  const DistanceSample far = field_.sample({5.0, 0.0, 0.0});
  EXPECT_NEAR(far.distance, 4.0, 1e-3);
  EXPECT_NEAR(far.gradient.x, 1.0, 1e-4);
  // Off the axes, beyond a corner of the grid, the direction still comes from a surface point
  // (the box's corner would give (1, 1, 0) here) and the distance stays an upper bound, within
  // a few percent of the true one.
  const Vec3 diagonal{2.0, 2.0, 1.0};
  const DistanceSample off_axis = field_.sample(diagonal);
  EXPECT_GE(off_axis.distance, 2.0);
  EXPECT_LT(off_axis.distance, 2.05);
  EXPECT_GT(linalg::dot(off_axis.gradient, diagonal / 3.0), 0.99);
  // Continuous where the grid ends.
  EXPECT_NEAR(field_.sample({1.1 + 1e-9, 0.3, 0.2}).distance, field_.sample({1.1 - 1e-9, 0.3, 0.2}).distance, 1e-6);
}

TEST_F(SphereDistanceField, StatisticsDescribeTheBuild) {
  const RestDistanceFieldStats& stats = field_.stats();
  const auto [nx, ny, nz] = field_.sample_counts();
  EXPECT_EQ(stats.samples, static_cast<std::size_t>(nx * ny * nz));
  EXPECT_GT(stats.boundary_triangles, 0);
  EXPECT_GT(stats.band_samples, 0u);
  EXPECT_LT(stats.band_samples, stats.samples);  // a band, not the whole grid
  // Inside samples fill the ball's volume, one cell each.
  const double ball_volume = 4.0 / 3.0 * std::numbers::pi;
  EXPECT_NEAR(static_cast<double>(stats.inside_samples) * std::pow(kSpacing, 3), ball_volume, 0.03 * ball_volume);
  EXPECT_GE(stats.build_seconds, 0.0);
}

TEST(RestDistanceField, BoxSamplesAreExactDistances) {
  // The box mesh has no discretization error: every sample is the box's exact signed distance,
  // in the band (triangle distances) and beyond it (propagated closest points) alike.
  const Vec3 size{1.0, 0.5, 0.25};
  const TetMesh mesh = make_box_mesh(size.x, size.y, size.z, 8);
  const RestDistanceField field(mesh, 0.04, 6);
  const auto [nx, ny, nz] = field.sample_counts();
  for (Index k = 0; k < nz; ++k) {
    for (Index j = 0; j < ny; ++j) {
      for (Index i = 0; i < nx; ++i) {
        const Vec3 position = field.sample_position(i, j, k);
        ASSERT_NEAR(field.sample_value(i, j, k), box_signed_distance(position, size), 1e-12)
            << position.x << " " << position.y << " " << position.z;
      }
    }
  }
}

TEST(RestDistanceField, TorusHoleIsOutsideAndTubeCoreInside) {
  // A hole through the body: an inside test by ray parity or flood fill from the grid border
  // could get this wrong; the rasterized tets cannot.
  const TetMesh torus = make_torus_mesh(1.0, 0.3, 32, 8);
  const double spacing = 0.04;
  const RestDistanceField field(torus, spacing);
  EXPECT_NEAR(field.sample({0.0, 0.0, 0.0}).distance, 0.7, spacing);
  for (double angle = 0.0; angle < 6.0; angle += 0.5) {
    const Vec3 core{std::cos(angle), std::sin(angle), 0.0};
    EXPECT_NEAR(field.sample(core).distance, -0.3, 0.02 + 0.5 * spacing) << angle;
    const DistanceSample above = field.sample(core + Vec3{0.0, 0.0, 0.2});
    EXPECT_NEAR(above.distance, -0.1, 0.02);
    EXPECT_GT(above.gradient.z, 0.95);
  }
}

TEST(RestDistanceField, RefusesBadSpacingBeforeAllocating) {
  const TetMesh mesh = make_box_mesh(1.0, 1.0, 1.0, 2);
  EXPECT_THROW(RestDistanceField(mesh, 0.0), std::invalid_argument);
  EXPECT_THROW(RestDistanceField(mesh, -0.1), std::invalid_argument);
  EXPECT_THROW(RestDistanceField(mesh, std::nan("")), std::invalid_argument);
  EXPECT_THROW(RestDistanceField(mesh, 0.1, -1), std::invalid_argument);
  EXPECT_THROW(RestDistanceField(TetMesh{}, 0.1), std::invalid_argument);
  try {
    // 10⁹ samples per axis: refused from the counts alone (allocating would abort the test).
    const RestDistanceField huge(mesh, 1e-9);
    ADD_FAILURE() << "a grid of 10²⁷ samples was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("samples"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace cholsim::fem
