#include "chart_elements.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace cholsim::apps::plots {
namespace {

struct Rgb {
  double r, g, b;
};

template <std::size_t N>
std::string interpolate(const std::array<Rgb, N>& anchors, double t) {
  const double position = std::clamp(t, 0.0, 1.0) * static_cast<double>(N - 1);
  const std::size_t low = std::min(static_cast<std::size_t>(position), N - 2);
  const double f = position - static_cast<double>(low);
  const Rgb& a = anchors[low];
  const Rgb& b = anchors[low + 1];
  auto channel = [f](double x, double y) { return static_cast<int>(std::lround(x + (y - x) * f)); };
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", channel(a.r, b.r), channel(a.g, b.g), channel(a.b, b.b));
  return buffer;
}

constexpr double tick_length = 4.0;
constexpr double caption_line_height = 14.0;

}  // namespace

std::string viridis(double t) {
  static constexpr std::array<Rgb, 5> anchors{
      {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}};
  return interpolate(anchors, t);
}

std::string blues(double t) {
  static constexpr std::array<Rgb, 3> anchors{{{198, 219, 239}, {66, 146, 198}, {8, 48, 107}}};
  return interpolate(anchors, t);
}

double log_fraction(double value, double largest) {
  if (largest <= 0.0) return 0.0;
  return std::log1p(std::max(value, 0.0)) / std::log1p(largest);
}

std::string format_si(double value) {
  static constexpr std::array<const char*, 6> suffixes{"", "k", "M", "G", "T", "P"};
  std::size_t power = 0;
  double scaled = value;
  while (std::abs(scaled) >= 1000.0 && power + 1 < suffixes.size()) {
    scaled /= 1000.0;
    ++power;
  }
  char buffer[32];
  const bool whole = std::abs(scaled - std::round(scaled)) < 1e-9;
  std::snprintf(buffer, sizeof buffer, whole ? "%.0f%s" : "%.3g%s", scaled, suffixes[power]);
  return buffer;
}

std::vector<double> nice_ticks(double largest, int target) {
  if (largest <= 0.0) return {0.0};
  const double rough = largest / std::max(target, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  double step = magnitude;
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * magnitude;
    if (step >= rough) break;
  }
  std::vector<double> ticks;
  for (double tick = 0.0; tick < largest + step * 0.999; tick += step) ticks.push_back(tick);
  return ticks;
}

void draw_value_axis(SvgDocument& svg, const PlotFrame& frame, double top_value, std::string_view label) {
  svg.add("line", {{"x1", svg_number(frame.left)}, {"y1", svg_number(frame.top)}, {"x2", svg_number(frame.left)},
                   {"y2", svg_number(frame.bottom())}, {"stroke", "black"}});
  for (double tick : nice_ticks(top_value, 4)) {
    if (tick > top_value * 1.0001) break;
    const double y = frame.bottom() - frame.height * (top_value > 0.0 ? tick / top_value : 0.0);
    svg.add("line", {{"x1", svg_number(frame.left)}, {"y1", svg_number(y)}, {"x2", svg_number(frame.right())},
                     {"y2", svg_number(y)}, {"stroke", "#e0e0e0"}});
    svg.add("line", {{"x1", svg_number(frame.left - tick_length)}, {"y1", svg_number(y)},
                     {"x2", svg_number(frame.left)}, {"y2", svg_number(y)}, {"stroke", "black"}});
    svg.add_text(frame.left - tick_length - 2.0, y + 4.0, format_si(tick), {{"text-anchor", "end"}});
  }
  const double x = frame.left - 48.0, y = frame.top + frame.height / 2.0;
  svg.add_text(x, y, label,
               {{"text-anchor", "middle"}, {"transform", "rotate(-90 " + svg_number(x) + " " + svg_number(y) + ")"}});
}

void draw_colour_bar(SvgDocument& svg, double x, double y, double length, const ColourScale& scale,
                     std::string_view title, std::string_view low_label, std::string_view high_label) {
  constexpr int steps = 32;
  constexpr double height = 10.0;
  svg.add_text(x, y - 4.0, title);
  const double step_width = length / steps;
  for (int i = 0; i < steps; ++i) {
    svg.add("rect", {{"x", svg_number(x + i * step_width)}, {"y", svg_number(y)}, {"width", svg_number(step_width + 0.5)},
                     {"height", svg_number(height)}, {"fill", scale((i + 0.5) / steps)}});
  }
  svg.add("rect", {{"x", svg_number(x)}, {"y", svg_number(y)}, {"width", svg_number(length)},
                   {"height", svg_number(height)}, {"fill", "none"}, {"stroke", "#808080"}});
  svg.add_text(x, y + height + 13.0, low_label);
  svg.add_text(x + length, y + height + 13.0, high_label, {{"text-anchor", "end"}});
}

void draw_legend_entry(SvgDocument& svg, double x, double y, std::string_view colour, std::string_view label) {
  svg.add("rect", {{"x", svg_number(x)}, {"y", svg_number(y - 9.0)}, {"width", "10"}, {"height", "10"},
                   {"fill", std::string(colour)}, {"stroke", "#606060"}});
  svg.add_text(x + 15.0, y, label);
}

void draw_caption(SvgDocument& svg, double x, double y, const std::vector<std::string>& lines) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    svg.add_text(x, y + caption_line_height * static_cast<double>(i), lines[i], {{"fill", "#404040"}, {"font-size", "11"}});
  }
}

double caption_height(const std::vector<std::string>& lines) {
  return caption_line_height * static_cast<double>(lines.size());
}

}  // namespace cholsim::apps::plots
