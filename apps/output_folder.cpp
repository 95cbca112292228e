#include "output_folder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace cholsim::apps {
namespace {

std::string reason(int error) {
  // ENOSPC's own text ("No space left on device") does not say what a user searches for.
  if (error == ENOSPC || error == EDQUOT) return "disk full (" + std::string(std::strerror(error)) + ")";
  return std::strerror(error);
}

std::filesystem::path temporary_path(const std::filesystem::path& path) {
  std::filesystem::path temporary = path;
  temporary += ".partial";
  return temporary;
}

/// Creates (or truncates) `temporary` and writes `bytes` to it; throws OutputError naming
/// `path`, the file the user asked for.
void write_new_file(const std::filesystem::path& temporary, const std::filesystem::path& path, std::string_view bytes) {
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw OutputError("cannot create " + path.string() + ": " + reason(errno));
  try {
    write_all(fd, bytes, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  // Network and quota-enforcing file systems may report a failed write only here.
  if (::close(fd) != 0) throw OutputError("cannot write " + path.string() + ": " + reason(errno));
}

}  // namespace

void write_all(int fd, std::string_view bytes, const std::filesystem::path& path) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      throw OutputError("cannot write " + path.string() + ": " + reason(errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
}

OutputFolder::OutputFolder(std::filesystem::path path, std::uint64_t byte_limit)
    : path_(std::move(path)), byte_limit_(byte_limit) {
  std::error_code error;
  std::filesystem::create_directories(path_, error);
  if (error) throw OutputError("cannot create the output folder " + path_.string() + ": " + error.message());
  if (!std::filesystem::is_directory(path_)) {
    throw OutputError("cannot create the output folder " + path_.string() + ": a file of that name exists");
  }
  // An existing folder may still refuse new files (permissions, a read-only file system).
  const std::filesystem::path probe = path_ / ".cholsim-write-test.partial";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw OutputError("cannot write in the output folder " + path_.string() + ": " + reason(errno));
  ::close(fd);
  std::filesystem::remove(probe, error);
}

bool OutputFolder::fits(std::initializer_list<PlannedFile> files) const {
  if (byte_limit_ == unlimited) return true;
  std::uint64_t held = bytes_held_;
  for (const PlannedFile& file : files) {
    const auto known = file_bytes_.find(file.name);
    if (known != file_bytes_.end()) held -= known->second;
    held += file.bytes;
  }
  return held <= byte_limit_;
}

void OutputFolder::write(const std::string& name, std::string_view bytes) {
  const std::filesystem::path path = path_ / name;
  const std::filesystem::path temporary = temporary_path(path);
  try {
    write_new_file(temporary, path, bytes);
  } catch (const OutputError&) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    throw OutputError("cannot rename " + temporary.string() + " to " + path.string() + ": " + error.message());
  }
  std::uint64_t& held = file_bytes_[name];
  bytes_held_ = bytes_held_ - held + bytes.size();
  held = bytes.size();
}

void OutputFolder::remove(const std::string& name) {
  std::error_code ignored;
  std::filesystem::remove(path_ / name, ignored);
  if (const auto known = file_bytes_.find(name); known != file_bytes_.end()) {
    bytes_held_ -= known->second;
    file_bytes_.erase(known);
  }
}

std::uint64_t parse_byte_size(const std::string& text, const std::string& where) {
  if (text == "unlimited") return OutputFolder::unlimited;
  const auto bad = [&] {
    return std::invalid_argument(where + ": '" + text +
                                 "' is not a size; expected bytes with an optional k, M, G or T (powers of 1024), "
                                 "e.g. 500M, or unlimited");
  };
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 15 || text.size() > digits + 1) throw bad();
  std::uint64_t value = std::stoull(text.substr(0, digits));
  if (text.size() == digits) return value;
  const std::string units = "kMGT";
  const auto unit = units.find(text.back());
  if (unit == std::string::npos) throw bad();
  const unsigned shift = 10 * static_cast<unsigned>(unit + 1);
  if (value > (OutputFolder::unlimited >> shift)) throw bad();
  return value << shift;
}

}  // namespace cholsim::apps
