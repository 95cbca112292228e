#pragma once
// Checks shared by the point locators' tests (test_tet_bvh.cpp, test_tet_grid.cpp): a
// brute-force reference by another route than the library's, deformed meshes and random points.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "fem/contact/tet_bvh.hpp"
#include "fem/mesh/procedural_meshes.hpp"

namespace cholsim::fem::tet_location_checks {

using linalg::Index;
using linalg::Mat3;
using linalg::Vec3;

inline Vec3 node_at(std::span<const double> positions, Index node) {
  return {positions[3 * node], positions[3 * node + 1], positions[3 * node + 2]};
}

/// Barycentric coordinates by inverting Dₘ — a different route from the library's Cramer's
/// rule, so that a wrong sign or a swapped column there shows up as a disagreement.
inline std::array<double, 4> reference_weights(const TetMesh& mesh, std::span<const double> positions, Index tet,
                                        const Vec3& point) {
  std::array<Vec3, 4> x;
  for (int c = 0; c < 4; ++c) x[c] = node_at(positions, mesh.tets[4 * tet + c]);
  const Mat3 shape = Mat3::from_columns(x[1] - x[0], x[2] - x[0], x[3] - x[0]);
  const Vec3 w = linalg::inverse(shape) * (point - x[0]);
  return {1.0 - w.x - w.y - w.z, w.x, w.y, w.z};
}

/// Brute force over `tets`: the containing tet with the largest smallest weight.
inline std::optional<TetLocation> locate_by_brute_force(const TetMesh& mesh, std::span<const double> positions,
                                                 const std::vector<Index>& tets, const Vec3& point,
                                                 const std::function<bool(Index)>& skip = {}) {
  std::optional<TetLocation> best;
  double best_smallest = -std::numeric_limits<double>::infinity();
  for (const Index tet : tets) {
    if (skip && skip(tet)) continue;
    const auto weights = reference_weights(mesh, positions, tet, point);
    const double smallest = *std::min_element(weights.begin(), weights.end());
    if (smallest >= -TetBvh::kWeightTolerance && smallest > best_smallest) {
      best_smallest = smallest;
      best = TetLocation{tet, weights};
    }
  }
  return best;
}

/// The box mesh with every node moved randomly by up to `amplitude` cells along each axis and
/// then sheared, keeping every tet positively oriented (checked).
inline std::vector<double> perturbed_positions(const TetMesh& mesh, double cell, double amplitude, double shear,
                                        unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> jitter(-amplitude * cell, amplitude * cell);
  std::vector<double> positions = mesh.positions;
  for (std::size_t node = 0; node < positions.size() / 3; ++node) {
    for (std::size_t axis = 0; axis < 3; ++axis) positions[3 * node + axis] += jitter(random);
    positions[3 * node] += shear * positions[3 * node + 1];
  }
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) {
    std::array<Vec3, 4> x;
    for (int c = 0; c < 4; ++c) x[c] = node_at(positions, mesh.tets[4 * tet + c]);
    EXPECT_GT(linalg::determinant(Mat3::from_columns(x[1] - x[0], x[2] - x[0], x[3] - x[0])), 0.0)
        << "perturbation inverted tet " << tet;
  }
  return positions;
}

inline std::vector<Index> all_tets(const TetMesh& mesh) {
  std::vector<Index> tets(static_cast<std::size_t>(mesh.tet_count()));
  for (Index tet = 0; tet < mesh.tet_count(); ++tet) tets[static_cast<std::size_t>(tet)] = tet;
  return tets;
}

/// Random points over the positions' box grown by 10% on every side (so some are outside).
inline std::vector<Vec3> random_points(std::span<const double> positions, int count, unsigned seed) {
  const std::array<double, 6> box = bounding_box(std::vector<double>(positions.begin(), positions.end()));
  std::mt19937 random(seed);
  std::vector<Vec3> points;
  for (int n = 0; n < count; ++n) {
    Vec3 point;
    for (int axis = 0; axis < 3; ++axis) {
      const double margin = 0.1 * (box[axis + 3] - box[axis]);
      point[axis] = std::uniform_real_distribution<double>(box[axis] - margin, box[axis + 3] + margin)(random);
    }
    points.push_back(point);
  }
  return points;
}

/// Every point: the locator (TetBvh or TetGrid) and brute force agree on the tet, and the
/// locator's weights are the point's barycentric coordinates (sum 1, reproduce it). Returns how
/// many were found.
template <class Locator>
int expect_agrees_with_brute_force(const Locator& tree, const TetMesh& mesh, std::span<const double> positions,
                                   const std::vector<Index>& tets, const std::vector<Vec3>& points,
                                   const std::function<bool(Index)>& skip = {}) {
  int found = 0;
  for (const Vec3& point : points) {
    const auto expected = locate_by_brute_force(mesh, positions, tets, point, skip);
    const auto actual = tree.locate(point, skip);
    EXPECT_EQ(expected.has_value(), actual.has_value()) << point.x << " " << point.y << " " << point.z;
    if (!expected || !actual) continue;
    ++found;
    EXPECT_EQ(actual->tet, expected->tet);
    double sum = 0.0;
    Vec3 reproduced;
    for (int c = 0; c < 4; ++c) {
      EXPECT_NEAR(actual->weights[c], expected->weights[c], 1e-9);
      EXPECT_GE(actual->weights[c], -TetBvh::kWeightTolerance);
      sum += actual->weights[c];
      reproduced += actual->weights[c] * node_at(positions, mesh.tets[4 * actual->tet + c]);
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
    EXPECT_NEAR(linalg::norm(reproduced - point), 0.0, 1e-12);
  }
  return found;
}

/// Tet 0 flat (all four nodes in z = 0), tet 1 inverted (negative orientation), tet 2 valid, and
/// with `far` a fourth valid tet at x = 10⁸.
struct SmallTets {
  std::vector<double> positions;
  std::vector<Index> connectivity;
  std::vector<Index> ids;
};

inline SmallTets flat_inverted_and_valid_tets(bool far = false) {
  SmallTets tets{{0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0,     // flat square
                  5, 0, 0, 5, 1, 0, 6, 0, 0, 5, 0, 1,     // inverted
                  9, 0, 0, 10, 0, 0, 9, 1, 0, 9, 0, 1},  // valid
                 {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
                 {0, 1, 2}};
  if (far) {
    tets.positions.insert(tets.positions.end(), {1e8, 0, 0, 1e8 + 1, 0, 0, 1e8, 1, 0, 1e8, 0, 1});
    tets.connectivity.insert(tets.connectivity.end(), {12, 13, 14, 15});
    tets.ids.push_back(3);
  }
  return tets;
}

/// On flat_inverted_and_valid_tets: the flat tet is never returned, the inverted one is found,
/// the valid one with the point's weights.
template <class Locator>
void expect_flat_never_and_inverted_found(const Locator& locator) {
  EXPECT_FALSE(locator.locate({0.25, 0.25, 0.0}));  // on the flat tet only
  const auto inverted = locator.locate({5.1, 0.1, 0.1});
  ASSERT_TRUE(inverted);
  EXPECT_EQ(inverted->tet, 1);
  const auto valid = locator.locate({9.1, 0.1, 0.1});
  ASSERT_TRUE(valid);
  EXPECT_EQ(valid->tet, 2);
  EXPECT_NEAR(valid->weights[0], 0.7, 1e-12);
}

/// A tet id outside the connectivity, a node outside the positions and a refit with too few
/// positions are refused; an empty subset finds nothing.
template <class Locator>
void expect_bad_ids_refused_and_empty_subsets_find_nothing() {
  const TetMesh mesh = make_box_mesh(1.0, 1.0, 1.0, 2);
  const Locator empty(mesh.tets, {}, mesh.positions);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_FALSE(empty.locate({0.5, 0.5, 0.5}));
  EXPECT_THROW(Locator(mesh.tets, {0, mesh.tet_count()}, mesh.positions), std::invalid_argument);
  EXPECT_THROW(Locator(mesh.tets, {-1}, mesh.positions), std::invalid_argument);
  const std::span<const double> too_few_nodes(mesh.positions.data(), 6);
  EXPECT_THROW(Locator(mesh.tets, {0}, too_few_nodes), std::invalid_argument);
  Locator locator(mesh.tets, {0, 1}, mesh.positions);
  EXPECT_THROW(locator.refit(too_few_nodes), std::invalid_argument);
}

}  // namespace cholsim::fem::tet_location_checks
