#pragma once
// SuiteSparse AMD as the reference of factor/analysis/minimum_degree, shared by tests/ and
// bench/ (the only places a reference library may be used, like cholmod_reference.hpp).
#include <amd.h>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "factor/analysis/ordering.hpp"

namespace cholsim::reference {

/// SuiteSparse AMD's order of the vertices of `graph` (perm[new] = old) with its default
/// controls: rows with more than 10·√n entries dense, aggressive absorption.
inline std::vector<linalg::Index> suitesparse_amd(const factor::AdjacencyGraph& graph) {
  static_assert(std::is_same_v<linalg::Index, int>, "amd_order takes int indices");
  const linalg::Index n = graph.vertex_count();
  std::vector<linalg::Index> perm(static_cast<std::size_t>(n));
  double control[AMD_CONTROL];
  double info[AMD_INFO];
  amd_defaults(control);
  const int status = amd_order(n, graph.offsets.data(), graph.neighbors.data(), perm.data(), control, info);
  if (status != AMD_OK) throw std::runtime_error("amd_order failed with status " + std::to_string(status));
  return perm;
}

}  // namespace cholsim::reference
