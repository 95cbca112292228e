#include "level_profile_plot.hpp"

#include <algorithm>
#include <vector>

#include "chart_elements.hpp"
#include "factor/analysis/tree_level_profile.hpp"
#include "report.hpp"

namespace cholsim::apps::plots {
namespace {

using linalg::Index;
using factor::TreeLevel;

constexpr double left_margin = 90.0;
constexpr double panel_height = 150.0;
constexpr double panel_gap = 56.0;
constexpr double top_margin = 60.0;

double mean_front(const TreeLevel& level) {
  return static_cast<double>(level.front_rows) / std::max<Index>(1, level.supernodes);
}

std::string level_tooltip(Index depth, const TreeLevel& level) {
  return "level " + std::to_string(depth) + ": " + format_count(level.supernodes) + " supernodes, " +
         format_count(level.columns) + " columns, " + format_si(level.flops) + " flops, " +
         format_count(level.factor_entries) + " factor entries, largest front " + format_count(level.largest_front) +
         ", mean front " + format_fixed(mean_front(level), 1);
}

/// One panel: a bar of value(level) per level, the mean front as a tick when `with_mean_front`.
template <typename Value>
void draw_panel(SvgDocument& svg, const PlotFrame& frame, const std::vector<TreeLevel>& levels, std::string_view label,
                std::string_view colour, Value value, bool with_mean_front) {
  double largest = 0.0;
  for (const TreeLevel& level : levels) largest = std::max(largest, static_cast<double>(value(level)));
  const double top_value = std::max(1.0, nice_ticks(largest, 4).back());
  draw_value_axis(svg, frame, top_value, label);
  const double slot = frame.width / static_cast<double>(levels.size());
  for (std::size_t d = 0; d < levels.size(); ++d) {
    const double height = frame.height * static_cast<double>(value(levels[d])) / top_value;
    const double x = frame.left + slot * static_cast<double>(d) + 0.1 * slot;
    svg.add("rect", {{"x", svg_number(x)}, {"y", svg_number(frame.bottom() - height)}, {"width", svg_number(0.8 * slot)},
                     {"height", svg_number(height)}, {"fill", std::string(colour)}},
            level_tooltip(static_cast<Index>(d), levels[d]));
    if (with_mean_front) {
      const double y = frame.bottom() - frame.height * mean_front(levels[d]) / top_value;
      svg.add("line", {{"x1", svg_number(x)}, {"y1", svg_number(y)}, {"x2", svg_number(x + 0.8 * slot)},
                       {"y2", svg_number(y)}, {"stroke", "black"}, {"stroke-width", "2"}});
    }
  }
  svg.add("line", {{"x1", svg_number(frame.left)}, {"y1", svg_number(frame.bottom())}, {"x2", svg_number(frame.right())},
                   {"y2", svg_number(frame.bottom())}, {"stroke", "black"}});
}

void draw_level_labels(SvgDocument& svg, const PlotFrame& frame, std::size_t levels) {
  const double slot = frame.width / static_cast<double>(levels);
  const std::size_t every = std::max<std::size_t>(1, static_cast<std::size_t>(24.0 / slot) + 1);
  for (std::size_t d = 0; d < levels; d += every) {
    svg.add_text(frame.left + slot * (static_cast<double>(d) + 0.5), frame.bottom() + 14.0, std::to_string(d),
                 {{"text-anchor", "middle"}});
  }
  svg.add_text(frame.left + frame.width / 2.0, frame.bottom() + 30.0, "tree level (0 = root)", {{"text-anchor", "middle"}});
}

}  // namespace

std::string level_profile_svg(const factor::Symbolic& symbolic, std::string_view title) {
  const std::vector<TreeLevel> levels = factor::tree_level_profile(symbolic);
  const double width = std::clamp(18.0 * static_cast<double>(levels.size()), 560.0, 1100.0);
  const std::vector<std::string> caption{
      "Per level of the assembly tree, the supernodes of that level summed: flops (potrf + trsm + syrk),",
      "entries of L; front sizes: bar = largest front, black tick = mean front. Hover a bar for all numbers.",
      format_count(symbolic.supernode_count()) + " supernodes, " + format_si(symbolic.stats().flops) + " flops, nnz(L) " +
          format_count(symbolic.stats().nnz_l) + "."};
  const double panels_bottom = top_margin + 3.0 * panel_height + 2.0 * panel_gap;
  SvgDocument svg(left_margin + width + 30.0, panels_bottom + 50.0 + caption_height(caption) + 10.0, title);
  svg.add_text(left_margin, 24.0, title, {{"font-size", "15"}, {"font-weight", "bold"}});
  if (levels.empty()) {
    svg.add_text(left_margin, top_margin, "(empty matrix: no supernodes)");
    return svg.str();
  }
  auto panel = [&](int index) {
    return PlotFrame{left_margin, top_margin + index * (panel_height + panel_gap), width, panel_height};
  };
  draw_panel(svg, panel(0), levels, "flops", "#1f77b4", [](const TreeLevel& l) { return l.flops; }, false);
  draw_panel(svg, panel(1), levels, "factor entries", "#2ca02c", [](const TreeLevel& l) { return l.factor_entries; }, false);
  draw_panel(svg, panel(2), levels, "front size (rows)", "#ff7f0e", [](const TreeLevel& l) { return l.largest_front; }, true);
  for (int index = 0; index < 3; ++index) draw_level_labels(svg, panel(index), levels.size());
  draw_caption(svg, left_margin, panels_bottom + 50.0, caption);
  return svg.str();
}

}  // namespace cholsim::apps::plots
