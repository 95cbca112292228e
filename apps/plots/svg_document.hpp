#pragma once
// A minimal SVG 1.1 writer: the pictures of `cholsim factor --plot` need rectangles, lines,
// circles, paths and text, and no new dependency. Every attribute value and text is escaped,
// and groups must be balanced, so the document is always well-formed XML that a browser opens.
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "xml_text.hpp"

namespace cholsim::apps::plots {

/// A coordinate or length for an attribute: at most two decimals, no trailing zeros.
std::string svg_number(double value);

/// One attribute: name and (unescaped) value.
using SvgAttribute = std::pair<std::string_view, std::string>;
using SvgAttributes = std::initializer_list<SvgAttribute>;

class SvgDocument {
 public:
  /// A width × height picture (pixels) whose <title> is `title` (browsers show it as the tab
  /// name and screen readers read it).
  SvgDocument(double width, double height, std::string_view title);

  /// An empty element, e.g. add("rect", {{"x", svg_number(1)}, …}); with a non-empty
  /// `tooltip` it gets a <title> child, which browsers show on hover.
  void add(std::string_view tag, SvgAttributes attributes, std::string_view tooltip = {});
  /// A <text> element at (x, y) holding `text`.
  void add_text(double x, double y, std::string_view text, SvgAttributes attributes = {});
  /// <g> … </g>: attributes (a transform, a shared style) apply to everything in between.
  void begin_group(SvgAttributes attributes);
  /// Throws std::logic_error without an open group.
  void end_group();

  /// The whole document. Throws std::logic_error while a group is open.
  [[nodiscard]] std::string str() const;

 private:
  void write_attributes(SvgAttributes attributes);

  std::ostringstream body_;
  std::string header_;
  int open_groups_ = 0;
};

}  // namespace cholsim::apps::plots
