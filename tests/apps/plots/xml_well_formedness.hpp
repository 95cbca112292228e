#pragma once
// A strict check that a document is well-formed XML (the subset our SVG and index.html use:
// an XML declaration, a DOCTYPE, comments, elements, attributes, text, character and the five
// predefined entity references; no CDATA or processing instructions inside). Browsers refuse
// to show an SVG with any of these errors, so the plot tests check every file with it.
#include <optional>
#include <string>
#include <string_view>

namespace cholsim::apps::testing {

/// nullopt when `document` is well-formed, else "line N: what is wrong".
std::optional<std::string> xml_well_formedness_error(std::string_view document);

/// The name of the root element of a well-formed `document` (empty if there is none).
std::string xml_root_name(std::string_view document);

}  // namespace cholsim::apps::testing
