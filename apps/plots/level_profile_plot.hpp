#pragma once
// Flops, factor entries and front sizes per level of the assembly tree (level 0 = the roots),
// one bar per level in three panels: where a nested-dissection factorization spends its work
// and memory (factor/analysis/tree_level_profile.hpp).
#include <string>
#include <string_view>

#include "factor/analysis/symbolic.hpp"

namespace cholsim::apps::plots {

std::string level_profile_svg(const factor::Symbolic& symbolic, std::string_view title);

}  // namespace cholsim::apps::plots
