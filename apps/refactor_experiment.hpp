#pragma once
// `cholsim factor --refactor-fraction F --refactor-shape ball|scattered`: after the full
// factorization, change a fraction of A's element blocks (elasticity builtins: the elements
// in a ball, or as many scattered at random, turned by a rotation as corotation would) or of
// its columns (other matrices: a graph ball or random columns, scaled symmetrically), then
// refactorize incrementally (seed 000 §4.3), check against a fresh factorization and report.
#include <optional>
#include <string>
#include <vector>

#include "builtin_matrices.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "report.hpp"

namespace cholsim::apps {

struct RefactorExperimentOptions {
  double fraction = 0.0;        ///< of the element blocks (or columns) changed, in (0, 1]
  std::string shape = "ball";   ///< "ball" or "scattered"
  int threads = 0;
  int repeat = 1;               ///< refactorizations timed; the median is reported
};

struct RefactorOutcome {
  std::string unit;                   ///< "elements" or "columns"
  linalg::Index changed = 0;          ///< elements or columns changed
  linalg::Index total = 0;            ///< elements or columns in all
  std::vector<double> seconds;        ///< one per refactorization
  double full_seconds = 0.0;          ///< median full factorization, for the ratio
  double predicted_seconds = 0.0;     ///< the cost model's prediction (summed task times)
  double recomputed_flop_fraction = 0.0;
  linalg::Index recomputed_supernodes = 0;
  std::vector<char> recomputed;       ///< recomputed[s]: supernode s was recomputed (for --plot)
  std::int64_t retained_bytes = 0;
  std::int64_t factor_bytes = 0;
  double max_relative_difference = 0.0;  ///< max |L − L_fresh| / max |L_fresh|
};

/// Runs the experiment on `factor`, which holds a factorization of `a` made with retained
/// update blocks; `elasticity` is the builtin spec when `a` is an elasticity box. Leaves
/// `factor` holding the changed matrix's factor. Returns nullopt (status in factor.status())
/// if a refactorization failed.
std::optional<RefactorOutcome> run_refactor_experiment(factor::Factor& factor, const linalg::SymmetricCscMatrix& a,
                                                       const std::optional<BuiltinMatrixSpec>& elasticity,
                                                       double full_seconds, const RefactorExperimentOptions& options);

/// The "incremental refactorization" section of the report.
void add_refactor_report(Report& report, const RefactorExperimentOptions& options, const RefactorOutcome& outcome);

}  // namespace cholsim::apps
