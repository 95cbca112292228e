#pragma once
// `cholsim joints`: see joints_command.cpp.
#include <CLI/CLI.hpp>

#include "command.hpp"

namespace cholsim::apps {

/// Registers the `joints` subcommand on `app`; when it is the one parsed, `action` runs it.
void add_joints_command(CLI::App& app, CommandAction& action);

}  // namespace cholsim::apps
