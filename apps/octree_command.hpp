#pragma once
// `cholsim octree`: see octree_command.cpp.
#include <CLI/CLI.hpp>

#include "command.hpp"

namespace cholsim::apps {

/// Registers the `octree` subcommand on `app`; when it is the one parsed, `action` runs it.
void add_octree_command(CLI::App& app, CommandAction& action);

}  // namespace cholsim::apps
