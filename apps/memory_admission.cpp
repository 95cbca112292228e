#include "memory_admission.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "output_folder.hpp"

namespace cholsim::apps {
namespace {

// "0.3 MiB", "812.4 MiB", "2.41 GiB": messages name sizes a person compares at a glance.
std::string readable_bytes(std::int64_t bytes) {
  constexpr double mebibyte = 1024.0 * 1024.0;
  char buffer[64];
  const double value = static_cast<double>(bytes);
  if (value < 1024.0 * mebibyte) {
    std::snprintf(buffer, sizeof buffer, "%.1f MiB", value / mebibyte);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.2f GiB", value / (1024.0 * mebibyte));
  }
  return buffer;
}

}  // namespace

std::int64_t MemoryNeed::total() const {
  std::int64_t sum = 0;
  for (const auto& item : items) sum += item.second;
  return sum;
}

void add_max_memory_option(CLI::App& command, std::string& value) {
  command.add_option("--max-memory", value,
                     "Refuse (exit 2) work predicted to need more memory than SIZE: bytes with k, M, G or T "
                     "(powers of 1024), or unlimited; default: the memory available when the command starts");
}

std::uint64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t kibibytes = 0;
    if (fields >> key >> kibibytes && key == "MemAvailable:") return kibibytes * 1024;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) : 0;
}

std::int64_t peak_resident_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

MemoryLimit resolve_memory_limit(const std::string& value) {
  if (value.empty()) return {available_memory_bytes(), "the available memory (MemAvailable)"};
  return {parse_byte_size(value, "--max-memory"), "--max-memory " + value};
}

void admit(const MemoryNeed& need, const MemoryLimit& limit) {
  const std::int64_t total = need.total();
  if (total < 0 || static_cast<std::uint64_t>(total) <= limit.bytes) return;
  std::string message = need.step + " needs " + readable_bytes(total);
  if (need.items.size() > 1) {
    for (std::size_t i = 0; i < need.items.size(); ++i) {
      message += (i > 0 ? ", " : " (") + need.items[i].first + " " + readable_bytes(need.items[i].second);
    }
    message += ")";
  } else if (!need.items.empty()) {
    message += " (" + need.items.front().first + ")";
  }
  message += " but the memory limit is " + readable_bytes(static_cast<std::int64_t>(limit.bytes)) + " (" +
             limit.origin + "); use a smaller problem, or raise the limit with --max-memory if the machine has the memory";
  throw MemoryLimitExceeded(message);
}

}  // namespace cholsim::apps
