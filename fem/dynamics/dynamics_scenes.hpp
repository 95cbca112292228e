#pragma once
// The scenes of seed 002 Table 5.2 (§5.5), sized like the thesis' Table 5.1 by default:
//  * bar: a 44×14×14-cell Kuhn bar (10,125 nodes, 51,744 tets, 3.00 kg), one end clamped, the
//    other moved rigidly over 5 s — compressed, stretched, bent and twisted (§5.5.1);
//    quasistatic, h = 0.05 s; SNH, E = 2e4 Pa, ν = 0.49; variants: E, ν, heterogeneous
//    (alternating 8e3 / 2e4 Pa bands along the bar), anisotropic (a 4e4 Pa StVK fibre along
//    the bar on SNH 2e4 Pa);
//  * armadillo: the bundled armadillo surface tetrahedralized by tetgen (≈ 98K tets, 1.37 kg),
//    its feet attached to a platform shaken sideways (§5.5.2); BDF2, h = 1e-2 s; SNH,
//    E = 1e7 Pa, ν = 0.49; variants: damping, material, integrator, h;
//  * bunny: the bundled bunny tetrahedralized (≈ 14K tets, 2.25 kg) dropped on the floor,
//    with self-contact (§5.5.3); SDIRK2, h = 3e-3 s; SNH, E = 5e4 Pa, ν = 0.49, Green damping;
//  * bodies: 50 (or 100) small balls of 736 tets each, 26 g (Table 5.1's DUCKS: 36,800 tets,
//    1.31 kg for 50), dropped into a bowl in layers, colliding with it and each other
//    (§5.5.4); SDIRK2, h = 1e-2 s; SNH, E = 5e4 Pa, ν = 0.49, Green damping 2e-3 s.
// Every size can be scaled down (`resolution`) for tests and quick runs.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fem/contact/obstacles.hpp"
#include "fem/dynamics/elastic_system.hpp"
#include "solvers/integrators/time_integrator.hpp"

namespace cholsim::fem {

enum class DynamicsSceneKind { bar, armadillo, bunny, bodies };

/// "bar", "armadillo", "bunny", "bodies".
std::string_view scene_name(DynamicsSceneKind kind);
/// The inverse of scene_name; std::invalid_argument listing the names.
DynamicsSceneKind parse_scene(std::string_view name);

struct DynamicsSceneOptions {
  DynamicsSceneKind kind = DynamicsSceneKind::bar;
  /// Mesh size relative to the thesis' (1 = Table 5.1's counts); the tet count scales about
  /// with its cube for the bar and with it for the tetgen'd models (by the maximum tet volume).
  double resolution = 1.0;
  /// Overrides (unset: the scene's Table 5.2 default).
  std::optional<double> youngs_modulus;
  std::optional<double> poisson_ratio;
  std::optional<HyperelasticModel> model;
  std::optional<double> damping;        ///< Green damping coefficient, s
  std::optional<double> time_step;
  std::optional<solvers::IntegratorKind> integrator;
  bool heterogeneous = false;           ///< bar only
  bool anisotropic = false;             ///< bar only
  int body_count = 50;                  ///< bodies only: how many (the thesis: 50 and 100)
  /// Folder holding bunny.obj and armadillo_4k.node/.ele (the repository's data/meshes).
  std::filesystem::path mesh_directory;
  int threads = 2;
};

struct DynamicsContact {
  std::vector<Obstacle> obstacles;
  bool body_contact = false;
  bool self_contact = true;          ///< with body_contact: a body against itself too
  double stiffness = 0.0;            ///< N/m
  double activation_distance = 0.0;  ///< m
  double friction_coefficient = 0.0;
  double friction_velocity = 1e-3;   ///< m/s: below it static friction is smoothed (IPC's ε_v)
};

struct DynamicsScene {
  std::string name;
  std::string description;   ///< one line: mesh source, counts, material, integrator
  std::string mesh_source;   ///< e.g. "bunny.obj via tetgen -pq1.414a…"
  TetMesh mesh;
  std::vector<DynamicsMaterial> materials;
  std::vector<Index> element_material;
  ElasticSystemOptions system;
  std::optional<DynamicsContact> contact;
  solvers::IntegratorKind integrator = solvers::IntegratorKind::quasistatic;
  double time_step = 0.05;
  double duration = 5.0;     ///< the thesis' simulated time
};

/// Builds the scene. Throws std::invalid_argument for bad options (resolution ≤ 0, E ≤ 0,
/// ν outside (−1, ½), h ≤ 0, damping < 0) naming the option, and std::runtime_error when a
/// bundled mesh is missing or tetgen is needed and not installed.
DynamicsScene make_dynamics_scene(const DynamicsSceneOptions& options);

/// The scene's system, contact attached.
std::unique_ptr<ElasticSystem> make_scene_system(const DynamicsScene& scene);

}  // namespace cholsim::fem
