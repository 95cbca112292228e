#pragma once
// How a simulation command's run ends, shared by `corot` and `opsplit` (issue 23, D5/D6):
// the health of every frame (warned on stderr the first time each issue appears), a stop
// requested by SIGINT/SIGTERM or by the --max-output byte limit, the "outcome" section of
// the summary, and the exit code — 128 + signal when stopped by one, 3 when the numerics
// failed or for health warnings under --strict, else 0.
#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "fem/health/simulation_health.hpp"
#include "interrupt_signals.hpp"
#include "linalg/index_types.hpp"
#include "report.hpp"

namespace cholsim::apps {

/// The flags every simulation command has for how its run ends.
struct RunEndOptions {
  bool strict = false;
  std::string max_output = "2G";
};

/// Adds --strict and --max-output to `command`.
void add_run_end_options(CLI::App& command, RunEndOptions& options);
/// Adds --max-output alone, for a command without health checks (nothing for --strict to act on).
void add_max_output_option(CLI::App& command, std::string& max_output);
/// The --help paragraph on health checks (with the thresholds), signals, the byte limit and
/// the exit codes.
std::string run_end_help();

class RunMonitor {
 public:
  /// `command` prefixes the stderr lines ("cholsim corot"); `signals` must outlive the monitor.
  RunMonitor(std::string command, const RunEndOptions& options, const InterruptSignals& signals,
             fem::SimulationHealth health);
  /// Without health checks (a simulation that is not an elastic body, such as rigid links):
  /// signals, the byte limit and failures only; the report says "health: not checked".
  RunMonitor(std::string command, const RunEndOptions& options, const InterruptSignals& signals);

  /// Checks a simulated frame; each kind of issue is warned about on stderr once. Nothing to
  /// check without health checks.
  void check(const fem::HealthFrame& frame);
  /// False once a stop signal has arrived or the byte limit was reached: the frame loop ends.
  [[nodiscard]] bool keep_going() const;
  /// The series writer refused the next frame at the folder's byte limit.
  void stop_at_output_limit(std::uint64_t byte_limit, linalg::Index frames_written);
  /// The simulation failed numerically in `frame` (`what` says how): an error on stderr; the
  /// frames so far are summarized and the exit code is 3.
  void stop_on_failure(int frame, const std::string& what);

  /// The simulated body changed (an excision): later frames are checked against `health`, the
  /// findings so far are kept for the report.
  void change_body(fem::SimulationHealth health);

  /// The "outcome" section: how the run ended, the health findings, the exit code.
  void add_section(Report& report) const;
  [[nodiscard]] int exit_code() const;

 private:
  [[nodiscard]] std::string status() const;
  [[nodiscard]] std::vector<fem::HealthFinding> findings() const;

  std::string command_;
  bool strict_;
  const InterruptSignals* signals_;
  std::optional<fem::SimulationHealth> health_;  ///< empty: not checked
  std::vector<fem::HealthFinding> earlier_findings_;  ///< of the bodies before change_body
  bool output_limit_reached_ = false;
  std::string failure_;  ///< empty while the numerics hold
};

}  // namespace cholsim::apps
