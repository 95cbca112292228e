#pragma once
// Text placed in XML (VTK's .vtu/.pvd, SVG, HTML) by the commands' writers.
#include <string>
#include <string_view>

namespace cholsim::apps {

/// `text` with the five XML special characters replaced by entities, usable both as element
/// text and inside a double- or single-quoted attribute value.
std::string xml_escaped(std::string_view text);

}  // namespace cholsim::apps
