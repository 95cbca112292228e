#pragma once
// `cholsim factor --schur-fraction F | --schur-set FILE`: the partial factorization of seed
// 004 §4.3–4.4 beside the full one — the constrained analysis and its fill, L11/L21/S, one
// inner iteration (ΔS update + dense refactorization + Schur solve), the forward and
// backward phases, and the residual of the three-phase solve.
#include <functional>
#include <string>
#include <vector>

#include "factor/numeric/cholesky_factor.hpp"
#include "linalg/csc_matrix.hpp"
#include "report.hpp"

namespace cholsim::apps {

struct SchurCommandOptions {
  double fraction = 0.0;    ///< > 0: a connected patch of this fraction of the nodes
  std::string set_file;     ///< or the Schur set's indices from this file
  std::string device = "cpu";  ///< dense refactorization and solve: cpu or gpu
  [[nodiscard]] bool enabled() const { return fraction > 0.0 || !set_file.empty(); }
};

/// Reads a Schur set: 0-based indices separated by white space, '#' starts a comment.
/// Throws std::invalid_argument naming file:line for anything else; range and duplicates
/// are checked by factor::analyze.
std::vector<linalg::Index> read_schur_set(const std::string& path);

/// The outcome of the Schur part: a status that is not ok when the numerics failed.
struct SchurOutcome {
  factor::FactorStatus status;  ///< of the partial factorization or the dense refactorization
  std::string device_note;      ///< why the GPU was not used, when it was asked for
};

/// Runs the Schur part for `a` with `base` as the analysis options of the full run, adds a
/// "Schur complement" section to `report`, and returns the status (not ok: nothing added).
/// `full_factor_seconds` is the median of the full factorizations, reported beside.
SchurOutcome add_schur_report(Report& report, const linalg::SymmetricCscMatrix& a,
                              const factor::AnalyzeOptions& base, const factor::FactorOptions& factor_options,
                              const SchurCommandOptions& options, int repeat, double full_factor_seconds,
                              const std::function<void(const std::string&)>& progress);

}  // namespace cholsim::apps
