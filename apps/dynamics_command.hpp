#pragma once
// `cholsim dynamics`: see dynamics_command.cpp.
#include <CLI/CLI.hpp>

#include "command.hpp"

namespace cholsim::apps {

/// Registers the `dynamics` subcommand on `app`; when it is the one parsed, `action` runs it.
void add_dynamics_command(CLI::App& app, CommandAction& action);

}  // namespace cholsim::apps
