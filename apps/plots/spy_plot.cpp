#include "spy_plot.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "chart_elements.hpp"
#include "report.hpp"

namespace cholsim::apps::plots {
namespace {

constexpr double plot_size = 560.0;
constexpr double spy_left_margin = 70.0;
constexpr double spy_top_margin = 64.0;
constexpr int shade_levels = 24;          ///< distinct shades: adjacent bins of one shade merge into one rectangle
constexpr double min_outline_pixels = 3.0;

/// 0 for an empty bin, else 1 … shade_levels by log(count).
int shade_level(std::int64_t count, std::int64_t largest) {
  if (count == 0) return 0;
  const double t = log_fraction(static_cast<double>(count), static_cast<double>(largest));
  return std::max(1, static_cast<int>(std::ceil(t * shade_levels)));
}

std::string level_colour(int level) { return blues(static_cast<double>(level) / shade_levels); }

/// One rectangle per run of equal shade along each bin row: far fewer elements than bins.
void draw_bins(SvgDocument& svg, const SpyRaster& raster) {
  const double cell = plot_size / raster.bins();
  const std::int64_t largest = raster.largest_count();
  svg.begin_group({{"shape-rendering", "crispEdges"}});  // no hairline seams between adjacent bins
  for (Index row = 0; row < raster.bins(); ++row) {
    Index column = 0;
    while (column < raster.bins()) {
      const int level = shade_level(raster.count(row, column), largest);
      Index end = column + 1;
      while (end < raster.bins() && shade_level(raster.count(row, end), largest) == level) ++end;
      if (level > 0) {
        svg.add("rect", {{"x", svg_number(spy_left_margin + column * cell)}, {"y", svg_number(spy_top_margin + row * cell)},
                         {"width", svg_number((end - column) * cell)}, {"height", svg_number(cell)},
                         {"fill", level_colour(level)}});
      }
      column = end;
    }
  }
  svg.end_group();
}

void draw_index_axes(SvgDocument& svg, Index n) {
  svg.add("rect", {{"x", svg_number(spy_left_margin)}, {"y", svg_number(spy_top_margin)}, {"width", svg_number(plot_size)},
                   {"height", svg_number(plot_size)}, {"fill", "none"}, {"stroke", "black"}});
  for (double tick : nice_ticks(static_cast<double>(n), 4)) {
    if (tick > n || n == 0) break;
    const double offset = plot_size * tick / n;
    svg.add("line", {{"x1", svg_number(spy_left_margin + offset)}, {"y1", svg_number(spy_top_margin - 4.0)},
                     {"x2", svg_number(spy_left_margin + offset)}, {"y2", svg_number(spy_top_margin)}, {"stroke", "black"}});
    svg.add_text(spy_left_margin + offset, spy_top_margin - 7.0, format_si(tick), {{"text-anchor", "middle"}});
    svg.add("line", {{"x1", svg_number(spy_left_margin - 4.0)}, {"y1", svg_number(spy_top_margin + offset)},
                     {"x2", svg_number(spy_left_margin)}, {"y2", svg_number(spy_top_margin + offset)}, {"stroke", "black"}});
    svg.add_text(spy_left_margin - 7.0, spy_top_margin + offset + 4.0, format_si(tick), {{"text-anchor", "end"}});
  }
  svg.add_text(spy_left_margin + plot_size / 2.0, spy_top_margin - 22.0, "column (elimination order), n = " + format_count(n),
               {{"text-anchor", "middle"}});
}

/// Returns how many supernodes were outlined.
Index draw_supernode_outlines(SvgDocument& svg, const factor::Symbolic& symbolic) {
  const double pixels_per_column = plot_size / symbolic.size();
  Index outlined = 0;
  svg.begin_group({{"fill", "none"}, {"stroke", "#d62728"}, {"stroke-width", "0.8"}});
  for (Index s = 0; s < symbolic.supernode_count(); ++s) {
    const double size = symbolic.column_count(s) * pixels_per_column;
    if (size < min_outline_pixels) continue;
    const double corner = symbolic.first_column(s) * pixels_per_column;
    svg.add("rect", {{"x", svg_number(spy_left_margin + corner)}, {"y", svg_number(spy_top_margin + corner)},
                     {"width", svg_number(size)}, {"height", svg_number(size)}},
            "supernode " + std::to_string(s) + ": " + format_count(symbolic.column_count(s)) + " columns, front " +
                format_count(symbolic.row_count(s)) + " rows");
    ++outlined;
  }
  svg.end_group();
  return outlined;
}

}  // namespace

SpyRaster::SpyRaster(Index n, Index max_bins) : n_(n), bins_(std::max<Index>(1, std::min(n, max_bins))) {
  if (max_bins < 1) throw std::invalid_argument("SpyRaster: max_bins must be positive");
  counts_.assign(static_cast<std::size_t>(bins_) * static_cast<std::size_t>(bins_), 0);
}

std::int64_t SpyRaster::largest_count() const { return *std::max_element(counts_.begin(), counts_.end()); }

SpyRaster permuted_matrix_raster(const linalg::SymmetricCscMatrix& a, const factor::Symbolic& symbolic, Index max_bins) {
  SpyRaster raster(a.size(), max_bins);
  const linalg::CscMatrix& lower = a.lower;
  const auto elimination = symbolic.inverse_permutation();
  for (Index column = 0; column < lower.cols; ++column) {
    for (linalg::Offset p = lower.col_ptr[column]; p < lower.col_ptr[column + 1]; ++p) {
      const Index i = elimination[lower.row_idx[p]], j = elimination[column];
      raster.add(i, j);
      if (i != j) raster.add(j, i);
    }
  }
  return raster;
}

SpyRaster factor_raster(const factor::Symbolic& symbolic, Index max_bins) {
  SpyRaster raster(symbolic.size(), max_bins);
  for (Index s = 0; s < symbolic.supernode_count(); ++s) {
    const auto rows = symbolic.rows(s);
    for (Index offset = 0; offset < symbolic.column_count(s); ++offset) {
      const Index column = symbolic.first_column(s) + offset;
      // Rows of the diagonal block above the column's own are not part of L.
      for (auto row = rows.begin() + offset; row != rows.end(); ++row) raster.add(*row, column);
    }
  }
  return raster;
}

std::string spy_plot_svg(const SpyRaster& raster, std::string_view title, const std::vector<std::string>& caption,
                         const factor::Symbolic* outlines) {
  std::vector<std::string> lines = caption;
  const bool one_entry_per_bin = raster.bins() == raster.n();
  lines.push_back(one_entry_per_bin ? "One square per entry."
                                    : format_count(raster.bins()) + " x " + format_count(raster.bins()) +
                                          " bins of about " + format_count((raster.n() + raster.bins() - 1) / raster.bins()) +
                                          " rows/columns, shaded by entry count (log scale).");
  const double legend_top = spy_top_margin + plot_size + 30.0;
  const double caption_top = legend_top + (one_entry_per_bin ? 0.0 : 50.0);
  SvgDocument svg(spy_left_margin + plot_size + 30.0, caption_top + caption_height(lines) + 20.0, title);
  const std::string full_title = std::string(title) + " - nnz " + format_count(raster.entries());
  svg.add_text(spy_left_margin, 20.0, full_title, {{"font-size", "15"}, {"font-weight", "bold"}});
  draw_bins(svg, raster);
  draw_index_axes(svg, raster.n());
  if (outlines != nullptr) {
    const Index outlined = draw_supernode_outlines(svg, *outlines);
    lines.push_back("Red squares: the diagonal blocks of the " + format_count(outlined) + " supernodes at least " +
                    format_count(static_cast<std::int64_t>(min_outline_pixels)) + " px wide (of " +
                    format_count(outlines->supernode_count()) + "; hover for sizes).");
  }
  if (!one_entry_per_bin) {
    draw_colour_bar(svg, spy_left_margin, legend_top, 240.0, [](double t) { return blues(t); }, "entries per bin", "1",
                    format_count(raster.largest_count()));
  }
  draw_caption(svg, spy_left_margin, caption_top, lines);
  return svg.str();
}

}  // namespace cholsim::apps::plots
