#include "factor_plots.hpp"

#include "assembly_tree_plot.hpp"
#include "level_profile_plot.hpp"
#include "report.hpp"
#include "spy_plot.hpp"

namespace cholsim::apps::plots {
namespace {

/// Bins per side of the spy plots: about two pixels each on the 560 px plot.
constexpr Index spy_bins = 280;

}  // namespace

void write_factor_plots(PlotDirectory& directory, const linalg::SymmetricCscMatrix& a,
                        const factor::Symbolic& symbolic, const RunUpdatePeaks& run, const std::string& source) {
  directory.write_picture("spy_A.svg",
                          spy_plot_svg(permuted_matrix_raster(a, symbolic, spy_bins), "P·A·Pᵀ of " + source,
                                       {"Both triangles, elimination order (the fill-reducing ordering, postordered)."},
                                       nullptr),
                          "Spy plot of P·A·Pᵀ: the matrix in elimination order (fill-reducing ordering, postordered).");
  directory.write_picture("spy_L.svg",
                          spy_plot_svg(factor_raster(symbolic, spy_bins), "L of " + source,
                                       {"L as the supernodes store it (amalgamation zeros included), elimination order."},
                                       &symbolic),
                          "Spy plot of L with the supernodes' diagonal blocks outlined: the fill.");
  directory.write_picture("assembly_tree.svg",
                          assembly_tree_svg(symbolic, colour_by_front_size(symbolic), "Assembly tree of " + source),
                          "The assembly tree: node area = supernode columns, colour = front size.");
  directory.write_picture("level_profile.svg", level_profile_svg(symbolic, "Work per tree level, " + source),
                          "Flops, factor entries and front sizes per level of the assembly tree.");
  directory.write_picture("update_stack.svg", update_stack_svg(symbolic, run, "Update-block stack, " + source),
                          "Update-block memory over a sequential postorder factorization, peak marked.");
}

void write_refactor_plot(PlotDirectory& directory, const factor::Symbolic& symbolic, std::span<const char> recomputed,
                         const std::string& source, const std::string& change) {
  TreeColouring colouring = colour_by_recomputation(recomputed);
  colouring.caption.insert(colouring.caption.begin(), "Change: " + change + ".");
  directory.write_picture("refactor_tree.svg",
                          assembly_tree_svg(symbolic, colouring, "Incremental refactorization of " + source),
                          "The assembly tree after an incremental refactorization (" + change +
                              "): red supernodes were recomputed.");
}

}  // namespace cholsim::apps::plots
