// PLACEHOLDER — replaced by the helper building this command.
#include "opsplit_command.hpp"

namespace cholsim::apps {

void add_opsplit_command(CLI::App& app, CommandAction& action) {
  (void)app;
  (void)action;
}

}  // namespace cholsim::apps
