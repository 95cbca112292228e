#pragma once
// Enumerations chosen by name on command lines and in scene files (solvers, integrators,
// materials, scenes): one table of (value, name) pairs per enumeration, looked up both ways.
// Names compare case-insensitively; an unknown name is an error listing every accepted one.
#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace cholsim::solvers {

template <typename Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, std::string_view>, N>;

/// The first name `table` gives `value`; std::invalid_argument naming `what` if none.
template <typename Enum, std::size_t N>
std::string_view choice_name(const NameTable<Enum, N>& table, Enum value, std::string_view what) {
  for (const auto& [known, name] : table) {
    if (known == value) return name;
  }
  throw std::invalid_argument(std::string(what) + ": no name for value " + std::to_string(static_cast<int>(value)));
}

/// The value `table` names `name` (case-insensitive); std::invalid_argument "unknown WHAT
/// "NAME"; expected one of …" otherwise.
template <typename Enum, std::size_t N>
Enum parse_choice(const NameTable<Enum, N>& table, std::string_view name, std::string_view what) {
  const auto same = [](unsigned char x, unsigned char y) { return std::tolower(x) == std::tolower(y); };
  std::string accepted;
  for (const auto& [value, known] : table) {
    if (std::ranges::equal(name, known, same)) return value;
    accepted += (accepted.empty() ? "" : ", ") + std::string(known);
  }
  throw std::invalid_argument("unknown " + std::string(what) + " \"" + std::string(name) + "\"; expected one of " +
                              accepted);
}

}  // namespace cholsim::solvers
