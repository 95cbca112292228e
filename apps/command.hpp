#pragma once
// What every `cholsim` subcommand shares: how it hands main() its work, and the exit codes.
#include <functional>
#include <stdexcept>
#include <string_view>

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

/// The apps layer's bad input (a flag value, a scene, an output folder that cannot be
/// written, a request above --max-memory): what() names the file, line or flag. Exit code 2.
class BadInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The numerics of a command failed (a factorization not positive definite, a non-finite
/// state). Exit code 3.
class NumericalFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Runs a command's work and turns what it throws into one line "cholsim COMMAND: error: …"
/// on stderr and the exit code: bad input — BadInputError, std::invalid_argument, the readers'
/// format errors (file:line), a failed allocation — 2; NumericalFailure 3; anything else 1.
int run_reporting_errors(std::string_view command, const CommandAction& work);

}  // namespace cholsim::apps
