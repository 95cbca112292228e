#include "svg_document.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace cholsim::apps::plots {

std::string svg_number(double value) {
  if (!std::isfinite(value)) throw std::invalid_argument("svg_number: coordinate is not finite");
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  std::string text = buffer;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text == "-0" ? "0" : text;
}

SvgDocument::SvgDocument(double width, double height, std::string_view title) {
  const std::string w = svg_number(width), h = svg_number(height);
  header_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + w + "\" height=\"" + h +
            "\" viewBox=\"0 0 " + w + " " + h + "\" font-family=\"sans-serif\" font-size=\"12\">\n"
            "<title>" + xml_escaped(title) + "</title>\n"
            "<rect x=\"0\" y=\"0\" width=\"" + w + "\" height=\"" + h + "\" fill=\"white\"/>\n";
}

void SvgDocument::write_attributes(SvgAttributes attributes) {
  for (const auto& [name, value] : attributes) body_ << ' ' << name << "=\"" << xml_escaped(value) << '"';
}

void SvgDocument::add(std::string_view tag, SvgAttributes attributes, std::string_view tooltip) {
  body_ << '<' << tag;
  write_attributes(attributes);
  if (tooltip.empty()) {
    body_ << "/>\n";
  } else {
    body_ << "><title>" << xml_escaped(tooltip) << "</title></" << tag << ">\n";
  }
}

void SvgDocument::add_text(double x, double y, std::string_view text, SvgAttributes attributes) {
  body_ << "<text x=\"" << svg_number(x) << "\" y=\"" << svg_number(y) << '"';
  write_attributes(attributes);
  body_ << '>' << xml_escaped(text) << "</text>\n";
}

void SvgDocument::begin_group(SvgAttributes attributes) {
  body_ << "<g";
  write_attributes(attributes);
  body_ << ">\n";
  ++open_groups_;
}

void SvgDocument::end_group() {
  if (open_groups_ == 0) throw std::logic_error("SvgDocument::end_group without an open group");
  body_ << "</g>\n";
  --open_groups_;
}

std::string SvgDocument::str() const {
  if (open_groups_ != 0) throw std::logic_error("SvgDocument::str with " + std::to_string(open_groups_) + " open group(s)");
  return header_ + body_.str() + "</svg>\n";
}

}  // namespace cholsim::apps::plots
