#pragma once
// Rigid obstacles a deformable body collides with: the ground (a half-space), spheres,
// capped cylinders, capsules, a half torus (the teeth arch of seed 004's surgery scene), a bowl
// (seed 002's ducks), and a
// scripted moving box — the piston of seed 000's bear-squash scene.
// Each answers one query: the signed distance of a point at a time, the outward normal and
// the obstacle's own velocity there. Penalty forces (seed 000 §5) and position projection
// (seed 003 §3.3) are both built on it.
#include <limits>
#include <variant>
#include <vector>

#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

using linalg::Vec3;

/// The half-space {x : n·x ≥ offset} is free; the ground is normal (0, 1, 0) or (0, 0, 1).
struct HalfSpace {
  Vec3 normal{0.0, 1.0, 0.0};  ///< unit, pointing into the free side
  double offset = 0.0;
};

struct Sphere {
  Vec3 center;
  double radius = 1.0;
};

/// A solid cylinder between two end points (capped).
struct Cylinder {
  Vec3 end_a;
  Vec3 end_b{0.0, 1.0, 0.0};
  double radius = 0.5;
};

/// A segment end_a–end_b swollen by `radius`: a cylinder with hemispherical ends (a tool
/// shaft, a finger). end_a == end_b is a sphere.
struct Capsule {
  Vec3 end_a;
  Vec3 end_b{0.0, 1.0, 0.0};
  double radius = 0.5;
};

/// A tube of `tube_radius` around half a circle, its ends closed by hemispheres: the teeth arch
/// of seed 004's surgery scene (§5). The circle has radius `arch_radius` about `center` in the
/// plane normal to `axis`; the arc starts in `start_direction` from the centre and turns 180°
/// counter-clockwise about `axis`, ending opposite. `axis` and `start_direction` need not be
/// unit or exactly orthogonal (they are normalized and orthogonalized), but must not be
/// parallel.
struct HalfTorus {
  Vec3 center;
  Vec3 axis{0.0, 0.0, 1.0};
  Vec3 start_direction{1.0, 0.0, 0.0};
  double arch_radius = 1.0;
  double tube_radius = 0.25;
};

/// A hemispherical bowl: the cavity of a sphere of `radius` about `center` below the centre's
/// height (y), open at the top, its wall extending without bound outwards — the bowl that seed
/// 002 §5.5.4's ducks are dropped into. Inside the cavity the distance is to the wall; above the
/// rim, to the rim circle.
struct Bowl {
  Vec3 center;
  double radius = 1.0;
};
/// An axis-aligned box moving with constant velocity between start_time and stop_time, at
/// rest before and after (the scripted piston). With a finite return_time (≥ stop_time) it
/// travels the same stroke back from then on, at −velocity, like the piston of seed 000
/// Fig. 5 that rises after squashing the bear.
struct MovingBox {
  Vec3 start_center;
  Vec3 half_extents{0.5, 0.5, 0.5};
  Vec3 velocity;
  double start_time = 0.0;
  double stop_time = 0.0;
  double return_time = std::numeric_limits<double>::infinity();

  [[nodiscard]] Vec3 center_at(double time) const;
  [[nodiscard]] Vec3 velocity_at(double time) const;
};

using Obstacle = std::variant<HalfSpace, Sphere, Cylinder, Capsule, HalfTorus, Bowl, MovingBox>;

/// Where a point stands against an obstacle.
struct ObstacleProximity {
  double distance = 0.0;  ///< signed: negative inside the obstacle
  Vec3 normal;            ///< unit outward normal of the obstacle's surface nearest the point
  Vec3 velocity;          ///< the obstacle's velocity at that surface point
};

ObstacleProximity proximity(const Obstacle& obstacle, const Vec3& point, double time);

/// The closest obstacle (smallest signed distance) among `obstacles`; distance is +∞ when
/// the list is empty.
ObstacleProximity nearest_obstacle(const std::vector<Obstacle>& obstacles, const Vec3& point,
                                   double time);

}  // namespace cholsim::fem
