#include "run_monitor.hpp"

#include <csignal>
#include <cstdio>
#include <iostream>

#include "command.hpp"
#include "report.hpp"

namespace cholsim::apps {
namespace {

const char* signal_name(int signal) { return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal"; }

}  // namespace

void add_run_end_options(CLI::App& command, RunEndOptions& options) {
  command.add_flag("--strict", options.strict,
                   "Exit 3 (after writing every output) when a health check warned");
  add_max_output_option(command, options.max_output);
}

void add_max_output_option(CLI::App& command, std::string& max_output) {
  command.add_option("--max-output", max_output,
                     "Most bytes the run's files may take in --out (500M, 2G, or unlimited); the run stops "
                     "before the frame that would pass it")
      ->capture_default_str();
}

std::string run_end_help() {
  const fem::HealthThresholds defaults;
  return "Health checks after each frame (L = the rest shape's bounding-box diagonal): more than " +
         printf_string("%g", 100 * defaults.inverted_fraction) +
         "% of the\n"
         "elements inverted (det F <= 0); the iterative solver not converged; a node farther from rest than\n"
         "free fall plus " +
         printf_string("%g", defaults.runaway_model_sizes) +
         " L, or faster than free fall plus a fall through that distance; kinetic + gravitational\n"
         "energy grown by more than lifting the body " +
         printf_string("%g", defaults.energy_gain_model_sizes) +
         " L;\n"
         "a node deeper than " +
         printf_string("%g", defaults.penetration_model_sizes) +
         " L inside an obstacle. Each warns once on stderr and is listed in summary.json\n"
         "(health_warnings); --strict turns them into exit 3. SIGINT/SIGTERM: the current frame is finished,\n"
         "the .pvd and summary.json are written, exit 130/143 (a second signal ends the run at once).\n"
         "At --max-output the run stops with a warning, exit 0. Unwritable --out or a full disk: exit 2.";
}

RunMonitor::RunMonitor(std::string command, const RunEndOptions& options, const InterruptSignals& signals,
                       fem::SimulationHealth health)
    : command_(std::move(command)), strict_(options.strict), signals_(&signals), health_(std::move(health)) {}

RunMonitor::RunMonitor(std::string command, const RunEndOptions& options, const InterruptSignals& signals)
    : command_(std::move(command)), strict_(options.strict), signals_(&signals) {}

void RunMonitor::check(const fem::HealthFrame& frame) {
  if (!health_) return;
  for (const fem::HealthIssue issue : health_->check(frame)) {
    std::cerr << command_ << ": warning: " << health_->finding(issue).description() << std::endl;
  }
}

bool RunMonitor::keep_going() const {
  return signals_->received() == 0 && !output_limit_reached_ && failure_.empty();
}

void RunMonitor::stop_on_failure(int frame, const std::string& what) {
  failure_ = "failed in frame " + std::to_string(frame) + ": " + what;
  std::cerr << command_ << ": error: " << failure_ << std::endl;
}

void RunMonitor::stop_at_output_limit(std::uint64_t byte_limit, linalg::Index frames_written) {
  output_limit_reached_ = true;
  std::cerr << command_ << ": warning: the next frame would take the output past --max-output ("
            << format_bytes(static_cast<std::int64_t>(byte_limit)) << "); stopping after " << frames_written
            << " frames written" << std::endl;
}

std::string RunMonitor::status() const {
  if (const int signal = signals_->received(); signal != 0) return std::string("interrupted by ") + signal_name(signal);
  if (!failure_.empty()) return failure_;
  if (output_limit_reached_) return "stopped at the output limit";
  return "completed";
}

void RunMonitor::change_body(fem::SimulationHealth health) {
  if (health_) {
    const auto& findings = health_->findings();
    earlier_findings_.insert(earlier_findings_.end(), findings.begin(), findings.end());
  }
  health_ = std::move(health);
}

std::vector<fem::HealthFinding> RunMonitor::findings() const {
  std::vector<fem::HealthFinding> all = earlier_findings_;
  if (health_) all.insert(all.end(), health_->findings().begin(), health_->findings().end());
  return all;
}

void RunMonitor::add_section(Report& report) const {
  report.section("outcome");
  report.add_text("status", "status", status());
  const std::vector<fem::HealthFinding> all = findings();
  nlohmann::ordered_json warnings = nlohmann::ordered_json::array();
  for (const fem::HealthFinding& finding : all) {
    warnings.push_back({{"issue", fem::health_issue_key(finding.issue)},
                        {"first_frame", finding.first_frame},
                        {"first_time_s", finding.first_time},
                        {"value", finding.first_value},
                        {"threshold", finding.threshold},
                        {"worst_value", finding.worst_value},
                        {"frames", finding.frames},
                        {"message", finding.description()}});
  }
  report.add_text("health", "health", !health_ && all.empty() ? "not checked" : all.empty() ? "ok" : "warnings");
  report.add("health_warnings", "", warnings, "");
  for (const fem::HealthFinding& finding : all) {
    report.add("", std::string("warning: ") + fem::health_issue_key(finding.issue), nullptr,
               finding.description() + " (" + std::to_string(finding.frames) + " frames)");
  }
  report.add_count("exit_code", "exit code", exit_code());
}

int RunMonitor::exit_code() const {
  if (const int signal = signals_->received(); signal != 0) return InterruptSignals::exit_code(signal);
  if (!failure_.empty() || (strict_ && !findings().empty())) return exit_numerical;
  return exit_success;
}

}  // namespace cholsim::apps
