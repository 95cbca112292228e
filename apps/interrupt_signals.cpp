#include "interrupt_signals.hpp"

#include <csignal>
#include <stdexcept>

namespace cholsim::apps {
namespace {

// Only a lock-free sig_atomic_t may be written from a signal handler.
volatile std::sig_atomic_t received_signal = 0;

extern "C" void remember_signal(int signal) {
  if (received_signal == 0) received_signal = signal;
}

constexpr int stop_signals[] = {SIGINT, SIGTERM};
struct sigaction previous_actions[2];

}  // namespace

InterruptSignals::InterruptSignals() {
  received_signal = 0;
  struct sigaction action {};
  action.sa_handler = remember_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a signal arriving during a write must not fail it with EINTR half-way.
  // SA_RESETHAND: the second signal gets the default action and ends the process.
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  for (int i = 0; i < 2; ++i) {
    if (sigaction(stop_signals[i], &action, &previous_actions[i]) != 0) {
      throw std::runtime_error("cannot install the SIGINT/SIGTERM handlers");
    }
  }
}

InterruptSignals::~InterruptSignals() {
  for (int i = 0; i < 2; ++i) sigaction(stop_signals[i], &previous_actions[i], nullptr);
}

int InterruptSignals::received() const { return received_signal; }

}  // namespace cholsim::apps
