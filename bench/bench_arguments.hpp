#pragma once
// Command-line helpers shared by the benchmark programs. The house pattern: a `kUsage` raw
// string per program, --help / -h print it on stdout and exit 0, an unknown option is an error
// naming --help, and a command line that cannot be parsed exits with kUsageErrorStatus.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace cholsim::bench {

/// Exit status of a benchmark whose command line cannot be parsed (1 stays for a run that
/// failed, e.g. a residual or accuracy check).
inline constexpr int kUsageErrorStatus = 2;

/// True for the flags that ask for the usage text: --help and -h.
[[nodiscard]] inline bool is_help_flag(const std::string& flag) { return flag == "--help" || flag == "-h"; }

/// The answer to --help: prints `usage` on stdout and ends the program with status 0.
[[noreturn]] inline void exit_with_usage(const char* usage) {
  std::fputs(usage, stdout);
  std::exit(0);
}

/// The error for an argument the program does not accept (to be thrown); its message points
/// at --help.
[[nodiscard]] inline std::invalid_argument unknown_option(const std::string& flag) {
  return std::invalid_argument("unknown option '" + flag + "' (see --help)");
}

/// Calls `parse` (the program's command-line parser) and returns its result; an exception
/// thrown by it is printed as "PROGRAM: message" on stderr and ends the program with
/// kUsageErrorStatus, before anything is measured.
template <typename Parse>
auto parse_command_line(const char* program, Parse&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", program, error.what());
    std::exit(kUsageErrorStatus);
  }
}

/// `text` as a number when all of it is one, else NaN.
[[nodiscard]] inline double whole_text_as_number(const std::string& text) {
  std::size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return used == text.size() ? value : std::numeric_limits<double>::quiet_NaN();
}

/// `text` as a number; std::invalid_argument naming `what` (the flag or the positional
/// argument) when it is not one, trailing characters included.
[[nodiscard]] inline double parse_number(const std::string& what, const std::string& text) {
  const double value = whole_text_as_number(text);
  if (std::isnan(value)) throw std::invalid_argument(what + " expects a number, got '" + text + "'");
  return value;
}

/// `text` as an integer ≥ 1; std::invalid_argument naming `what` when it is not one.
[[nodiscard]] inline int parse_positive(const std::string& what, const std::string& text) {
  const double value = whole_text_as_number(text);
  if (!(value >= 1.0 && value <= std::numeric_limits<int>::max() && value == std::floor(value))) {
    throw std::invalid_argument(what + " expects a positive integer, got '" + text + "'");
  }
  return static_cast<int>(value);
}

/// Walks a command line flag by flag: next() moves to the following argument, flag() is
/// that argument, value() consumes and returns the one after it (std::invalid_argument
/// "FLAG needs a value" when there is none).
class ArgumentCursor {
 public:
  ArgumentCursor(int argc, char** argv) : argc_(argc), argv_(argv) {}

  bool next() {
    if (++index_ >= argc_) return false;
    flag_ = argv_[index_];
    return true;
  }
  [[nodiscard]] const std::string& flag() const { return flag_; }
  std::string value() {
    if (index_ + 1 >= argc_) throw std::invalid_argument(flag_ + " needs a value");
    return argv_[++index_];
  }

 private:
  int argc_;
  char** argv_;
  int index_ = 0;
  std::string flag_;
};

/// The positional arguments of a program that takes no options, for those benchmarks whose
/// command line is `PROGRAM [first [second ...]]`: --help / -h print `usage` and exit 0, any
/// other argument starting with '-' is an unknown option, more than `max_count` arguments an
/// error (std::invalid_argument).
inline std::vector<std::string> positional_arguments(int argc, char** argv, const char* usage,
                                                     std::size_t max_count) {
  std::vector<std::string> arguments;
  for (ArgumentCursor cursor(argc, argv); cursor.next();) {
    const std::string& argument = cursor.flag();
    if (is_help_flag(argument)) exit_with_usage(usage);
    if (argument.size() > 1 && argument.front() == '-') throw unknown_option(argument);
    arguments.push_back(argument);
  }
  if (arguments.size() > max_count) {
    throw std::invalid_argument("too many arguments: expected at most " + std::to_string(max_count) + ", got " +
                                std::to_string(arguments.size()) + " (see --help)");
  }
  return arguments;
}

/// "a,b,c" → {a, b, c}: numbers parsed with std::stod (std::invalid_argument on a bad
/// item), or the items themselves for T = std::string.
template <typename T>
std::vector<T> parse_list(const std::string& text) {
  std::vector<T> values;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    if constexpr (std::is_same_v<T, std::string>) {
      values.push_back(item);
    } else {
      values.push_back(static_cast<T>(parse_number("the list '" + text + "'", item)));
    }
  }
  return values;
}

}  // namespace cholsim::bench
