#include "tests/apps/plots/xml_well_formedness.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

namespace cholsim::apps::testing {
namespace {

bool is_name_character(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) != 0 || c == '-' || c == '_' || c == ':' || c == '.' || u >= 0x80;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// Reads the document left to right; the first error stops it.
class Checker {
 public:
  explicit Checker(std::string_view text) : text_(text) {}

  std::optional<std::string> run() {
    if (starts_with("<?xml")) skip_past("?>", "XML declaration");
    while (!error_ && skip_misc()) {
      if (starts_with("<!DOCTYPE")) {
        if (!open_elements_.empty() || root_seen_) fail("DOCTYPE after the root element");
        skip_past(">", "DOCTYPE");
      } else if (root_seen_) {
        fail("content after the root element");
      } else {
        root_seen_ = true;
        element();
      }
    }
    if (!error_ && !root_seen_) fail("no root element");
    return error_;
  }

  std::string root() const { return root_name_; }

 private:
  [[nodiscard]] bool at_end() const { return position_ >= text_.size(); }
  [[nodiscard]] bool starts_with(std::string_view prefix) const { return text_.substr(position_).starts_with(prefix); }

  void fail(const std::string& what) {
    if (error_) return;
    const auto line = 1 + std::count(text_.begin(), text_.begin() + static_cast<std::ptrdiff_t>(std::min(position_, text_.size())), '\n');
    error_ = "line " + std::to_string(line) + ": " + what;
  }

  void skip_past(std::string_view end, const char* what) {
    const std::size_t found = text_.find(end, position_);
    if (found == std::string_view::npos) return fail(std::string("unterminated ") + what);
    position_ = found + end.size();
  }

  /// Skips whitespace and comments outside the root; false at the end of the text.
  bool skip_misc() {
    while (!at_end()) {
      if (is_space(text_[position_])) {
        ++position_;
      } else if (starts_with("<!--")) {
        skip_past("-->", "comment");
      } else if (text_[position_] != '<') {
        fail("text outside the root element");
        return false;
      } else {
        return true;
      }
    }
    return false;
  }

  std::string name() {
    const std::size_t start = position_;
    while (!at_end() && is_name_character(text_[position_])) ++position_;
    if (position_ == start || std::isdigit(static_cast<unsigned char>(text_[start])) || text_[start] == '-') {
      fail("expected a name");
      return {};
    }
    return std::string(text_.substr(start, position_ - start));
  }

  void skip_spaces() {
    while (!at_end() && is_space(text_[position_])) ++position_;
  }

  /// An entity reference starting at '&'; advances past it.
  void reference() {
    const std::size_t end = text_.find(';', position_);
    if (end == std::string_view::npos || end - position_ > 12) return fail("'&' that starts no entity reference");
    const std::string_view entity = text_.substr(position_ + 1, end - position_ - 1);
    static const std::set<std::string_view> predefined{"amp", "lt", "gt", "quot", "apos"};
    const bool decimal = entity.size() > 1 && entity[0] == '#' &&
                         std::all_of(entity.begin() + 1, entity.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    const bool hexadecimal = entity.size() > 2 && entity.starts_with("#x") &&
                             std::all_of(entity.begin() + 2, entity.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
    if (!predefined.contains(entity) && !decimal && !hexadecimal) return fail("unknown entity &" + std::string(entity) + ";");
    position_ = end + 1;
  }

  void attribute_value() {
    if (at_end() || (text_[position_] != '"' && text_[position_] != '\'')) return fail("attribute value not quoted");
    const char quote = text_[position_++];
    while (!error_ && !at_end() && text_[position_] != quote) {
      if (text_[position_] == '<') return fail("'<' in an attribute value");
      if (text_[position_] == '&') {
        reference();
      } else {
        ++position_;
      }
    }
    if (at_end()) return fail("unterminated attribute value");
    ++position_;
  }

  /// The attributes of a start tag; true when the tag closes itself ("/>").
  bool attributes() {
    std::set<std::string> seen;
    while (!error_) {
      const bool spaced = !at_end() && is_space(text_[position_]);
      skip_spaces();
      if (at_end()) break;
      if (starts_with("/>")) {
        position_ += 2;
        return true;
      }
      if (text_[position_] == '>') {
        ++position_;
        return false;
      }
      if (!spaced) {
        fail("attributes must be separated by spaces");
        break;
      }
      const std::string attribute = name();
      if (!seen.insert(attribute).second) fail("attribute " + attribute + " repeated");
      skip_spaces();
      if (at_end() || text_[position_] != '=') fail("expected '=' after attribute " + attribute);
      if (error_) break;
      ++position_;
      skip_spaces();
      attribute_value();
    }
    fail("unterminated start tag");
    return false;
  }

  /// One element and everything inside it, with an explicit stack (no recursion limit).
  void element() {
    do {
      if (starts_with("</")) {
        position_ += 2;
        const std::string closing = name();
        skip_spaces();
        if (at_end() || text_[position_] != '>') return fail("unterminated end tag " + closing);
        ++position_;
        if (open_elements_.empty() || open_elements_.back() != closing) {
          return fail("end tag </" + closing + "> does not match <" + (open_elements_.empty() ? "" : open_elements_.back()) + ">");
        }
        open_elements_.pop_back();
      } else if (starts_with("<!--")) {
        skip_past("-->", "comment");
      } else if (starts_with("<")) {
        ++position_;
        const std::string opened = name();
        if (root_name_.empty()) root_name_ = opened;
        if (!error_ && !attributes()) open_elements_.push_back(opened);
      } else if (text_[position_] == '&') {
        reference();
      } else {
        ++position_;
      }
      if (!error_ && at_end() && !open_elements_.empty()) fail("unclosed element <" + open_elements_.back() + ">");
    } while (!error_ && !open_elements_.empty());
  }

  std::string_view text_;
  std::size_t position_ = 0;
  std::vector<std::string> open_elements_;
  std::optional<std::string> error_;
  std::string root_name_;
  bool root_seen_ = false;
};

}  // namespace

std::optional<std::string> xml_well_formedness_error(std::string_view document) { return Checker(document).run(); }

std::string xml_root_name(std::string_view document) {
  Checker checker(document);
  return checker.run() ? std::string() : checker.root();
}

}  // namespace cholsim::apps::testing
