#include "linalg/matrix_market.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <numeric>
#include <string_view>
#include <utility>
#include <vector>

namespace cholsim::linalg {

MatrixMarketError::MatrixMarketError(std::string file, std::int64_t line,
                                     const std::string& problem, const std::string& expected)
    : std::runtime_error(file + ":" + std::to_string(line) + ": " + problem + "; expected " +
                         expected),
      file_(std::move(file)),
      line_(line) {}

namespace {

constexpr std::string_view kBannerTemplate =
    "'%%MatrixMarket matrix <coordinate|array> <real|integer|pattern> <general|symmetric>'";

// ---------------------------------------------------------------------------------------
// Lexical helpers

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

const char* skip_space(const char* p, const char* end) {
  while (p != end && is_space(*p)) ++p;
  return p;
}

bool is_blank(std::string_view line) {
  return skip_space(line.data(), line.data() + line.size()) == line.data() + line.size();
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  const char* p = line.data();
  const char* end = p + line.size();
  while ((p = skip_space(p, end)) != end) {
    const char* start = p;
    while (p != end && !is_space(*p)) ++p;
    words.emplace_back(start, static_cast<std::size_t>(p - start));
  }
  return words;
}

std::string lower_case(std::string_view word) {
  std::string out(word);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A token or line quoted for a message, shortened so a binary file cannot flood the message.
std::string quoted(std::string_view text) {
  constexpr std::size_t kMax = 40;
  std::string out = "'";
  out.append(text.substr(0, kMax));
  if (text.size() > kMax) out += "...";
  return out + "'";
}

std::string entry_name(std::int64_t row, std::int64_t col) {
  return "(" + std::to_string(row) + ", " + std::to_string(col) + ")";
}

// Whole-token parses used by the diagnostics and the header: the token must be exactly one
// number. (The hot loop parses in place instead; see parse_index_fast.)
// std::from_chars rejects a leading '+', which printf-based writers may emit.
const char* skip_plus(const char* p, const char* end) {
  return (p != end && *p == '+' && p + 1 != end && *(p + 1) != '-') ? p + 1 : p;
}

bool parse_whole_integer(std::string_view token, std::int64_t& value) {
  const char* end = token.data() + token.size();
  const auto [stop, ec] = std::from_chars(skip_plus(token.data(), end), end, value);
  return ec == std::errc{} && stop == end;
}

// ---------------------------------------------------------------------------------------
// Whole-file input and line splitting

// The whole file in memory: mapped read-only when it is a regular file (no copy, and the
// kernel populates the mapping in bulk instead of one page fault per 4 KiB), read into a heap
// buffer otherwise (pipes, /dev/stdin). A mapped file truncated by another process while
// being parsed would raise SIGBUS; cholsim's own writer never truncates (it renames).
class FileBytes {
 public:
  explicit FileBytes(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(path, "cannot open the file: ");
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
      ::close(fd);
      fail(path, "cannot inspect the file: ");
    }
    if (S_ISDIR(info.st_mode)) {
      ::close(fd);
      errno = EISDIR;
      fail(path, "cannot read the file: ");
    }
    if (S_ISREG(info.st_mode) && info.st_size > 0) {
      size_ = static_cast<std::size_t>(info.st_size);
      void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
      if (mapped != MAP_FAILED) {
        ::madvise(mapped, size_, MADV_SEQUENTIAL);
        mapped_ = static_cast<const char*>(mapped);
        ::close(fd);
        return;
      }
    }
    read_all(path, fd);
    ::close(fd);
  }
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  ~FileBytes() {
    if (mapped_ != nullptr) ::munmap(const_cast<char*>(mapped_), size_);
  }

  [[nodiscard]] const char* begin() const { return mapped_ != nullptr ? mapped_ : heap_.data(); }
  [[nodiscard]] const char* end() const { return begin() + size_; }

 private:
  [[noreturn]] static void fail(const std::string& path, const std::string& what) {
    throw MatrixMarketError(path, 0, what + std::strerror(errno), "a readable Matrix Market file");
  }

  void read_all(const std::string& path, int fd) {
    heap_.resize(std::size_t{1} << 16);
    size_ = 0;
    for (;;) {
      if (size_ == heap_.size()) heap_.resize(2 * heap_.size());
      const ::ssize_t got = ::read(fd, heap_.data() + size_, heap_.size() - size_);
      if (got == 0) break;
      if (got < 0) {
        if (errno == EINTR) continue;
        const int error = errno;
        ::close(fd);
        errno = error;
        fail(path, "cannot read the file: ");
      }
      size_ += static_cast<std::size_t>(got);
    }
  }

  const char* mapped_ = nullptr;
  std::vector<char> heap_;
  std::size_t size_ = 0;
};

// Hands out lines (without their '\n') and counts them; line numbers are 1-based.
class LineReader {
 public:
  LineReader(const char* begin, const char* end, std::int64_t lines_before = 0)
      : position_(begin), end_(end), line_number_(lines_before) {}

  bool next(std::string_view& line) {
    if (position_ == end_) return false;
    const auto* newline =
        static_cast<const char*>(std::memchr(position_, '\n', static_cast<std::size_t>(end_ - position_)));
    const char* stop = newline != nullptr ? newline : end_;
    line = std::string_view(position_, static_cast<std::size_t>(stop - position_));
    position_ = newline != nullptr ? newline + 1 : end_;
    ++line_number_;
    return true;
  }
  [[nodiscard]] std::int64_t line_number() const { return line_number_; }
  [[nodiscard]] const char* position() const { return position_; }

 private:
  const char* position_;
  const char* end_;
  std::int64_t line_number_;
};

// ---------------------------------------------------------------------------------------
// Header: banner, comments, size line (spec §2). Fed line by line so that the whole-file
// readers and read_matrix_market_info (which reads only the first lines) share it.

class HeaderParser {
 public:
  explicit HeaderParser(const std::string& path) : path_(path) {}

  /// Consumes one line; returns true once the size line has been parsed.
  bool consume(std::string_view line, std::int64_t line_number) {
    if (!have_banner_) {
      if (line.size() >= 3 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // BOM
      parse_banner(line, line_number);
      have_banner_ = true;
      return false;
    }
    if (is_blank(line)) return false;
    if (*skip_space(line.data(), line.data() + line.size()) == '%') return false;  // comment
    parse_size_line(line, line_number);
    size_line_ = line_number;
    header_.size_line = line_number;
    return true;
  }

  /// Reports a file that ended before the size line; `last_line` is its number of lines.
  [[noreturn]] void fail_truncated(std::int64_t last_line) const {
    if (!have_banner_) {
      throw MatrixMarketError(path_, 1, "missing banner: the file is empty", kBannerTemplate.data());
    }
    throw MatrixMarketError(path_, last_line, "missing size line: the file ends after the header",
                            size_line_expectation());
  }

  [[nodiscard]] const MatrixMarketHeader& header() const { return header_; }
  [[nodiscard]] std::int64_t size_line() const { return size_line_; }

 private:
  void fail(std::int64_t line, const std::string& problem, std::string_view expected) const {
    throw MatrixMarketError(path_, line, problem, std::string(expected));
  }

  void parse_banner(std::string_view line, std::int64_t line_number) {
    const auto words = split_words(line);
    if (words.empty() || lower_case(words[0]) != "%%matrixmarket") {
      fail(line_number, "missing banner: the first line is " + quoted(line), kBannerTemplate);
    }
    if (words.size() != 5) {
      fail(line_number, "malformed banner: it has " + std::to_string(words.size()) + " words",
           std::string("5 words, ") + kBannerTemplate.data());
    }
    const std::string object = lower_case(words[1]);
    const std::string format = lower_case(words[2]);
    const std::string field = lower_case(words[3]);
    const std::string symmetry = lower_case(words[4]);
    if (object != "matrix") {
      fail(line_number, "unknown object " + quoted(words[1]) + " in the banner",
           "'matrix' (cholsim reads matrices only)");
    }
    if (format == "coordinate") {
      header_.format = MatrixMarketFormat::coordinate;
    } else if (format == "array") {
      header_.format = MatrixMarketFormat::array;
    } else {
      fail(line_number, "unknown format " + quoted(words[2]) + " in the banner",
           "'coordinate' or 'array'");
    }
    if (field == "real") {
      header_.field = MatrixMarketField::real;
    } else if (field == "integer") {
      header_.field = MatrixMarketField::integer;
    } else if (field == "pattern") {
      header_.field = MatrixMarketField::pattern;
    } else if (field == "complex") {
      fail(line_number, "field 'complex' is not supported: cholsim matrices are real",
           "'real', 'integer' or 'pattern'");
    } else {
      fail(line_number, "unknown field " + quoted(words[3]) + " in the banner",
           "'real', 'integer' or 'pattern'");
    }
    if (symmetry == "general") {
      header_.symmetry = MatrixMarketSymmetry::general;
    } else if (symmetry == "symmetric") {
      header_.symmetry = MatrixMarketSymmetry::symmetric;
    } else if (symmetry == "skew-symmetric") {
      fail(line_number,
           "symmetry 'skew-symmetric' is not supported: a skew-symmetric matrix has x^T A x = 0 "
           "and is never SPD",
           "'general' or 'symmetric'");
    } else if (symmetry == "hermitian") {
      fail(line_number, "symmetry 'hermitian' is not supported: it describes complex matrices",
           "'general' or 'symmetric'");
    } else {
      fail(line_number, "unknown symmetry " + quoted(words[4]) + " in the banner",
           "'general' or 'symmetric'");
    }
    if (header_.format == MatrixMarketFormat::array && header_.field == MatrixMarketField::pattern) {
      fail(line_number, "field 'pattern' is not allowed with format 'array'",
           "'real' or 'integer' for an array");
    }
  }

  [[nodiscard]] std::string size_line_expectation() const {
    return header_.format == MatrixMarketFormat::coordinate
               ? "a size line 'rows columns entries' (3 non-negative integers)"
               : "a size line 'rows columns' (2 non-negative integers)";
  }

  void parse_size_line(std::string_view line, std::int64_t line_number) {
    const auto words = split_words(line);
    const std::size_t wanted = header_.format == MatrixMarketFormat::coordinate ? 3 : 2;
    if (words.size() != wanted) {
      fail(line_number,
           "malformed size line " + quoted(line) + " with " + std::to_string(words.size()) +
               " words",
           size_line_expectation());
    }
    std::int64_t numbers[3] = {0, 0, 0};
    for (std::size_t k = 0; k < wanted; ++k) {
      if (!parse_whole_integer(words[k], numbers[k])) {
        fail(line_number, "malformed size line: " + quoted(words[k]) + " is not an integer",
             size_line_expectation());
      }
      if (numbers[k] < 0) {
        fail(line_number, "negative size " + std::to_string(numbers[k]) + " on the size line",
             size_line_expectation());
      }
    }
    constexpr std::int64_t kMaxIndex = std::numeric_limits<Index>::max();
    for (std::size_t k = 0; k < 2; ++k) {
      if (numbers[k] > kMaxIndex) {
        fail(line_number,
             std::string(k == 0 ? "row" : "column") + " count " + std::to_string(numbers[k]) +
                 " does not fit cholsim's 32-bit Index",
             "at most " + std::to_string(kMaxIndex));
      }
    }
    header_.rows = static_cast<Index>(numbers[0]);
    header_.cols = static_cast<Index>(numbers[1]);
    if (header_.symmetry == MatrixMarketSymmetry::symmetric && header_.rows != header_.cols) {
      fail(line_number,
           "symmetric matrix is " + std::to_string(header_.rows) + "x" +
               std::to_string(header_.cols),
           "a square matrix (a symmetric file describes a square matrix)");
    }
    if (header_.format == MatrixMarketFormat::coordinate) {
      header_.entries = numbers[2];
    } else if (header_.symmetry == MatrixMarketSymmetry::symmetric) {
      header_.entries = numbers[0] * (numbers[0] + 1) / 2;
    } else {
      header_.entries = numbers[0] * numbers[1];
    }
  }

  const std::string& path_;
  MatrixMarketHeader header_;
  bool have_banner_ = false;
  std::int64_t size_line_ = 0;
};

// ---------------------------------------------------------------------------------------
// Body parsing

// What one data line must hold: `indices` integers (2 for coordinate, 0 for array) then
// a value unless the field is pattern.
struct LineShape {
  int indices = 2;
  bool has_value = true;
  bool integer_value = false;

  [[nodiscard]] int tokens() const { return indices + (has_value ? 1 : 0); }
  [[nodiscard]] std::string describe() const {
    std::string what = std::to_string(tokens()) + (tokens() == 1 ? " token" : " tokens") + " (";
    if (indices == 2) what += has_value ? "row column value" : "row column";
    else what += "value";
    return what + ")";
  }
};

// The file after its header: where the body starts, for re-walking it on errors.
struct Body {
  const std::string& path;
  MatrixMarketHeader header;
  std::int64_t size_line = 0;
  const char* begin = nullptr;  ///< first byte after the size line
  const char* end = nullptr;
};

// A number must be followed by white space, the end of its line or the end of the file.
inline bool ends_token(const char* p, const char* end) {
  return p == end || is_space(*p) || *p == '\n';
}

// Hot path: parses an integer token at p and moves p past it and the following spaces.
// Returns false on anything unusual; the caller then re-parses the line in diagnose_line.
inline bool parse_index_fast(const char*& p, const char* end, std::int64_t& value) {
  const auto [stop, ec] = std::from_chars(skip_plus(p, end), end, value);
  if (ec != std::errc{} || !ends_token(stop, end)) return false;
  p = skip_space(stop, end);
  return true;
}

inline bool parse_value_fast(const char*& p, const char* end, bool integer_value, double& value) {
  const char* start = skip_plus(p, end);
  const char* stop = nullptr;
  if (integer_value) {
    std::int64_t integer = 0;
    const auto result = std::from_chars(start, end, integer);
    if (result.ec != std::errc{}) return false;
    stop = result.ptr;
    value = static_cast<double>(integer);
  } else {
    const auto result = std::from_chars(start, end, value);
    if (result.ec != std::errc{} || !std::isfinite(value)) return false;
    stop = result.ptr;
  }
  if (!ends_token(stop, end)) return false;
  p = skip_space(stop, end);
  return true;
}

// Slow path for a data line the hot path refused: finds the first problem and throws it.
[[noreturn]] void diagnose_line(const Body& body, std::string_view line, std::int64_t line_number,
                                const LineShape& shape) {
  const auto fail = [&](const std::string& problem, const std::string& expected) {
    throw MatrixMarketError(body.path, line_number, problem, expected);
  };
  const auto words = split_words(line);
  if (static_cast<int>(words.size()) != shape.tokens()) {
    fail(std::string(words.size() < static_cast<std::size_t>(shape.tokens()) ? "too few" : "too many") +
             " tokens: the line has " + std::to_string(words.size()),
         shape.describe());
  }
  for (int k = 0; k < shape.indices; ++k) {
    const char* which = k == 0 ? "row" : "column";
    const std::int64_t limit = k == 0 ? body.header.rows : body.header.cols;
    const std::string range = "a " + std::string(which) + " index in 1.." + std::to_string(limit);
    std::int64_t index = 0;
    if (!parse_whole_integer(words[static_cast<std::size_t>(k)], index)) {
      fail(std::string(which) + " index " + quoted(words[static_cast<std::size_t>(k)]) +
               " is not an integer",
           range);
    }
    if (index < 1 || index > limit) {
      fail(std::string(which) + " index " + std::to_string(index) + " is out of range", range);
    }
  }
  if (shape.has_value) {
    const std::string_view token = words.back();
    const char* begin = skip_plus(token.data(), token.data() + token.size());
    const char* end = token.data() + token.size();
    if (shape.integer_value) {
      std::int64_t integer = 0;
      const auto [stop, ec] = std::from_chars(begin, end, integer);
      if (ec == std::errc::result_out_of_range) {
        fail("value " + quoted(token) + " does not fit a 64-bit integer", "an integer value");
      }
      if (ec != std::errc{} || stop != end) {
        fail("value " + quoted(token) + " is not an integer",
             "an integer value (the banner says 'integer')");
      }
    } else {
      double value = 0.0;
      const auto [stop, ec] = std::from_chars(begin, end, value);
      if (ec == std::errc::result_out_of_range && stop == end) {
        fail("value " + quoted(token) + " is outside the range of double", "a finite real value");
      }
      if (ec != std::errc{} || stop != end) {
        fail("value " + quoted(token) + " is not a number", "a real value");
      }
      if (!std::isfinite(value)) {
        fail("value " + quoted(token) + " is NaN or infinite", "a finite real value");
      }
    }
  }
  // Not reached: the hot path refuses only lines with one of the problems above.
  throw MatrixMarketError(body.path, line_number, "cannot parse the line " + quoted(line),
                          shape.describe());
}

[[noreturn]] void fail_too_many(const Body& body, std::int64_t line_number) {
  throw MatrixMarketError(
      body.path, line_number,
      "more entries than the " + std::to_string(body.header.entries) +
          " announced on the size line (line " + std::to_string(body.size_line) + ")",
      "the end of the file after entry " + std::to_string(body.header.entries));
}

[[noreturn]] void fail_too_few(const Body& body, std::int64_t last_line, std::int64_t found) {
  throw MatrixMarketError(body.path, last_line,
                          "the file ends after " + std::to_string(found) + " entries but the size "
                              "line (line " + std::to_string(body.size_line) + ") announced " +
                              std::to_string(body.header.entries),
                          std::to_string(body.header.entries) + " entries");
}

// A size line must not size an allocation the file cannot back: every entry line takes at
// least 2 bytes (a character and its line end; the last line needs no line end). Checked before
// anything O(entries) is reserved, so a 3-line file announcing 10⁹ entries is an immediate
// error and the reservation is at most 8 bytes of triplets per byte of file. The bound is
// deliberately loose: a file it passes that still lacks entries, or a token on some line, gets
// the precise message of the parse that follows.
void require_room_for_entries(const Body& body) {
  const auto bytes = static_cast<std::int64_t>(body.end - body.begin);
  const std::int64_t room = (bytes + 1) / 2;
  if (body.header.entries <= room) return;
  throw MatrixMarketError(body.path, body.size_line,
                          "the file ends early: the size line announces " + std::to_string(body.header.entries) +
                              " entries but the " + std::to_string(bytes) + " bytes after it hold at most " +
                              std::to_string(room) + " lines",
                          std::to_string(body.header.entries) + " entry lines after the size line");
}

// Asks for transparent huge pages on a large buffer about to be filled: one fault per 2 MiB
// instead of per 4 KiB. Page faults dominated the read time of a 150 MB file on a
// virtualised host (perf: ~30% of samples) before this and the mmap input. A hint only.
template <typename T>
void advise_huge_pages(const std::vector<T>& buffer) {
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(buffer.data());
  const std::uintptr_t end = begin + buffer.capacity() * sizeof(T);
  const std::uintptr_t aligned_begin = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t aligned_end = end & ~(kHugePage - 1);
  if (aligned_end > aligned_begin) {
    ::madvise(reinterpret_cast<void*>(aligned_begin), aligned_end - aligned_begin, MADV_HUGEPAGE);
  }
}

// Coordinate entries as stored in the file (0-based, no symmetric expansion), in file order.
Triplets parse_coordinate_body(const Body& body) {
  const MatrixMarketHeader& h = body.header;
  const LineShape shape{2, h.has_values(), h.field == MatrixMarketField::integer};
  require_room_for_entries(body);
  Triplets entries;
  entries.reserve(static_cast<std::size_t>(h.entries));
  advise_huge_pages(entries.rows);
  advise_huge_pages(entries.cols);
  advise_huge_pages(entries.values);
  // The scan runs over the whole body rather than line by line (no memchr per line): the
  // parsers stop at white space or '\n'; a line they refuse goes to diagnose_line whole.
  const char* p = body.begin;
  const char* const end = body.end;
  std::int64_t line_number = body.size_line;
  std::int64_t found = 0;
  while (p != end) {
    ++line_number;
    const char* const line_start = p;
    p = skip_space(p, end);
    if (p == end) break;
    if (*p == '\n') {  // blank line
      ++p;
      continue;
    }
    if (found == h.entries) fail_too_many(body, line_number);
    std::int64_t row = 0;
    std::int64_t col = 0;
    double value = 1.0;
    const bool parsed = parse_index_fast(p, end, row) && parse_index_fast(p, end, col) &&
                        (!shape.has_value || parse_value_fast(p, end, shape.integer_value, value)) &&
                        (p == end || *p == '\n');
    if (!parsed || row < 1 || row > h.rows || col < 1 || col > h.cols) {
      const auto* newline = static_cast<const char*>(
          std::memchr(line_start, '\n', static_cast<std::size_t>(end - line_start)));
      const char* line_end = newline != nullptr ? newline : end;
      diagnose_line(body, std::string_view(line_start, static_cast<std::size_t>(line_end - line_start)),
                    line_number, shape);
    }
    if (p != end) ++p;  // the '\n'
    entries.rows.push_back(static_cast<Index>(row - 1));
    entries.cols.push_back(static_cast<Index>(col - 1));
    entries.values.push_back(value);
    ++found;
  }
  if (found < h.entries) fail_too_few(body, line_number, found);
  return entries;
}

std::vector<double> parse_array_body(const Body& body) {
  const MatrixMarketHeader& h = body.header;
  const LineShape shape{0, true, h.field == MatrixMarketField::integer};
  require_room_for_entries(body);
  LineReader lines(body.begin, body.end, body.size_line);
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(h.entries));
  std::string_view line;
  while (lines.next(line)) {
    const char* end = line.data() + line.size();
    const char* p = skip_space(line.data(), end);
    if (p == end) continue;
    if (static_cast<std::int64_t>(values.size()) == h.entries) fail_too_many(body, lines.line_number());
    double value = 0.0;
    if (!parse_value_fast(p, end, shape.integer_value, value) || p != end) {
      diagnose_line(body, line, lines.line_number(), shape);
    }
    values.push_back(value);
  }
  if (static_cast<std::int64_t>(values.size()) < h.entries) {
    fail_too_few(body, lines.line_number(), static_cast<std::int64_t>(values.size()));
  }
  return values;
}

// Line of the entry_number-th (0-based) entry; only used to name lines in error messages,
// so the body is walked again rather than storing a line number per entry.
std::int64_t line_of_entry(const Body& body, std::size_t entry_number) {
  LineReader lines(body.begin, body.end, body.size_line);
  std::string_view line;
  std::size_t seen = 0;
  while (lines.next(line)) {
    if (is_blank(line)) continue;
    if (seen++ == entry_number) return lines.line_number();
  }
  return lines.line_number();
}

// Reads and checks the header of an in-memory file; `body` then covers the rest.
Body parse_header(const std::string& path, const FileBytes& file) {
  const char* begin = file.begin();
  const char* end = file.end();
  HeaderParser parser(path);
  LineReader lines(begin, end);
  std::string_view line;
  while (lines.next(line)) {
    if (parser.consume(line, lines.line_number())) {
      return Body{path, parser.header(), parser.size_line(), lines.position(), end};
    }
  }
  parser.fail_truncated(lines.line_number());
}

void require_format(const Body& body, MatrixMarketFormat wanted) {
  if (body.header.format == wanted) return;
  if (wanted == MatrixMarketFormat::coordinate) {
    throw MatrixMarketError(body.path, 1, "an 'array' (dense) file where a sparse matrix is read",
                            "format 'coordinate' (use read_dense_matrix_market for arrays)");
  }
  throw MatrixMarketError(body.path, 1, "a 'coordinate' (sparse) file where a dense matrix is read",
                          "format 'array' (use read_matrix_market for coordinate files)");
}

// A symmetric file stores one triangle (spec §2 says the lower; we also accept the upper).
// Checks that no entry contradicts the triangle chosen by the first off-diagonal entry and
// moves upper-triangle entries to the lower triangle.
void normalize_to_lower_triangle(const Body& body, Triplets& entries) {
  enum class Triangle { undecided, lower, upper };
  Triangle chosen = Triangle::undecided;
  std::size_t chooser = 0;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const Index row = entries.rows[k];
    const Index col = entries.cols[k];
    if (row == col) continue;
    const Triangle triangle = row > col ? Triangle::lower : Triangle::upper;
    if (chosen == Triangle::undecided) {
      chosen = triangle;
      chooser = k;
    } else if (triangle != chosen) {
      const bool lower = chosen == Triangle::lower;
      throw MatrixMarketError(
          body.path, line_of_entry(body, k),
          "entry " + entry_name(row + 1, col + 1) + " lies in the " + (lower ? "upper" : "lower") +
              " triangle but a symmetric file stores only one triangle and line " +
              std::to_string(line_of_entry(body, chooser)) + " chose the " +
              (lower ? "lower" : "upper"),
          std::string("only ") + (lower ? "lower" : "upper") + "-triangle entries (row " +
              (lower ? ">=" : "<=") + " column) after line " +
              std::to_string(line_of_entry(body, chooser)));
    }
  }
  if (chosen == Triangle::upper) std::swap(entries.rows, entries.cols);
}

// Triplets → CSC by counting sort on the column, each column then sorted if needed and its
// duplicates summed in place (in file order, so the sum is reproducible). When the file
// lists its columns in order, as most writers do (ours included), the parsed arrays become
// the CSC arrays without a copy. csc_from_triplets would do the same job with an extra
// (row, value) array and a copy, which costs a third of the read time on a 150 MB file.
// A pattern file has no values: whatever duplicates summed to, each entry becomes 1.0.
CscMatrix assemble_csc(Index rows, Index cols, Triplets entries, bool pattern) {
  CscMatrix a;
  a.rows = rows;
  a.cols = cols;
  a.col_ptr.assign(static_cast<std::size_t>(cols) + 1, 0);
  bool in_column_order = true;
  Index previous = 0;
  for (const Index c : entries.cols) {
    ++a.col_ptr[static_cast<std::size_t>(c) + 1];
    in_column_order = in_column_order && c >= previous;
    previous = c;
  }
  std::partial_sum(a.col_ptr.begin(), a.col_ptr.end(), a.col_ptr.begin());
  if (in_column_order) {
    a.row_idx = std::move(entries.rows);
    a.values = std::move(entries.values);
  } else {
    a.row_idx.resize(entries.size());
    a.values.resize(entries.size());
    std::vector<Offset> next(a.col_ptr.begin(), a.col_ptr.end() - 1);
    for (std::size_t k = 0; k < entries.size(); ++k) {
      const auto slot = static_cast<std::size_t>(next[static_cast<std::size_t>(entries.cols[k])]++);
      a.row_idx[slot] = entries.rows[k];
      a.values[slot] = entries.values[k];
    }
  }
  entries = Triplets{};  // release before the in-place pass

  std::vector<std::pair<Index, double>> column;
  std::size_t write = 0;
  for (std::size_t c = 0; c < static_cast<std::size_t>(cols); ++c) {
    const auto begin = static_cast<std::size_t>(a.col_ptr[c]);
    const auto end = static_cast<std::size_t>(a.col_ptr[c + 1]);
    a.col_ptr[c] = static_cast<Offset>(write);
    if (!std::is_sorted(a.row_idx.begin() + static_cast<std::ptrdiff_t>(begin),
                        a.row_idx.begin() + static_cast<std::ptrdiff_t>(end))) {
      column.clear();
      for (std::size_t p = begin; p < end; ++p) column.emplace_back(a.row_idx[p], a.values[p]);
      std::stable_sort(column.begin(), column.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      for (std::size_t p = begin; p < end; ++p) {
        a.row_idx[p] = column[p - begin].first;
        a.values[p] = column[p - begin].second;
      }
    }
    const std::size_t column_start = write;
    for (std::size_t p = begin; p < end; ++p) {
      if (write > column_start && a.row_idx[write - 1] == a.row_idx[p]) {
        a.values[write - 1] += a.values[p];
      } else {
        a.row_idx[write] = a.row_idx[p];
        a.values[write] = a.values[p];
        ++write;
      }
    }
  }
  a.col_ptr[static_cast<std::size_t>(cols)] = static_cast<Offset>(write);
  a.row_idx.resize(write);
  a.values.resize(write);
  if (pattern) std::fill(a.values.begin(), a.values.end(), 1.0);
  return a;
}

// For read_symmetric_matrix_market on a `general` file: throws naming the first entry whose
// mirror differs, otherwise returns the lower triangle of `full`.
CscMatrix lower_triangle_of_symmetric(const Body& body, const Triplets& entries,
                                      const CscMatrix& full) {
  const CscMatrix mirror = transpose(full);  // mirror(i, j) = full(j, i)
  for (Index c = 0; c < full.cols; ++c) {
    Offset p = full.col_ptr[static_cast<std::size_t>(c)];
    Offset q = mirror.col_ptr[static_cast<std::size_t>(c)];
    const Offset p_end = full.col_ptr[static_cast<std::size_t>(c) + 1];
    const Offset q_end = mirror.col_ptr[static_cast<std::size_t>(c) + 1];
    while (p < p_end || q < q_end) {
      const Index row_p = p < p_end ? full.row_idx[static_cast<std::size_t>(p)] : full.rows;
      const Index row_q = q < q_end ? mirror.row_idx[static_cast<std::size_t>(q)] : full.rows;
      const Index row = std::min(row_p, row_q);
      const double here = row_p == row ? full.values[static_cast<std::size_t>(p++)] : 0.0;
      const double there = row_q == row ? mirror.values[static_cast<std::size_t>(q++)] : 0.0;
      if (here == there) continue;
      // Name the first line holding either position, with both values.
      std::size_t k = 0;
      while (k < entries.size() &&
             !((entries.rows[k] == row && entries.cols[k] == c) ||
               (entries.rows[k] == c && entries.cols[k] == row))) {
        ++k;
      }
      const auto format = [](double v) {
        char text[32];
        return std::string(text, std::to_chars(text, text + sizeof text, v).ptr);
      };
      throw MatrixMarketError(
          body.path, line_of_entry(body, k),
          "the 'general' matrix is not symmetric: A" + entry_name(row + 1, c + 1) + " = " +
              format(here) + " but A" + entry_name(c + 1, row + 1) + " = " + format(there),
          "A(i, j) == A(j, i) for a symmetric read (use read_matrix_market for unsymmetric "
          "matrices)");
    }
  }
  CscMatrix lower;
  lower.rows = full.rows;
  lower.cols = full.cols;
  lower.col_ptr.assign(static_cast<std::size_t>(full.cols) + 1, 0);
  lower.row_idx.reserve(full.row_idx.size() / 2 + static_cast<std::size_t>(full.cols));
  lower.values.reserve(lower.row_idx.capacity());
  for (Index c = 0; c < full.cols; ++c) {
    for (Offset p = full.col_ptr[static_cast<std::size_t>(c)];
         p < full.col_ptr[static_cast<std::size_t>(c) + 1]; ++p) {
      if (full.row_idx[static_cast<std::size_t>(p)] < c) continue;
      lower.row_idx.push_back(full.row_idx[static_cast<std::size_t>(p)]);
      lower.values.push_back(full.values[static_cast<std::size_t>(p)]);
    }
    lower.col_ptr[static_cast<std::size_t>(c) + 1] = static_cast<Offset>(lower.row_idx.size());
  }
  return lower;
}

// ---------------------------------------------------------------------------------------
// Atomic output: a temporary file beside the target, renamed over it once complete, so a
// reader sees either the old file or the whole new one. (No fsync: this protects readers,
// not against power loss.)

class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(const std::string& path) : path_(path), buffer_(kBufferSize) {
    static std::atomic<unsigned> counter{0};
    const std::filesystem::path target(path);
    for (int attempt = 0; attempt < 100 && file_ == nullptr; ++attempt) {
      // Built with += : GCC 12 gives a false -Wrestrict on "." + std::string (GCC PR 105329).
      std::string name(".");
      name += target.filename().string();
      name += ".tmp.";
      name += std::to_string(::getpid());
      name += '.';
      name += std::to_string(counter++);
      temp_path_ = (target.parent_path() / name).string();
      file_ = std::fopen(temp_path_.c_str(), "wbx");  // x: fail rather than reuse a name
      if (file_ == nullptr && errno != EEXIST) break;
    }
    if (file_ == nullptr) {
      fail("cannot create a temporary file beside it (" + temp_path_ + "): " + std::strerror(errno),
           "an existing, writable directory");
    }
  }
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter() { discard(); }

  void text(std::string_view s) {
    reserve(s.size());
    std::memcpy(buffer_.data() + used_, s.data(), s.size());
    used_ += s.size();
  }
  void character(char c) {
    reserve(1);
    buffer_[used_++] = c;
  }
  void integer(std::int64_t value) {
    reserve(24);
    used_ = static_cast<std::size_t>(
        std::to_chars(buffer_.data() + used_, buffer_.data() + buffer_.size(), value).ptr -
        buffer_.data());
  }
  // Shortest representation that reads back to the same double (std::to_chars guarantee).
  void real(double value) {
    reserve(32);
    used_ = static_cast<std::size_t>(
        std::to_chars(buffer_.data() + used_, buffer_.data() + buffer_.size(), value).ptr -
        buffer_.data());
  }

  /// Flushes, closes and renames the temporary file over the target.
  void commit() {
    flush();
    std::FILE* file = std::exchange(file_, nullptr);
    if (std::fclose(file) != 0) {
      const int error = errno;
      std::remove(temp_path_.c_str());
      fail(std::string("cannot finish writing: ") + std::strerror(error), "a writable location with free space");
    }
    if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
      const int error = errno;
      std::remove(temp_path_.c_str());
      fail("cannot rename " + temp_path_ + " over it: " + std::strerror(error), "a writable target path");
    }
  }

 private:
  static constexpr std::size_t kBufferSize = std::size_t{1} << 20;

  [[noreturn]] void fail(const std::string& problem, const std::string& expected) {
    throw MatrixMarketError(path_, 0, problem, expected);
  }

  void reserve(std::size_t bytes) {
    if (used_ + bytes > buffer_.size()) flush();
    if (bytes > buffer_.size()) buffer_.resize(bytes);
  }

  void flush() {
    if (used_ > 0 && std::fwrite(buffer_.data(), 1, used_, file_) != used_) {
      const int error = errno;
      discard();
      fail(std::string("cannot write: ") + std::strerror(error), "a writable location with free space");
    }
    used_ = 0;
  }

  void discard() {
    if (file_ == nullptr) return;
    std::fclose(std::exchange(file_, nullptr));
    std::remove(temp_path_.c_str());
  }

  std::string path_;
  std::string temp_path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;
  std::size_t used_ = 0;
};

void check_finite(const std::string& path, std::span<const double> values) {
  const auto bad = std::find_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); });
  if (bad != values.end()) {
    throw std::invalid_argument("write_matrix_market: " + path + ": value number " +
                                std::to_string(bad - values.begin()) +
                                " is NaN or infinite; Matrix Market readers reject it");
  }
}

void write_coordinate(const std::string& path, const CscMatrix& a, const char* symmetry) {
  const bool pattern = a.values.empty() && a.nnz() > 0;
  check_finite(path, a.values);
  AtomicFileWriter out(path);
  out.text("%%MatrixMarket matrix coordinate ");
  out.text(pattern ? "pattern " : "real ");
  out.text(symmetry);
  out.character('\n');
  out.integer(a.rows);
  out.character(' ');
  out.integer(a.cols);
  out.character(' ');
  out.integer(a.nnz());
  out.character('\n');
  for (Index c = 0; c < a.cols; ++c) {
    for (Offset p = a.col_ptr[static_cast<std::size_t>(c)];
         p < a.col_ptr[static_cast<std::size_t>(c) + 1]; ++p) {
      out.integer(static_cast<std::int64_t>(a.row_idx[static_cast<std::size_t>(p)]) + 1);
      out.character(' ');
      out.integer(static_cast<std::int64_t>(c) + 1);
      if (!pattern) {
        out.character(' ');
        out.real(a.values[static_cast<std::size_t>(p)]);
      }
      out.character('\n');
    }
  }
  out.commit();
}

}  // namespace

// -----------------------------------------------------------------------------------------
// Public API

void require_header_allows_spd(const std::string& path, const MatrixMarketHeader& header) {
  const std::string dimensions = std::to_string(header.rows) + "x" + std::to_string(header.cols);
  if (header.rows != header.cols) {
    throw MatrixMarketError(path, header.size_line, "the matrix is " + dimensions,
                            "a square matrix (only a square matrix can be positive definite)");
  }
  if (header.entries < header.rows) {
    throw MatrixMarketError(
        path, header.size_line,
        "the size line announces a " + dimensions + " matrix with only " + std::to_string(header.entries) +
            " stored entries, fewer than its " + std::to_string(header.rows) +
            " diagonal entries, so some diagonal entry is missing (zero) and the matrix is not positive definite",
        "at least " + std::to_string(header.rows) + " entries (every diagonal entry of a positive definite "
        "matrix is stored and positive)");
  }
}

MatrixMarketHeader read_matrix_market_info(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw MatrixMarketError(path, 0, std::string("cannot open the file: ") + std::strerror(errno),
                            "a readable Matrix Market file");
  }
  HeaderParser parser(path);
  std::string line;
  std::int64_t line_number = 0;
  while (std::getline(in, line)) {
    if (parser.consume(line, ++line_number)) return parser.header();
  }
  parser.fail_truncated(line_number);
}

CscMatrix read_matrix_market(const std::string& path, MatrixMarketHeader* header) {
  const FileBytes file(path);
  const Body body = parse_header(path, file);
  require_format(body, MatrixMarketFormat::coordinate);
  Triplets entries = parse_coordinate_body(body);
  if (body.header.symmetry == MatrixMarketSymmetry::symmetric) {
    normalize_to_lower_triangle(body, entries);
    const std::size_t stored = entries.size();
    entries.reserve(2 * stored);
    for (std::size_t k = 0; k < stored; ++k) {
      if (entries.rows[k] != entries.cols[k]) {
        entries.add(entries.cols[k], entries.rows[k], entries.values[k]);
      }
    }
  }
  CscMatrix a = assemble_csc(body.header.rows, body.header.cols, std::move(entries),
                             !body.header.has_values());
  if (header != nullptr) *header = body.header;
  return a;
}

SymmetricCscMatrix read_symmetric_matrix_market(const std::string& path, MatrixMarketHeader* header) {
  const FileBytes file(path);
  const Body body = parse_header(path, file);
  require_format(body, MatrixMarketFormat::coordinate);
  if (body.header.rows != body.header.cols) {
    throw MatrixMarketError(path, body.size_line,
                            "the matrix is " + std::to_string(body.header.rows) + "x" +
                                std::to_string(body.header.cols),
                            "a square matrix for a symmetric read");
  }
  Triplets entries = parse_coordinate_body(body);
  SymmetricCscMatrix a;
  if (body.header.symmetry == MatrixMarketSymmetry::symmetric) {
    normalize_to_lower_triangle(body, entries);
    a.lower = assemble_csc(body.header.rows, body.header.cols, std::move(entries),
                           !body.header.has_values());
  } else {
    const CscMatrix full =
        assemble_csc(body.header.rows, body.header.cols, entries, !body.header.has_values());
    a.lower = lower_triangle_of_symmetric(body, entries, full);
  }
  if (header != nullptr) *header = body.header;
  return a;
}

DenseMatrix read_dense_matrix_market(const std::string& path, MatrixMarketHeader* header) {
  const FileBytes file(path);
  const Body body = parse_header(path, file);
  require_format(body, MatrixMarketFormat::array);
  std::vector<double> values = parse_array_body(body);
  const MatrixMarketHeader& h = body.header;
  DenseMatrix a;
  if (h.symmetry == MatrixMarketSymmetry::general) {
    a = DenseMatrix(h.rows, h.cols);
    a.storage() = std::move(values);
  } else {
    // Spec §3: a symmetric array lists the lower triangle column by column.
    a = DenseMatrix(h.rows, h.cols);
    std::size_t next = 0;
    for (Index j = 0; j < h.cols; ++j) {
      for (Index i = j; i < h.rows; ++i) {
        a(i, j) = values[next];
        a(j, i) = values[next];
        ++next;
      }
    }
  }
  if (header != nullptr) *header = h;
  return a;
}

void write_matrix_market(const std::string& path, const CscMatrix& a) {
  check_valid(a);
  write_coordinate(path, a, "general");
}

void write_matrix_market(const std::string& path, const SymmetricCscMatrix& a) {
  check_valid(a);
  write_coordinate(path, a.lower, "symmetric");
}

void write_matrix_market(const std::string& path, const DenseMatrix& a) {
  check_finite(path, a.storage());
  AtomicFileWriter out(path);
  out.text("%%MatrixMarket matrix array real general\n");
  out.integer(a.rows());
  out.character(' ');
  out.integer(a.cols());
  out.character('\n');
  for (const double value : a.storage()) {
    out.real(value);
    out.character('\n');
  }
  out.commit();
}

}  // namespace cholsim::linalg
