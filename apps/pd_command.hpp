#pragma once
// `cholsim pd`: see pd_command.cpp.
#include <CLI/CLI.hpp>

#include "command.hpp"

namespace cholsim::apps {

/// Registers the `pd` subcommand on `app`; when it is the one parsed, `action` runs it.
void add_pd_command(CLI::App& app, CommandAction& action);

}  // namespace cholsim::apps
