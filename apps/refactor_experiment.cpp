#include "refactor_experiment.hpp"

#include <algorithm>
#include <cmath>

#include "factor/update/update_scheduling.hpp"
#include "linalg/assembly_pattern.hpp"
#include "linalg/element_changes.hpp"
#include "linalg/generators.hpp"
#include "timing.hpp"

namespace cholsim::apps {
namespace {

using linalg::Index;

constexpr double rotation_angle = 0.5;   ///< radians each changed element turns
constexpr double column_scale = 1.5;     ///< D·A·D scale of each changed column
constexpr std::uint64_t scattered_seed = 1;

struct MatrixChange {
  linalg::SymmetricCscMatrix changed;
  factor::ChangedEntries entries = factor::ChangedEntries::all();
  std::string unit;
  Index count = 0;
  Index total = 0;
};

Index chosen_count(double fraction, Index total) {
  return std::clamp<Index>(static_cast<Index>(std::llround(fraction * static_cast<double>(total))), 1, total);
}

// Elasticity box: the element blocks in a ball about the point a quarter along the box's
// diagonal (off the root separator), or as many at random, turn by a rotation.
MatrixChange change_elements(const linalg::SymmetricCscMatrix& a, const BuiltinMatrixSpec& spec,
                             const RefactorExperimentOptions& options) {
  linalg::ElasticityBoxOptions box;  // what build_builtin_matrix used
  box.nx = spec.nx;
  box.ny = spec.ny;
  box.nz = spec.nz;
  const linalg::TetMesh mesh = linalg::structured_tet_box(box.nx, box.ny, box.nz, box.cell_size);
  const linalg::AssemblyPattern pattern(mesh.node_count(), 3, 4, mesh.tets);
  MatrixChange change{a, factor::ChangedEntries::all(), "elements", chosen_count(options.fraction, mesh.tet_count()),
                      mesh.tet_count()};
  const linalg::Vec3 center{0.25 * box.nx * box.cell_size, 0.25 * box.ny * box.cell_size, 0.25 * box.nz * box.cell_size};
  const std::vector<Index> elements = options.shape == "ball"
                                          ? linalg::elements_in_ball(mesh, center, change.count)
                                          : linalg::random_subset(mesh.tet_count(), change.count, scattered_seed);
  linalg::rotate_element_blocks(mesh, pattern, box, elements, rotation_angle, change.changed.lower.values);
  change.entries = factor::ChangedEntries::elements(linalg::element_dof_lists(pattern, elements), 12);
  return change;
}

// Any other matrix: a breadth-first ball of columns from column 0, or random columns.
MatrixChange change_columns(const linalg::SymmetricCscMatrix& a, const RefactorExperimentOptions& options) {
  MatrixChange change{a, factor::ChangedEntries::all(), "columns", chosen_count(options.fraction, a.size()), a.size()};
  const std::vector<Index> columns = options.shape == "ball" ? linalg::columns_in_graph_ball(a, 0, change.count)
                                                             : linalg::random_subset(a.size(), change.count, scattered_seed);
  linalg::scale_columns(change.changed, columns, column_scale);
  change.entries = factor::ChangedEntries::columns(columns);
  return change;
}

double max_relative_difference(std::span<const double> x, std::span<const double> reference) {
  double difference = 0.0;
  double scale = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    difference = std::max(difference, std::abs(x[i] - reference[i]));
    scale = std::max(scale, std::abs(reference[i]));
  }
  return scale > 0.0 ? difference / scale : difference;
}


}  // namespace

std::optional<RefactorOutcome> run_refactor_experiment(factor::Factor& factor, const linalg::SymmetricCscMatrix& a,
                                                       const std::optional<BuiltinMatrixSpec>& elasticity,
                                                       double full_seconds, const RefactorExperimentOptions& options) {
  const MatrixChange change = elasticity ? change_elements(a, *elasticity, options) : change_columns(a, options);
  const factor::Symbolic& symbolic = factor.symbolic();
  RefactorOutcome outcome;
  outcome.unit = change.unit;
  outcome.changed = change.count;
  outcome.total = change.total;
  outcome.full_seconds = full_seconds;
  outcome.recomputed = factor.supernodes_to_recompute(change.entries);
  outcome.predicted_seconds =
      factor::update_cost(factor::supernode_parents(symbolic), factor.cost_model().costs(), outcome.recomputed);
  const factor::FactorOptions factor_options{.threads = options.threads};
  for (int run = 1; run <= options.repeat; ++run) {
    // Back to A between timed runs, so every run makes the same change.
    if (run > 1 && !factor.refactorize(change.entries, a, factor_options).ok()) return std::nullopt;
    if (!factor.refactorize(change.entries, change.changed, factor_options).ok()) return std::nullopt;
    outcome.seconds.push_back(factor.stats().seconds);
  }
  const factor::FactorStats& stats = factor.stats();
  outcome.recomputed_supernodes = stats.recomputed_supernodes;
  outcome.recomputed_flop_fraction = stats.recomputed_flops / std::max(symbolic.stats().flops, 1.0);
  outcome.retained_bytes = stats.retained_update_bytes;
  outcome.factor_bytes = stats.factor_bytes;

  factor::Factor fresh(factor.symbolic_ptr());
  if (!fresh.factorize(change.changed, factor_options).ok()) return std::nullopt;
  outcome.max_relative_difference = max_relative_difference(factor.values(), fresh.values());
  return outcome;
}

void add_refactor_report(Report& report, const RefactorExperimentOptions& options, const RefactorOutcome& outcome) {
  const double refactor_seconds = median(outcome.seconds);
  report.section("incremental refactorization (median of " + std::to_string(outcome.seconds.size()) + ")");
  report.add("refactor_fraction", "changed fraction", options.fraction, format_fixed(options.fraction, 4));
  report.add_text("refactor_shape", "shape", options.shape);
  report.add_text("refactor_unit", "changed unit", outcome.unit);
  report.add_count("refactor_changed", "changed " + outcome.unit, outcome.changed);
  report.add_seconds("refactor_s", "refactor time", refactor_seconds);
  report.add("refactor_s_runs", "", outcome.seconds, "");
  const double ratio = outcome.full_seconds > 0.0 ? refactor_seconds / outcome.full_seconds : 0.0;
  report.add("refactor_ratio", "refactor / full", ratio, format_fixed(ratio, 3));
  report.add("recomputed_flop_fraction", "recomputed flop fraction", outcome.recomputed_flop_fraction,
             format_fixed(outcome.recomputed_flop_fraction, 3));
  report.add_count("recomputed_supernodes", "recomputed supernodes", outcome.recomputed_supernodes);
  report.add_seconds("predicted_refactor_s", "predicted (cost model)", outcome.predicted_seconds);
  report.add_bytes("retained_bytes", "retained update bytes", outcome.retained_bytes);
  const double retained_ratio =
      outcome.factor_bytes > 0 ? static_cast<double>(outcome.retained_bytes) / static_cast<double>(outcome.factor_bytes) : 0.0;
  report.add("retained_ratio", "retained / factor bytes", retained_ratio, format_fixed(retained_ratio, 2));
  report.add_real("refactor_max_rel_diff", "max |L - L_fresh| / max |L_fresh|", outcome.max_relative_difference);
}

}  // namespace cholsim::apps
