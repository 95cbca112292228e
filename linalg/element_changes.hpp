#pragma once
// Localized changes of an assembled finite-element matrix: the experiments of seed 000 §5.2
// (the element blocks in a ball, or the same number scattered at random, change) and the
// inputs of the incremental-refactorization tests, benchmark and `cholsim factor
// --refactor-fraction`.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "linalg/assembly_pattern.hpp"
#include "linalg/csc_matrix.hpp"
#include "linalg/generators.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::linalg {

/// The `count` tets whose centroids lie nearest `center` (ties by tet number), increasing.
std::vector<Index> elements_in_ball(const TetMesh& mesh, const Vec3& center, Index count);

/// `count` distinct values of 0..size−1 drawn uniformly at random from `seed`, increasing.
std::vector<Index> random_subset(Index size, Index count, std::uint64_t seed);

/// The first `count` columns a breadth-first search of A's graph reaches from `start`
/// (neighbours in increasing order), increasing: a "ball" for a matrix without geometry.
std::vector<Index> columns_in_graph_ball(const SymmetricCscMatrix& a, Index start, Index count);

/// The global DOFs of the given elements back to back, element_dofs() per element (the form
/// factor::ChangedEntries::elements takes).
std::vector<Index> element_dof_lists(const AssemblyPattern& pattern, std::span<const Index> elements);

/// A fixed pseudo-random rotation by `angle` radians about an axis chosen from `element`.
Mat3 element_rotation(Index element, double angle);

/// R·K·Rᵀ − K for a 12×12 tet block K (dof 3·vertex + component) and R on every vertex: the
/// change of an element block when corotation turns the element by R (seed 000 §3.1).
/// Symmetric, indefinite in general, rank ≤ 12.
linear_tet::ElasticStiffness rotation_change(const linear_tet::ElasticStiffness& k, const Mat3& r);

/// values += Σₑ rotation_change(elasticity_element_matrix(e), element_rotation(e, angle)) over
/// `elements` of `mesh`, whose matrix elasticity_matrix(box) assembled through `pattern`. The
/// result stays SPD (each block stays PSD, the mass is unchanged).
void rotate_element_blocks(const TetMesh& mesh, const AssemblyPattern& pattern, const ElasticityBoxOptions& box,
                           std::span<const Index> elements, double angle, std::span<double> values);

/// A ← D·A·D with D = diag(scale on `columns`, 1 elsewhere): changes exactly those rows and
/// columns and keeps an SPD matrix SPD (a congruence).
void scale_columns(SymmetricCscMatrix& a, std::span<const Index> columns, double scale);

}  // namespace cholsim::linalg
