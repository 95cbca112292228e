#pragma once
// Spy plots of P·A·Pᵀ and of L (elimination order). Millions of entries would make millions
// of dots, so the pattern is counted in at most max_bins × max_bins square bins and each bin is
// shaded by its count on a log scale; with n ≤ max_bins every bin is one entry (a classic spy).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "factor/analysis/symbolic.hpp"
#include "linalg/csc_matrix.hpp"

namespace cholsim::apps::plots {

using linalg::Index;

/// Entries of an n × n pattern counted per bin.
class SpyRaster {
 public:
  SpyRaster(Index n, Index max_bins);
  void add(Index row, Index column) {
    ++counts_[static_cast<std::size_t>(bin_of(row) * bins_ + bin_of(column))];
    ++entries_;
  }
  [[nodiscard]] Index n() const { return n_; }
  [[nodiscard]] Index bins() const { return bins_; }
  /// Entries counted in all: the nnz the plot's title reports.
  [[nodiscard]] std::int64_t entries() const { return entries_; }
  [[nodiscard]] std::int64_t count(Index row_bin, Index column_bin) const {
    return counts_[static_cast<std::size_t>(row_bin * bins_ + column_bin)];
  }
  [[nodiscard]] std::int64_t largest_count() const;

 private:
  [[nodiscard]] Index bin_of(Index index) const {
    return static_cast<Index>(static_cast<std::int64_t>(index) * bins_ / n_);
  }
  Index n_;
  Index bins_;
  std::int64_t entries_ = 0;
  std::vector<std::int64_t> counts_;
};

/// Both triangles of P·A·Pᵀ: a's stored lower entries moved to elimination numbering, each
/// off-diagonal entry counted at (i, j) and (j, i).
SpyRaster permuted_matrix_raster(const linalg::SymmetricCscMatrix& a, const factor::Symbolic& symbolic, Index max_bins);

/// L's entries as the supernodes store them (amalgamation zeros included, so entries() is
/// AnalyzeStats::nnz_l).
SpyRaster factor_raster(const factor::Symbolic& symbolic, Index max_bins);

/// The picture of `raster` titled `title` and the count of entries; with `outlines` the
/// diagonal blocks of its supernodes wide enough to see are outlined.
std::string spy_plot_svg(const SpyRaster& raster, std::string_view title, const std::vector<std::string>& caption,
                         const factor::Symbolic* outlines);

}  // namespace cholsim::apps::plots
