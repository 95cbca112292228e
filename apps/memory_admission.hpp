#pragma once
// Memory admission (issue 23): a command predicts what it is about to allocate and refuses
// an impossible request with a clear error naming the need and the limit (exit 2), instead
// of being killed by the operating system minutes later or failing with "out of memory".
//
//   --max-memory SIZE   the limit ("24G", "512M", "unlimited"); by default the memory the
//                       machine has available when the command starts (MemAvailable).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "command.hpp"

namespace cholsim::apps {

struct MemoryLimit {
  std::uint64_t bytes = 0;
  std::string origin;  ///< "--max-memory 2G" or "the available memory (MemAvailable)"
};

/// A predicted footprint above the limit: an impossible request is bad input (exit 2).
class MemoryLimitExceeded : public BadInputError {
 public:
  using BadInputError::BadInputError;
};

/// What a step is predicted to hold, item by item ("L", "update blocks", …).
struct MemoryNeed {
  std::string step;  ///< "the factorization", "the builtin mesh"
  std::vector<std::pair<std::string, std::int64_t>> items;
  [[nodiscard]] std::int64_t total() const;
};

/// Registers --max-memory on `command`, writing into `value` (empty = available memory).
void add_max_memory_option(CLI::App& command, std::string& value);

/// The limit --max-memory names, or the available memory when `value` is empty. Throws
/// std::invalid_argument for a malformed size.
MemoryLimit resolve_memory_limit(const std::string& value);

/// Bytes the kernel reports as available (MemAvailable of /proc/meminfo; the free physical
/// pages where that file is missing).
std::uint64_t available_memory_bytes();

/// The process's peak resident memory so far (getrusage's ru_maxrss), in bytes.
std::int64_t peak_resident_bytes();

/// Throws MemoryLimitExceeded when `need` exceeds `limit`, naming both and every item.
void admit(const MemoryNeed& need, const MemoryLimit& limit);

}  // namespace cholsim::apps
