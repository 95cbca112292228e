#include "fem/octree/octree_elastic_operator.hpp"

#include <numeric>
#include <stdexcept>
#include <string>

#include "fem/mesh/tet_mesh.hpp"

namespace cholsim::fem::octree {

using linalg::Index;
using linalg::Mat3;
using linalg::Vec3;

namespace {

/// The unknown of row r (node-major, 3 per node) of an element matrix on `nodes`.
Index element_dof(const ElementNodes& nodes, int r) { return 3 * nodes[static_cast<std::size_t>(r / 3)] + r % 3; }

void add_nodal(std::span<double> values, Index node, const Vec3& v) {
  const auto k = static_cast<std::size_t>(3 * node);
  values[k] += v.x;
  values[k + 1] += v.y;
  values[k + 2] += v.z;
}

/// Wᵀ·K·W: an element matrix on the primary nodes carried to the conforming nodes (§3.2).
HexMatrix conforming_matrix(const HexMatrix& k, const HangingNodeWeights& w) {
  HexMatrix kw{};  // K·W
  for (int r = 0; r < 24; ++r) {
    for (int c = 0; c < 8; ++c) {
      for (int j = 0; j < 3; ++j) {
        double sum = 0.0;
        for (int a = 0; a < 8; ++a) sum += k[24 * r + 3 * a + j] * w[a][c];
        kw[24 * r + 3 * c + j] = sum;
      }
    }
  }
  HexMatrix result{};
  for (int b = 0; b < 8; ++b) {
    for (int i = 0; i < 3; ++i) {
      for (int col = 0; col < 24; ++col) {
        double sum = 0.0;
        for (int a = 0; a < 8; ++a) sum += w[a][b] * kw[24 * (3 * a + i) + col];
        result[24 * (3 * b + i) + col] = sum;
      }
    }
  }
  return result;
}

}  // namespace

OctreeElasticOperator::OctreeElasticOperator(const OctreeMesh& mesh, std::vector<Lame> lame,
                                             std::vector<double> nodal_mass, int threads)
    : mesh_(&mesh), blocks_(mesh, threads), threads_(threads), lame_(std::move(lame)), mass_(std::move(nodal_mass)) {
  if (lame_.size() != static_cast<std::size_t>(mesh.element_count()) ||
      mass_.size() != static_cast<std::size_t>(mesh.node_count())) {
    throw std::invalid_argument("OctreeElasticOperator: " + std::to_string(lame_.size()) + " Lamé pairs and " +
                                std::to_string(mass_.size()) + " masses for " + std::to_string(mesh.element_count()) +
                                " elements and " + std::to_string(mesh.node_count()) + " nodes");
  }
  linearize(std::vector<Mat3>(static_cast<std::size_t>(mesh.element_count()), Mat3::identity()));
}

void OctreeElasticOperator::set_springs(std::span<const EmbeddedSpring> springs, std::span<const EmbeddedPoint> at) {
  if (springs.size() != at.size()) {
    throw std::invalid_argument("octree operator: " + std::to_string(springs.size()) + " springs but " +
                                std::to_string(at.size()) + " embedded points");
  }
  springs_.clear();
  for (std::size_t k = 0; k < springs.size(); ++k) springs_.push_back({at[k], springs[k].stiffness, springs[k].target});
}

void OctreeElasticOperator::set_merged_children(std::vector<std::uint8_t> children) {
  if (!children.empty() && children.size() != lame_.size()) {
    throw std::invalid_argument("octree operator: " + std::to_string(children.size()) + " child sets for " +
                                std::to_string(lame_.size()) + " elements");
  }
  merged_children_ = std::move(children);
}

void OctreeElasticOperator::set_held_nodes(std::vector<std::uint8_t> held) {
  if (!held.empty() && held.size() != mass_.size()) {
    throw std::invalid_argument("octree operator: " + std::to_string(held.size()) + " held-node flags for " +
                                std::to_string(mass_.size()) + " nodes");
  }
  held_list_.clear();
  for (std::size_t node = 0; node < held.size(); ++node) {
    if (held[node] != 0) held_list_.push_back(static_cast<Index>(node));
  }
  if (held_list_.empty()) held.clear();
  held_ = std::move(held);
  held_masked_.assign(held_.empty() ? 0 : static_cast<std::size_t>(unknowns()), 0.0);
}

void OctreeElasticOperator::zero_held(std::span<double> v) const {
  for (const Index node : held_list_) {
    for (int i = 0; i < 3; ++i) v[3 * node + i] = 0.0;
  }
}

std::span<const double> OctreeElasticOperator::without_held(std::span<const double> x) const {
  if (held_list_.empty()) return x;
  std::copy(x.begin(), x.end(), held_masked_.begin());
  zero_held(held_masked_);
  return held_masked_;
}

void OctreeElasticOperator::mask_held(Index e, HexMatrix& k) const {
  if (held_list_.empty()) return;
  const ElementNodes& nodes = mesh_->conforming_nodes[e];
  for (int b = 0; b < 8; ++b) {
    if (!is_held(nodes[b])) continue;
    for (int i = 0; i < 3; ++i) {
      for (int c = 0; c < 24; ++c) k[24 * (3 * b + i) + c] = k[24 * c + 3 * b + i] = 0.0;
    }
  }
}

void OctreeElasticOperator::linearize(std::vector<Mat3> deformation_gradients) {
  deformation_gradients_ = std::move(deformation_gradients);
  linearization_.resize(lame_.size());
  blocks_.run_own(threads_, [&](Index first, Index last) {
    for (Index e = first; e < last; ++e) linearization_[e] = linearize_hex(deformation_gradients_[e], lame_[e]);
  });
}

void OctreeElasticOperator::linearize_at(std::span<const double> x) {
  deformation_gradients_.resize(lame_.size());
  linearization_.resize(lame_.size());
  blocks_.run_own(threads_, [&](Index first, Index last) {
    for (Index e = first; e < last; ++e) {
      HexNodes corners;
      mesh_->gather(e, x, corners);
      deformation_gradients_[e] = hex_center_deformation_gradient(corners, mesh_->element_size(e));
      linearization_[e] = linearize_hex(deformation_gradients_[e], lame_[e]);
    }
  });
}

void OctreeElasticOperator::scatter_owned(Index element, Index block, const HexNodes& values,
                                          std::span<double> nodal) const {
  mesh_->scatter_add_owned(element, values, nodal, blocks_.owners(), block);
}

void OctreeElasticOperator::apply(std::span<const double> x_all, std::span<double> y) const {
  // Held nodes: the product of x without them, then their rows the identity's.
  const std::span<const double> x = without_held(x_all);
  // Masses first (every node once), then the elements add their K·x through Wᵀ (Algorithm 2).
  linalg::parallel_chunks(mesh_->node_count(), threads_, [&](Index first, Index last) {
    for (Index node = first; node < last; ++node) {
      for (int i = 0; i < 3; ++i) y[3 * node + i] = mass_scale_ * mass_[node] * x[3 * node + i];
    }
  });
  blocks_.run(threads_, [&](Index e, Index block) {
    HexNodes dx;
    mesh_->gather(e, x, dx);
    HexNodes product{};
    if (const std::uint8_t children = children_of(e); children != 0) {
      add_merged_hex_stiffness_product(linearization_[e], dx, mesh_->element_size(e), lame_[e], children, product);
    } else {
      add_hex_stiffness_product(linearization_[e], dx, mesh_->element_size(e), lame_[e], product);
    }
    scatter_owned(e, block, product, y);
  });
  for (const PlacedSpring& spring : springs_) {  // few: serial
    spread_from_point(spring.at, spring.stiffness * point_position(spring.at, x), y);
  }
  for (const ElementCorrection& correction : corrections_) {  // few: serial
    const ElementNodes& nodes = mesh_->conforming_nodes[correction.element];
    for (int r = 0; r < 24; ++r) {
      double sum = 0.0;
      for (int c = 0; c < 24; ++c) sum += correction.matrix[24 * r + c] * x[element_dof(nodes, c)];
      y[element_dof(nodes, r)] += sum;
    }
  }
  for (const Index node : held_list_) {
    for (int i = 0; i < 3; ++i) y[3 * node + i] = x_all[3 * node + i];
  }
}

namespace {

/// Σ_j |S_ij| per row i: a spring's l1 row sums.
Vec3 absolute_row_sums(const Mat3& s) {
  Vec3 sums;
  for (int i = 0; i < 3; ++i) sums[i] = std::abs(s(i, 0)) + std::abs(s(i, 1)) + std::abs(s(i, 2));
  return sums;
}

}  // namespace

std::vector<double> OctreeElasticOperator::diagonal() const { return diagonal(SpringRows::exact); }
std::vector<double> OctreeElasticOperator::smoother_diagonal() const { return diagonal(SpringRows::l1); }

std::vector<double> OctreeElasticOperator::diagonal(SpringRows spring_rows) const {
  std::vector<double> d(static_cast<std::size_t>(unknowns()));
  linalg::parallel_chunks(mesh_->node_count(), threads_, [&](Index first, Index last) {
    for (Index node = first; node < last; ++node) {
      for (int i = 0; i < 3; ++i) d[3 * node + i] = mass_scale_ * mass_[node];
    }
  });
  blocks_.run(threads_, [&](Index e, Index block) {
    const ElementNodes& nodes = mesh_->conforming_nodes[e];
    HexNodes element_diagonal{};
    if (const std::uint8_t children = children_of(e); children != 0) {
      add_merged_hex_stiffness_diagonal(linearization_[e], mesh_->interpolation_matrix(e), mesh_->element_size(e),
                                        lame_[e], children, element_diagonal);
    } else {
      add_hex_stiffness_diagonal(linearization_[e], mesh_->interpolation_matrix(e), mesh_->element_size(e), lame_[e],
                                 element_diagonal);
    }
    for (int b = 0; b < 8; ++b) {
      if (blocks_.owner(nodes[b]) == block) add_nodal(d, nodes[b], element_diagonal[b]);
    }
  });
  for (const PlacedSpring& spring : springs_) {
    const EmbeddedPoint& p = spring.at;
    if (spring_rows == SpringRows::exact) {  // k·Ñ_b² (§8) per component
      const Vec3 k{spring.stiffness(0, 0), spring.stiffness(1, 1), spring.stiffness(2, 2)};
      for (int b = 0; b < 8; ++b) add_nodal(d, mesh_->conforming_nodes[p.element][b], p.weights[b] * p.weights[b] * k);
    } else {  // row b of (Ñ Ñᵀ) ⊗ S in l1: Ñ_b·Σ_c Ñ_c·Σ_j |S_ij| = Ñ_b·Σ_j |S_ij| (Ñ ≥ 0, Σ Ñ = 1)
      const Vec3 row_sums = absolute_row_sums(spring.stiffness);
      for (int b = 0; b < 8; ++b) add_nodal(d, mesh_->conforming_nodes[p.element][b], p.weights[b] * row_sums);
    }
  }
  for (const ElementCorrection& correction : corrections_) {
    // In l1 (as the springs' rows): a correction makes its coarse element Galerkin, whose
    // couplings a point sweep with only its diagonal overshoots (a level of one element: 16
    // sweeps diverged on the 32-cell §10.4 cube).
    const ElementNodes& nodes = mesh_->conforming_nodes[correction.element];
    for (int r = 0; r < 24; ++r) {
      double row = correction.matrix[25 * r];
      if (spring_rows == SpringRows::l1) {
        row = 0.0;
        for (int c = 0; c < 24; ++c) row += std::abs(correction.matrix[24 * r + c]);
      }
      d[element_dof(nodes, r)] += row;
    }
  }
  for (const Index node : held_list_) {
    for (int i = 0; i < 3; ++i) d[3 * node + i] = 1.0;
  }
  return d;
}

std::vector<double> OctreeElasticOperator::smoother_block_diagonal() const {
  std::vector<double> blocks(static_cast<std::size_t>(9 * mesh_->node_count()), 0.0);
  const auto add_block = [&](Index node, const Mat3& block) {
    for (int k = 0; k < 9; ++k) blocks[9 * static_cast<std::size_t>(node) + k] += block.entries[static_cast<std::size_t>(k)];
  };
  for (Index node = 0; node < mesh_->node_count(); ++node) add_block(node, (mass_scale_ * mass_[node]) * Mat3::identity());
  blocks_.run(threads_, [&](Index e, Index block) {
    const ElementNodes& nodes = mesh_->conforming_nodes[e];
    const std::array<Mat3, 8> own = element_blocks(e);
    for (int b = 0; b < 8; ++b) {
      if (blocks_.owner(nodes[b]) == block) add_block(nodes[b], own[b]);
    }
  });
  for (const PlacedSpring& spring : springs_) {
    // The block k·Ñ_b²·S (§8), and in l1 the rows' couplings to the other nodes,
    // Ñ_b·(1 − Ñ_b)·Σ_j |S_ij|, on its diagonal.
    const EmbeddedPoint& p = spring.at;
    const Vec3 row_sums = absolute_row_sums(spring.stiffness);
    for (int b = 0; b < 8; ++b) {
      const double w = p.weights[b];
      add_block(mesh_->conforming_nodes[p.element][b], (w * w) * spring.stiffness + Mat3::diagonal((w * (1.0 - w)) * row_sums));
    }
  }
  for (const ElementCorrection& correction : corrections_) {
    for (int b = 0; b < 8; ++b) {
      Mat3 block;
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) block(i, j) = correction.matrix[24 * (3 * b + i) + 3 * b + j];
      }
      add_block(mesh_->conforming_nodes[correction.element][b], block);
    }
  }
  for (const Index node : held_list_) {
    const Mat3 identity = Mat3::identity();
    std::copy(identity.entries.begin(), identity.entries.end(), blocks.begin() + 9 * static_cast<std::ptrdiff_t>(node));
  }
  return blocks;
}

std::array<Mat3, 8> OctreeElasticOperator::element_blocks(Index e) const {
  std::array<Mat3, 8> blocks{};
  if (const std::uint8_t children = children_of(e); children != 0) {
    add_merged_hex_stiffness_block_diagonal(linearization_[e], mesh_->interpolation_matrix(e), mesh_->element_size(e),
                                            lame_[e], children, blocks);
  } else {
    add_hex_stiffness_block_diagonal(linearization_[e], mesh_->interpolation_matrix(e), mesh_->element_size(e),
                                     lame_[e], blocks);
  }
  return blocks;
}

HexMatrix OctreeElasticOperator::stiffness_matrix(Index e) const {
  const std::uint8_t children = children_of(e);
  HexMatrix k = children != 0 ? merged_hex_stiffness_matrix(linearization_[e], mesh_->element_size(e), lame_[e], children)
                              : hex_stiffness_matrix(linearization_[e], mesh_->element_size(e), lame_[e]);
  if (mesh_->hanging[e] != 0) k = conforming_matrix(k, mesh_->interpolation_matrix(e));
  return k;
}

namespace {

/// k += (w wᵀ) ⊗ S: a spring couples the 8 conforming nodes of its element.
void add_spring_matrix(const EmbeddedPoint& p, const Mat3& stiffness, HexMatrix& k) {
  for (int b = 0; b < 8; ++b) {
    for (int c = 0; c < 8; ++c) {
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) k[24 * (3 * b + i) + 3 * c + j] += p.weights[b] * p.weights[c] * stiffness(i, j);
      }
    }
  }
}

}  // namespace

const linalg::SymmetricCscMatrix& OctreeElasticOperator::assemble() const {
  if (!pattern_) {
    std::vector<Index> element_nodes;
    element_nodes.reserve(static_cast<std::size_t>(8 * mesh_->element_count()));
    for (const ElementNodes& nodes : mesh_->conforming_nodes) element_nodes.insert(element_nodes.end(), nodes.begin(), nodes.end());
    pattern_ = std::make_unique<linalg::AssemblyPattern>(mesh_->node_count(), 3, 8, element_nodes);
    assembled_ = pattern_->zero_matrix();
  }
  linalg::SymmetricCscMatrix& a = assembled_;
  std::vector<double>& values = a.lower.values;
  std::fill(values.begin(), values.end(), 0.0);
  const auto add_masked = [&](Index e, HexMatrix k) {
    mask_held(e, k);
    pattern_->scatter_add(e, k.data(), values);  // symmetric: row- and column-major agree
  };
  for (Index e = 0; e < mesh_->element_count(); ++e) add_masked(e, stiffness_matrix(e));
  for (const PlacedSpring& spring : springs_) {
    HexMatrix k{};
    add_spring_matrix(spring.at, spring.stiffness, k);
    add_masked(spring.at.element, k);
  }
  for (const ElementCorrection& correction : corrections_) add_masked(correction.element, correction.matrix);
  for (Index node = 0; node < mesh_->node_count(); ++node) {
    for (int i = 0; i < 3; ++i) {
      double& diagonal = values[a.lower.col_ptr[3 * node + i]];  // the diagonal leads its column
      diagonal = is_held(node) ? 1.0 : diagonal + mass_scale_ * mass_[node];
    }
  }
  return a;
}

void OctreeElasticOperator::deformation_gradients(std::span<const double> x, std::span<Mat3> f) const {
  blocks_.run_own(threads_, [&](Index first, Index last) {
    for (Index e = first; e < last; ++e) {
      HexNodes corners;
      mesh_->gather(e, x, corners);
      f[e] = hex_center_deformation_gradient(corners, mesh_->element_size(e));
    }
  });
}

void OctreeElasticOperator::add_elastic_forces(std::span<const double> x, std::span<double> forces) const {
  blocks_.run(threads_, [&](Index e, Index block) {
    HexNodes corners;
    mesh_->gather(e, x, corners);
    HexNodes element_forces{};
    add_hex_forces(corners, mesh_->element_size(e), lame_[e], element_forces);
    scatter_owned(e, block, element_forces, forces);
  });
}

void OctreeElasticOperator::add_linearized_forces(std::span<const double> x, std::span<double> forces) const {
  blocks_.run(threads_, [&](Index e, Index block) {
    HexNodes corners;
    mesh_->gather(e, x, corners);
    HexNodes element_forces{};
    add_hex_forces(corners, linearization_[e], mesh_->element_size(e), lame_[e], element_forces);
    scatter_owned(e, block, element_forces, forces);
  });
}

double OctreeElasticOperator::elastic_energy(std::span<const double> x) const {
  // Per element, then summed in a fixed order: the same total for any thread count.
  std::vector<double> energy(static_cast<std::size_t>(mesh_->element_count()));
  blocks_.run_own(threads_, [&](Index first, Index last) {
    for (Index e = first; e < last; ++e) {
      HexNodes corners;
      mesh_->gather(e, x, corners);
      energy[e] = hex_energy(corners, mesh_->element_size(e), lame_[e]);
    }
  });
  return std::accumulate(energy.begin(), energy.end(), 0.0);
}

Vec3 OctreeElasticOperator::point_position(const EmbeddedPoint& point, std::span<const double> x) const {
  Vec3 position;
  for (int b = 0; b < 8; ++b) position += point.weights[b] * node_position(x, mesh_->conforming_nodes[point.element][b]);
  return position;
}

void OctreeElasticOperator::spread_from_point(const EmbeddedPoint& point, const Vec3& value, std::span<double> nodal) const {
  for (int b = 0; b < 8; ++b) add_nodal(nodal, mesh_->conforming_nodes[point.element][b], point.weights[b] * value);
}

double OctreeElasticOperator::add_spring_forces(std::span<const double> x, std::span<double> forces) const {
  double energy = 0.0;
  for (const PlacedSpring& spring : springs_) {
    const Vec3 stretch = point_position(spring.at, x) - spring.target;
    const Vec3 force = -(spring.stiffness * stretch);
    energy -= 0.5 * linalg::dot(stretch, force);
    spread_from_point(spring.at, force, forces);
  }
  return energy;
}

std::size_t OctreeElasticOperator::memory_bytes() const {
  return blocks_.memory_bytes() + (pattern_ ? pattern_->bytes() + assembled_.lower.values.capacity() * sizeof(double) : 0) + lame_.capacity() * sizeof(Lame) + mass_.capacity() * sizeof(double) +
         deformation_gradients_.capacity() * sizeof(Mat3) + linearization_.capacity() * sizeof(HexLinearization) +
         springs_.capacity() * sizeof(PlacedSpring) + merged_children_.capacity() + held_.capacity() +
         held_list_.capacity() * sizeof(Index) + held_masked_.capacity() * sizeof(double) +
         corrections_.capacity() * sizeof(ElementCorrection);
}

std::vector<double> lumped_masses(const OctreeMesh& mesh, double density) {
  std::vector<double> mass(static_cast<std::size_t>(mesh.node_count()), 0.0);
  std::vector<double> nodal(3 * mass.size(), 0.0);
  for (Index e = 0; e < mesh.element_count(); ++e) {
    const double h = mesh.element_size(e);
    const double share = density * h * h * h / 8.0;
    HexNodes corners;
    corners.fill(Vec3{share, 0.0, 0.0});
    mesh.scatter_add(e, corners, nodal);
  }
  for (std::size_t node = 0; node < mass.size(); ++node) mass[node] = nodal[3 * node];
  return mass;
}

}  // namespace cholsim::fem::octree
