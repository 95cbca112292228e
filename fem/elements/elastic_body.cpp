#include "fem/elements/elastic_body.hpp"

#include <stdexcept>
#include <string>

namespace cholsim::fem {

namespace {

void check_material(const Material& material, std::size_t index) {
  const std::string name = "material " + std::to_string(index);
  if (!(material.density > 0.0)) {
    throw std::invalid_argument(name + ": density must be positive");
  }
  // lame_from_youngs_poisson rejects E ≤ 0 and ν outside (−1, ½) with its own message.
  try {
    (void)linalg::lame_from_youngs_poisson(material.youngs_modulus, material.poisson_ratio);
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(name + ": " + error.what());
  }
}

}  // namespace

std::size_t ElasticBody::bytes() const {
  return rest.positions.size() * sizeof(double) + rest.tets.size() * sizeof(Index) +
         materials.size() * sizeof(Material) + element_material.size() * sizeof(Index) +
         lame.size() * sizeof(linalg::LameParameters) + rest_volumes.size() * sizeof(double) +
         rest_shape_inverse.size() * sizeof(linalg::Mat3) + node_masses.size() * sizeof(double);
}

ElasticBody make_elastic_body(TetMesh rest, const Material& material, std::string_view source) {
  std::vector<Index> element_material(static_cast<std::size_t>(rest.tet_count()), 0);
  return make_elastic_body(std::move(rest), std::vector<Material>{material},
                           std::move(element_material), source);
}

ElasticBody make_elastic_body(TetMesh rest, std::vector<Material> materials,
                              std::vector<Index> element_material, std::string_view source) {
  (void)validate_tet_mesh(rest, source);
  if (element_material.size() != static_cast<std::size_t>(rest.tet_count())) {
    throw std::invalid_argument("make_elastic_body: " + std::to_string(element_material.size()) +
                                " element materials for " + std::to_string(rest.tet_count()) +
                                " tets");
  }
  for (std::size_t m = 0; m < materials.size(); ++m) check_material(materials[m], m);

  ElasticBody body;
  const auto elements = static_cast<std::size_t>(rest.tet_count());
  body.lame.resize(elements);
  body.rest_volumes.resize(elements);
  body.rest_shape_inverse.resize(elements);
  body.node_masses.assign(static_cast<std::size_t>(rest.node_count()), 0.0);
  for (std::size_t e = 0; e < elements; ++e) {
    const Index material_index = element_material[e];
    if (material_index < 0 || static_cast<std::size_t>(material_index) >= materials.size()) {
      throw std::invalid_argument("make_elastic_body: element " + std::to_string(e) +
                                  " names material " + std::to_string(material_index) +
                                  "; expected 0.." + std::to_string(materials.size() - 1));
    }
    const Material& material = materials[static_cast<std::size_t>(material_index)];
    const auto x = rest.tet_points(static_cast<Index>(e));
    const linalg::Vec3 x0{x[0][0], x[0][1], x[0][2]};
    auto edge = [&](int i) { return linalg::Vec3{x[i][0], x[i][1], x[i][2]} - x0; };
    const linalg::Mat3 shape = linalg::Mat3::from_columns(edge(1), edge(2), edge(3));
    body.rest_shape_inverse[e] = linalg::inverse(shape);
    body.rest_volumes[e] = linalg::determinant(shape) / 6.0;
    body.lame[e] = linalg::lame_from_youngs_poisson(material.youngs_modulus, material.poisson_ratio);
    const double vertex_mass = material.density * body.rest_volumes[e] / 4.0;
    for (int corner = 0; corner < 4; ++corner) {
      body.node_masses[static_cast<std::size_t>(rest.tets[4 * e + static_cast<std::size_t>(corner)])] +=
          vertex_mass;
    }
  }
  body.rest = std::move(rest);
  body.materials = std::move(materials);
  body.element_material = std::move(element_material);
  return body;
}

}  // namespace cholsim::fem
