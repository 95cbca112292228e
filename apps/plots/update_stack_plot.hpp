#pragma once
// The update-block stack over time: bytes held in update blocks while a sequential
// postorder factorization processes the supernodes (factor/numeric/update_stack_profile.hpp),
// its peak marked, beside the peak the analysis predicted for this run's schedule
// (factor/numeric/memory_estimate.hpp) and the peak the factorization measured.
#include <cstdint>
#include <string>
#include <string_view>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/left_looking_top.hpp"

namespace cholsim::apps::plots {

/// The run being plotted, for comparison with the sequential stack.
struct RunUpdatePeaks {
  std::int64_t measured_bytes = 0;   ///< FactorStats::peak_update_bytes
  std::int64_t predicted_bytes = 0;  ///< MemoryEstimate::peak_update_bytes for the run's options
  int threads = 1;                   ///< FactorStats::threads
  bool retained = false;             ///< blocks were retained for refactorization (so never freed)
  /// The run's left-looking top (factor/numeric/left_looking_top.hpp): its supernodes keep no
  /// block, the others only their columns of multifrontal supernodes. Empty: whole blocks.
  factor::LeftLookingTop left_looking_top;
};

std::string update_stack_svg(const factor::Symbolic& symbolic, const RunUpdatePeaks& run, std::string_view title);

}  // namespace cholsim::apps::plots
