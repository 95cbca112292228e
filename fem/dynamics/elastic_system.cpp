#include "fem/dynamics/elastic_system.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "fem/contact/contact_potential.hpp"
#include "linalg/assembly_pattern.hpp"
#include "linalg/parallel_loops.hpp"

namespace cholsim::fem {

namespace {

using ElementMatrix = std::array<double, 144>;  // 12×12 column-major, dof 3·vertex + component
using ElementVector = std::array<double, 12>;

constexpr Index kFreeNode = -1;

std::size_t at(Index i) { return static_cast<std::size_t>(i); }

HyperelasticMaterial element_model(const DynamicsMaterial& material, linalg::LameParameters lame) {
  HyperelasticMaterial model;
  model.model = material.model;
  model.lame = lame;
  model.fibre_stiffness = material.fibre_stiffness;
  const double length = linalg::norm(material.fibre_direction);
  model.fibre_direction = material.fibre_direction / length;
  return model;
}

void check_materials(const std::vector<DynamicsMaterial>& materials) {
  for (std::size_t m = 0; m < materials.size(); ++m) {
    const DynamicsMaterial& material = materials[m];
    const std::string name = "ElasticSystem: material " + std::to_string(m) + ": ";
    if (!(material.fibre_stiffness >= 0.0) || !std::isfinite(material.fibre_stiffness)) {
      throw std::invalid_argument(name + "fibre stiffness must be finite and ≥ 0, got " +
                                  std::to_string(material.fibre_stiffness));
    }
    if (material.fibre_stiffness > 0.0 && !(linalg::norm(material.fibre_direction) > 0.0)) {
      throw std::invalid_argument(name + "the fibre direction must be a nonzero vector");
    }
  }
}

void check_damping(const DampingOptions& damping) {
  for (double c : {damping.mass_coefficient, damping.stiffness_coefficient}) {
    if (!(c >= 0.0) || !std::isfinite(c)) {
      throw std::invalid_argument("ElasticSystem: damping coefficients must be finite and ≥ 0, got " +
                                  std::to_string(c));
    }
  }
}

double frobenius_distance_squared(std::span<const double> a, std::span<const double> b) {
  double sum = 0.0;
  for (std::size_t k = 0; k < a.size(); ++k) sum += (a[k] - b[k]) * (a[k] - b[k]);
  return sum;
}

double frobenius_squared(std::span<const double> a) {
  double sum = 0.0;
  for (double v : a) sum += v * v;
  return sum;
}

}  // namespace

struct ElasticSystem::State {
  ElasticBody body;
  std::vector<HyperelasticMaterial> element_materials;  // per element
  std::vector<TetRestShape> rest_shapes;                // per element
  ElasticSystemOptions options;
  double time = 0.0;

  std::vector<Index> motion_of_node;  // kFreeNode or the PrescribedMotion's index
  std::vector<Index> free_node;       // free node number, or kFreeNode for prescribed nodes
  Index free_nodes = 0;
  std::vector<double> masses;         // per free DOF

  linalg::AssemblyPattern assembly;          // all nodes
  // Elements grouped by colour, no two of a colour sharing a node, so that each colour
  // scatters on all threads without two threads adding into one entry.
  std::vector<Index> color_elements;
  std::vector<Index> color_offsets;
  linalg::SymmetricCscMatrix full_matrix;    // assembled over all nodes
  linalg::SymmetricCscMatrix free_pattern;   // free DOFs, values unused
  std::vector<linalg::Offset> free_entry_source;  // free pattern entry → full matrix entry

  std::vector<double> full;              // full positions, work
  std::vector<double> element_energies;  // work
  std::vector<ElementVector> element_gradients;
  std::vector<ElementMatrix> element_hessians;
  std::vector<unsigned char> clamped;   // per element, last Hessian pass: eigenvalues clamped
  std::vector<unsigned char> inverted;  // per element, last Hessian pass
  std::vector<std::pair<Index, std::array<double, 9>>> contact_blocks;

  // The damping blocks D_e of the last damping_matrix() (Rayleigh: β·∇²V_e; Green: its Gram
  // matrices), for the selective Hessian.
  std::vector<ElementMatrix> damping_blocks;
  // The selective Hessian's blocks as last taken (NEWTON-R); `taken` is 0 before the first.
  std::vector<ElementMatrix> taken_blocks;
  std::vector<unsigned char> taken;
  std::vector<double> factored_full;  // Σ taken blocks over the full pattern, kept by differences
  std::vector<Index> changed_elements;  // work: those taken anew by the last call, by colour
  std::vector<Index> changed_color_offsets;
  std::vector<std::array<double, 9>> taken_contact;  // per node; zero where no contact
  std::vector<unsigned char> node_changed;           // work
  std::vector<unsigned char> element_changed;        // work, per element
  std::vector<double> full_work;                     // work: a gradient or velocity over all nodes
  std::unique_ptr<ContactPotential> contact;
  ElasticSystemStatistics statistics;

  [[nodiscard]] std::array<Vec3, 4> element_positions(std::span<const double> positions, Index e) const {
    const auto nodes = body.element_nodes(e);
    return {node_position(positions, nodes[0]), node_position(positions, nodes[1]),
            node_position(positions, nodes[2]), node_position(positions, nodes[3])};
  }
  void classify_nodes();
  void build_free_pattern();
  void expand(std::span<const double> x);
  double gravity_potential(std::span<const double> positions) const;
  void restrict_values(std::span<const double> full_values, linalg::SymmetricCscMatrix& out) const;
  void restrict_matrix(linalg::SymmetricCscMatrix& out) const;
  void element_hessian_pass(std::span<const double> positions, bool project);
  void color_elements_by_nodes();
  void assemble_full(std::span<const ElementMatrix> element_matrices);
  template <typename Scatter>
  void scatter_colored(std::span<const Index> elements, std::span<const Index> offsets, const Scatter& scatter) const;
  void green_damping_pass(std::span<const double> positions);
  void add_mass_proportional_damping(double scale, linalg::SymmetricCscMatrix& matrix) const;
  void add_contact_blocks(std::span<const std::pair<Index, std::array<double, 9>>> blocks, double scale);
  void add_diagonal_block(std::span<double> values, Index node, const std::array<double, 9>& block) const;
  Index take_changed_blocks(double tolerance);
  void take_changed_contact_blocks(double scale, double tolerance);
  void changed_free_dofs(std::vector<Index>& dofs) const;
};

void ElasticSystem::State::add_mass_proportional_damping(double scale, linalg::SymmetricCscMatrix& matrix) const {
  if (options.damping.mass_coefficient == 0.0) return;
  const linalg::CscMatrix& lower = matrix.lower;
  for (Index col = 0; col < lower.cols; ++col) {
    // The diagonal is each column's first entry (rows sorted, lower triangle).
    matrix.lower.values[static_cast<std::size_t>(lower.col_ptr[at(col)])] +=
        scale * options.damping.mass_coefficient * masses[at(col)];
  }
}

// A vertex's 3×3 block sits on the diagonal node block of its column: rows 3v..3v+2 of
// columns 3v..3v+2, the first entries of those columns (rows sorted, lower triangle).
void ElasticSystem::State::add_diagonal_block(std::span<double> values, Index node,
                                              const std::array<double, 9>& block) const {
  const linalg::CscMatrix& lower = full_matrix.lower;
  for (std::size_t c = 0; c < 3; ++c) {
    const auto start = static_cast<std::size_t>(lower.col_ptr[3 * at(node) + c]);
    for (std::size_t r = c; r < 3; ++r) values[start + (r - c)] += block[3 * r + c];
  }
}

void ElasticSystem::State::add_contact_blocks(std::span<const std::pair<Index, std::array<double, 9>>> blocks,
                                              double scale) {
  for (const auto& [node, block] : blocks) {
    std::array<double, 9> scaled = block;
    for (double& value : scaled) value *= scale;
    add_diagonal_block(full_matrix.lower.values, node, scaled);
  }
}

// element_hessians holds the new element blocks: those that moved by more than `tolerance`
// since they were taken (or were never taken) are taken anew, their difference added into
// factored_full (only the changed blocks are scattered), and their nodes marked.
Index ElasticSystem::State::take_changed_blocks(double tolerance) {
  const Index elements = body.element_count();
  if (taken.size() != at(elements)) {
    taken.assign(at(elements), 0);
    taken_blocks.resize(at(elements));
  }
  if (factored_full.size() != full_matrix.lower.values.size()) factored_full.assign(full_matrix.lower.values.size(), 0.0);
  std::vector<unsigned char>& changed = element_changed;
  changed.assign(at(elements), 0);
  linalg::parallel_chunks(elements, options.threads, [&](Index begin, Index end) {
    for (Index e = begin; e < end; ++e) {
      const ElementMatrix& block = element_hessians[at(e)];
      const ElementMatrix& old = taken_blocks[at(e)];
      if (taken[at(e)] != 0 &&
          frobenius_distance_squared(block, old) <= tolerance * tolerance * frobenius_squared(old)) {
        continue;
      }
      changed[at(e)] = 1;
    }
  }, 1024);
  // The changed elements in colour order, for a parallel scatter of their differences.
  changed_elements.clear();
  changed_color_offsets.assign(color_offsets.size(), 0);
  for (std::size_t c = 0; c + 1 < color_offsets.size(); ++c) {
    for (Index k = color_offsets[c]; k < color_offsets[c + 1]; ++k) {
      if (changed[at(color_elements[at(k)])] != 0) changed_elements.push_back(color_elements[at(k)]);
    }
    changed_color_offsets[c + 1] = static_cast<Index>(changed_elements.size());
  }
  scatter_colored(changed_elements, changed_color_offsets, [&](Index e) {
    ElementMatrix difference = element_hessians[at(e)];
    if (taken[at(e)] != 0) {
      for (std::size_t k = 0; k < difference.size(); ++k) difference[k] -= taken_blocks[at(e)][k];
    }
    assembly.scatter_add(e, difference.data(), factored_full);
    taken_blocks[at(e)] = element_hessians[at(e)];
    taken[at(e)] = 1;
  });
  for (Index e : changed_elements) {
    for (Index v : body.element_nodes(e)) node_changed[at(v)] = 1;
  }
  return static_cast<Index>(changed_elements.size());
}

// The same for the contact vertices' 3×3 blocks (a vertex out of contact has a zero block).
void ElasticSystem::State::take_changed_contact_blocks(double scale, double tolerance) {
  if (taken_contact.size() != at(body.node_count())) taken_contact.assign(at(body.node_count()), {});
  // Both lists are in increasing node order: walk them together.
  auto next_block = contact_blocks.begin();
  for (Index v : contact->contact_nodes()) {
    const bool present = next_block != contact_blocks.end() && next_block->first == v;
    std::array<double, 9> block{};
    if (present) {
      for (std::size_t k = 0; k < 9; ++k) block[k] = scale * next_block->second[k];
      ++next_block;
    }
    std::array<double, 9>& old = taken_contact[at(v)];
    if (frobenius_distance_squared(block, old) <= tolerance * tolerance * frobenius_squared(old) &&
        (present || frobenius_squared(old) == 0.0)) {
      continue;
    }
    std::array<double, 9> difference = block;
    for (std::size_t k = 0; k < 9; ++k) difference[k] -= old[k];
    add_diagonal_block(factored_full, v, difference);
    old = block;
    node_changed[at(v)] = 1;
  }
}

void ElasticSystem::State::changed_free_dofs(std::vector<Index>& dofs) const {
  dofs.clear();
  for (Index v = 0; v < body.node_count(); ++v) {
    const Index f = free_node[at(v)];
    if (node_changed[at(v)] == 0 || f == kFreeNode) continue;
    for (Index c = 0; c < 3; ++c) dofs.push_back(3 * f + c);
  }
}

void ElasticSystem::State::classify_nodes() {
  const Index nodes = body.node_count();
  motion_of_node.assign(at(nodes), kFreeNode);
  for (std::size_t m = 0; m < options.prescribed.size(); ++m) {
    const PrescribedMotion& motion = options.prescribed[m];
    if (!motion.position) throw std::invalid_argument("ElasticSystem: prescribed motion " + std::to_string(m) + " has no function");
    for (Index v : motion.nodes) {
      if (v < 0 || v >= nodes) {
        throw std::invalid_argument("ElasticSystem: prescribed node " + std::to_string(v) + " out of range 0.." +
                                    std::to_string(nodes - 1));
      }
      if (motion_of_node[at(v)] != kFreeNode && motion_of_node[at(v)] != static_cast<Index>(m)) {
        throw std::invalid_argument("ElasticSystem: node " + std::to_string(v) + " is in two prescribed motions");
      }
      motion_of_node[at(v)] = static_cast<Index>(m);
    }
  }
  free_node.assign(at(nodes), kFreeNode);
  free_nodes = 0;
  for (Index v = 0; v < nodes; ++v) {
    if (motion_of_node[at(v)] == kFreeNode) free_node[at(v)] = free_nodes++;
  }
  if (free_nodes == 0) throw std::invalid_argument("ElasticSystem: every node is prescribed; nothing to simulate");
  masses.resize(3 * at(free_nodes));
  for (Index v = 0; v < nodes; ++v) {
    if (free_node[at(v)] == kFreeNode) continue;
    for (std::size_t c = 0; c < 3; ++c) masses[3 * at(free_node[at(v)]) + c] = body.node_masses[at(v)];
  }
}

// The full pattern's entries between free DOFs, renumbered; free node order keeps node order,
// so rows stay sorted and the lower triangle stays lower.
void ElasticSystem::State::build_free_pattern() {
  const linalg::CscMatrix& lower = full_matrix.lower;
  const auto free_dof = [&](Index dof) {
    const Index node = free_node[at(dof / 3)];
    return node == kFreeNode ? kFreeNode : 3 * node + dof % 3;
  };
  linalg::CscMatrix reduced;
  reduced.rows = reduced.cols = 3 * free_nodes;
  reduced.col_ptr.assign(at(reduced.cols) + 1, 0);
  free_entry_source.clear();
  for (Index col = 0; col < lower.cols; ++col) {
    const Index free_col = free_dof(col);
    if (free_col == kFreeNode) continue;
    for (auto p = lower.col_ptr[at(col)]; p < lower.col_ptr[at(col) + 1]; ++p) {
      const Index free_row = free_dof(lower.row_idx[static_cast<std::size_t>(p)]);
      if (free_row == kFreeNode) continue;
      reduced.row_idx.push_back(free_row);
      free_entry_source.push_back(p);
    }
    reduced.col_ptr[at(free_col) + 1] = static_cast<linalg::Offset>(reduced.row_idx.size());
  }
  reduced.values.assign(reduced.row_idx.size(), 0.0);
  free_pattern.lower = std::move(reduced);
}

void ElasticSystem::State::expand(std::span<const double> x) {
  if (x.size() != masses.size()) {
    throw std::invalid_argument("ElasticSystem: expected " + std::to_string(masses.size()) + " free values, got " +
                                std::to_string(x.size()));
  }
  for (Index v = 0; v < body.node_count(); ++v) {
    const Index f = free_node[at(v)];
    if (f == kFreeNode) continue;
    for (std::size_t c = 0; c < 3; ++c) full[3 * at(v) + c] = x[3 * at(f) + c];
  }
}

double ElasticSystem::State::gravity_potential(std::span<const double> positions) const {
  double sum = 0.0;
  for (Index v = 0; v < body.node_count(); ++v) {
    if (free_node[at(v)] == kFreeNode) continue;
    sum -= body.node_masses[at(v)] * linalg::dot(options.gravity, node_position(positions, v));
  }
  return sum;
}

void ElasticSystem::State::restrict_values(std::span<const double> full_values, linalg::SymmetricCscMatrix& out) const {
  if (out.lower.values.size() != free_entry_source.size()) out.lower = free_pattern.lower;
  for (std::size_t k = 0; k < free_entry_source.size(); ++k) {
    out.lower.values[k] = full_values[static_cast<std::size_t>(free_entry_source[k])];
  }
}

void ElasticSystem::State::restrict_matrix(linalg::SymmetricCscMatrix& out) const {
  restrict_values(full_matrix.lower.values, out);
}

void ElasticSystem::State::element_hessian_pass(std::span<const double> positions, bool project) {
  linalg::parallel_chunks(body.element_count(), options.threads, [&](Index begin, Index end) {
    for (Index e = begin; e < end; ++e) {
      const std::array<Vec3, 4> x = element_positions(positions, e);
      const ElementEnergy terms = element_energy(element_materials[at(e)], rest_shapes[at(e)], x,
                                                 ElementTerms::hessian, project);
      element_hessians[at(e)] = terms.hessian;
      clamped[at(e)] = static_cast<unsigned char>(terms.clamped_eigenvalues);
      inverted[at(e)] = linalg::determinant(deformation_gradient(rest_shapes[at(e)], x)) <= 0.0 ? 1 : 0;
    }
  }, 256);
  statistics.clamped_elements =
      static_cast<Index>(std::count_if(clamped.begin(), clamped.end(), [](unsigned char count) { return count > 0; }));
  statistics.inverted_elements = static_cast<Index>(std::count(inverted.begin(), inverted.end(), 1));
}

// Greedy colouring: each element takes the lowest colour none of its nodes has yet (a 64-bit
// mask per node; tet meshes need a few dozen). Elements that find all 64 taken go last, in a
// colour of their own scattered on one thread.
void ElasticSystem::State::color_elements_by_nodes() {
  constexpr int kColors = 64;
  const Index elements = body.element_count();
  std::vector<std::uint64_t> node_colors(at(body.node_count()), 0);
  std::vector<int> color(at(elements));
  std::vector<Index> count(kColors + 1, 0);
  for (Index e = 0; e < elements; ++e) {
    std::uint64_t used = 0;
    for (Index v : body.element_nodes(e)) used |= node_colors[at(v)];
    const int c = used == ~std::uint64_t{0} ? kColors : std::countr_zero(~used);
    if (c < kColors) {
      for (Index v : body.element_nodes(e)) node_colors[at(v)] |= std::uint64_t{1} << c;
    }
    color[at(e)] = c;
    ++count[at(c)];
  }
  color_offsets.assign(kColors + 2, 0);
  for (int c = 0; c <= kColors; ++c) color_offsets[at(c) + 1] = color_offsets[at(c)] + count[at(c)];
  color_elements.resize(at(elements));
  std::vector<Index> next(color_offsets.begin(), color_offsets.end() - 1);
  for (Index e = 0; e < elements; ++e) color_elements[at(next[at(color[at(e)])]++)] = e;
}

// scatter(e) for every element of `elements`, colour by colour (offsets as color_offsets), the
// elements of a colour on all threads; the last colour (uncoloured elements) on one thread.
template <typename Scatter>
void ElasticSystem::State::scatter_colored(std::span<const Index> elements, std::span<const Index> offsets,
                                           const Scatter& scatter) const {
  const std::size_t colors = offsets.size() - 1;
  for (std::size_t c = 0; c < colors; ++c) {
    const Index begin = offsets[c];
    const Index count = offsets[c + 1] - begin;
    const int threads = c + 1 == colors ? 1 : options.threads;
    linalg::parallel_chunks(count, threads, [&](Index first, Index last) {
      for (Index k = first; k < last; ++k) scatter(elements[at(begin + k)]);
    }, 512);
  }
}

void ElasticSystem::State::assemble_full(std::span<const ElementMatrix> element_matrices) {
  std::fill(full_matrix.lower.values.begin(), full_matrix.lower.values.end(), 0.0);
  scatter_colored(color_elements, color_offsets, [&](Index e) {
    assembly.scatter_add(e, element_matrices[at(e)].data(), full_matrix.lower.values);
  });
}

// Green damping's element matrices into element_hessians: with F frozen, Ė is linear in the
// vertex velocities, Ḟ = Σₐ vₐ·gₐᵀ, and the viscous potential k·V·‖Ė‖² has the Gram matrix
//   D[(a,s),(b,t)] = k·V·((f_s·f_t)(gₐ·g_b) + (f_s·g_b)(f_t·gₐ)),   f_s = Fᵀ·e_s,
// positive semi-definite by construction.
void ElasticSystem::State::green_damping_pass(std::span<const double> positions) {
  const double coefficient = options.damping.stiffness_coefficient;
  linalg::parallel_chunks(body.element_count(), options.threads, [&](Index begin, Index end) {
    for (Index e = begin; e < end; ++e) {
      const TetRestShape& rest = rest_shapes[at(e)];
      const Mat3 f = deformation_gradient(rest, element_positions(positions, e));
      const Mat3& dm = rest.rest_shape_inverse;
      // g₁..g₃ are the rows of Dₘ⁻¹, g₀ = −(g₁ + g₂ + g₃).
      std::array<Vec3, 4> g;
      for (int a = 1; a < 4; ++a) g[at(a)] = dm.row(a - 1);
      g[0] = -(g[1] + g[2] + g[3]);
      const std::array<Vec3, 3> fs = {f.row(0), f.row(1), f.row(2)};
      const double scale = coefficient * element_materials[at(e)].lame.mu * rest.rest_volume;
      ElementMatrix& d = element_hessians[at(e)];
      for (std::size_t a = 0; a < 4; ++a) {
        for (std::size_t b = 0; b < 4; ++b) {
          for (std::size_t s = 0; s < 3; ++s) {
            for (std::size_t t = 0; t < 3; ++t) {
              d[(3 * a + s) + 12 * (3 * b + t)] =
                  scale * (linalg::dot(fs[s], fs[t]) * linalg::dot(g[a], g[b]) +
                           linalg::dot(fs[s], g[b]) * linalg::dot(fs[t], g[a]));
            }
          }
        }
      }
    }
  }, 256);
}

ElasticSystem::ElasticSystem(TetMesh rest, std::vector<DynamicsMaterial> materials, std::vector<Index> element_material,
                             ElasticSystemOptions options, std::string_view source)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  check_materials(materials);
  check_damping(options.damping);
  std::vector<Material> elastic;
  elastic.reserve(materials.size());
  for (const DynamicsMaterial& m : materials) elastic.push_back(m.elastic);
  s.body = make_elastic_body(std::move(rest), std::move(elastic), std::move(element_material), source);
  s.options = std::move(options);
  const Index elements = s.body.element_count();
  s.element_materials.resize(at(elements));
  s.rest_shapes.resize(at(elements));
  for (Index e = 0; e < elements; ++e) {
    const DynamicsMaterial& material = materials[at(s.body.element_material[at(e)])];
    s.element_materials[at(e)] = element_model(material, s.body.lame[at(e)]);
    s.rest_shapes[at(e)] = TetRestShape{s.body.rest_shape_inverse[at(e)], s.body.rest_volumes[at(e)]};
  }
  s.classify_nodes();
  s.assembly = linalg::AssemblyPattern(s.body.node_count(), 3, 4, s.body.rest.tets);
  s.full_matrix = s.assembly.zero_matrix();
  s.color_elements_by_nodes();
  s.build_free_pattern();
  s.full = s.body.rest.positions;
  s.element_energies.resize(at(elements));
  s.element_gradients.resize(at(elements));
  s.element_hessians.resize(at(elements));
  s.clamped.assign(at(elements), 0);
  s.inverted.assign(at(elements), 0);
  set_time(0.0);
}

ElasticSystem::~ElasticSystem() = default;
ElasticSystem::ElasticSystem(ElasticSystem&&) noexcept = default;
ElasticSystem& ElasticSystem::operator=(ElasticSystem&&) noexcept = default;

void ElasticSystem::set_contact(std::unique_ptr<ContactPotential> contact) { state_->contact = std::move(contact); }
const ContactPotential* ElasticSystem::contact() const { return state_->contact.get(); }

Index ElasticSystem::size() const { return static_cast<Index>(state_->masses.size()); }
std::span<const double> ElasticSystem::masses() const { return state_->masses; }

void ElasticSystem::set_time(double time) {
  State& s = *state_;
  s.time = time;
  for (const PrescribedMotion& motion : s.options.prescribed) {
    for (Index v : motion.nodes) {
      const Vec3 p = motion.position(node_position(s.body.rest.positions, v), time);
      s.full[3 * at(v)] = p.x;
      s.full[3 * at(v) + 1] = p.y;
      s.full[3 * at(v) + 2] = p.z;
    }
  }
}

void ElasticSystem::begin_solve(std::span<const double> x, std::span<const double> velocity, double time_step) {
  State& s = *state_;
  if (!s.contact) return;
  s.expand(x);
  s.full_work.resize(s.full.size());
  full_velocities(velocity, s.full_work);
  s.contact->begin_solve(s.full, s.full_work, s.time, time_step);
}

double ElasticSystem::potential(std::span<const double> x) {
  State& s = *state_;
  s.expand(x);
  linalg::parallel_chunks(s.body.element_count(), s.options.threads, [&](Index begin, Index end) {
    for (Index e = begin; e < end; ++e) {
      s.element_energies[at(e)] = element_energy(s.element_materials[at(e)], s.rest_shapes[at(e)],
                                                 s.element_positions(s.full, e), ElementTerms::energy)
                                      .energy;
    }
  }, 1024);
  double sum = s.gravity_potential(s.full);
  for (double energy : s.element_energies) sum += energy;
  if (s.contact) sum += s.contact->energy(s.full);
  return std::isfinite(sum) ? sum : std::numeric_limits<double>::infinity();
}

void ElasticSystem::potential_gradient(std::span<const double> x, std::span<double> gradient) {
  State& s = *state_;
  s.expand(x);
  linalg::parallel_chunks(s.body.element_count(), s.options.threads, [&](Index begin, Index end) {
    for (Index e = begin; e < end; ++e) {
      s.element_gradients[at(e)] = element_energy(s.element_materials[at(e)], s.rest_shapes[at(e)],
                                                  s.element_positions(s.full, e), ElementTerms::gradient)
                                       .gradient;
    }
  }, 512);
  std::vector<double>& full_gradient = s.full_work;
  full_gradient.assign(s.full.size(), 0.0);
  for (Index e = 0; e < s.body.element_count(); ++e) {
    const auto nodes = s.body.element_nodes(e);
    for (std::size_t k = 0; k < 4; ++k) {
      for (std::size_t c = 0; c < 3; ++c) full_gradient[3 * at(nodes[k]) + c] += s.element_gradients[at(e)][3 * k + c];
    }
  }
  if (s.contact) s.contact->add_gradient(s.full, full_gradient);
  for (Index v = 0; v < s.body.node_count(); ++v) {
    const Index f = s.free_node[at(v)];
    if (f == kFreeNode) continue;
    const double m = s.body.node_masses[at(v)];
    gradient[3 * at(f)] = full_gradient[3 * at(v)] - m * s.options.gravity.x;
    gradient[3 * at(f) + 1] = full_gradient[3 * at(v) + 1] - m * s.options.gravity.y;
    gradient[3 * at(f) + 2] = full_gradient[3 * at(v) + 2] - m * s.options.gravity.z;
  }
}

const linalg::SymmetricCscMatrix& ElasticSystem::pattern() const { return state_->free_pattern; }

void ElasticSystem::potential_hessian(std::span<const double> x, linalg::SymmetricCscMatrix& hessian) {
  State& s = *state_;
  s.expand(x);
  s.element_hessian_pass(s.full, true);
  s.assemble_full(s.element_hessians);
  if (s.contact) {
    s.contact->hessian_blocks(s.full, s.contact_blocks);
    s.add_contact_blocks(s.contact_blocks, 1.0);
  }
  s.restrict_matrix(hessian);
}

bool ElasticSystem::selective_potential_hessian(std::span<const double> x, double stiffness_scale,
                                                double damping_scale, double tolerance,
                                                linalg::SymmetricCscMatrix& hessian,
                                                linalg::SymmetricCscMatrix& factored, std::vector<Index>& changed_dofs) {
  State& s = *state_;
  s.expand(x);
  s.element_hessian_pass(s.full, true);
  const bool damped = damping_scale != 0.0 && s.damping_blocks.size() == s.element_hessians.size();
  linalg::parallel_chunks(s.body.element_count(), s.options.threads, [&](Index begin, Index end) {
    for (Index e = begin; e < end; ++e) {
      ElementMatrix& block = s.element_hessians[at(e)];
      for (std::size_t k = 0; k < block.size(); ++k) {
        block[k] = stiffness_scale * block[k] + (damped ? damping_scale * s.damping_blocks[at(e)][k] : 0.0);
      }
    }
  }, 1024);
  s.node_changed.assign(at(s.body.node_count()), 0);
  s.take_changed_blocks(tolerance);
  if (s.contact) {
    s.contact->hessian_blocks(s.full, s.contact_blocks);
    s.take_changed_contact_blocks(stiffness_scale, tolerance);
  }
  s.changed_free_dofs(changed_dofs);
  // The Hessian with every block new, then the one with the blocks as taken.
  s.assemble_full(s.element_hessians);
  if (s.contact) s.add_contact_blocks(s.contact_blocks, stiffness_scale);
  s.restrict_matrix(hessian);
  s.restrict_values(s.factored_full, factored);
  if (damped) {
    s.add_mass_proportional_damping(damping_scale, hessian);
    s.add_mass_proportional_damping(damping_scale, factored);
  }
  return true;
}

void ElasticSystem::potential_hessian_rate(std::span<const double> x, std::span<const double> velocity,
                                           linalg::SymmetricCscMatrix& rate) {
  State& s = *state_;
  if (!s.options.analytic_hessian_rate) {
    solvers::MechanicalSystem::potential_hessian_rate(x, velocity, rate);
    return;
  }
  s.expand(x);
  std::vector<double>& full_velocity = s.full_work;
  full_velocity.assign(s.full.size(), 0.0);
  for (Index v = 0; v < s.body.node_count(); ++v) {
    const Index f = s.free_node[at(v)];
    if (f == kFreeNode) continue;
    for (std::size_t c = 0; c < 3; ++c) full_velocity[3 * at(v) + c] = velocity[3 * at(f) + c];
  }
  linalg::parallel_chunks(s.body.element_count(), s.options.threads, [&](Index begin, Index end) {
    for (Index e = begin; e < end; ++e) {
      const TetRestShape& rest = s.rest_shapes[at(e)];
      const Mat3 f = deformation_gradient(rest, s.element_positions(s.full, e));
      // Ḟ = Σₐ vₐ·gₐᵀ: F is linear in the positions, so its rate is F of the velocities
      // without the rest shape's offset.
      const std::array<Vec3, 4> grads = shape_gradients(rest);
      const std::array<Vec3, 4> v = s.element_positions(full_velocity, e);
      Mat3 f_dot;
      for (std::size_t a = 0; a < 4; ++a) f_dot += linalg::outer(v[a], grads[a]);
      s.element_hessians[at(e)] = element_matrix(stress_derivative_rate(s.element_materials[at(e)], f, f_dot), rest);
    }
  }, 256);
  s.assemble_full(s.element_hessians);
  s.restrict_matrix(rate);
}

void ElasticSystem::reset_selective_hessian() {
  State& s = *state_;
  std::fill(s.taken.begin(), s.taken.end(), 0);
  std::fill(s.factored_full.begin(), s.factored_full.end(), 0.0);
  for (std::array<double, 9>& block : s.taken_contact) block = {};
}

bool ElasticSystem::damping_matrix(std::span<const double> x, std::span<const double> /*velocity*/,
                                   linalg::SymmetricCscMatrix& damping) {
  State& s = *state_;
  switch (s.options.damping.model) {
    case DampingModel::none:
      return false;
    case DampingModel::rayleigh: {
      s.expand(x);
      s.element_hessian_pass(s.full, true);
      for (ElementMatrix& block : s.element_hessians) {
        for (double& value : block) value *= s.options.damping.stiffness_coefficient;
      }
      break;
    }
    case DampingModel::green: {
      s.expand(x);
      s.green_damping_pass(s.full);
      break;
    }
  }
  s.damping_blocks = s.element_hessians;
  s.assemble_full(s.damping_blocks);
  s.restrict_matrix(damping);
  s.add_mass_proportional_damping(1.0, damping);
  return true;
}

std::vector<double> ElasticSystem::free_values(std::span<const double> full) const {
  const State& s = *state_;
  std::vector<double> x(s.masses.size());
  for (Index v = 0; v < s.body.node_count(); ++v) {
    const Index f = s.free_node[at(v)];
    if (f == kFreeNode) continue;
    for (std::size_t c = 0; c < 3; ++c) x[3 * at(f) + c] = full[3 * at(v) + c];
  }
  return x;
}

void ElasticSystem::full_positions(std::span<const double> x, std::span<double> full) const {
  State& s = *state_;
  s.expand(x);
  std::copy(s.full.begin(), s.full.end(), full.begin());
}

void ElasticSystem::full_velocities(std::span<const double> velocity, std::span<double> full) const {
  const State& s = *state_;
  // Prescribed nodes: a central difference of their scripted motion (exact for the linear and
  // rotating motions the scenes use, up to O(ε²)).
  constexpr double kStep = 1e-6;
  for (Index v = 0; v < s.body.node_count(); ++v) {
    const Index f = s.free_node[at(v)];
    Vec3 value;
    if (f != kFreeNode) {
      value = node_position(velocity, f);
    } else {
      const PrescribedMotion& motion = s.options.prescribed[at(s.motion_of_node[at(v)])];
      const Vec3 rest = node_position(s.body.rest.positions, v);
      value = (motion.position(rest, s.time + kStep) - motion.position(rest, s.time - kStep)) / (2.0 * kStep);
    }
    full[3 * at(v)] = value.x;
    full[3 * at(v) + 1] = value.y;
    full[3 * at(v) + 2] = value.z;
  }
}

std::vector<double> ElasticSystem::energy_densities(std::span<const double> full_positions) const {
  const State& s = *state_;
  std::vector<double> densities(at(s.body.element_count()));
  linalg::parallel_chunks(s.body.element_count(), s.options.threads, [&](Index begin, Index end) {
    for (Index e = begin; e < end; ++e) {
      densities[at(e)] = energy_density(s.element_materials[at(e)],
                                        deformation_gradient(s.rest_shapes[at(e)], s.element_positions(full_positions, e)));
    }
  }, 1024);
  return densities;
}

std::span<const unsigned char> ElasticSystem::clamped_eigenvalues() const { return state_->clamped; }

ElasticSystem::EnergyParts ElasticSystem::energy_parts(std::span<const double> x, std::span<const double> velocity) {
  State& s = *state_;
  EnergyParts parts;
  const double total = potential(x);  // leaves the element energies and s.full current
  parts.gravity = s.gravity_potential(s.full);
  if (s.contact) parts.contact = s.contact->energy(s.full);
  parts.elastic = total - parts.gravity - parts.contact;
  for (std::size_t i = 0; i < velocity.size(); ++i) parts.kinetic += 0.5 * s.masses[i] * velocity[i] * velocity[i];
  return parts;
}

const ElasticBody& ElasticSystem::body() const { return state_->body; }
double ElasticSystem::time() const { return state_->time; }
Index ElasticSystem::free_node_count() const { return state_->free_nodes; }
const ElasticSystemStatistics& ElasticSystem::statistics() const { return state_->statistics; }

}  // namespace cholsim::fem
