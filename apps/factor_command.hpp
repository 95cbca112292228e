#pragma once
// `cholsim factor`: analyze, factorize and solve one SPD matrix and report what each phase did.
//
//   cholsim factor [FILE.mtx | --builtin elasticity:NX,NY,NZ | laplacian:NX,NY,NZ]
//                  [--ordering auto|amd|metis|nd-camd|natural] [--dofs-per-node K] [--threads T]
//                  [--repeat R] [--json] [--refine]
//                  [--refactor-fraction F [--refactor-shape ball|scattered]]
//                  [--schur-fraction F | --schur-set FILE] [--schur-device cpu|gpu]
//                  [--plot DIR] [--max-memory SIZE]
//
// Without an input it factors the default builtin elasticity:32,32,32 (107,811 DOF).
#include <string>

#include "command.hpp"

namespace CLI {
class App;
}

namespace cholsim::apps {

struct FactorCommandOptions {
  std::string file;             ///< Matrix Market file; empty → builtin
  std::string builtin;          ///< builtin spec; empty and no file → default_builtin
  std::string ordering = "auto";  ///< auto | amd | metis | nd-camd | natural (fill_reducing_ordering)
  int dofs_per_node = 0;        ///< 0 → 3 for elasticity builtins, else 1
  int threads = 0;              ///< 0 → all hardware threads
  int repeat = 3;               ///< factorizations and solves timed; medians are reported
  bool json = false;            ///< one JSON object on stdout instead of the text report
  bool refine = false;          ///< solve with iterative refinement against A
  double refactor_fraction = 0.0;   ///< > 0: incremental refactorization experiment (refactor_experiment.hpp)
  std::string refactor_shape = "ball";  ///< "ball" or "scattered"
  double schur_fraction = 0.0;      ///< > 0: partial factorization onto a patch (factor_schur.hpp)
  std::string schur_set_file;       ///< or onto the indices in this file
  std::string schur_device = "cpu"; ///< where the dense Schur system is refactored and solved
  std::string device = "cpu";       ///< cpu | gpu | auto: where the factorization runs (issue 22)
  double gpu_min_flops = 2e7;       ///< supernodes from this many flops (and ancestors) on the GPU
  std::string gpu_memory_limit;     ///< device memory cap ("8G"); empty = the device's free memory
  bool derivative = false;          ///< also compute L̇ (factor_derivative_report.hpp)
  std::string derivative_file;      ///< Ȧ from this file (implies derivative)
  std::string max_memory;           ///< --max-memory; empty = the available memory (memory_admission.hpp)
  /// --left-looking-top: "auto" (the library's default, lower where the factorization would
  /// exceed the memory limit), "off", or a size: supernodes with update blocks of at least it
  /// and their ancestors computed left-looking (factor/numeric/left_looking_top.hpp).
  std::string left_looking_top = "auto";
  std::string plot_dir;             ///< non-empty: write SVG pictures and index.html here (plots/factor_plots.hpp)

  static constexpr const char* default_builtin = "elasticity:32,32,32";
};

/// Adds the `factor` subcommand to `app`; when it is parsed, `action` is set to run it.
void add_factor_command(CLI::App& app, CommandAction& action);

/// Runs the command: reports to stdout, progress and errors to stderr; returns an ExitCode.
int run_factor_command(const FactorCommandOptions& options);

}  // namespace cholsim::apps
