#pragma once
// The scene `cholsim corot` simulates, from defaults, a JSON file (--scene) and flags, in that
// order of precedence (a flag given on the command line overrides the file).
//
// Scene file (every key optional; unknown keys are errors, so typos do not pass silently):
//   {
//     "mesh": "bunny.msh",               // relative to the scene file's folder
//     "builtin": "torus", "resolution": 24, "scale": 1.0, "tetgen_switches": "pYq2",
//     "material": {"youngs": 5e6, "poisson": 0.4, "density": 1000},
//     "rayleigh": {"alpha": 0.0, "beta": 0.0},          // C = αM + βK
//     "method": "wc", "tau": 5e-3, "budget": 0.33,       // or "budget": "0.05s"
//     "frames": 120, "dt": 0.016667, "steps_per_frame": 1, "drop_height": 0.3,
//     "ground": true, "friction": 0.5, "contact_stiffness": 0,
//     "implicit_contact": false,                       // springs' stiffness in A too
//     "initial_velocity": [0, 0, 0],
//     "obstacles": [
//       {"type": "plane", "normal": [0, 1, 0], "offset": 0},
//       {"type": "sphere", "center": [0, 0.1, 0], "radius": 0.1},
//       {"type": "cylinder", "end_a": [-1, 0.1, 0], "end_b": [1, 0.1, 0], "radius": 0.05},
//       {"type": "piston", "center": [0, 1, 0], "half_extents": [0.5, 0.1, 0.5],
//        "velocity": [0, -0.5, 0], "start_time": 0.5, "stop_time": 1.5,
//        "return_time": 2.0}                            // optional: the stroke back up
//     ],
//     "regions": [                                      // per-element materials, later wins
//       {"sphere": {"center": [0, 0.3, 0], "radius": 0.1}, "material": {"youngs": 1.5e9}},
//       {"box": {"min": [-1, 0, -1], "max": [1, 0.05, 1]}, "material": {"density": 2000}}
//     ]
//   }
// Region shapes are in the scene's coordinates, those of frame 0 (the mesh already placed
// drop_height above the ground and centred over x = z = 0); an element belongs to the last
// region holding its centroid, and the material keys a region leaves out are the base's.
// Bundled scenes (seed 000 §5.1 and Table V) are in data/scenes/.
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fem/contact/obstacles.hpp"
#include "fem/corotational/corotational_simulation.hpp"
#include "fem/elements/elastic_body.hpp"
#include "mesh_source.hpp"

#include "command.hpp"

namespace cholsim::apps {

/// The axis-aligned box {x : low ≤ x ≤ high} (per component).
struct AxisAlignedBox {
  fem::Vec3 low;
  fem::Vec3 high;
};

/// Material values a scene gives; those left out keep the material they are applied to.
struct MaterialOverrides {
  std::optional<double> youngs_modulus;
  std::optional<double> poisson_ratio;
  std::optional<double> density;

  [[nodiscard]] fem::Material applied_to(fem::Material base) const;
};

/// Part of the body made of another material (seed 000 §5.1: the spider's legs and body are
/// about 300× stiffer than its joints and thread): the elements whose centroid lies inside.
struct MaterialRegion {
  std::variant<fem::Sphere, AxisAlignedBox> shape;
  MaterialOverrides material;

  [[nodiscard]] bool contains(const fem::Vec3& point) const;
};

struct CorotScene {
  MeshSourceOptions mesh;
  fem::Material material;            ///< E = 5e6 Pa, ν = 0.4, ρ = 1000 kg/m³
  double rayleigh_alpha = 0.0;       ///< mass damping
  double rayleigh_beta = 0.0;        ///< stiffness damping
  fem::CorotationalMethod method = fem::CorotationalMethod::warp_canceling;
  double tau = 5e-3;                 ///< seed 000 §4.4 target quality
  std::optional<double> budget_fraction;  ///< of a full factorization (target time, hybrid)
  std::optional<double> budget_seconds;
  int frames = 120;
  double time_step = 1.0 / 60.0;     ///< of one implicit Euler step
  /// Steps between written frames: a scene that needs short steps (a stiff contact spring,
  /// penalty_contact.hpp) still writes frames at a viewing rate.
  int steps_per_frame = 1;
  double drop_height = 0.3;          ///< m between the ground and the object's lowest point
  bool ground = true;                ///< the plane y = 0
  double friction = 0.5;
  double contact_stiffness = 0.0;    ///< 0: the simulation's default for the mesh
  bool implicit_contact = false;     ///< fem::PenaltyContact::implicit
  fem::Vec3 initial_velocity{0.0, 0.0, 0.0};
  std::vector<fem::Obstacle> obstacles;  ///< besides the ground
  std::vector<MaterialRegion> regions;   ///< per-element materials over the base `material`
};

/// A scene file or flag value that cannot be used; what() names the file (with the line for
/// JSON syntax errors) or the flag. Exit code 2.
class SceneError : public BadInputError {
 public:
  using BadInputError::BadInputError;
};

/// Applies the keys of the JSON scene file at `path` to `scene`.
void read_scene_file(const std::filesystem::path& path, CorotScene& scene);

/// "exact" | "cg" | "warping" | "wc"; throws SceneError naming `where` otherwise.
fem::CorotationalMethod parse_method(const std::string& text, const std::string& where);
std::string method_name(fem::CorotationalMethod method);

/// "0.33" (fraction of a full factorization, in (0, 1]) or "0.05s" (seconds, > 0); sets the
/// matching member of `scene` and clears the other. Throws SceneError naming `where`.
void parse_budget(const std::string& text, const std::string& where, CorotScene& scene);
/// The same for a budget given as a number: a fraction in (0, 1].
void set_budget_fraction(double fraction, const std::string& where, CorotScene& scene);

/// The simulation options the scene asks for (obstacles with the ground first).
fem::CorotationalOptions simulation_options(const CorotScene& scene, bool thin_sheet, int threads);

/// Moves `mesh` so that its lowest point is `drop_height` above y = 0, centred over x = z = 0.
void place_above_ground(fem::TetMesh& mesh, double drop_height);

/// The elastic body of the placed mesh with the scene's materials: the base material, and each
/// region's for the elements whose centroid it holds (the last such region). Throws
/// std::invalid_argument for an invalid material, naming it.
fem::ElasticBody make_scene_body(fem::TetMesh placed, const CorotScene& scene, std::string_view source);

}  // namespace cholsim::apps
