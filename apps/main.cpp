// cholsim: one executable, one subcommand per source file (DESIGN.md "Apps").
// main() only parses and dispatches; each command owns its flags and its work.
#include <CLI/CLI.hpp>

#include "command.hpp"
#include "corot_command.hpp"
#include "cloth_command.hpp"
#include "conjac_command.hpp"
#include "octree_command.hpp"
#include "dynamics_command.hpp"
#include "factor_command.hpp"
#include "joints_command.hpp"
#include "opsplit_command.hpp"
#include "pd_command.hpp"
#include "linalg/blas_kernels.hpp"

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);  // before OpenBLAS is first used
  using namespace cholsim::apps;

  CLI::App app{"cholsim - supernodal sparse Cholesky toolkit"};
  app.footer(
      "Exit codes: 0 success, 1 unexpected failure, 2 bad command line or input (file:line),\n"
      "3 numerical failure (e.g. not positive definite; the failing column is reported).");
  app.require_subcommand(1);

  CommandAction action;
  add_factor_command(app, action);
  add_corot_command(app, action);
  add_opsplit_command(app, action);
  add_pd_command(app, action);
  add_dynamics_command(app, action);
  add_conjac_command(app, action);
  add_octree_command(app, action);
  add_cloth_command(app, action);
  add_joints_command(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help is a ParseError with exit code 0; every real usage error exits 2.
    const int code = app.exit(error);
    return code == 0 ? exit_success : exit_bad_input;
  }
  return action ? action() : exit_failure;
}
