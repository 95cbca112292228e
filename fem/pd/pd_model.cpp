#include "fem/pd/pd_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "linalg/linear_tetrahedron.hpp"
#include "linalg/parallel_loops.hpp"
#include "linalg/svd3.hpp"

namespace cholsim::fem {

namespace {

using linalg::Mat3;

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("pd scene: " + message);
}

void check_embedding(const PdScene& scene, const EmbeddedPoint& point, const std::string& what) {
  require(point.tet >= 0 && point.tet < scene.mesh.tet_count(),
          what + " lies in tet " + std::to_string(point.tet) + ", outside 0.." +
              std::to_string(scene.mesh.tet_count() - 1));
  double sum = 0.0;
  for (double w : point.weights) {
    require(std::isfinite(w) && w >= -1e-9, what + " has a weight that is negative or not finite");
    sum += w;
  }
  require(std::abs(sum - 1.0) <= 1e-9, what + "'s weights sum to " + std::to_string(sum) + ", not 1");
}

void check_scene(const PdScene& scene) {
  require(scene.mesh.tet_count() > 0, "the mesh has no tets");
  require(std::isfinite(scene.shear_modulus) && scene.shear_modulus > 0.0,
          "the shear modulus must be positive and finite, got " + std::to_string(scene.shear_modulus));
  require(std::isfinite(scene.density) && scene.density > 0.0, "the density must be positive and finite");
  require(std::isfinite(scene.attachment_stiffness) && scene.attachment_stiffness >= 0.0,
          "the attachment stiffness must be ≥ 0 and finite, got " + std::to_string(scene.attachment_stiffness));
  require(std::isfinite(scene.proxy_stiffness) && scene.proxy_stiffness >= 0.0,
          "the proxy stiffness must be ≥ 0 and finite, got " + std::to_string(scene.proxy_stiffness));
  const StrainLimit& limit = scene.strain_limit;
  require(std::isfinite(limit.stiffness_ratio) && limit.stiffness_ratio >= 0.0,
          "the strain-limit stiffness ratio must be ≥ 0 and finite");
  require(limit.stiffness_ratio == 0.0 || (limit.lower_stretch > 0.0 && limit.lower_stretch <= limit.upper_stretch),
          "the strain limits need 0 < lower ≤ upper");
  for (double p : scene.mesh.positions) require(std::isfinite(p), "a rest position is not finite");
  for (Index node : scene.fixed_nodes) {
    require(node >= 0 && node < scene.mesh.node_count(),
            "fixed node " + std::to_string(node) + " is outside the mesh");
  }
  for (std::size_t a = 0; a < scene.attachments.size(); ++a) {
    const BoneAttachment& attachment = scene.attachments[a];
    require(attachment.bone >= 0 && attachment.bone < static_cast<Index>(scene.bones.size()),
            "attachment " + std::to_string(a) + " names bone " + std::to_string(attachment.bone) + ", which does not exist");
    check_embedding(scene, attachment.flesh, "attachment " + std::to_string(a));
  }
  for (std::size_t p = 0; p < scene.proxies.size(); ++p) {
    check_embedding(scene, scene.proxies[p], "proxy " + std::to_string(p));
  }
}

// F's singular values clamped to the biphasic band (§5.3); svd3 gives the inverted direction
// a negative σ, which the clamp turns positive, so an inverted element is pushed back out.
Mat3 strain_limit_projection(const linalg::Svd3& svd, const StrainLimit& limit) {
  Vec3 clamped;
  for (int i = 0; i < 3; ++i) clamped[i] = std::clamp(svd.singular_values[i], limit.lower_stretch, limit.upper_stretch);
  return svd.u * Mat3::diagonal(clamped) * linalg::transpose(svd.v);
}

}  // namespace

PdModel::PdModel(const PdScene& scene, PdModelOptions options) : scene_(&scene), options_(options) {
  check_scene(scene);
  if (options_.integrator == PdIntegrator::backward_euler) {
    require(std::isfinite(options_.time_step) && options_.time_step > 0.0, "the time step must be positive");
  } else {
    // Without mass, K = Σ 2W·GᵀG has the translations in its null space: only Dirichlet
    // nodes or bone attachments make the quasistatic problem well posed.
    require(!scene.fixed_nodes.empty() || (!scene.attachments.empty() && scene.attachment_stiffness > 0.0),
            "a quasistatic body must be held by fixed nodes or bone attachments");
  }
  const TetMesh& mesh = scene.mesh;
  free_index_.assign(static_cast<std::size_t>(mesh.node_count()), 0);
  for (Index node : scene.fixed_nodes) free_index_[static_cast<std::size_t>(node)] = -1;
  for (Index node = 0; node < mesh.node_count(); ++node) {
    if (free_index_[static_cast<std::size_t>(node)] < 0) continue;
    free_index_[static_cast<std::size_t>(node)] = static_cast<Index>(free_nodes_.size());
    free_nodes_.push_back(node);
  }
  const auto elements = static_cast<std::size_t>(mesh.tet_count());
  all_elements_.resize(elements);
  for (std::size_t e = 0; e < elements; ++e) all_elements_[e] = static_cast<Index>(e);
  gradients_.resize(elements);
  weights_.resize(elements);
  node_masses_.assign(static_cast<std::size_t>(mesh.node_count()), 0.0);
  double edge_sum = 0.0;
  for (Index e = 0; e < mesh.tet_count(); ++e) {
    const auto points = mesh.tet_points(e);
    const double volume = linalg::linear_tet::signed_volume(points);
    if (!(volume > 0.0)) {
      throw std::invalid_argument("pd scene: tet " + std::to_string(e) + " is inverted or flat at rest (volume " +
                                  std::to_string(volume) + ")");
    }
    const auto g = linalg::linear_tet::shape_gradients(points);
    for (std::size_t a = 0; a < 4; ++a) gradients_[static_cast<std::size_t>(e)][a] = {g[a][0], g[a][1], g[a][2]};
    weights_[static_cast<std::size_t>(e)] = scene.shear_modulus * volume;
    for (Index node : element_nodes(e)) node_masses_[static_cast<std::size_t>(node)] += scene.density * volume / 4.0;
    edge_sum += std::hypot(points[1][0] - points[0][0], points[1][1] - points[0][1], points[1][2] - points[0][2]);
  }
  mean_edge_length_ = edge_sum / static_cast<double>(elements);
  rotations_.assign(elements, Mat3::identity());
  if (strain_limited()) limited_.assign(elements, Mat3::identity());
  assemble_matrix();
}

std::vector<SpringRow> PdModel::attachment_springs(double frame) const {
  std::vector<SpringRow> springs;
  springs.reserve(scene_->attachments.size());
  for (const BoneAttachment& attachment : scene_->attachments) {
    const Vec3 target = scene_->bones[static_cast<std::size_t>(attachment.bone)].transform(attachment.rest_position, frame);
    springs.push_back(spring_to_target(scene_->mesh, attachment.flesh, target, scene_->attachment_stiffness));
  }
  return springs;
}

void PdModel::add_spring_triplets(std::span<const SpringRow> springs, linalg::Triplets& triplets) const {
  for (const SpringRow& spring : springs) {
    for (int i = 0; i < spring.terms; ++i) {
      const Index row = free_index(spring.nodes[static_cast<std::size_t>(i)]);
      if (row < 0) continue;
      for (int j = 0; j < spring.terms; ++j) {
        const Index col = free_index(spring.nodes[static_cast<std::size_t>(j)]);
        if (col < 0 || col > row) continue;
        triplets.add(row, col, spring.stiffness * spring.weights[static_cast<std::size_t>(i)] *
                                   spring.weights[static_cast<std::size_t>(j)]);
      }
    }
  }
}

void PdModel::assemble_matrix() {
  // K = Σ_e 2(W_e + W'_e)·GᵀG (§3.2: the Hessian of W‖F − R‖² per coordinate), the
  // attachments' k·wwᵀ, and M/h² for backward Euler; Dirichlet rows and columns left out.
  const double element_scale = 2.0 * (1.0 + scene_->strain_limit.stiffness_ratio);
  linalg::Triplets triplets;
  triplets.reserve(static_cast<std::size_t>(element_count()) * 10 + static_cast<std::size_t>(free_count()));
  for (Index e = 0; e < element_count(); ++e) {
    const auto nodes = element_nodes(e);
    const auto& g = gradients_[static_cast<std::size_t>(e)];
    const double w = element_scale * weights_[static_cast<std::size_t>(e)];
    for (std::size_t a = 0; a < 4; ++a) {
      const Index row = free_index(nodes[a]);
      if (row < 0) continue;
      for (std::size_t b = 0; b < 4; ++b) {
        const Index col = free_index(nodes[b]);
        if (col < 0 || col > row) continue;
        triplets.add(row, col, w * linalg::dot(g[a], g[b]));
      }
    }
  }
  const auto attachments = attachment_springs(0.0);
  add_spring_triplets(attachments, triplets);
  if (options_.integrator == PdIntegrator::backward_euler) {
    const double inverse_h2 = 1.0 / (options_.time_step * options_.time_step);
    for (Index i = 0; i < free_count(); ++i) {
      triplets.add(i, i, node_masses_[static_cast<std::size_t>(free_nodes_[static_cast<std::size_t>(i)])] * inverse_h2);
    }
  }
  matrix_ = linalg::symmetric_from_triplets(free_count(), triplets);
}

Mat3 PdModel::deformation_gradient(std::span<const double> positions, Index element) const {
  const auto nodes = element_nodes(element);
  const auto& g = gradients_[static_cast<std::size_t>(element)];
  Mat3 f;
  for (std::size_t a = 0; a < 4; ++a) f += linalg::outer(node_position(positions, nodes[a]), g[a]);
  return f;
}

double PdModel::deformation_determinant(std::span<const double> positions, Index element) const {
  return linalg::determinant(deformation_gradient(positions, element));
}

double PdModel::strain_measure(std::span<const double> positions, Index element) const {
  const linalg::Svd3 svd = linalg::svd3(deformation_gradient(positions, element));
  double deviation = 0.0;
  for (int i = 0; i < 3; ++i) deviation = std::max(deviation, std::abs(svd.singular_values[i] - 1.0));
  return deviation;
}

void PdModel::local_step(std::span<const double> positions, std::span<const Index> elements) {
  const Index count = static_cast<Index>(elements.size());
  linalg::parallel_chunks(count, options_.threads, [&](Index begin, Index end) {
    for (Index i = begin; i < end; ++i) {
      const Index e = elements[static_cast<std::size_t>(i)];
      const Mat3 f = deformation_gradient(positions, e);
      // Orthogonal Procrustes (§3.2): the rotation nearest F; svd3's signed convention keeps
      // det R = +1 for inverted elements, which then get pushed back out.
      const linalg::Svd3 svd = linalg::svd3(f);
      rotations_[static_cast<std::size_t>(e)] = svd.u * linalg::transpose(svd.v);
      if (strain_limited()) limited_[static_cast<std::size_t>(e)] = strain_limit_projection(svd, scene_->strain_limit);
    }
  });
}

ElementIncidence PdModel::incidence(std::span<const Index> elements) const {
  std::vector<Index> counts(static_cast<std::size_t>(node_count()), 0);
  for (Index e : elements) {
    for (Index node : element_nodes(e)) {
      if (free_index(node) >= 0) ++counts[static_cast<std::size_t>(node)];
    }
  }
  ElementIncidence result;
  std::vector<Index> slot(static_cast<std::size_t>(node_count()), -1);
  result.offsets.push_back(0);
  for (Index node = 0; node < node_count(); ++node) {
    if (counts[static_cast<std::size_t>(node)] == 0) continue;
    slot[static_cast<std::size_t>(node)] = result.offsets.back();
    result.nodes.push_back(node);
    result.offsets.push_back(result.offsets.back() + counts[static_cast<std::size_t>(node)]);
  }
  result.element_corner.resize(static_cast<std::size_t>(result.offsets.back()));
  for (Index e : elements) {
    const auto nodes = element_nodes(e);
    for (Index corner = 0; corner < 4; ++corner) {
      const Index node = nodes[static_cast<std::size_t>(corner)];
      if (free_index(node) < 0) continue;
      result.element_corner[static_cast<std::size_t>(slot[static_cast<std::size_t>(node)]++)] = 4 * e + corner;
    }
  }
  return result;
}

void PdModel::add_element_forces(const ElementIncidence& incidence, linalg::DenseView b) const {
  const double limit_ratio = scene_->strain_limit.stiffness_ratio;
  const Index count = static_cast<Index>(incidence.nodes.size());
  linalg::parallel_chunks(count, options_.threads, [&](Index begin, Index end) {
    for (Index i = begin; i < end; ++i) {
      Vec3 force;
      for (Index k = incidence.offsets[static_cast<std::size_t>(i)]; k < incidence.offsets[static_cast<std::size_t>(i) + 1]; ++k) {
        const Index code = incidence.element_corner[static_cast<std::size_t>(k)];
        const auto e = static_cast<std::size_t>(code / 4);
        const Vec3& g = gradients_[e][static_cast<std::size_t>(code % 4)];
        Vec3 projected = rotations_[e] * g;
        if (limit_ratio > 0.0) projected += limit_ratio * (limited_[e] * g);
        force += (2.0 * weights_[e]) * projected;
      }
      const Index row = free_index(incidence.nodes[static_cast<std::size_t>(i)]);
      for (int c = 0; c < 3; ++c) b(row, c) += force[c];
    }
  });
}

void PdModel::add_constant_forces(std::span<const double> inertia_target, linalg::DenseView b) const {
  const std::span<const double> rest = scene_->mesh.positions;
  // Element couplings to Dirichlet nodes (kept at rest): −K_{free,fixed}·x̄.
  if (!scene_->fixed_nodes.empty()) {
    const double element_scale = 2.0 * (1.0 + scene_->strain_limit.stiffness_ratio);
    for (Index e = 0; e < element_count(); ++e) {
      const auto nodes = element_nodes(e);
      const auto& g = gradients_[static_cast<std::size_t>(e)];
      for (std::size_t j = 0; j < 4; ++j) {
        if (free_index(nodes[j]) >= 0) continue;
        const Vec3 fixed_position = node_position(rest, nodes[j]);
        for (std::size_t a = 0; a < 4; ++a) {
          const Index row = free_index(nodes[a]);
          if (row < 0) continue;
          const double coupling = element_scale * weights_[static_cast<std::size_t>(e)] * linalg::dot(g[a], g[j]);
          for (int c = 0; c < 3; ++c) b(row, c) -= coupling * fixed_position[c];
        }
      }
    }
  }
  if (options_.integrator == PdIntegrator::backward_euler) {
    const double inverse_h2 = 1.0 / (options_.time_step * options_.time_step);
    for (Index i = 0; i < free_count(); ++i) {
      const Index node = free_nodes_[static_cast<std::size_t>(i)];
      const double scale = node_masses_[static_cast<std::size_t>(node)] * inverse_h2;
      for (int c = 0; c < 3; ++c) b(i, c) += scale * inertia_target[static_cast<std::size_t>(3 * node + c)];
    }
  }
}

void PdModel::add_spring_forces(std::span<const SpringRow> springs, linalg::DenseView b) const {
  const std::span<const double> rest = scene_->mesh.positions;
  for (const SpringRow& spring : springs) {
    // k·w_free·(t − Σ_fixed w·x̄): the fixed terms of the row are part of its target.
    Vec3 target = spring.target;
    for (int i = 0; i < spring.terms; ++i) {
      const Index node = spring.nodes[static_cast<std::size_t>(i)];
      if (free_index(node) < 0) target -= spring.weights[static_cast<std::size_t>(i)] * node_position(rest, node);
    }
    for (int i = 0; i < spring.terms; ++i) {
      const Index row = free_index(spring.nodes[static_cast<std::size_t>(i)]);
      if (row < 0) continue;
      const double scale = spring.stiffness * spring.weights[static_cast<std::size_t>(i)];
      for (int c = 0; c < 3; ++c) b(row, c) += scale * target[c];
    }
  }
}

double PdModel::energy(std::span<const double> positions, std::span<const SpringRow> springs,
                       std::span<const double> inertia_target) const {
  double total = 0.0;
  for (Index e = 0; e < element_count(); ++e) {
    const Mat3 f = deformation_gradient(positions, e);
    total += weights_[static_cast<std::size_t>(e)] * linalg::squared_frobenius_norm(f - rotations_[static_cast<std::size_t>(e)]);
    if (strain_limited()) {
      total += scene_->strain_limit.stiffness_ratio * weights_[static_cast<std::size_t>(e)] *
               linalg::squared_frobenius_norm(f - limited_[static_cast<std::size_t>(e)]);
    }
  }
  for (const SpringRow& spring : springs) total += spring.energy(positions);
  if (options_.integrator == PdIntegrator::backward_euler) {
    const double inverse_h2 = 1.0 / (options_.time_step * options_.time_step);
    for (Index node = 0; node < node_count(); ++node) {
      const Vec3 d = node_position(positions, node) - node_position(inertia_target, node);
      total += 0.5 * node_masses_[static_cast<std::size_t>(node)] * inverse_h2 * linalg::squared_norm(d);
    }
  }
  return total;
}

}  // namespace cholsim::fem
