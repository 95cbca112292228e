#include "fem/cloth/bending.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>

namespace cholsim::fem::cloth {

namespace {

// An edge of a triangle, keyed by its sorted endpoints, remembering its direction in that
// triangle and the opposite corner.
struct TriangleEdge {
  Index low = 0;
  Index high = 0;
  Index from = 0;
  Index to = 0;
  Index opposite = 0;
};

std::vector<TriangleEdge> triangle_edges(const ClothMesh& cloth) {
  std::vector<TriangleEdge> edges;
  edges.reserve(cloth.triangles.size());
  for (Index t = 0; t < cloth.triangle_count(); ++t) {
    const Index* v = &cloth.triangles[3 * static_cast<std::size_t>(t)];
    for (int k = 0; k < 3; ++k) {
      const Index from = v[k], to = v[(k + 1) % 3], opposite = v[(k + 2) % 3];
      edges.push_back({std::min(from, to), std::max(from, to), from, to, opposite});
    }
  }
  // Stable: a hinge's first triangle is the one listed first.
  std::stable_sort(edges.begin(), edges.end(), [](const TriangleEdge& a, const TriangleEdge& b) {
    return std::tie(a.low, a.high) < std::tie(b.low, b.high);
  });
  return edges;
}

struct AngleCotangent {
  double cotangent = 0.0;
  double twice_area = 0.0;
};

// The cotangent of the interior angle at p of triangle (p, q, r), and twice the triangle's area.
AngleCotangent angle_cotangent(const Vec2& p, const Vec2& q, const Vec2& r) {
  const Vec2 a = q - p, b = r - p;
  const double twice_area = std::abs(cross(a, b));
  if (!(twice_area > 0.0) || !std::isfinite(twice_area)) {
    throw std::invalid_argument("hinge_weights: a hinge triangle is degenerate in material space (area " +
                                std::to_string(0.5 * twice_area) + "), expected a positive area");
  }
  return {dot(a, b) / twice_area, twice_area};
}

}  // namespace

std::vector<BendingHinge> bending_hinges(const ClothMesh& cloth) {
  const std::vector<TriangleEdge> edges = triangle_edges(cloth);
  std::vector<BendingHinge> hinges;
  hinges.reserve(edges.size() / 2);
  for (std::size_t first = 0; first < edges.size();) {
    std::size_t last = first + 1;
    while (last < edges.size() && edges[last].low == edges[first].low && edges[last].high == edges[first].high) ++last;
    if (last - first > 2) {
      throw InvalidClothError("bending_hinges: edge (" + std::to_string(edges[first].low) + ", " +
                              std::to_string(edges[first].high) + ") is shared by " + std::to_string(last - first) +
                              " triangles, expected at most 2");
    }
    if (last - first == 2) {
      const TriangleEdge& one = edges[first];
      hinges.push_back({{one.from, one.to, one.opposite, edges[first + 1].opposite}});
    }
    first = last;
  }
  return hinges;
}

HingeWeights hinge_weights(const std::array<Vec2, 4>& material) {
  const auto& [x0, x1, x2, x3] = material;
  const AngleCotangent a0 = angle_cotangent(x0, x1, x2);
  const AngleCotangent a1 = angle_cotangent(x1, x2, x0);
  const AngleCotangent b0 = angle_cotangent(x0, x1, x3);
  const AngleCotangent b1 = angle_cotangent(x1, x3, x0);
  HingeWeights hinge;
  hinge.weights = {a1.cotangent + b1.cotangent, a0.cotangent + b0.cotangent, -(a0.cotangent + a1.cotangent),
                   -(b0.cotangent + b1.cotangent)};
  hinge.area_scale = 3.0 / (0.5 * (a0.twice_area + b0.twice_area));
  return hinge;
}

BendingElement bending_element(const HingeWeights& hinge, const std::array<Vec3, 4>& x, double stiffness) {
  Vec3 curvature_normal;  // H = Σ w_i x_i
  for (std::size_t i = 0; i < 4; ++i) curvature_normal += hinge.weights[i] * x[i];
  const double scale = stiffness * hinge.area_scale;
  BendingElement element;
  element.energy = 0.5 * scale * squared_norm(curvature_normal);
  for (std::size_t i = 0; i < 4; ++i) {
    element.forces[i] = -scale * hinge.weights[i] * curvature_normal;
    for (std::size_t j = 0; j < 4; ++j) element.coupling[4 * i + j] = -scale * hinge.weights[i] * hinge.weights[j];
  }
  return element;
}

}  // namespace cholsim::fem::cloth
