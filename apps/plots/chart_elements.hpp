#pragma once
// What the plots of `cholsim factor --plot` share: colour scales, tick placement, number
// labels, axes, colour bars and captions, so every picture reads the same way.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "svg_document.hpp"

namespace cholsim::apps::plots {

/// A colour scale: t in [0, 1] → "#rrggbb".
using ColourScale = std::function<std::string(double)>;
/// Perceptually ordered dark blue → green → yellow (viridis-like), for magnitudes.
std::string viridis(double t);
/// Pale to dark blue, for densities on a white background.
std::string blues(double t);

/// log(1 + value) / log(1 + largest) in [0, 1]: counts and sizes span decades.
double log_fraction(double value, double largest);

/// 1234 → "1.23k", 5.6e9 → "5.6G": axis labels that stay short.
std::string format_si(double value);

/// 0 and multiples of 1, 2 or 5 × 10^k up to at least `largest`, about `target` of them.
std::vector<double> nice_ticks(double largest, int target);

/// The rectangle data are drawn in, in pixels.
struct PlotFrame {
  double left = 0.0;
  double top = 0.0;
  double width = 0.0;
  double height = 0.0;
  [[nodiscard]] double bottom() const { return top + height; }
  [[nodiscard]] double right() const { return left + width; }
};

/// A vertical axis from 0 to `top_value` at the frame's left with ticks, grid lines and a
/// rotated `label`.
void draw_value_axis(SvgDocument& svg, const PlotFrame& frame, double top_value, std::string_view label);

/// A horizontal colour bar `length` px long at (x, y), `low_label` and `high_label` at its
/// ends and `title` above it.
void draw_colour_bar(SvgDocument& svg, double x, double y, double length, const ColourScale& scale,
                     std::string_view title, std::string_view low_label, std::string_view high_label);

/// A small square of `colour` with `label` beside it (a legend entry) at (x, y).
void draw_legend_entry(SvgDocument& svg, double x, double y, std::string_view colour, std::string_view label);

/// Lines of smaller grey text from (x, y) downwards: what a reader needs to know about the
/// picture (what was collapsed, which schedule, which ordering).
void draw_caption(SvgDocument& svg, double x, double y, const std::vector<std::string>& lines);

/// Pixels draw_caption needs for `lines`.
double caption_height(const std::vector<std::string>& lines);

}  // namespace cholsim::apps::plots
