#pragma once
// `cholsim corot`: see corot_command.cpp.
#include <CLI/CLI.hpp>

#include "command.hpp"

namespace cholsim::apps {

/// Registers the `corot` subcommand on `app`; when it is the one parsed, `action` runs it.
void add_corot_command(CLI::App& app, CommandAction& action);

}  // namespace cholsim::apps
