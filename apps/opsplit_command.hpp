#pragma once
// `cholsim opsplit`: see opsplit_command.cpp.
#include <CLI/CLI.hpp>

#include "command.hpp"

namespace cholsim::apps {

/// Registers the `opsplit` subcommand on `app`; when it is the one parsed, `action` runs it.
void add_opsplit_command(CLI::App& app, CommandAction& action);

}  // namespace cholsim::apps
