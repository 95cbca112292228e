#pragma once
// The line reader the mesh readers (fem/mesh/mesh_io_*.cpp) share: the whole file in memory, one
// line at a time with comments stripped, words parsed in place with std::from_chars (fast
// enough for 300K-tet files), and every failure a MeshFormatError at the current file:line.
// Internal to fem/: not part of the mesh I/O API.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fem/mesh/mesh_io.hpp"

namespace cholsim::fem::mesh_text {

/// A text file read line by line. Lines are returned without their end-of-line ("\n" or
/// "\r\n") and, when `comment` is not '\0', without everything from the comment character on.
class TextFile {
 public:
  /// Reads all of `path`; throws MeshFormatError (line 0) if it cannot be read.
  TextFile(const std::filesystem::path& path, char comment);

  /// Moves to the next line with a word on it; false at the end of the file. Throws for a
  /// line holding a NUL byte (binary data).
  bool next_line();
  /// next_line(), but the end of the file is an error naming what was `expected`.
  void require_line(const std::string& expected);
  /// Checks a count of lines the file announces before anything is sized by it: each line
  /// takes at least 2 bytes (a character and its line end) after the current line. Fails at the
  /// current line with "the file ends early" when the bytes left cannot hold `lines`, so a
  /// few-line file announcing 5·10⁸ points is an error, not a multi-gigabyte reservation. Loose
  /// on purpose: a file it passes that is still short gets the exact line from the parse.
  void require_room_for(std::int64_t lines, const std::string& what) const;

  [[nodiscard]] std::string_view line() const { return line_; }
  [[nodiscard]] std::int64_t line_number() const { return line_number_; }
  [[nodiscard]] const std::string& file() const { return file_; }
  /// The raw bytes of the file (for formats with a binary variant).
  [[nodiscard]] std::string_view contents() const { return contents_; }

  /// Throws MeshFormatError at the current line.
  [[noreturn]] void fail(const std::string& problem, const std::string& expected) const;

 private:
  std::string file_;
  std::string contents_;
  std::size_t next_ = 0;  ///< offset of the first byte after the current line
  std::string_view line_;
  std::int64_t line_number_ = 0;
  char comment_;
};

/// The whitespace-separated words of the current line of a TextFile, parsed in order. Each
/// accessor names what it reads (`what`, e.g. "the x coordinate") for the message; the
/// file:line already identifies the entry, and messages are only built on failure, so hot
/// loops pass constant strings.
class Words {
 public:
  explicit Words(const TextFile& text) : text_(text), rest_(text.line()) {}

  [[nodiscard]] bool done() const;
  std::string_view word(std::string_view what);
  /// A finite floating-point number.
  double real(std::string_view what);
  /// An integer (optionally signed).
  std::int64_t integer(std::string_view what);
  /// An integer in [minimum, maximum].
  std::int64_t integer_in(std::string_view what, std::int64_t minimum, std::int64_t maximum);
  /// Fails if words are left; `expected` says what the line should hold.
  void finish(std::string_view expected);

 private:
  const TextFile& text_;
  std::string_view rest_;
};

/// Appends the next three words as the x, y, z coordinates of a point.
void read_point(Words& words, std::vector<double>& positions);

/// `text` shortened and quoted for a message, so a binary file cannot flood it.
std::string quoted(std::string_view text);

/// `text` in lower case (file extensions, keywords).
std::string lower_case(std::string_view text);

/// Parses all of `token` as an integer (leading '+' allowed); false when it is not one.
bool parse_integer(std::string_view token, std::int64_t& value);

}  // namespace cholsim::fem::mesh_text
