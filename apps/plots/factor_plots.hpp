#pragma once
// The pictures of `cholsim factor --plot DIR` (issue 23 item 5): numerical analysts read spy
// plots, assembly trees and front-size profiles rather than tables.
//
//   spy_A.svg           P·A·Pᵀ in elimination order
//   spy_L.svg           L, the diagonal blocks of the supernodes outlined
//   assembly_tree.svg   the supernodal tree, area ∝ columns, colour = front size
//   level_profile.svg   flops, factor entries and front sizes per tree level
//   update_stack.svg    update-block bytes over a sequential postorder factorization
//   refactor_tree.svg   (with --refactor-fraction) the tree coloured by what was recomputed
//   index.html          all of them on one page
#include <span>
#include <string>

#include "factor/analysis/symbolic.hpp"
#include "linalg/csc_matrix.hpp"
#include "plot_directory.hpp"
#include "update_stack_plot.hpp"

namespace cholsim::apps::plots {

/// Writes the pictures of the factorization of `a` analysed as `symbolic`; `source` names the
/// matrix in titles. Throws OutputError.
void write_factor_plots(PlotDirectory& directory, const linalg::SymmetricCscMatrix& a,
                        const factor::Symbolic& symbolic, const RunUpdatePeaks& run, const std::string& source);

/// Writes refactor_tree.svg: `recomputed[s]` non-zero for every supernode the incremental
/// refactorization recomputed; `change` says what changed (one caption line).
void write_refactor_plot(PlotDirectory& directory, const factor::Symbolic& symbolic, std::span<const char> recomputed,
                         const std::string& source, const std::string& change);

}  // namespace cholsim::apps::plots
