#pragma once
// Ctrl-C (SIGINT) and kill (SIGTERM) as requests to stop: while an InterruptSignals lives,
// the signal only sets a flag that a simulation's frame loop polls, so the run finishes the
// frame it is on, writes a valid .pvd and summary.json and leaves no temporary files
// (issue 23, D6). A second signal of the same kind ends the process at once, as usual — the
// way out of a step that takes too long to wait for.

namespace cholsim::apps {

/// One at a time: the handlers and the flag are process-wide.
class InterruptSignals {
 public:
  InterruptSignals();   ///< installs the handlers
  ~InterruptSignals();  ///< puts the previous handlers back
  InterruptSignals(const InterruptSignals&) = delete;
  InterruptSignals& operator=(const InterruptSignals&) = delete;

  /// 0, or the number of the first signal received since construction.
  [[nodiscard]] int received() const;
  /// The shell's exit status for a run stopped by `signal`: 128 + its number (130, 143).
  [[nodiscard]] static int exit_code(int signal) { return 128 + signal; }
};

}  // namespace cholsim::apps
