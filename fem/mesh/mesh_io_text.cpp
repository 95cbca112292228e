#include "fem/mesh/mesh_io_text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

namespace cholsim::fem {

namespace mesh_text {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// std::from_chars rejects a leading '+', which printf-style writers may emit.
const char* skip_plus(const char* begin, const char* end) {
  return (begin != end && *begin == '+' && begin + 1 != end && begin[1] != '-') ? begin + 1 : begin;
}

std::string_view trim(std::string_view text) {
  std::size_t begin = 0;
  while (begin < text.size() && is_space(text[begin])) ++begin;
  std::size_t end = text.size();
  while (end > begin && is_space(text[end - 1])) --end;
  return text.substr(begin, end - begin);
}

}  // namespace

std::string quoted(std::string_view text) {
  constexpr std::size_t longest = 40;
  std::string out = "'";
  for (const char c : text.substr(0, longest)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  if (text.size() > longest) out += "...";
  return out + "'";
}

std::string lower_case(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool parse_integer(std::string_view token, std::int64_t& value) {
  const char* end = token.data() + token.size();
  const auto [stop, error] = std::from_chars(skip_plus(token.data(), end), end, value);
  return error == std::errc{} && stop == end;
}

TextFile::TextFile(const std::filesystem::path& path, char comment) : file_(path.string()), comment_(comment) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw MeshFormatError(file_, 0, "cannot open the file", "a readable mesh file");
  // One read of the whole file (a 300K-tet .ele is ~10 MB); character iterators are far slower.
  const std::streamoff size = in.tellg();
  if (size < 0) throw MeshFormatError(file_, 0, "cannot determine the file size", "a regular file");
  contents_.resize(static_cast<std::size_t>(size));
  in.seekg(0);
  if (!in.read(contents_.data(), size)) throw MeshFormatError(file_, 0, "reading failed", "a readable mesh file");
}

bool TextFile::next_line() {
  while (next_ < contents_.size()) {
    const char* begin = contents_.data() + next_;
    const auto* newline = static_cast<const char*>(std::memchr(begin, '\n', contents_.size() - next_));
    const std::size_t length = newline ? static_cast<std::size_t>(newline - begin) : contents_.size() - next_;
    next_ += length + (newline ? 1 : 0);
    ++line_number_;
    std::string_view line(begin, length);
    if (line.find('\0') != std::string_view::npos) {
      line_ = line;
      fail("binary data (a NUL byte)", "a text file");
    }
    if (comment_ != '\0') line = line.substr(0, line.find(comment_));
    line_ = trim(line);
    if (!line_.empty()) return true;
  }
  line_ = {};
  return false;
}

void TextFile::require_line(const std::string& expected) {
  if (!next_line()) fail("the file ends", expected);
}

void TextFile::require_room_for(std::int64_t lines, const std::string& what) const {
  const auto bytes_left = static_cast<std::int64_t>(contents_.size() - next_);
  const std::int64_t room = (bytes_left + 1) / 2;  // the last line needs no line end
  if (lines > room) {
    fail("the file ends early: it announces " + std::to_string(lines) + " " + what + " but its " +
             std::to_string(bytes_left) + " remaining bytes hold at most " + std::to_string(room) + " lines",
         std::to_string(lines) + " " + what);
  }
}

void TextFile::fail(const std::string& problem, const std::string& expected) const {
  throw MeshFormatError(file_, std::max<std::int64_t>(line_number_, 1), problem, expected);
}

bool Words::done() const { return trim(rest_).empty(); }

std::string_view Words::word(std::string_view what) {
  std::size_t begin = 0;
  while (begin < rest_.size() && is_space(rest_[begin])) ++begin;
  if (begin == rest_.size()) text_.fail("the line ends early", std::string(what));
  std::size_t end = begin;
  while (end < rest_.size() && !is_space(rest_[end])) ++end;
  const std::string_view token = rest_.substr(begin, end - begin);
  rest_.remove_prefix(end);
  return token;
}

double Words::real(std::string_view what) {
  const std::string_view token = word(what);
  const char* end = token.data() + token.size();
  double value = 0.0;
  const auto [stop, error] = std::from_chars(skip_plus(token.data(), end), end, value);
  if (error != std::errc{} || stop != end) text_.fail(quoted(token) + " is not a number", std::string(what) + " (a number)");
  if (!std::isfinite(value)) text_.fail(quoted(token) + " is not finite", std::string(what) + " (a finite number)");
  return value;
}

std::int64_t Words::integer(std::string_view what) {
  const std::string_view token = word(what);
  std::int64_t value = 0;
  if (!parse_integer(token, value)) text_.fail(quoted(token) + " is not an integer", std::string(what) + " (an integer)");
  return value;
}

std::int64_t Words::integer_in(std::string_view what, std::int64_t minimum, std::int64_t maximum) {
  const std::int64_t value = integer(what);
  if (value < minimum || value > maximum) {
    text_.fail(std::to_string(value) + " is out of range",
               std::string(what) + " in " + std::to_string(minimum) + ".." + std::to_string(maximum));
  }
  return value;
}

void read_point(Words& words, std::vector<double>& positions) {
  positions.push_back(words.real("the x coordinate"));
  positions.push_back(words.real("the y coordinate"));
  positions.push_back(words.real("the z coordinate"));
}

void Words::finish(std::string_view expected) {
  if (!done()) text_.fail("unexpected " + quoted(trim(rest_)) + " at the end of the line", std::string(expected));
}

}  // namespace mesh_text
}  // namespace cholsim::fem
