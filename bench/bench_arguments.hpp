#pragma once
// Command-line helpers shared by the benchmark programs.
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace cholsim::bench {

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
