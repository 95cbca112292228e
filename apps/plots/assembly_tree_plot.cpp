#include "assembly_tree_plot.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "chart_elements.hpp"
#include "factor/analysis/tree_level_profile.hpp"
#include "report.hpp"

namespace cholsim::apps::plots {
namespace {

constexpr double margin = 40.0;
constexpr double header_height = 120.0;
constexpr double node_gap = 2.0;
constexpr double min_radius = 1.5;
constexpr double min_canvas_width = 700.0;
constexpr double max_canvas_width = 2400.0;

/// The deepest level D such that the levels 0 … D hold at most max_nodes supernodes (0 at least).
Index shown_depth(std::span<const Index> depth, Index max_nodes) {
  std::vector<Index> per_level;
  for (Index d : depth) {
    if (d >= static_cast<Index>(per_level.size())) per_level.resize(static_cast<std::size_t>(d) + 1, 0);
    ++per_level[d];
  }
  Index shown = 0, limit = 0;
  for (Index d = 0; d < static_cast<Index>(per_level.size()); ++d) {
    shown += per_level[d];
    if (shown > max_nodes && d > 0) break;
    limit = d;
  }
  return limit;
}

/// Which supernodes are drawn and where.
struct TreeLayout {
  Index depth_limit = 0;
  std::vector<Index> depth;
  std::vector<char> shown;
  std::vector<char> collapsed;   ///< shown with hidden children: drawn as its whole subtree
  std::vector<double> radius;    ///< pixels
  std::vector<double> x;         ///< layout units (pixels before horizontal compression)
  double width = 0.0;            ///< layout units
};

/// Columns of s, or of its whole subtree when it stands for it (subtrees are contiguous).
Index drawn_columns(const factor::Symbolic& symbolic, Index s, bool whole_subtree) {
  if (!whole_subtree) return symbolic.column_count(s);
  return symbolic.first_column(s) + symbolic.column_count(s) - symbolic.first_column(symbolic.subtree_begin(s));
}

void choose_shown_nodes(const factor::Symbolic& symbolic, Index max_nodes, TreeLayout& layout) {
  const Index count = symbolic.supernode_count();
  layout.depth = factor::supernode_depths(symbolic);
  layout.depth_limit = shown_depth(layout.depth, max_nodes);
  layout.shown.assign(static_cast<std::size_t>(count), 0);
  layout.collapsed.assign(static_cast<std::size_t>(count), 0);
  for (Index s = 0; s < count; ++s) {
    layout.shown[s] = layout.depth[s] <= layout.depth_limit;
    layout.collapsed[s] = layout.depth[s] == layout.depth_limit && !symbolic.children(s).empty();
  }
}

void size_nodes(const factor::Symbolic& symbolic, double max_radius, TreeLayout& layout) {
  const Index count = symbolic.supernode_count();
  Index largest = 1;
  for (Index s = 0; s < count; ++s) {
    if (layout.shown[s]) largest = std::max(largest, drawn_columns(symbolic, s, layout.collapsed[s]));
  }
  layout.radius.assign(static_cast<std::size_t>(count), 0.0);
  for (Index s = 0; s < count; ++s) {
    if (!layout.shown[s]) continue;
    // Area ∝ columns.
    const double share = static_cast<double>(drawn_columns(symbolic, s, layout.collapsed[s])) / largest;
    layout.radius[s] = std::max(min_radius, max_radius * std::sqrt(share));
  }
}

bool has_shown_children(const factor::Symbolic& symbolic, const TreeLayout& layout, Index s) {
  return layout.shown[s] && !layout.collapsed[s] && !symbolic.children(s).empty();
}

void place_nodes(const factor::Symbolic& symbolic, TreeLayout& layout) {
  const Index count = symbolic.supernode_count();
  // Band widths bottom-up (postorder: children first), then band left edges top-down.
  std::vector<double> band(static_cast<std::size_t>(count), 0.0);
  for (Index s = 0; s < count; ++s) {
    if (!layout.shown[s]) continue;
    double children_width = 0.0;
    if (has_shown_children(symbolic, layout, s)) {
      for (Index child : symbolic.children(s)) children_width += band[child];
    }
    band[s] = std::max(2.0 * layout.radius[s] + node_gap, children_width);
  }
  std::vector<double> left(static_cast<std::size_t>(count), 0.0);
  for (Index s = 0; s < count; ++s) {
    if (layout.shown[s] && symbolic.parent(s) == -1) {
      left[s] = layout.width;
      layout.width += band[s];
    }
  }
  for (Index s = count - 1; s >= 0; --s) {
    if (!has_shown_children(symbolic, layout, s)) continue;
    double children_width = 0.0;
    for (Index child : symbolic.children(s)) children_width += band[child];
    double next = left[s] + (band[s] - children_width) / 2.0;
    for (Index child : symbolic.children(s)) {
      left[child] = next;
      next += band[child];
    }
  }
  layout.x.assign(static_cast<std::size_t>(count), 0.0);
  for (Index s = 0; s < count; ++s) {
    if (!layout.shown[s]) continue;
    const auto children = symbolic.children(s);
    layout.x[s] = has_shown_children(symbolic, layout, s) ? (layout.x[children.front()] + layout.x[children.back()]) / 2.0
                                                          : left[s] + band[s] / 2.0;
  }
}

std::string node_tooltip(const factor::Symbolic& symbolic, const TreeLayout& layout, const TreeColouring& colouring,
                         Index s) {
  std::string text;
  Index first = s;
  if (layout.collapsed[s]) {
    first = symbolic.subtree_begin(s);
    double flops = 0.0;
    for (Index t = first; t <= s; ++t) flops += symbolic.supernode_flops(t);
    text = "collapsed subtree below depth " + std::to_string(layout.depth_limit) + ": " + format_count(s - first + 1) +
           " supernodes, " + format_count(drawn_columns(symbolic, s, true)) + " columns, " + format_si(flops) +
           " flops; its top ";
  }
  text += "supernode " + std::to_string(s) + ": " + format_count(symbolic.column_count(s)) + " columns, front " +
          format_count(symbolic.row_count(s)) + " rows, " + format_si(symbolic.supernode_flops(s)) + " flops, depth " +
          std::to_string(layout.depth[s]);
  const std::string extra = colouring.describe(first, s);
  return extra.empty() ? text : text + "; " + extra;
}

void draw_nodes(SvgDocument& svg, const factor::Symbolic& symbolic, const TreeLayout& layout,
                const TreeColouring& colouring, double scale, double level_gap, double canvas_width) {
  const double centring = (canvas_width - 2.0 * margin - layout.width * scale) / 2.0;
  auto px = [&](Index s) { return margin + centring + layout.x[s] * scale; };
  auto py = [&](Index s) { return header_height + layout.depth[s] * level_gap; };
  svg.begin_group({{"stroke", "#a0a0a0"}, {"stroke-width", "0.7"}});
  for (Index s = 0; s < symbolic.supernode_count(); ++s) {
    const Index parent = symbolic.parent(s);
    if (!layout.shown[s] || parent == -1) continue;
    svg.add("line", {{"x1", svg_number(px(s))}, {"y1", svg_number(py(s))}, {"x2", svg_number(px(parent))},
                     {"y2", svg_number(py(parent))}});
  }
  svg.end_group();
  svg.begin_group({{"stroke", "#303030"}, {"stroke-width", "0.4"}});
  for (Index s = 0; s < symbolic.supernode_count(); ++s) {
    if (!layout.shown[s]) continue;
    const double x = px(s), y = py(s), r = layout.radius[s];
    const std::string tooltip = node_tooltip(symbolic, layout, colouring, s);
    if (layout.collapsed[s]) {
      const std::string points = svg_number(x) + "," + svg_number(y - r) + " " + svg_number(x - r) + "," +
                                 svg_number(y + r) + " " + svg_number(x + r) + "," + svg_number(y + r);
      svg.add("polygon", {{"points", points}, {"fill", colouring.colour(s)}}, tooltip);
    } else {
      svg.add("circle", {{"cx", svg_number(x)}, {"cy", svg_number(y)}, {"r", svg_number(r)}, {"fill", colouring.colour(s)}},
              tooltip);
    }
  }
  svg.end_group();
}

}  // namespace

TreeColouring colour_by_front_size(const factor::Symbolic& symbolic) {
  const double largest = symbolic.stats().largest_front;
  TreeColouring colouring;
  colouring.colour = [&symbolic, largest](Index s) { return viridis(log_fraction(symbolic.row_count(s), largest)); };
  colouring.describe = [](Index, Index) { return std::string(); };
  colouring.draw_legend = [largest](SvgDocument& svg, double x, double y) {
    draw_colour_bar(svg, x, y + 14.0, 220.0, [](double t) { return viridis(t); }, "front size (rows, log scale)", "1",
                    format_count(static_cast<std::int64_t>(largest)));
  };
  colouring.caption = {"Colour: the supernode's front size (rows of its front, log scale); hover a node for its numbers."};
  return colouring;
}

TreeColouring colour_by_recomputation(std::span<const char> recomputed) {
  static constexpr const char* recomputed_colour = "#d62728";
  static constexpr const char* kept_colour = "#c7c7c7";
  TreeColouring colouring;
  colouring.colour = [recomputed](Index s) { return std::string(recomputed[s] ? recomputed_colour : kept_colour); };
  colouring.describe = [recomputed](Index first, Index last) {
    if (first == last) return std::string(recomputed[last] ? "recomputed" : "kept");
    const auto count = std::count_if(recomputed.begin() + first, recomputed.begin() + last + 1, [](char c) { return c != 0; });
    return format_count(count) + " of " + format_count(last - first + 1) + " recomputed";
  };
  colouring.draw_legend = [](SvgDocument& svg, double x, double y) {
    draw_legend_entry(svg, x, y + 12.0, recomputed_colour, "recomputed by the refactorization");
    draw_legend_entry(svg, x, y + 30.0, kept_colour, "kept (its retained update block reused)");
  };
  const auto count = std::count_if(recomputed.begin(), recomputed.end(), [](char c) { return c != 0; });
  colouring.caption = {"Colour: " + format_count(count) + " of " + format_count(static_cast<std::int64_t>(recomputed.size())) +
                       " supernodes recomputed (the changed ones, their ancestors, subtrees without retained blocks)."};
  return colouring;
}

std::string assembly_tree_svg(const factor::Symbolic& symbolic, const TreeColouring& colouring, std::string_view title,
                              Index max_nodes) {
  TreeLayout layout;
  choose_shown_nodes(symbolic, max_nodes, layout);
  const double level_gap = std::clamp(900.0 / (layout.depth_limit + 1), 16.0, 70.0);
  size_nodes(symbolic, std::min(24.0, 0.45 * level_gap), layout);
  place_nodes(symbolic, layout);

  const double canvas_width = std::clamp(layout.width + 2.0 * margin, min_canvas_width, max_canvas_width);
  const double scale = layout.width > 0.0 ? std::min(1.0, (canvas_width - 2.0 * margin) / layout.width) : 1.0;
  const Index shown = static_cast<Index>(std::count(layout.shown.begin(), layout.shown.end(), 1));
  const Index collapsed = static_cast<Index>(std::count(layout.collapsed.begin(), layout.collapsed.end(), 1));
  std::vector<std::string> caption{
      format_count(symbolic.supernode_count()) + " supernodes, " + std::to_string(symbolic.stats().tree_levels) +
          " levels; root on top, children in postorder; node area proportional to the supernode's columns."};
  caption.insert(caption.end(), colouring.caption.begin(), colouring.caption.end());
  if (collapsed > 0) {
    caption.push_back("Large tree: levels 0-" + std::to_string(layout.depth_limit) + " drawn (" + format_count(shown) +
                      " nodes); the " + format_count(collapsed) + " subtrees below them (" +
                      format_count(symbolic.supernode_count() - shown + collapsed) +
                      " supernodes) are drawn as triangles, area proportional to their columns.");
  }
  if (scale < 1.0) caption.push_back("Compressed horizontally to " + format_fixed(100.0 * scale, 0) + " % to fit.");

  const double tree_bottom = header_height + layout.depth_limit * level_gap + 30.0;
  SvgDocument svg(canvas_width, tree_bottom + caption_height(caption) + 20.0, title);
  svg.add_text(margin, 24.0, title, {{"font-size", "15"}, {"font-weight", "bold"}});
  colouring.draw_legend(svg, margin, 36.0);
  draw_nodes(svg, symbolic, layout, colouring, scale, level_gap, canvas_width);
  draw_caption(svg, margin, tree_bottom + 10.0, caption);
  return svg.str();
}

}  // namespace cholsim::apps::plots
