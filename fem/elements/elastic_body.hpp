#pragma once
// The rest state of a deformable body meshed with linear tetrahedra: materials (one per
// element, so heterogeneous objects such as seed 000 §5.1's spider with its 300× stiffness
// contrast are ordinary input), rest volumes, the inverse rest shape matrices Dₘ⁻¹ every
// deformation gradient F = Dₛ·Dₘ⁻¹ needs, and lumped node masses. Computed once; the
// simulation methods (corotational FEM, operator splitting) only read it.
#include <span>
#include <string_view>
#include <vector>

#include "fem/mesh/tet_mesh.hpp"
#include "linalg/linear_tetrahedron.hpp"
#include "linalg/small_matrix.hpp"

namespace cholsim::fem {

/// An isotropic linear-elastic material with density. Defaults: soft rubber, ρ of water.
struct Material {
  double youngs_modulus = 5e6;  ///< E, Pa
  double poisson_ratio = 0.4;   ///< ν, in (-1, 1/2)
  double density = 1000.0;      ///< ρ, kg/m³
};

/// Rest-state data of a tet mesh; element e's values are at index e of each array.
struct ElasticBody {
  TetMesh rest;                                  ///< rest positions and connectivity
  std::vector<Material> materials;               ///< the distinct materials
  std::vector<Index> element_material;           ///< per element, an index into materials
  std::vector<linalg::LameParameters> lame;      ///< per element (λ, μ) of its material
  std::vector<double> rest_volumes;              ///< per element, > 0
  std::vector<linalg::Mat3> rest_shape_inverse;  ///< per element Dₘ⁻¹, Dₘ = [x₁−x₀, x₂−x₀, x₃−x₀]
  std::vector<double> node_masses;               ///< lumped: Σ over incident tets of ρV/4

  [[nodiscard]] Index node_count() const { return rest.node_count(); }
  [[nodiscard]] Index element_count() const { return rest.tet_count(); }
  /// The four node indices of element e.
  [[nodiscard]] std::span<const Index, 4> element_nodes(Index element) const {
    return std::span<const Index, 4>(rest.tets.data() + 4 * element, 4);
  }
  /// Bytes of the per-element and per-node arrays (rest mesh included).
  [[nodiscard]] std::size_t bytes() const;
};

/// Builds the rest data of `rest` with one material for every element. Runs
/// validate_tet_mesh first (naming `source` in its errors) and throws std::invalid_argument
/// for an invalid material (E ≤ 0, ν outside (−1, ½), ρ ≤ 0).
ElasticBody make_elastic_body(TetMesh rest, const Material& material,
                              std::string_view source = "mesh");

/// As above with per-element materials: element e uses materials[element_material[e]].
ElasticBody make_elastic_body(TetMesh rest, std::vector<Material> materials,
                              std::vector<Index> element_material,
                              std::string_view source = "mesh");

}  // namespace cholsim::fem
