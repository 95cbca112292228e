#pragma once
// Seed 001 §7.2: the multigrid transfer operators between two octree levels. "We store an
// array of integers that maps each fine node to a coarse element that contains it. We store
// 8 weights per fine node, which are the weights of the fine node with respect to the
// conforming nodes of the coarse element" — trilinear coordinates in the coarse element
// mapped through W^T of the coarse octree, so the prolongation is continuous across
// coarse hanging nodes. Restriction is the exact transpose.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "fem/octree/octree_mesh.hpp"

namespace cholsim::fem::octree {

/// Prolongation coarse → fine nodes and its transpose. Vectors hold 3 values per node.
struct OctreeTransfer {
  std::vector<std::int32_t> coarse_element;   ///< per fine node: the coarse element holding it
  /// Per fine node: w.r.t. that element's conforming nodes. Single precision loses nothing: a
  /// fine node is a grid point, its ξ in a coarse element of 2^k cells a multiple of 2^-k
  /// (between adjacent levels of the hierarchy, of ½), and W's rows average 1, 2 or 4 nodes, so
  /// every weight is a short dyadic fraction, exact in a float (make_transfer checks) — half
  /// the bytes of §7.2's 8 doubles a node.
  std::vector<std::array<float, 8>> weights;
  /// The transpose's pattern, so that restriction runs in parallel with no write conflicts and
  /// sums in a fixed order: coarse node m receives from entries [offsets[m], offsets[m+1]) of
  /// `restriction_sources`, each 8·(fine node) + (local conforming slot b), weights[fine][b]
  /// being the weight. Exactly the nonzero weights, in increasing fine node order.
  std::vector<linalg::Offset> restriction_offsets;
  std::vector<std::uint32_t> restriction_sources;

  /// fine = P coarse (overwrites fine).
  void prolong(const OctreeMesh& coarse, std::span<const double> coarse_values, std::span<double> fine_values,
               int threads) const;
  /// coarse = Pᵀ fine (overwrites coarse).
  void restrict_to(const OctreeMesh& coarse, std::span<const double> fine_values, std::span<double> coarse_values,
                   int threads) const;
  [[nodiscard]] std::size_t memory_bytes() const;
};

/// §7.2: the transfer between two meshes made from the same BalancedOctree, `coarse` with the
/// larger min_level (every fine node then lies in a coarse element). Throws
/// std::invalid_argument for meshes of different trees or the levels the wrong way round.
OctreeTransfer make_transfer(const OctreeMesh& fine, const OctreeMesh& coarse, int threads = 0);

/// §7.3: for every fine element, the coarse element that contains it (same preconditions).
std::vector<linalg::Index> coarse_elements_of(const OctreeMesh& fine, const OctreeMesh& coarse, int threads = 0);

}  // namespace cholsim::fem::octree
