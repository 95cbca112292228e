#include "fem/cloth/cloth_health.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "fem/cloth/cloth_inertia.hpp"
#include "fem/mesh/tet_mesh.hpp"

namespace cholsim::fem::cloth {
namespace {

std::string joules(double energy) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g J", energy);
  return text;
}

}  // namespace

ClothHealth::ClothHealth(const ClothMesh& cloth, double density, const Vec3& gravity, double model_sizes)
    : model_sizes_(model_sizes) {
  if (!(model_sizes >= 0.0)) throw std::invalid_argument("cloth health: the energy factor must be nonnegative");
  const std::vector<double> mass = vertex_masses(cloth, density);
  double total_mass = 0.0, kinetic = 0.0;
  for (Index v = 0; v < cloth.vertex_count(); ++v) {
    total_mass += mass[static_cast<std::size_t>(v)];
    kinetic += 0.5 * mass[static_cast<std::size_t>(v)] * squared_norm(cloth.velocity(v));
  }
  const auto box = bounding_box(cloth.positions);
  const double size = norm(Vec3{box[3] - box[0], box[4] - box[1], box[5] - box[2]});
  const double lift = total_mass * norm(gravity) * size;
  limit_ = model_sizes * std::max(lift, kinetic);
}

std::optional<std::string> ClothHealth::check(int step, double time, double kinetic_energy) {
  // A NaN energy is over any limit.
  if (!(kinetic_energy > limit_) && !std::isnan(kinetic_energy)) return std::nullopt;
  finding_.worst_value = finding_.frames == 0 ? kinetic_energy : std::max(finding_.worst_value, kinetic_energy);
  if (finding_.frames++ > 0) return std::nullopt;
  finding_.first_frame = step;
  finding_.first_time = time;
  finding_.first_value = kinetic_energy;
  finding_.threshold = limit_;
  char when[64];
  std::snprintf(when, sizeof when, "step %d (t = %.3f s)", step, time);
  char factor[32];
  std::snprintf(factor, sizeof factor, "%g", model_sizes_);
  return "the cloth's kinetic energy reached " + joules(kinetic_energy) + " at " + when + ", more than " +
         joules(limit_) + " (" + factor + " × lifting the cloth its own size against gravity, or its initial kinetic " +
         "energy if larger): the run is no longer physical";
}

std::string ClothHealth::summary() const {
  if (healthy()) return "ok";
  char text[200];
  std::snprintf(text, sizeof text, "kinetic energy over %s from step %d (t = %.3f s, %s); worst %s, %d steps over",
                joules(limit_).c_str(), finding_.first_frame, finding_.first_time, joules(finding_.first_value).c_str(),
                joules(finding_.worst_value).c_str(), finding_.frames);
  return text;
}

}  // namespace cholsim::fem::cloth
