#pragma once
// The assembly (supernodal elimination) tree: one node per supernode, area ∝ its columns,
// root on top, laid out tidily in postorder (every subtree gets its own horizontal band, as
// wide as its widest level needs, and a parent sits above the middle of its children). Big
// trees (10⁴+ supernodes) keep the levels nearest the root — the expensive part — and draw each
// deeper subtree as one triangle, saying so in the caption.
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "factor/analysis/symbolic.hpp"
#include "svg_document.hpp"

namespace cholsim::apps::plots {

using linalg::Index;

/// How the tree's nodes are coloured, and what their legend and tooltips say.
struct TreeColouring {
  /// Fill of supernode s (a collapsed subtree is filled like its top supernode s).
  std::function<std::string(Index s)> colour;
  /// Extra tooltip text for the supernodes first … last (one supernode, or a collapsed
  /// subtree in postorder); may be empty.
  std::function<std::string(Index first, Index last)> describe;
  /// Draws the legend with its top-left corner at (x, y).
  std::function<void(SvgDocument&, double x, double y)> draw_legend;
  std::vector<std::string> caption;  ///< caption lines: what the colour means
};

/// Colour by front size (rows of the supernode's front, log scale).
TreeColouring colour_by_front_size(const factor::Symbolic& symbolic);

/// Colour by whether an incremental refactorization recomputed the supernode (`recomputed[s]`
/// non-zero) or reused its retained update block.
TreeColouring colour_by_recomputation(std::span<const char> recomputed);

/// The tree picture; at most `max_nodes` nodes are drawn (deeper levels collapse).
std::string assembly_tree_svg(const factor::Symbolic& symbolic, const TreeColouring& colouring, std::string_view title,
                              Index max_nodes = 800);

}  // namespace cholsim::apps::plots
