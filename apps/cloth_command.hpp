#pragma once
// `cholsim cloth`: see cloth_command.cpp.
#include <CLI/CLI.hpp>

#include "command.hpp"

namespace cholsim::apps {

/// Registers the `cloth` subcommand on `app`; when it is the one parsed, `action` runs it.
void add_cloth_command(CLI::App& app, CommandAction& action);

}  // namespace cholsim::apps
