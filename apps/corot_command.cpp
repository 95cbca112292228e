// PLACEHOLDER — replaced by the helper building this command.
#include "corot_command.hpp"

namespace cholsim::apps {

void add_corot_command(CLI::App& app, CommandAction& action) {
  (void)app;
  (void)action;
}

}  // namespace cholsim::apps
