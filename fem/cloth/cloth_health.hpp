#pragma once
// Whether a cloth run is still physical (issue 23's D5, for `cholsim cloth`). The tet commands'
// SimulationHealth follows a fixed set of nodes; a remeshed cloth has none, so the cloth is
// judged by its kinetic energy: more than lifting the whole cloth this many model sizes against
// gravity (or this many times its initial kinetic energy) is more than gravity, the pulled
// corners and the moving boxes of §2.7's scenes supply. JAWS's velocity QPs, for one, returned
// 4·10⁴ J two steps before its run ended at a failed QP, and with a larger proximal term 48–118 J
// over a run that ended "ok" (docs/benchmarks.md, issue 20); the scenes that run stay under 1 J.
#include <optional>
#include <string>

#include "fem/cloth/cloth_mesh.hpp"
#include "fem/health/simulation_health.hpp"

namespace cholsim::fem::cloth {

class ClothHealth {
 public:
  /// The limit from the cloth at the start: its mass at area density `density` (kg/m²), its
  /// bounding-box diagonal, gravity and its initial kinetic energy. Throws
  /// std::invalid_argument for a negative factor.
  ClothHealth(const ClothMesh& cloth, double density, const Vec3& gravity,
              double model_sizes = HealthThresholds{}.energy_gain_model_sizes);

  /// A step's kinetic energy: the finding's description the first time it passes the limit,
  /// nothing otherwise (later steps only update the worst figure).
  std::optional<std::string> check(int step, double time, double kinetic_energy);

  [[nodiscard]] double limit() const { return limit_; }
  [[nodiscard]] bool healthy() const { return finding_.frames == 0; }
  /// "ok", or the first step over the limit with its figure, the worst figure and how many steps.
  [[nodiscard]] std::string summary() const;

 private:
  double model_sizes_;
  double limit_ = 0.0;
  HealthFinding finding_{HealthIssue::energy_growth};  ///< a cloth's frames are its steps
};

}  // namespace cholsim::fem::cloth
