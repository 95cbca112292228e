#include "fem/dynamics/dynamics_scenes.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numbers>
#include <sstream>
#include <stdexcept>

#include "fem/contact/contact_potential.hpp"
#include "fem/mesh/mesh_io.hpp"
#include "fem/mesh/procedural_meshes.hpp"
#include "fem/mesh/tetgen.hpp"
#include "solvers/nonlinear/named_choices.hpp"

namespace cholsim::fem {

namespace {

constexpr solvers::NameTable<DynamicsSceneKind, 4> scene_names{{
    {DynamicsSceneKind::bar, "bar"},
    {DynamicsSceneKind::armadillo, "armadillo"},
    {DynamicsSceneKind::bunny, "bunny"},
    {DynamicsSceneKind::bodies, "bodies"},
}};

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

double option_or(const std::optional<double>& value, double fallback, const char* name, bool allow_zero) {
  const double v = value.value_or(fallback);
  if (!std::isfinite(v) || v < 0.0 || (!allow_zero && v == 0.0)) {
    throw std::invalid_argument(std::string("dynamics scene: ") + name + " must be " +
                                (allow_zero ? "finite and ≥ 0" : "finite and > 0") + ", got " + std::to_string(v));
  }
  return v;
}

DynamicsMaterial scene_material(const DynamicsSceneOptions& options, double youngs_modulus, double density) {
  DynamicsMaterial material;
  material.elastic.youngs_modulus = option_or(options.youngs_modulus, youngs_modulus, "Young's modulus", false);
  material.elastic.poisson_ratio = options.poisson_ratio.value_or(0.49);
  if (!(material.elastic.poisson_ratio > -1.0 && material.elastic.poisson_ratio < 0.5)) {
    throw std::invalid_argument("dynamics scene: Poisson's ratio must lie in (-1, 0.5), got " +
                                std::to_string(material.elastic.poisson_ratio));
  }
  material.elastic.density = density;
  material.model = options.model.value_or(HyperelasticModel::stable_neo_hookean);
  return material;
}

// Smoothstep between keyframes: the driven end starts and stops each phase at rest, so the
// quasistatic steps see no jump in the boundary velocity.
double smoothstep(double u) {
  u = std::clamp(u, 0.0, 1.0);
  return u * u * (3.0 - 2.0 * u);
}

Mat3 rotation_about_z(double angle) {
  const double c = std::cos(angle), s = std::sin(angle);
  return Mat3::from_rows({c, -s, 0.0}, {s, c, 0.0}, {0.0, 0.0, 1.0});
}

Mat3 rotation_about_x(double angle) {
  const double c = std::cos(angle), s = std::sin(angle);
  return Mat3::from_rows({1.0, 0.0, 0.0}, {0.0, c, -s}, {0.0, s, c});
}

// The BAR's driven end (§5.5.1): keyframes every 1.25 s of (axial offset, bend angle, twist
// angle) — compressed by 20 % of the length, stretched by 20 %, bent by 45°, twisted by 180°.
struct BarKeyframe {
  double offset, bend, twist;
};

Vec3 bar_end_position(const Vec3& rest, double time, const Vec3& end_center, double length) {
  constexpr double kPhase = 1.25;
  const std::array<BarKeyframe, 5> keys = {{{0.0, 0.0, 0.0},
                                            {-0.2, 0.0, 0.0},
                                            {0.2, 0.0, 0.0},
                                            {0.0, std::numbers::pi / 4.0, 0.0},
                                            {0.0, 0.0, std::numbers::pi}}};
  const double clamped = std::clamp(time, 0.0, kPhase * 4.0);
  const auto phase = std::min<std::size_t>(3, static_cast<std::size_t>(clamped / kPhase));
  const double s = smoothstep(clamped / kPhase - static_cast<double>(phase));
  const BarKeyframe& a = keys[phase];
  const BarKeyframe& b = keys[phase + 1];
  const double offset = (a.offset + s * (b.offset - a.offset)) * length;
  const double bend = a.bend + s * (b.bend - a.bend);
  const double twist = a.twist + s * (b.twist - a.twist);
  const Mat3 rotation = rotation_about_z(bend) * rotation_about_x(twist);
  return end_center + Vec3{offset, 0.0, 0.0} + rotation * (rest - end_center);
}

std::vector<Index> nodes_where(const TetMesh& mesh, const std::function<bool(const Vec3&)>& predicate) {
  std::vector<Index> nodes;
  for (Index v = 0; v < mesh.node_count(); ++v) {
    if (predicate(node_position(mesh.positions, v))) nodes.push_back(v);
  }
  return nodes;
}

DynamicsScene make_bar(const DynamicsSceneOptions& options) {
  // Table 5.1: 10,125 vertices, 51,744 tets, 3.00 kg — exactly a 44×14×14 Kuhn grid.
  constexpr double kLength = 0.44, kWidth = 0.14, kMass = 3.0;
  const auto cells = std::max<Index>(3, static_cast<Index>(std::lround(44.0 * options.resolution)));
  DynamicsScene scene;
  scene.name = "bar";
  scene.mesh = make_box_mesh(kLength, kWidth, kWidth, cells);
  scene.mesh_source = "Kuhn box " + std::to_string(cells) + " cells along 0.44 m";
  const double density = kMass / (kLength * kWidth * kWidth);
  DynamicsMaterial base = scene_material(options, 2e4, density);
  if (options.anisotropic) {
    base.fibre_stiffness = 4e4;  // Table 5.2: aSTVK 4e4 + SNH 2e4
    base.fibre_direction = {1.0, 0.0, 0.0};
  }
  scene.materials = {base};
  scene.element_material.assign(at(scene.mesh.tet_count()), 0);
  if (options.heterogeneous) {
    // Table 5.2: 8e3 and 2e4 Pa, alternating along the bar (Fig. 5.6), eight bands.
    DynamicsMaterial soft = base;
    soft.elastic.youngs_modulus = base.elastic.youngs_modulus * 0.4;
    scene.materials.push_back(soft);
    for (Index e = 0; e < scene.mesh.tet_count(); ++e) {
      double x = 0.0;
      for (int k = 0; k < 4; ++k) x += 0.25 * scene.mesh.positions[3 * at(scene.mesh.tets[4 * at(e) + at(k)])];
      scene.element_material[at(e)] = static_cast<Index>(std::floor(x / kLength * 8.0)) % 2;
    }
  }
  const double tolerance = 1e-9;
  const Vec3 end_center{kLength, kWidth / 2.0, kWidth / 2.0};
  // Under gravity (ElasticSystemOptions' default, −y, the plane of the bend): §5.5.1's timings
  // vary with E (Fig. 5.5a: "the softer object takes the longest"), which a bar held only by
  // prescribed displacements cannot show — its equilibria do not depend on E.
  scene.system.prescribed.push_back(
      {nodes_where(scene.mesh, [&](const Vec3& p) { return p.x < tolerance; }),
       [](const Vec3& rest, double) { return rest; }});
  scene.system.prescribed.push_back(
      {nodes_where(scene.mesh, [&](const Vec3& p) { return p.x > kLength - tolerance; }),
       [end_center](const Vec3& rest, double time) { return bar_end_position(rest, time, end_center, kLength); }});
  scene.integrator = solvers::IntegratorKind::quasistatic;
  scene.time_step = 0.05;
  scene.duration = 5.0;
  return scene;
}

// The signed volume enclosed by a closed, outward-oriented surface (divergence theorem).
double enclosed_volume(const SurfaceMesh& surface) {
  double volume = 0.0;
  for (Index t = 0; t < surface.triangle_count(); ++t) {
    const Vec3 a = node_position(surface.positions, surface.triangles[3 * at(t)]);
    const Vec3 b = node_position(surface.positions, surface.triangles[3 * at(t) + 1]);
    const Vec3 c = node_position(surface.positions, surface.triangles[3 * at(t) + 2]);
    volume += linalg::dot(a, linalg::cross(b, c)) / 6.0;
  }
  return volume;
}

// The surface with only the nodes its triangles use (a tet mesh's boundary keeps every node).
SurfaceMesh compact_surface(const SurfaceMesh& surface) {
  std::vector<Index> renumber(at(surface.node_count()), -1);
  SurfaceMesh compact;
  for (Index v : surface.triangles) {
    if (renumber[at(v)] >= 0) continue;
    renumber[at(v)] = compact.node_count();
    for (std::size_t c = 0; c < 3; ++c) compact.positions.push_back(surface.positions[3 * at(v) + c]);
  }
  compact.triangles.reserve(surface.triangles.size());
  for (Index v : surface.triangles) compact.triangles.push_back(renumber[at(v)]);
  return compact;
}

void transform_surface(SurfaceMesh& surface, double scale, const Vec3& shift) {
  for (std::size_t i = 0; i < surface.positions.size(); ++i) {
    surface.positions[i] = surface.positions[i] * scale + shift[static_cast<int>(i % 3)];
  }
}

// Tetrahedralizes `surface` with tetgen's `quality` switches (e.g. "pYq1.2") to about
// `target_tets` tets. The quality bound alone gives a model-dependent count (it refines where
// the surface has fine features); when that is below the target, a maximum tet volume a is
// added, starting from volume/target and rescaled by the square root of the ratio obtained (the
// count responds to a less than proportionally: the quality bound keeps refining the fine
// features) until the count is within 25 % of the target, in at most four more runs, keeping
// the closest. A count above the target without a is the quality bound's floor.
TetgenResult tetrahedralize_to(const SurfaceMesh& surface, const std::string& quality, double target_tets) {
  constexpr double kAcceptedRatio = 1.25;
  const auto miss = [&](const TetgenResult& result) {  // |log(count/target)|
    return std::abs(std::log(static_cast<double>(result.mesh.tet_count()) / target_tets));
  };
  TetgenOptions tetgen;
  tetgen.switches = quality;
  TetgenResult best = tetrahedralize(surface, tetgen);
  if (best.mesh.tet_count() * kAcceptedRatio >= target_tets) return best;
  double max_volume = enclosed_volume(surface) / target_tets;
  for (int attempt = 0; attempt < 4 && miss(best) > std::log(kAcceptedRatio); ++attempt) {
    std::ostringstream switches;
    switches.precision(3);
    switches << quality << 'a' << max_volume;
    tetgen.switches = switches.str();
    TetgenResult result = tetrahedralize(surface, tetgen);
    max_volume *= std::sqrt(static_cast<double>(result.mesh.tet_count()) / target_tets);
    if (miss(result) < miss(best)) best = std::move(result);
  }
  return best;
}

std::filesystem::path bundled(const DynamicsSceneOptions& options, const std::string& file) {
  const std::filesystem::path path = options.mesh_directory / file;
  if (!std::filesystem::exists(path)) {
    throw std::runtime_error("dynamics scene: the bundled mesh " + path.string() + " was not found");
  }
  return path;
}

DynamicsScene make_armadillo(const DynamicsSceneOptions& options) {
  constexpr double kHeight = 0.4, kMass = 1.37, kTets = 98486.0;  // Table 5.1
  const TetMesh coarse = read_tet_mesh(bundled(options, "armadillo_4k.node"));
  SurfaceMesh surface = compact_surface(boundary_surface(coarse));
  const std::array<double, 6> box = bounding_box(surface.positions);
  transform_surface(surface, kHeight / (box[4] - box[1]), {0.0, 0.0, 0.0});
  const std::array<double, 6> scaled = bounding_box(surface.positions);
  transform_surface(surface, 1.0, {-0.5 * (scaled[0] + scaled[3]), -scaled[1], -0.5 * (scaled[2] + scaled[5])});
  const double volume = enclosed_volume(surface);
  TetgenResult meshed = tetrahedralize_to(surface, "pq1.414", kTets * options.resolution);
  DynamicsScene scene;
  scene.name = "armadillo";
  scene.mesh = remove_unused_nodes(meshed.mesh);
  scene.mesh_source = "armadillo_4k surface via " + meshed.command;
  scene.materials = {scene_material(options, 1e7, kMass / volume)};
  scene.element_material.assign(at(scene.mesh.tet_count()), 0);
  // The feet: nodes within 4 % of the height above the sole, carried by the platform, which
  // shakes sideways at 2 Hz with 2.5 cm amplitude (Fig. 5.8).
  scene.system.prescribed.push_back(
      {nodes_where(scene.mesh, [&](const Vec3& p) { return p.y < 0.04 * kHeight; }), [](const Vec3& rest, double time) {
         return rest + Vec3{0.025 * std::sin(2.0 * std::numbers::pi * 2.0 * time), 0.0, 0.0};
       }});
  const double damping = option_or(options.damping, 0.0, "damping", true);
  if (damping > 0.0) scene.system.damping = {DampingModel::green, 0.0, damping};
  scene.integrator = solvers::IntegratorKind::bdf2;
  scene.time_step = 1e-2;
  scene.duration = 2.0;
  return scene;
}

DynamicsScene make_bunny(const DynamicsSceneOptions& options) {
  constexpr double kMass = 2.25, kDensity = 1000.0, kTets = 14374.0, kDropHeight = 0.05;  // Table 5.1
  SurfaceMesh surface = read_surface_mesh(bundled(options, "bunny.obj"));
  const double scale = std::cbrt(kMass / kDensity / enclosed_volume(surface));
  transform_surface(surface, scale, {0.0, 0.0, 0.0});
  const std::array<double, 6> box = bounding_box(surface.positions);
  transform_surface(surface, 1.0, {-0.5 * (box[0] + box[3]), kDropHeight - box[1], -0.5 * (box[2] + box[5])});
  // Keeping the surface (Y) at a tight quality bound gives the thesis' 14K tets (Table 5.1).
  TetgenResult meshed = tetrahedralize_to(surface, "pYq1.2", kTets * options.resolution);
  DynamicsScene scene;
  scene.name = "bunny";
  scene.mesh = remove_unused_nodes(meshed.mesh);
  scene.mesh_source = "bunny.obj via " + meshed.command;
  scene.materials = {scene_material(options, 5e4, kDensity)};
  scene.element_material.assign(at(scene.mesh.tet_count()), 0);
  scene.system.damping = {DampingModel::green, 0.0, option_or(options.damping, 2e-2, "damping", true)};
  DynamicsContact contact;
  contact.obstacles = {HalfSpace{{0.0, 1.0, 0.0}, 0.0}};
  contact.body_contact = true;
  contact.stiffness = 2e4;
  contact.activation_distance = 2e-3;
  contact.friction_coefficient = 0.3;
  scene.contact = contact;
  scene.integrator = solvers::IntegratorKind::sdirk2;
  scene.time_step = 3e-3;
  scene.duration = 3.0;
  return scene;
}

// `copies` of `body`, each shifted by its offset, as one mesh (its connected components are
// the bodies the contact potential tells apart).
TetMesh merged_copies(const TetMesh& body, std::span<const Vec3> offsets) {
  TetMesh merged;
  for (const Vec3& offset : offsets) {
    const Index first = merged.node_count();
    for (Index v = 0; v < body.node_count(); ++v) {
      const Vec3 p = node_position(body.positions, v) + offset;
      merged.positions.insert(merged.positions.end(), {p.x, p.y, p.z});
    }
    for (Index corner : body.tets) merged.tets.push_back(first + corner);
  }
  return merged;
}

DynamicsScene make_bodies(const DynamicsSceneOptions& options) {
  // Table 5.1's DUCKS: 50 bodies, 36,800 tets and 1.31 kg in all — 736 tets and 26 g each.
  constexpr double kBodyMass = 1.31 / 50.0, kDensity = 1000.0, kBowlRadius = 0.15, kSpacing = 0.045;
  if (options.body_count < 1 || options.body_count > 1000) {
    throw std::invalid_argument("dynamics scene: the body count must lie in 1..1000, got " +
                                std::to_string(options.body_count));
  }
  const double radius = std::cbrt(3.0 * kBodyMass / kDensity / (4.0 * std::numbers::pi));
  const auto cells = std::max<Index>(2, static_cast<Index>(std::lround(6.0 * std::cbrt(options.resolution))));
  TetMesh ball = make_sphere_mesh(radius, cells);
  // Layers of 4 × 4 above the bottom of the bowl, the upper ones above its rim: they fall in.
  std::vector<Vec3> offsets;
  for (int k = 0; k < options.body_count; ++k) {
    const int layer = k / 16, row = (k % 16) / 4, column = k % 4;
    const double jitter = 0.003 * std::sin(1.7 * k);  // breaks the grid's symmetry a little
    offsets.push_back({(column - 1.5) * kSpacing + jitter, 0.1 + layer * kSpacing, (row - 1.5) * kSpacing - jitter});
  }
  DynamicsScene scene;
  scene.name = "bodies";
  scene.mesh = merged_copies(ball, offsets);
  scene.mesh_source = std::to_string(options.body_count) + " balls of " + std::to_string(ball.tet_count()) + " tets";
  scene.materials = {scene_material(options, 5e4, kDensity)};
  scene.element_material.assign(at(scene.mesh.tet_count()), 0);
  scene.system.damping = {DampingModel::green, 0.0, option_or(options.damping, 2e-3, "damping", true)};
  DynamicsContact contact;
  contact.obstacles = {Bowl{{0.0, kBowlRadius, 0.0}, kBowlRadius}};
  contact.body_contact = true;
  contact.self_contact = false;  // convex balls: only ball against ball
  contact.stiffness = 5e3;
  contact.activation_distance = 1e-3;
  contact.friction_coefficient = 0.3;
  contact.friction_velocity = 1e-2;  // 1 cm/s: static friction smoothed over 0.1 mm at h = 10 ms
  scene.contact = contact;
  scene.integrator = solvers::IntegratorKind::sdirk2;
  scene.time_step = 1e-2;
  scene.duration = 2.0;
  return scene;
}

std::string describe(const DynamicsScene& scene) {
  std::ostringstream out;
  const DynamicsMaterial& m = scene.materials.front();
  out << scene.name << ": " << scene.mesh.node_count() << " nodes, " << scene.mesh.tet_count() << " tets ("
      << scene.mesh_source << "); " << model_name(m.model) << " E = " << m.elastic.youngs_modulus
      << " Pa, nu = " << m.elastic.poisson_ratio << (scene.materials.size() > 1 ? ", heterogeneous" : "")
      << (m.fibre_stiffness > 0.0 ? ", StVK fibre" : "") << "; " << solvers::integrator_name(scene.integrator)
      << ", h = " << scene.time_step << " s";
  return out.str();
}

}  // namespace

std::string_view scene_name(DynamicsSceneKind kind) { return solvers::choice_name(scene_names, kind, "scene_name"); }

DynamicsSceneKind parse_scene(std::string_view name) { return solvers::parse_choice(scene_names, name, "scene"); }

DynamicsScene make_dynamics_scene(const DynamicsSceneOptions& options) {
  if (!(options.resolution > 0.0) || !std::isfinite(options.resolution)) {
    throw std::invalid_argument("dynamics scene: resolution must be positive, got " + std::to_string(options.resolution));
  }
  if (options.kind != DynamicsSceneKind::bar && (options.heterogeneous || options.anisotropic)) {
    throw std::invalid_argument("dynamics scene: heterogeneous and anisotropic variants exist for the bar only");
  }
  DynamicsScene scene;
  switch (options.kind) {
    case DynamicsSceneKind::bar: scene = make_bar(options); break;
    case DynamicsSceneKind::armadillo: scene = make_armadillo(options); break;
    case DynamicsSceneKind::bunny: scene = make_bunny(options); break;
    case DynamicsSceneKind::bodies: scene = make_bodies(options); break;
  }
  scene.time_step = option_or(options.time_step, scene.time_step, "time step", false);
  if (options.integrator) scene.integrator = *options.integrator;
  scene.system.threads = options.threads;
  scene.description = describe(scene);
  return scene;
}

std::unique_ptr<ElasticSystem> make_scene_system(const DynamicsScene& scene) {
  auto system = std::make_unique<ElasticSystem>(scene.mesh, scene.materials, scene.element_material, scene.system,
                                                scene.name);
  if (scene.contact) {
    ContactOptions options;
    options.stiffness = scene.contact->stiffness;
    options.activation_distance = scene.contact->activation_distance;
    options.friction_coefficient = scene.contact->friction_coefficient;
    options.friction_velocity = scene.contact->friction_velocity;
    options.body_contact = scene.contact->body_contact;
    options.self_contact = scene.contact->self_contact;
    options.threads = scene.system.threads;
    system->set_contact(std::make_unique<ContactPotential>(scene.mesh, scene.contact->obstacles, options));
  }
  return system;
}

}  // namespace cholsim::fem
