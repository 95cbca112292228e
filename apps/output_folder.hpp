#pragma once
// The folder a simulation command writes into (--out): every file goes to a temporary
// `<name>.partial` beside its final name and is renamed into place when complete, so a reader
// never sees half a file, and a failed write removes its temporary before reporting. Failures
// are named for what they are (permission denied, disk full) with the file, and exit 2 —
// the user's output location is an input like any other (issue 23, D6). The folder also
// keeps count of the bytes its files hold, for --max-output.
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include "command.hpp"

namespace cholsim::apps {

/// An output file or folder that cannot be created or written; what() names the path and
/// the reason ("disk full", "Permission denied"). Exit code 2.
class OutputError : public BadInputError {
 public:
  using BadInputError::BadInputError;
};

/// A file the caller is about to (re)write, with its new size, for OutputFolder::fits.
struct PlannedFile {
  std::string name;
  std::uint64_t bytes = 0;
};

class OutputFolder {
 public:
  static constexpr std::uint64_t unlimited = std::numeric_limits<std::uint64_t>::max();

  /// Creates `path` and its parents and checks that a file can be created in it, so a run
  /// learns before its setup that it could not save anything. Throws OutputError naming the
  /// folder and the system's reason.
  explicit OutputFolder(std::filesystem::path path, std::uint64_t byte_limit = unlimited);

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::uint64_t byte_limit() const { return byte_limit_; }
  /// Bytes held by the files written through this folder (a rewritten file counts once).
  [[nodiscard]] std::uint64_t bytes_held() const { return bytes_held_; }

  /// Whether writing `files` (new files, or new versions of earlier ones) keeps bytes_held()
  /// within the byte limit.
  [[nodiscard]] bool fits(std::initializer_list<PlannedFile> files) const;

  /// Writes `bytes` as the file `name` in the folder (through `name.partial`). On failure
  /// the temporary is removed and OutputError names the file: "disk full" for ENOSPC and
  /// EDQUOT, the system's message otherwise. Does not check the byte limit (see fits()).
  void write(const std::string& name, std::string_view bytes);
  /// Removes the file `name` written earlier, if it is there (no error otherwise).
  void remove(const std::string& name);

 private:
  std::filesystem::path path_;
  std::uint64_t byte_limit_;
  std::uint64_t bytes_held_ = 0;
  std::map<std::string, std::uint64_t, std::less<>> file_bytes_;
};

/// "500M", "2G", "64k", "1048576" (bytes; k, M, G, T are powers of 1024) or "unlimited".
/// Throws std::invalid_argument naming `where` for anything else.
std::uint64_t parse_byte_size(const std::string& text, const std::string& where);

/// Writes all of `bytes` to the open file descriptor `fd`, retrying interrupted and short
/// writes; throws OutputError naming `path` ("disk full" for ENOSPC and EDQUOT).
void write_all(int fd, std::string_view bytes, const std::filesystem::path& path);

}  // namespace cholsim::apps
