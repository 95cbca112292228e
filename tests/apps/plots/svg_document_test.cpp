// The SVG writer escapes every text and attribute value, keeps groups balanced and writes
// documents the strict well-formedness check accepts; the check itself rejects each kind of
// malformed document (so the plot tests that rely on it can fail).
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>

#include "apps/plots/svg_document.hpp"
#include "tests/apps/plots/xml_well_formedness.hpp"

namespace cholsim::apps::plots {
namespace {

using testing::xml_root_name;
using testing::xml_well_formedness_error;

TEST(SvgDocument, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(xml_escaped("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
  EXPECT_EQ(xml_escaped("P·A·Pᵀ"), "P·A·Pᵀ");  // UTF-8 passes through
}

TEST(SvgDocument, NumbersHaveAtMostTwoDecimals) {
  EXPECT_EQ(svg_number(1.0), "1");
  EXPECT_EQ(svg_number(2.5), "2.5");
  EXPECT_EQ(svg_number(1.0 / 3.0), "0.33");
  EXPECT_EQ(svg_number(-0.001), "0");
  EXPECT_EQ(svg_number(-12.345), "-12.35");
  EXPECT_THROW(svg_number(std::numeric_limits<double>::infinity()), std::invalid_argument);
}

TEST(SvgDocument, HostileTextStaysWellFormed) {
  const std::string hostile = "</text><script>alert('x')</script> & \"quoted\" <!-- -->";
  SvgDocument svg(100, 50, hostile);
  svg.begin_group({{"class", hostile}});
  svg.add("rect", {{"x", "0"}, {"y", "0"}, {"width", "10"}, {"height", "10"}, {"fill", hostile}}, hostile);
  svg.add_text(5, 5, hostile, {{"data-label", hostile}});
  svg.end_group();
  const std::string text = svg.str();
  EXPECT_EQ(xml_well_formedness_error(text), std::nullopt) << text;
  EXPECT_EQ(xml_root_name(text), "svg");
  EXPECT_EQ(text.find("<script>"), std::string::npos);
  EXPECT_NE(text.find("&lt;/text&gt;&lt;script&gt;"), std::string::npos);
}

TEST(SvgDocument, GroupsMustBalance) {
  SvgDocument svg(10, 10, "t");
  EXPECT_THROW(svg.end_group(), std::logic_error);
  svg.begin_group({});
  EXPECT_THROW((void)svg.str(), std::logic_error);
  svg.end_group();
  EXPECT_EQ(xml_well_formedness_error(svg.str()), std::nullopt);
}

TEST(XmlWellFormedness, AcceptsDeclarationDoctypeCommentsAndEntities) {
  EXPECT_EQ(xml_well_formedness_error("<?xml version=\"1.0\"?>\n<!-- c -->\n<a x='1' y=\"&amp;&#60;&#x3C;\">t &gt; u<b/></a>\n"),
            std::nullopt);
  EXPECT_EQ(xml_well_formedness_error("<!DOCTYPE html>\n<html><body><p>x</p></body></html>"), std::nullopt);
}

TEST(XmlWellFormedness, RejectsEachKindOfError) {
  for (const char* bad : {"", "text only", "<a>", "<a></b>", "<a><b></a></b>", "<a x=1/>", "<a x=\"1\" x=\"2\"/>",
                          "<a x=\"<\"/>", "<a>&nbsp;</a>", "<a>& b</a>", "<a>1 < 2</a>", "<a/><b/>", "<a/>tail",
                          "<a x=\"1\"y=\"2\"/>", "<1a/>", "<a><!-- open </a>", "<a x=\"1/>"}) {
    EXPECT_NE(xml_well_formedness_error(bad), std::nullopt) << bad;
  }
}

TEST(XmlWellFormedness, ErrorsNameTheLine) {
  const auto error = xml_well_formedness_error("<a>\n<b>\n</c>\n</a>");
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("line 3"), std::string::npos) << *error;
}

}  // namespace
}  // namespace cholsim::apps::plots
