#pragma once
// The cloth scenes of seed 002 §2.7 (Table 2.1): EDGE, WIRE, NAILS, JAWS, PUSH, THROW, LO-RES
// and FRICTION. Units SI, z up, gravity −9.8 m/s². The material is the public EDGE scene's
// (sueda/eol-cloth simulationSettingsBox.json): 1 × 1 m cloth, area density 0.05 kg/m²,
// E = 50, ν = 0.01, bending 1e-5, h = 5e-3 s.
#include <string>
#include <string_view>
#include <vector>

#include "fem/cloth/cloth_simulation.hpp"

namespace cholsim::fem::cloth {

enum class ClothSceneKind { edge, wire, nails, jaws, push, throw_box, lo_res, friction };

struct ClothSceneOptions {
  ClothSceneKind kind = ClothSceneKind::edge;
  /// Cells along each side of the cloth (two triangles a cell); 0: the scene's (39, i.e.
  /// 3,042 faces, the size of the thesis' EDGE run; LO-RES: 9).
  int cells = 0;
  ClothMethod method = ClothMethod::eol;
  bool cone = false;      ///< conformal Lagrangian with both normals (locks, §2.7 EDGE)
  double friction = -1.0;  ///< < 0: the scene's (FRICTION: 0.5; the others 0)
  bool consistent_mass = false;  ///< eq. 2.8's consistent inertia instead of the lumped one
};

struct ClothScene {
  std::string name;
  std::string description;
  ClothMesh cloth;
  ClothObstacles obstacles;
  std::vector<ScriptedMotion> scripted;
  ClothSimulationOptions options;
  double duration = 1.0;  ///< seconds the scene is meant to run
};

ClothScene make_cloth_scene(const ClothSceneOptions& options);

std::string_view to_string(ClothSceneKind kind);
/// "edge", "wire", "nails", "jaws", "push", "throw", "lo-res" or "friction"; throws
/// std::invalid_argument naming the choices otherwise.
ClothSceneKind parse_cloth_scene(std::string_view name);

}  // namespace cholsim::fem::cloth
