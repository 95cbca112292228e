#pragma once
// Command-line helpers shared by the benchmark programs.
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace cholsim::bench {

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
      values.push_back(static_cast<T>(std::stod(item)));
    }
  }
  return values;
}

}  // namespace cholsim::bench
