#pragma once
// Scenes of seed 002 Table 4.1 for CONJAC, built on the dynamics scenes (fem/dynamics/):
//  * dragon — no dragon mesh is bundled, so the bundled armadillo stands in, tetgen'd near the
//    DRAGON's 37,565 tets (62,373: tetgen gives 21K or about 60K here, not between), SNH E = 3e4 Pa, ν = 0.49, its feet held, no gravity, starting
//    with a sideways swing (the thesis pulls the jaws and body, then lets go); dynamic nodes spread from
//    the extremities (farthest-point sampling from the held feet); h = 5e-3, β = 0.5 for
//    CONJAC and 3.7 for the full model (§4.5's smallest stable values), γ = 1/3;
//  * armadillo — Table 4.1's adaptive ARMADILLO: the bundled armadillo at tetgen's quality
//    bound alone (20,938 tets, 5,514 vertices; the thesis: 18,448 and 5,159), SNH E = 6e4 Pa,
//    ν = 0.49, feet held, the same sideways push; five representative nodes — the four
//    extremities farthest from the feet and the node nearest the body's centre (§4.4: limbs
//    and torso) — switched by the liveliness metric (adaptive_conjac.hpp);
//  * twist — the 20×6×6-cell Kuhn bar (1,029 vertices, 4,320 tets, Table 4.1's TWIST), SNH
//    E = 1e4 Pa, ν = 0.4, one end held and the other moved to compress, stretch, bend and
//    twist (the dynamics BAR's motion); dynamic nodes at equal intervals along the axis.
#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "fem/dynamics/dynamics_scenes.hpp"

namespace cholsim::fem {

enum class ConjacSceneKind { dragon, twist, armadillo };

/// "dragon", "twist", "armadillo"; parse_conjac_scene is the inverse (std::invalid_argument listing them).
std::string_view conjac_scene_name(ConjacSceneKind kind);
ConjacSceneKind parse_conjac_scene(std::string_view name);

struct ConjacSceneOptions {
  ConjacSceneKind kind = ConjacSceneKind::dragon;
  Index dynamic_nodes = 6;
  double resolution = 1.0;             ///< tet count relative to Table 4.1's (about)
  std::filesystem::path mesh_directory;  ///< the repository's data/meshes (dragon)
  int threads = 2;
};

struct ConjacScene {
  DynamicsScene scene;               ///< mesh, material, held nodes, gravity
  std::vector<Index> dynamic_nodes;  ///< mesh nodes (armadillo: the representative nodes)
  bool adaptive = false;             ///< dynamic_nodes are representatives (armadillo)
  double time_step = 5e-3;
  double beta = 0.5;                 ///< CONJAC's β (eq. 4.11)
  double full_beta = 3.7;            ///< the full model's β (eq. 4.10) at the same h
  double gamma = 1.0 / 3.0;          ///< eq. 4.13
  double duration = 1.0;             ///< s
  double swing_speed = 0.0;          ///< initial sideways (x) speed at `height`, m/s, linear in y
  double height = 0.0;               ///< m
};

/// The scene's initial velocity of the free DOFs (zero but for the dragon's swing).
std::vector<double> initial_velocity(const ConjacScene& scene, const ElasticSystem& system);

/// Throws std::invalid_argument for bad options (dynamic nodes < 0 or more than the free
/// nodes, resolution ≤ 0) and std::runtime_error when a mesh or tetgen is missing.
ConjacScene make_conjac_scene(const ConjacSceneOptions& options);

}  // namespace cholsim::fem
