#include "update_stack_plot.hpp"

#include <algorithm>
#include <vector>

#include "chart_elements.hpp"
#include "factor/numeric/update_stack_profile.hpp"
#include "report.hpp"

namespace cholsim::apps::plots {
namespace {

using linalg::Index;

constexpr double mebibyte = 1024.0 * 1024.0;
constexpr PlotFrame frame{90.0, 60.0, 800.0, 320.0};

std::string mib(double bytes) { return format_fixed(bytes / mebibyte, bytes < 10.0 * mebibyte ? 3 : 1) + " MiB"; }

/// The upper envelope of the stack, one point per pixel column at most (10⁴+ supernodes
/// would otherwise give a path of tens of thousands of points), as a closed area path.
std::string stack_area_path(const factor::UpdateStackProfile& stack, double top_value) {
  const auto count = static_cast<Index>(stack.bytes_while_computing.size());
  const Index columns = std::min<Index>(count, static_cast<Index>(frame.width));
  auto y_of = [top_value](double bytes) { return frame.bottom() - frame.height * bytes / top_value; };
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "M" + std::string.
  std::string path = "M";
  path += svg_number(frame.left) + "," + svg_number(frame.bottom());
  for (Index column = 0; column < columns; ++column) {
    const Index first = static_cast<Index>(static_cast<std::int64_t>(column) * count / columns);
    const Index last = static_cast<Index>(static_cast<std::int64_t>(column + 1) * count / columns);
    const std::int64_t high = *std::max_element(stack.bytes_while_computing.begin() + first,
                                                stack.bytes_while_computing.begin() + last);
    const double x0 = frame.left + frame.width * first / count, x1 = frame.left + frame.width * last / count;
    path += " L" + svg_number(x0) + "," + svg_number(y_of(static_cast<double>(high))) + " L" + svg_number(x1) + "," +
            svg_number(y_of(static_cast<double>(high)));
  }
  return path + " L" + svg_number(frame.right()) + "," + svg_number(frame.bottom()) + " Z";
}

void draw_time_axis(SvgDocument& svg, Index count) {
  svg.add("line", {{"x1", svg_number(frame.left)}, {"y1", svg_number(frame.bottom())}, {"x2", svg_number(frame.right())},
                   {"y2", svg_number(frame.bottom())}, {"stroke", "black"}});
  for (double tick : nice_ticks(count, 5)) {
    if (tick > count) break;
    const double x = frame.left + frame.width * tick / std::max<Index>(1, count);
    svg.add("line", {{"x1", svg_number(x)}, {"y1", svg_number(frame.bottom())}, {"x2", svg_number(x)},
                     {"y2", svg_number(frame.bottom() + 4.0)}, {"stroke", "black"}});
    svg.add_text(x, frame.bottom() + 16.0, format_si(tick), {{"text-anchor", "middle"}});
  }
  svg.add_text(frame.left + frame.width / 2.0, frame.bottom() + 34.0,
               "supernodes processed (postorder: children before parents)", {{"text-anchor", "middle"}});
}

/// A dashed horizontal line at `bytes` labelled at its right end.
void draw_reference_line(SvgDocument& svg, double bytes, double top_value, std::string_view colour, std::string_view dashes,
                         const std::string& label) {
  const double y = frame.bottom() - frame.height * bytes / top_value;
  svg.add("line", {{"x1", svg_number(frame.left)}, {"y1", svg_number(y)}, {"x2", svg_number(frame.right())},
                   {"y2", svg_number(y)}, {"stroke", std::string(colour)}, {"stroke-dasharray", std::string(dashes)}});
  svg.add_text(frame.left + 6.0, y - 4.0, label, {{"fill", std::string(colour)}});
}

void draw_peak_marks(SvgDocument& svg, const factor::UpdateStackProfile& stack, const RunUpdatePeaks& run,
                     double top_value) {
  const auto count = static_cast<double>(stack.bytes_while_computing.size());
  const double peak_x = frame.left + frame.width * (stack.peak_supernode + 0.5) / count;
  const double peak_y = frame.bottom() - frame.height * static_cast<double>(stack.peak_bytes) / top_value;
  svg.add("circle", {{"cx", svg_number(peak_x)}, {"cy", svg_number(peak_y)}, {"r", "4"}, {"fill", "#d62728"}});
  const bool right_half = peak_x > frame.left + frame.width / 2.0;
  svg.add_text(peak_x + (right_half ? -8.0 : 8.0), peak_y - 6.0,
               "sequential peak " + mib(static_cast<double>(stack.peak_bytes)) + " at supernode " +
                   std::to_string(stack.peak_supernode),
               {{"text-anchor", right_half ? "end" : "start"}, {"fill", "#d62728"}});
  const std::string threads = std::to_string(run.threads) + " thread(s)";
  draw_reference_line(svg, static_cast<double>(run.measured_bytes), top_value, "#2ca02c", "6 4",
                      "measured, " + threads + ": " + mib(static_cast<double>(run.measured_bytes)));
  // Offset so that the two labels stay readable when the prediction is exact.
  draw_reference_line(svg, static_cast<double>(run.predicted_bytes), top_value, "#ff7f0e", "2 3", "");
  svg.add_text(frame.right() - 6.0, frame.bottom() - frame.height * static_cast<double>(run.predicted_bytes) / top_value - 4.0,
               "predicted by the analysis, " + threads + ": " + mib(static_cast<double>(run.predicted_bytes)),
               {{"fill", "#ff7f0e"}, {"text-anchor", "end"}});
}

std::vector<std::string> stack_caption(const factor::UpdateStackProfile& stack, const RunUpdatePeaks& run) {
  std::vector<std::string> lines{
      "Blue: bytes held in update blocks while a sequential postorder factorization computes each supernode",
      "(a block lives from its supernode's computation until its parent has assembled it), from the symbolic structure.",
      "Red: its peak, " + format_bytes(stack.peak_bytes) + ". Dashed green: the peak this run measured, " +
          format_bytes(run.measured_bytes) + ", " + std::to_string(run.threads) + " thread(s).",
      "Dotted orange: the peak predicted by the analysis for this schedule, " + format_bytes(run.predicted_bytes) +
          " (estimate_factor_memory)."};
  if (!run.left_looking_top.empty()) {
    lines.push_back("The " + std::to_string(run.left_looking_top.supernode_count()) +
                    " supernodes of the left-looking top keep no block (they read L instead); the others keep only "
                    "the columns their multifrontal ancestors need.");
  }
  if (run.retained) {
    lines.push_back("This run retained update blocks for refactorization, so its measured figure holds the kept ones too.");
  } else if (run.threads > 1) {
    lines.push_back("With several threads, parallel subtrees hold their stacks at once, so the measured peak can be higher.");
  } else {
    lines.push_back("One thread runs this very schedule: the three peaks are equal.");
  }
  return lines;
}

}  // namespace

std::string update_stack_svg(const factor::Symbolic& symbolic, const RunUpdatePeaks& run, std::string_view title) {
  const factor::UpdateStackProfile stack =
      factor::sequential_update_stack(symbolic, run.left_looking_top.kept_columns());
  const std::vector<std::string> caption = stack_caption(stack, run);
  SvgDocument svg(frame.right() + 40.0, frame.bottom() + 60.0 + caption_height(caption), title);
  svg.add_text(frame.left, 24.0, title, {{"font-size", "15"}, {"font-weight", "bold"}});
  const double largest = static_cast<double>(std::max({stack.peak_bytes, run.measured_bytes, run.predicted_bytes}));
  const double top_value = largest > 0.0 ? nice_ticks(largest / mebibyte, 4).back() * mebibyte : mebibyte;
  draw_value_axis(svg, frame, top_value / mebibyte, "update blocks (MiB)");
  if (!stack.bytes_while_computing.empty()) {
    svg.add("path", {{"d", stack_area_path(stack, top_value)}, {"fill", "#aec7e8"}, {"stroke", "#1f77b4"},
                     {"stroke-width", "0.8"}});
    draw_peak_marks(svg, stack, run, top_value);
  }
  draw_time_axis(svg, static_cast<Index>(stack.bytes_while_computing.size()));
  draw_caption(svg, frame.left, frame.bottom() + 56.0, caption);
  return svg.str();
}

}  // namespace cholsim::apps::plots
