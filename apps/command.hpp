#pragma once
// What every `cholsim` subcommand shares: how it hands main() its work, and the exit codes.
#include <functional>

namespace cholsim::apps {

/// The work of the subcommand that was parsed; returns the process exit code. main() runs it
/// after CLI11 has parsed the whole command line, so a command never runs half-configured.
using CommandAction = std::function<int()>;

/// Process exit codes shared by all commands (documented in `cholsim --help`).
enum ExitCode : int {
  exit_success = 0,
  exit_failure = 1,    ///< anything unexpected (out of memory, internal error)
  exit_bad_input = 2,  ///< bad command line, --builtin spec, or input file (file:line in the message)
  exit_numerical = 3,  ///< the numerics failed, e.g. the matrix is not positive definite
};

}  // namespace cholsim::apps
