#include "fem/cloth/cloth_scenes.hpp"

#include <array>
#include <initializer_list>
#include <stdexcept>

namespace cholsim::fem::cloth {

namespace {

constexpr ClothSceneKind kAllScenes[] = {ClothSceneKind::edge,  ClothSceneKind::wire,      ClothSceneKind::nails,
                                         ClothSceneKind::jaws,  ClothSceneKind::push,      ClothSceneKind::throw_box,
                                         ClothSceneKind::lo_res, ClothSceneKind::friction};

/// The 1 × 1 m sheet at height z, material (u, v) ↦ world (x0 + u, y0 + v, z).
ClothMesh flat_sheet(int cells, double z, double x0 = 0.0, double y0 = 0.0) {
  return make_rectangle_cloth(1.0, 1.0, cells, cells, {x0, y0, z}, {1.0, 0.0, 0.0}, {0.0, 1.0, 0.0});
}

/// Corners (u, v) held until `release`, then pulled at `pull` (the public EDGE script: the two
/// corners at v = 1 fixed, pulled along x at 0.1 m/s from t = 0.35 s).
void hold_then_pull(ClothScene& scene, std::initializer_list<std::array<double, 2>> corners, double release,
                    const Vec3& pull) {
  for (const auto& c : corners) {
    scene.scripted.push_back({c[0], c[1], Vec3{}, 0.0, release});
    scene.scripted.push_back({c[0], c[1], pull, release, 1e300});
  }
}

/// A long box of square cross-section `thickness` along y through (x, ·, z_top − thickness/2):
/// its top edges are the wire the cloth slides over.
ClothBox wire_along_y(double x, double z_top, double thickness) {
  return {{x, 0.5, z_top - 0.5 * thickness}, {0.5 * thickness, 0.75, 0.5 * thickness}, {}, 0.0, 1e300};
}

void edge_scene(ClothScene& s, int cells) {
  s.description = "EDGE: a 1 x 1 m cloth held at two corners falls onto a box and is pulled over its edge "
                  "(the public eol-cloth box scene)";
  s.cloth = flat_sheet(cells, 0.0);
  s.obstacles.boxes.push_back({{0.9175, 0.4425, -0.549}, {0.6, 0.75, 0.5}, {}, 0.0, 1e300});
  hold_then_pull(s, {{0.0, 1.0}, {1.0, 1.0}}, 0.35, {0.1, 0.0, 0.0});
  s.duration = 1.5;
}

void wire_scene(ClothScene& s, int cells) {
  s.description = "WIRE: the cloth drapes over a 1 cm wire and is pulled across it";
  s.cloth = flat_sheet(cells, 0.0);
  s.obstacles.boxes.push_back(wire_along_y(0.5, -0.02, 0.01));
  hold_then_pull(s, {{1.0, 0.0}, {1.0, 1.0}}, 0.35, {0.1, 0.0, 0.0});
  s.duration = 1.5;
}

void nails_scene(ClothScene& s, int cells) {
  s.description = "NAILS: the cloth falls onto a 3 x 3 bed of nails and is pulled across it";
  s.cloth = flat_sheet(cells, 0.0);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) s.obstacles.points.push_back({{0.3 + 0.2 * i, 0.3 + 0.2 * j, -0.03}, {0.0, 0.0, 1.0}});
  }
  hold_then_pull(s, {{1.0, 0.0}, {1.0, 1.0}}, 0.2, {0.1, 0.0, 0.0});
  s.duration = 1.0;
}

void jaws_scene(ClothScene& s, int cells) {
  s.description = "JAWS: the cloth is pulled through the 1.2 cm gap between two wires";
  s.cloth = flat_sheet(cells, 0.0);
  s.obstacles.boxes.push_back(wire_along_y(0.5, -0.006, 0.01));
  s.obstacles.boxes.push_back(wire_along_y(0.5, 0.016, 0.01));
  hold_then_pull(s, {{1.0, 0.0}, {1.0, 1.0}}, 0.2, {0.1, 0.0, 0.0});
  s.duration = 1.5;
}

void push_scene(ClothScene& s, int cells) {
  s.description = "PUSH: a box rises under a cloth held at two corners, then slides sideways under it";
  s.cloth = flat_sheet(cells, 0.0);
  ClothBox box{{0.5, 0.4, -0.25}, {0.15, 0.15, 0.15}, {0.0, 0.0, 0.3}, 0.1, 0.6};
  s.obstacles.boxes.push_back(box);
  hold_then_pull(s, {{0.0, 1.0}, {1.0, 1.0}}, 1e300, {});
  s.duration = 1.0;
}

void throw_scene(ClothScene& s, int cells) {
  s.description = "THROW: a free cloth thrown onto a box moving against it";
  s.cloth = flat_sheet(cells, 0.1, -0.5, 0.0);
  for (std::size_t i = 0; i < s.cloth.velocities.size(); i += 3) s.cloth.velocities[i] = 1.0;
  s.obstacles.boxes.push_back({{0.6, 0.5, -0.2}, {0.2, 0.3, 0.2}, {-0.3, 0.0, 0.0}, 0.0, 1e300});
  s.duration = 1.0;
}

void friction_scene(ClothScene& s, int cells) {
  s.description = "FRICTION: the cloth falls onto the inner corners of four posts; without friction it slides off";
  s.cloth = flat_sheet(cells, 0.0, 0.03, 0.0);
  for (const double x : {0.3, 0.7}) {
    for (const double y : {0.3, 0.7}) {
      const double sx = x < 0.5 ? -1.0 : 1.0, sy = y < 0.5 ? -1.0 : 1.0;
      s.obstacles.boxes.push_back({{x + 0.05 * sx, y + 0.05 * sy, -0.55}, {0.05, 0.05, 0.5}, {}, 0.0, 1e300});
    }
  }
  s.duration = 1.5;
}

}  // namespace

std::string_view to_string(ClothSceneKind kind) {
  switch (kind) {
    case ClothSceneKind::edge: return "edge";
    case ClothSceneKind::wire: return "wire";
    case ClothSceneKind::nails: return "nails";
    case ClothSceneKind::jaws: return "jaws";
    case ClothSceneKind::push: return "push";
    case ClothSceneKind::throw_box: return "throw";
    case ClothSceneKind::lo_res: return "lo-res";
    case ClothSceneKind::friction: return "friction";
  }
  return "unknown";
}

ClothSceneKind parse_cloth_scene(std::string_view name) {
  for (ClothSceneKind kind : kAllScenes) {
    if (name == to_string(kind)) return kind;
  }
  throw std::invalid_argument("unknown cloth scene '" + std::string(name) +
                              "', expected edge, wire, nails, jaws, push, throw, lo-res or friction");
}

ClothScene make_cloth_scene(const ClothSceneOptions& options) {
  ClothScene s;
  s.name = std::string(to_string(options.kind));
  const int cells = options.cells > 0 ? options.cells : (options.kind == ClothSceneKind::lo_res ? 9 : 39);
  switch (options.kind) {
    case ClothSceneKind::edge: edge_scene(s, cells); break;
    case ClothSceneKind::lo_res:
      edge_scene(s, cells);
      s.description = "LO-RES: " + s.description.substr(6) + ", at a coarse resolution";
      break;
    case ClothSceneKind::wire: wire_scene(s, cells); break;
    case ClothSceneKind::nails: nails_scene(s, cells); break;
    case ClothSceneKind::jaws: jaws_scene(s, cells); break;
    case ClothSceneKind::push: push_scene(s, cells); break;
    case ClothSceneKind::throw_box: throw_scene(s, cells); break;
    case ClothSceneKind::friction: friction_scene(s, cells); break;
  }
  // Lumped (vertex-quadrature) inertia: with eq. 2.8's consistent inertia the hanging EDGE
  // cloth gained energy in our runs (total energy up by 0.01 J over 0.05 s while swinging);
  // the lumped form only lost it. Both are available (ClothMaterial::lumped_mass).
  s.options.material.lumped_mass = !options.consistent_mass;
  s.options.constraints.method = options.method;
  s.options.constraints.cone = options.cone;
  s.options.friction = options.friction >= 0.0 ? options.friction : (options.kind == ClothSceneKind::friction ? 0.5 : 0.0);
  return s;
}

}  // namespace cholsim::fem::cloth
