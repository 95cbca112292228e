#pragma once
// `cholsim conjac`: see conjac_command.cpp.
#include <CLI/CLI.hpp>

#include "command.hpp"

namespace cholsim::apps {

/// Registers the `conjac` subcommand on `app`; when it is the one parsed, `action` runs it.
void add_conjac_command(CLI::App& app, CommandAction& action);

}  // namespace cholsim::apps
