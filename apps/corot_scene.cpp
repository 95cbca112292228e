#include "corot_scene.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fem/mesh/tet_mesh.hpp"

namespace cholsim::apps {
namespace {

using nlohmann::json;

/// Reads typed values out of one JSON object, naming "<file>: <path.to.key>" in every error
/// and rejecting keys nobody asked for.
class SceneObject {
 public:
  SceneObject(const json& object, std::string file, std::string path)
      : object_(object), file_(std::move(file)), path_(std::move(path)) {
    if (!object_.is_object()) {
      throw SceneError(file_ + ": " + (path_.empty() ? "the scene" : path_) + " is not a JSON object");
    }
  }

  [[nodiscard]] bool has(const std::string& key) const { return object_.contains(key); }

  double number(const std::string& key) {
    const json& value = take(key);
    if (!value.is_number()) fail(key, "is not a number");
    const double number = value.get<double>();
    if (!std::isfinite(number)) fail(key, "is not finite");
    return number;
  }
  double positive(const std::string& key) {
    const double value = number(key);
    if (value <= 0.0) fail(key, "must be positive");
    return value;
  }
  double non_negative(const std::string& key) {
    const double value = number(key);
    if (value < 0.0) fail(key, "must not be negative");
    return value;
  }
  int positive_integer(const std::string& key) {
    const json& value = take(key);
    if (!value.is_number_integer() || value.get<std::int64_t>() <= 0 ||
        value.get<std::int64_t>() > std::numeric_limits<int>::max()) {
      fail(key, "is not a positive integer");
    }
    return value.get<int>();
  }
  std::string text(const std::string& key) {
    const json& value = take(key);
    if (!value.is_string()) fail(key, "is not a string");
    return value.get<std::string>();
  }
  bool boolean(const std::string& key) {
    const json& value = take(key);
    if (!value.is_boolean()) fail(key, "is not true or false");
    return value.get<bool>();
  }
  fem::Vec3 vector(const std::string& key) {
    const json& value = take(key);
    if (!value.is_array() || value.size() != 3 ||
        !std::all_of(value.begin(), value.end(), [](const json& x) { return x.is_number(); })) {
      fail(key, "is not an array of 3 numbers");
    }
    const fem::Vec3 vector{value[0].get<double>(), value[1].get<double>(), value[2].get<double>()};
    if (!std::isfinite(vector.x) || !std::isfinite(vector.y) || !std::isfinite(vector.z)) fail(key, "is not finite");
    return vector;
  }
  /// The objects of an array under `key`, each named "key[i]" in errors.
  std::vector<SceneObject> objects(const std::string& key) {
    const json& array = take(key);
    if (!array.is_array()) fail(key, "is not an array");
    std::vector<SceneObject> items;
    for (std::size_t i = 0; i < array.size(); ++i) items.emplace_back(array[i], file_, qualified(key) + "[" + std::to_string(i) + "]");
    return items;
  }
  SceneObject object(const std::string& key) { return {take(key), file_, qualified(key)}; }
  const json& raw(const std::string& key) { return take(key); }

  /// Every key must have been read; call once all known keys are taken.
  void finish() const {
    for (const auto& item : object_.items()) {
      if (!taken_.contains(item.key())) fail(item.key(), "is not a known key");
    }
  }

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw SceneError(file_ + ": " + qualified(key) + " " + problem);
  }

 private:
  const json& take(const std::string& key) {
    taken_.insert(key);
    const auto found = object_.find(key);
    if (found == object_.end()) fail(key, "is missing; it is required here");
    return *found;
  }
  [[nodiscard]] std::string qualified(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }

  const json& object_;
  std::string file_;
  std::string path_;
  std::set<std::string> taken_;
};

fem::Obstacle read_obstacle(SceneObject obstacle) {
  const std::string type = obstacle.text("type");
  fem::Obstacle result;
  if (type == "plane") {
    fem::HalfSpace plane;
    plane.normal = obstacle.vector("normal");
    if (!(linalg::norm(plane.normal) > 0.0)) obstacle.fail("normal", "must not be zero");
    plane.normal = linalg::normalized(plane.normal);
    if (obstacle.has("offset")) plane.offset = obstacle.number("offset");
    result = plane;
  } else if (type == "sphere") {
    result = fem::Sphere{obstacle.vector("center"), obstacle.positive("radius")};
  } else if (type == "cylinder") {
    result = fem::Cylinder{obstacle.vector("end_a"), obstacle.vector("end_b"), obstacle.positive("radius")};
  } else if (type == "piston") {
    fem::MovingBox piston;
    piston.start_center = obstacle.vector("center");
    piston.half_extents = obstacle.vector("half_extents");
    if (!(piston.half_extents.x > 0.0 && piston.half_extents.y > 0.0 && piston.half_extents.z > 0.0)) {
      obstacle.fail("half_extents", "must be positive in every coordinate");
    }
    if (obstacle.has("velocity")) piston.velocity = obstacle.vector("velocity");
    if (obstacle.has("start_time")) piston.start_time = obstacle.non_negative("start_time");
    if (obstacle.has("stop_time")) piston.stop_time = obstacle.number("stop_time");
    if (piston.stop_time < piston.start_time) obstacle.fail("stop_time", "must not come before start_time");
    if (obstacle.has("return_time")) {
      piston.return_time = obstacle.number("return_time");
      if (piston.return_time < piston.stop_time) obstacle.fail("return_time", "must not come before stop_time");
    }
    result = piston;
  } else {
    obstacle.fail("type", "is '" + type + "'; expected plane, sphere, cylinder or piston");
  }
  obstacle.finish();
  return result;
}

MaterialOverrides read_material(SceneObject material) {
  MaterialOverrides overrides;
  if (material.has("youngs")) overrides.youngs_modulus = material.positive("youngs");
  if (material.has("poisson")) {
    overrides.poisson_ratio = material.number("poisson");
    // Outside (-1, 0.5) the Lamé parameters are infinite or the energy is not convex.
    if (!(*overrides.poisson_ratio > -1.0 && *overrides.poisson_ratio < 0.5)) {
      material.fail("poisson", "must lie in (-1, 0.5)");
    }
  }
  if (material.has("density")) overrides.density = material.positive("density");
  material.finish();
  return overrides;
}

MaterialRegion read_region(SceneObject region) {
  MaterialRegion result;
  if (region.has("sphere") == region.has("box")) region.fail("sphere", "or \"box\": give exactly one of them");
  if (region.has("sphere")) {
    SceneObject sphere = region.object("sphere");
    result.shape = fem::Sphere{sphere.vector("center"), sphere.positive("radius")};
    sphere.finish();
  } else {
    SceneObject box = region.object("box");
    const AxisAlignedBox extent{box.vector("min"), box.vector("max")};
    if (!(extent.low.x <= extent.high.x && extent.low.y <= extent.high.y && extent.low.z <= extent.high.z)) {
      box.fail("min", "must not exceed max in any coordinate");
    }
    result.shape = extent;
    box.finish();
  }
  result.material = read_material(region.object("material"));
  region.finish();
  return result;
}

void read_mesh_keys(SceneObject& root, const std::filesystem::path& folder, CorotScene& scene) {
  if (root.has("mesh")) {
    const std::filesystem::path mesh = root.text("mesh");
    scene.mesh.mesh_file = (mesh.is_absolute() ? mesh : folder / mesh).string();
    scene.mesh.builtin.clear();
  }
  if (root.has("builtin")) {
    scene.mesh.builtin = root.text("builtin");
    if (std::find(builtin_mesh_names.begin(), builtin_mesh_names.end(), scene.mesh.builtin) ==
        builtin_mesh_names.end()) {
      std::string expected;
      for (const std::string& name : builtin_mesh_names) expected += (expected.empty() ? "" : ", ") + name;
      root.fail("builtin", "is '" + scene.mesh.builtin + "'; expected one of " + expected);
    }
    if (root.has("mesh")) root.fail("builtin", "and \"mesh\" exclude each other");
  }
  if (root.has("resolution")) scene.mesh.resolution = root.positive_integer("resolution");
  if (root.has("scale")) scene.mesh.scale = root.positive("scale");
  if (root.has("tetgen_switches")) scene.mesh.tetgen_switches = root.text("tetgen_switches");
}

void read_method_keys(SceneObject& root, const std::string& file, CorotScene& scene) {
  if (root.has("method")) scene.method = parse_method(root.text("method"), file + ": method");
  if (root.has("tau")) {
    scene.tau = root.number("tau");
    if (scene.tau < 0.0) root.fail("tau", "must not be negative");
  }
  if (root.has("budget")) {
    const json& budget = root.raw("budget");
    if (budget.is_number()) {
      set_budget_fraction(budget.get<double>(), file + ": budget", scene);
    } else if (budget.is_string()) {
      parse_budget(budget.get<std::string>(), file + ": budget", scene);
    } else {
      root.fail("budget", "is neither a fraction nor a string such as \"0.05s\"");
    }
  }
}

std::string shortest_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

/// 1-based line of byte offset `byte` in `text` (nlohmann reports parse errors by byte).
std::size_t line_of(const std::string& text, std::size_t byte) {
  const auto end = text.begin() + static_cast<std::ptrdiff_t>(std::min(byte, text.size()));
  return 1 + static_cast<std::size_t>(std::count(text.begin(), end, '\n'));
}

/// The document builder json::parse uses, keeping where parsing failed: json::parse throws a
/// number too large for a double (1e309) as an out_of_range error that carries no position,
/// which used to escape as a raw library message without the file. The parser hands every
/// error, with its byte offset, to parse_error here instead.
class PositionedDocumentBuilder : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  explicit PositionedDocumentBuilder(json& document) : json_sax_dom_parser(document, false) {}

  template <typename Exception>
  bool parse_error(std::size_t byte, const std::string& token, const Exception& error) {
    error_byte = byte;
    error_text = error.id == 406 ? "the number " + token + " is outside the range of a double"
                                 : std::string("not valid JSON (") + error.what() + ")";
    return false;
  }

  std::size_t error_byte = 0;
  std::string error_text;
};

json parse_scene_text(const std::string& file, const std::string& text) {
  json document;
  PositionedDocumentBuilder builder(document);
  if (!json::sax_parse(text, &builder)) {
    // Trailing bytes after the last character count as the line of that character.
    const std::size_t byte = builder.error_byte > 0 ? builder.error_byte - 1 : 0;
    throw SceneError(file + ":" + std::to_string(line_of(text, byte)) + ": " + builder.error_text);
  }
  return document;
}

}  // namespace

void read_scene_file(const std::filesystem::path& path, CorotScene& scene) {
  const std::string file = path.string();
  std::ifstream in(path);
  if (!in) throw SceneError(file + ": cannot open the scene file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const json document = parse_scene_text(file, text);
  SceneObject root(document, file, "");
  read_mesh_keys(root, path.parent_path(), scene);
  if (root.has("material")) scene.material = read_material(root.object("material")).applied_to(scene.material);
  if (root.has("rayleigh")) {
    SceneObject rayleigh = root.object("rayleigh");
    // Negative damping coefficients would feed energy into the body.
    if (rayleigh.has("alpha")) scene.rayleigh_alpha = rayleigh.non_negative("alpha");
    if (rayleigh.has("beta")) scene.rayleigh_beta = rayleigh.non_negative("beta");
    rayleigh.finish();
  }
  read_method_keys(root, file, scene);
  if (root.has("frames")) scene.frames = root.positive_integer("frames");
  if (root.has("dt")) scene.time_step = root.positive("dt");
  if (root.has("steps_per_frame")) scene.steps_per_frame = root.positive_integer("steps_per_frame");
  if (root.has("drop_height")) scene.drop_height = root.number("drop_height");
  if (root.has("ground")) scene.ground = root.boolean("ground");
  if (root.has("friction")) scene.friction = root.non_negative("friction");
  if (root.has("contact_stiffness")) scene.contact_stiffness = root.non_negative("contact_stiffness");
  if (root.has("implicit_contact")) scene.implicit_contact = root.boolean("implicit_contact");
  if (root.has("initial_velocity")) scene.initial_velocity = root.vector("initial_velocity");
  if (root.has("obstacles")) {
    scene.obstacles.clear();
    for (SceneObject& obstacle : root.objects("obstacles")) scene.obstacles.push_back(read_obstacle(std::move(obstacle)));
  }
  if (root.has("regions")) {
    scene.regions.clear();
    for (SceneObject& region : root.objects("regions")) scene.regions.push_back(read_region(std::move(region)));
  }
  root.finish();
}

fem::CorotationalMethod parse_method(const std::string& text, const std::string& where) {
  if (text == "exact") return fem::CorotationalMethod::exact;
  if (text == "cg") return fem::CorotationalMethod::conjugate_gradient;
  if (text == "warping") return fem::CorotationalMethod::stiffness_warping;
  if (text == "wc") return fem::CorotationalMethod::warp_canceling;
  throw SceneError(where + ": '" + text + "' is not a method; expected exact, cg, warping or wc");
}

std::string method_name(fem::CorotationalMethod method) {
  switch (method) {
    case fem::CorotationalMethod::exact: return "exact";
    case fem::CorotationalMethod::conjugate_gradient: return "cg";
    case fem::CorotationalMethod::stiffness_warping: return "warping";
    case fem::CorotationalMethod::warp_canceling: return "wc";
  }
  return "unknown";
}

namespace {

[[noreturn]] void reject_budget(const std::string& text, const std::string& where) {
  throw SceneError(where + ": '" + text +
                   "' is not a budget; expected a fraction of a full factorization in (0, 1] such as 0.33, "
                   "or seconds such as 0.05s");
}

}  // namespace

void parse_budget(const std::string& text, const std::string& where, CorotScene& scene) {
  const bool seconds = !text.empty() && text.back() == 's';
  const std::string number = seconds ? text.substr(0, text.size() - 1) : text;
  double value = 0.0;
  std::istringstream in(number);
  in >> value;
  if (number.empty() || !in || !in.eof()) reject_budget(text, where);
  if (!seconds) {
    set_budget_fraction(value, where, scene);
    return;
  }
  if (!std::isfinite(value) || value <= 0.0) reject_budget(text, where);
  scene.budget_fraction.reset();
  scene.budget_seconds = value;
}

void set_budget_fraction(double fraction, const std::string& where, CorotScene& scene) {
  if (!(fraction > 0.0 && fraction <= 1.0)) reject_budget(shortest_text(fraction), where);
  scene.budget_seconds.reset();
  scene.budget_fraction = fraction;
}

fem::CorotationalOptions simulation_options(const CorotScene& scene, bool thin_sheet, int threads) {
  fem::CorotationalOptions options;
  options.method = scene.method;
  options.time_step = scene.time_step;
  options.mass_damping = scene.rayleigh_alpha;
  options.stiffness_damping = scene.rayleigh_beta;
  if (scene.ground) options.obstacles.push_back(fem::HalfSpace{});
  options.obstacles.insert(options.obstacles.end(), scene.obstacles.begin(), scene.obstacles.end());
  options.contact.friction = scene.friction;
  options.contact.stiffness = scene.contact_stiffness;
  options.contact.implicit = scene.implicit_contact;
  options.warp_canceling.tau = scene.tau;
  options.warp_canceling.budget_fraction = scene.budget_fraction;
  options.warp_canceling.budget_seconds = scene.budget_seconds;
  options.warp_canceling.identity_node_rotations = thin_sheet;
  options.threads = threads;
  return options;
}

fem::Material MaterialOverrides::applied_to(fem::Material base) const {
  base.youngs_modulus = youngs_modulus.value_or(base.youngs_modulus);
  base.poisson_ratio = poisson_ratio.value_or(base.poisson_ratio);
  base.density = density.value_or(base.density);
  return base;
}

bool MaterialRegion::contains(const fem::Vec3& point) const {
  if (const auto* sphere = std::get_if<fem::Sphere>(&shape)) return linalg::norm(point - sphere->center) <= sphere->radius;
  const auto& box = std::get<AxisAlignedBox>(shape);
  for (int axis = 0; axis < 3; ++axis) {
    if (point[axis] < box.low[axis] || point[axis] > box.high[axis]) return false;
  }
  return true;
}

fem::ElasticBody make_scene_body(fem::TetMesh placed, const CorotScene& scene, std::string_view source) {
  if (scene.regions.empty()) return fem::make_elastic_body(std::move(placed), scene.material, source);
  // Material 0 is the base, material r + 1 region r's.
  std::vector<fem::Material> materials{scene.material};
  for (const MaterialRegion& region : scene.regions) materials.push_back(region.material.applied_to(scene.material));
  std::vector<fem::Index> element_material(static_cast<std::size_t>(placed.tet_count()), 0);
  for (fem::Index e = 0; e < placed.tet_count(); ++e) {
    fem::Vec3 centroid;
    for (const auto& corner : placed.tet_points(e)) centroid += 0.25 * fem::Vec3{corner[0], corner[1], corner[2]};
    for (std::size_t r = scene.regions.size(); r-- > 0;) {
      if (scene.regions[r].contains(centroid)) {
        element_material[static_cast<std::size_t>(e)] = static_cast<fem::Index>(r + 1);
        break;
      }
    }
  }
  return fem::make_elastic_body(std::move(placed), std::move(materials), std::move(element_material), source);
}

void place_above_ground(fem::TetMesh& mesh, double drop_height) {
  const auto box = fem::bounding_box(mesh.positions);
  const double shift[3] = {-0.5 * (box[0] + box[3]), drop_height - box[1], -0.5 * (box[2] + box[5])};
  for (std::size_t i = 0; i < mesh.positions.size(); ++i) mesh.positions[i] += shift[i % 3];
}

}  // namespace cholsim::apps
