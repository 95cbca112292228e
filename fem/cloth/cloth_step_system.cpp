#include "fem/cloth/cloth_step_system.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "fem/cloth/eol_mapping.hpp"
#include "fem/cloth/membrane.hpp"

namespace cholsim::fem::cloth {

namespace {

constexpr int kMaxElementDofs = 20;  // a hinge: 4 vertices × (3 Lagrangian + 2 Eulerian)

// The generalized matrix of one element (a triangle or a hinge) over its vertices' DOFs: the
// three Lagrangian DOFs of every vertex, then the two Eulerian DOFs of each EOL vertex.
class ElementMatrix {
 public:
  void reset(std::span<const Index> vertices, const ClothDofs& dofs) {
    size_ = 0;
    for (std::size_t k = 0; k < vertices.size(); ++k) {
      lagrangian_[k] = size_;
      for (int c = 0; c < 3; ++c) global_[static_cast<std::size_t>(size_++)] = ClothDofs::lagrangian_offset(vertices[k]) + c;
    }
    for (std::size_t k = 0; k < vertices.size(); ++k) {
      const Index offset = dofs.eulerian_offset[static_cast<std::size_t>(vertices[k])];
      eulerian_[k] = offset < 0 ? -1 : size_;
      for (int c = 0; offset >= 0 && c < 2; ++c) global_[static_cast<std::size_t>(size_++)] = offset + c;
    }
    std::fill_n(values_.begin(), size_ * size_, 0.0);
  }

  /// Adds the world block (i, j) — local vertices — mapped by eq. 2.10 with F_i and F_j.
  void add_block(int i, int j, const Mat3& block, const Mat32& f_i, const Mat32& f_j) {
    const int rows = eulerian_[static_cast<std::size_t>(i)] < 0 ? 3 : 5;
    const int cols = eulerian_[static_cast<std::size_t>(j)] < 0 ? 3 : 5;
    if (rows == 3 && cols == 3) {  // both Lagrangian: the block itself, no mapping
      for (int c = 0; c < 3; ++c) {
        for (int r = 0; r < 3; ++r) at(local_dof(i, r), local_dof(j, c)) += block(r, c);
      }
      return;
    }
    const GeneralizedBlock mapped = map_stiffness_block(block, f_i, f_j);
    for (int c = 0; c < cols; ++c) {
      for (int r = 0; r < rows; ++r) at(local_dof(i, r), local_dof(j, c)) += mapped[static_cast<std::size_t>(5 * c + r)];
    }
  }

  /// Passes every entry that falls in the global lower triangle to sink(row, col, value), in an
  /// order that depends only on the element's vertices and their EOL flags.
  template <typename Sink>
  void emit_lower(Sink& sink) const {
    for (int c = 0; c < size_; ++c) {
      const Index col = global_[static_cast<std::size_t>(c)];
      for (int r = 0; r < size_; ++r) {
        const Index row = global_[static_cast<std::size_t>(r)];
        if (row >= col) sink(row, col, values_[static_cast<std::size_t>(r + c * size_)]);
      }
    }
  }

 private:
  // Local row of component `component` (0..2 for x, 3..4 for X) of local vertex k.
  [[nodiscard]] int local_dof(int k, int component) const {
    return component < 3 ? lagrangian_[static_cast<std::size_t>(k)] + component
                         : eulerian_[static_cast<std::size_t>(k)] + component - 3;
  }
  double& at(int row, int col) { return values_[static_cast<std::size_t>(row + col * size_)]; }

  int size_ = 0;
  std::array<Index, kMaxElementDofs> global_{};
  std::array<int, 4> lagrangian_{};
  std::array<int, 4> eulerian_{};
  std::array<double, kMaxElementDofs * kMaxElementDofs> values_{};
};

// What every element of one assembly reads.
struct StepInputs {
  const ClothMesh& cloth;
  const ClothDofs& dofs;
  const std::vector<Mat32>& vertex_gradients;
  double time_step;
  double density;
  MassModel mass_model;
  MembraneLame lame;
  double bending;
};

void require_size(std::size_t given, std::size_t expected, const char* what) {
  if (given != expected) {
    throw std::invalid_argument("ClothStepAssembler: " + std::string(what) + " has " + std::to_string(given) +
                                " values, expected " + std::to_string(expected));
  }
}

void require_valid_input(const ClothMesh& cloth, const ClothMaterial& material, const ClothStepOptions& options) {
  const auto n = static_cast<std::size_t>(cloth.vertex_count());
  require_size(cloth.positions.size(), 3 * n, "positions");
  require_size(cloth.velocities.size(), 3 * n, "velocities");
  require_size(cloth.material_velocities.size(), 2 * n, "material velocities");
  require_size(cloth.eulerian.size(), n, "Eulerian flags");
  if (cloth.triangles.size() % 3 != 0) {
    throw std::invalid_argument("ClothStepAssembler: the triangle list has " + std::to_string(cloth.triangles.size()) +
                                " vertex indices, expected a multiple of 3");
  }
  if (!options.external_forces.empty()) require_size(options.external_forces.size(), 3 * n, "external forces");
  if (!(options.time_step > 0.0) || !std::isfinite(options.time_step)) {
    throw std::invalid_argument("ClothStepAssembler: time step " + std::to_string(options.time_step) +
                                ", expected a positive finite value");
  }
  if (!(material.density > 0.0) || !std::isfinite(material.density) || !(material.bending >= 0.0)) {
    throw std::invalid_argument("ClothStepAssembler: density " + std::to_string(material.density) +
                                " and bending stiffness " + std::to_string(material.bending) +
                                ", expected density > 0 and bending >= 0");
  }
}

// ρA m_ij ẋʷ_j summed over j: the world momentum of triangle t's mass at corner i, with
// ẋʷ = ẋ − F_t Ẋ (eq. 2.2) for EOL corners. Adds (M q̇) of the triangle — rows x_i and, for EOL
// corners, −F_tᵀ of it on rows X_i (eq. 2.8 = ∫ρ JᵀJ dA) — to `momentum`, and returns ½ q̇ᵀ M q̇.
double add_triangle_momentum(const StepInputs& in, const std::array<Index, 3>& v, double area, const Mat32& f,
                             std::vector<double>& momentum) {
  std::array<Vec3, 3> world_velocities;
  for (std::size_t k = 0; k < 3; ++k) world_velocities[k] = vertex_world_velocity(in.cloth, v[k], f);
  double kinetic = 0.0;
  for (int i = 0; i < 3; ++i) {
    Vec3 p;
    for (int j = 0; j < 3; ++j) {
      p += in.density * area * inertia_weight(in.mass_model, i, j) * world_velocities[static_cast<std::size_t>(j)];
    }
    const auto vertex = static_cast<std::size_t>(v[static_cast<std::size_t>(i)]);
    const GeneralizedForce mapped = map_force(p, f);
    for (int c = 0; c < 3; ++c) momentum[3 * vertex + static_cast<std::size_t>(c)] += mapped.lagrangian[c];
    const Index eulerian = in.dofs.eulerian_offset[vertex];
    if (eulerian >= 0) {
      momentum[static_cast<std::size_t>(eulerian)] += mapped.eulerian.u;
      momentum[static_cast<std::size_t>(eulerian) + 1] += mapped.eulerian.v;
    }
    kinetic += 0.5 * dot(world_velocities[static_cast<std::size_t>(i)], p);
  }
  return kinetic;
}

// Triangle t: its inertia (eq. 2.8, the triangle's F) and −h² times its membrane stiffness
// (eq. 2.10, the vertices' F) into the matrix; membrane forces into `world_forces`.
template <typename Sink>
void add_triangle(const StepInputs& in, Index t, ElementMatrix& element, std::vector<Vec3>& world_forces,
                  ClothStepSystem& system, Sink& sink) {
  const Index* corners = &in.cloth.triangles[3 * static_cast<std::size_t>(t)];
  const std::array<Index, 3> v{corners[0], corners[1], corners[2]};
  const TriangleShape shape = triangle_shape(triangle_material(in.cloth, t));
  const std::array<Vec3, 3> x = triangle_positions(in.cloth, t);
  const Mat32 f = triangle_deformation_gradient(shape, x);
  const MembraneElement membrane = membrane_element(shape, x, in.lame, membrane_rotation(f));
  system.membrane_energy += membrane.energy;
  system.kinetic_energy += add_triangle_momentum(in, v, shape.area, f, system.rhs);

  const double h2 = in.time_step * in.time_step;
  element.reset(v, in.dofs);
  for (int i = 0; i < 3; ++i) {
    const Mat32& f_i = in.vertex_gradients[static_cast<std::size_t>(v[static_cast<std::size_t>(i)])];
    for (int j = 0; j < 3; ++j) {
      const Mat32& f_j = in.vertex_gradients[static_cast<std::size_t>(v[static_cast<std::size_t>(j)])];
      const double mass = in.density * shape.area * inertia_weight(in.mass_model, i, j);
      element.add_block(i, j, mass * Mat3::identity(), f, f);
      element.add_block(i, j, -h2 * membrane.stiffness[static_cast<std::size_t>(3 * i + j)], f_i, f_j);
    }
    world_forces[static_cast<std::size_t>(v[static_cast<std::size_t>(i)])] += membrane.forces[static_cast<std::size_t>(i)];
  }
  element.emit_lower(sink);
}

// A hinge: −h² times its bending stiffness (eq. 2.10) into the matrix, its forces into `world_forces`.
template <typename Sink>
void add_hinge(const StepInputs& in, const BendingHinge& hinge, ElementMatrix& element,
               std::vector<Vec3>& world_forces, ClothStepSystem& system, Sink& sink) {
  std::array<Vec2, 4> material;
  std::array<Vec3, 4> x;
  for (std::size_t k = 0; k < 4; ++k) {
    material[k] = material_point(in.cloth, hinge.vertices[k]);
    x[k] = in.cloth.position(hinge.vertices[k]);
  }
  const BendingElement bending = bending_element(hinge_weights(material), x, in.bending);
  system.bending_energy += bending.energy;

  const double h2 = in.time_step * in.time_step;
  element.reset(hinge.vertices, in.dofs);
  for (int i = 0; i < 4; ++i) {
    const auto vi = static_cast<std::size_t>(hinge.vertices[static_cast<std::size_t>(i)]);
    for (int j = 0; j < 4; ++j) {
      const auto vj = static_cast<std::size_t>(hinge.vertices[static_cast<std::size_t>(j)]);
      const double coupling = bending.coupling[static_cast<std::size_t>(4 * i + j)];
      element.add_block(i, j, (-h2 * coupling) * Mat3::identity(), in.vertex_gradients[vi], in.vertex_gradients[vj]);
    }
    world_forces[vi] += bending.forces[static_cast<std::size_t>(i)];
  }
  element.emit_lower(sink);
}

// Gravity m_v g and the external forces into `world_forces`; the gravity potential into `system`.
void add_body_forces(const StepInputs& in, const ClothStepOptions& options, std::vector<Vec3>& world_forces,
                     ClothStepSystem& system) {
  const std::vector<double> masses = vertex_masses(in.cloth, in.density);
  for (Index v = 0; v < in.cloth.vertex_count(); ++v) {
    const auto vertex = static_cast<std::size_t>(v);
    world_forces[vertex] += masses[vertex] * options.gravity;
    system.gravity_energy -= masses[vertex] * dot(options.gravity, in.cloth.position(v));
    if (!options.external_forces.empty()) {
      world_forces[vertex] += Vec3{options.external_forces[3 * vertex], options.external_forces[3 * vertex + 1],
                                   options.external_forces[3 * vertex + 2]};
    }
  }
}

// f = the world forces mapped by eq. 2.9 with each vertex's F; f̃ = M q̇ + h f.
void map_forces(const StepInputs& in, const std::vector<Vec3>& world_forces, ClothStepSystem& system) {
  system.forces.assign(static_cast<std::size_t>(in.dofs.size), 0.0);
  for (std::size_t v = 0; v < world_forces.size(); ++v) {
    const GeneralizedForce mapped = map_force(world_forces[v], in.vertex_gradients[v]);
    for (std::size_t c = 0; c < 3; ++c) system.forces[3 * v + c] = mapped.lagrangian[static_cast<int>(c)];
    const Index eulerian = in.dofs.eulerian_offset[v];
    if (eulerian >= 0) {
      system.forces[static_cast<std::size_t>(eulerian)] = mapped.eulerian.u;
      system.forces[static_cast<std::size_t>(eulerian) + 1] = mapped.eulerian.v;
    }
  }
  for (std::size_t k = 0; k < system.rhs.size(); ++k) system.rhs[k] += in.time_step * system.forces[k];
}

// Per vertex, the sorted vertices it shares a triangle or a hinge with, itself included.
struct VertexNeighbors {
  std::vector<linalg::Offset> begin;  ///< size n + 1
  std::vector<Index> vertices;
};

VertexNeighbors vertex_neighbors(const ClothMesh& cloth, const std::vector<BendingHinge>& hinges) {
  const auto n = static_cast<std::size_t>(cloth.vertex_count());
  std::vector<linalg::Offset> count(n + 1, 0);
  for (const Index v : cloth.triangles) count[static_cast<std::size_t>(v) + 1] += 3;
  for (const BendingHinge& hinge : hinges) {
    for (const Index v : hinge.vertices) count[static_cast<std::size_t>(v) + 1] += 4;
  }
  std::partial_sum(count.begin(), count.end(), count.begin());
  std::vector<Index> slots(static_cast<std::size_t>(count[n]));
  std::vector<linalg::Offset> next(count.begin(), count.end() - 1);
  const auto add_element = [&](std::span<const Index> element) {
    for (const Index v : element) {
      for (const Index w : element) slots[static_cast<std::size_t>(next[static_cast<std::size_t>(v)]++)] = w;
    }
  };
  for (std::size_t t = 0; t < cloth.triangles.size(); t += 3) add_element({&cloth.triangles[t], 3});
  for (const BendingHinge& hinge : hinges) add_element(hinge.vertices);
  VertexNeighbors neighbors;
  neighbors.begin.assign(n + 1, 0);
  neighbors.vertices.reserve(slots.size() / 4);
  for (std::size_t v = 0; v < n; ++v) {
    const auto first = slots.begin() + count[v];
    const auto last = slots.begin() + count[v + 1];
    std::sort(first, last);
    neighbors.vertices.insert(neighbors.vertices.end(), first, std::unique(first, last));
    neighbors.begin[v + 1] = static_cast<linalg::Offset>(neighbors.vertices.size());
  }
  return neighbors;
}

// The lower triangle's pattern of the step matrix: every DOF of a vertex couples with every DOF
// of its neighbors (the elements' dense blocks, zeros included). Written column by column in
// row order straight from the vertex graph — sorting the half million element entries of a
// 3,000-face EOL cloth instead took a fifth of its step, its mesh changing nearly every step.
linalg::SymmetricCscMatrix step_matrix_pattern(const VertexNeighbors& neighbors, const ClothDofs& dofs) {
  linalg::CscMatrix lower;
  lower.rows = lower.cols = dofs.size;
  lower.col_ptr.assign(1, 0);
  lower.row_idx.reserve(neighbors.vertices.size() * 12);
  const auto neighbors_of = [&](Index v) {
    return std::span<const Index>(neighbors.vertices.data() + neighbors.begin[static_cast<std::size_t>(v)],
                                  neighbors.vertices.data() + neighbors.begin[static_cast<std::size_t>(v) + 1]);
  };
  // The Eulerian rows at or below `from` of v's neighbors (their offsets follow vertex order).
  const auto add_eulerian_rows = [&](Index v, Index from) {
    for (const Index w : neighbors_of(v)) {
      const Index offset = dofs.eulerian_offset[static_cast<std::size_t>(w)];
      for (Index c = 0; offset >= 0 && c < 2; ++c) {
        if (offset + c >= from) lower.row_idx.push_back(offset + c);
      }
    }
  };
  for (Index v = 0; v < dofs.vertex_count; ++v) {
    for (Index c = 0; c < 3; ++c) {
      const Index column = ClothDofs::lagrangian_offset(v) + c;
      for (const Index w : neighbors_of(v)) {
        if (w < v) continue;  // above the diagonal
        for (Index r = 0; r < 3; ++r) {
          if (ClothDofs::lagrangian_offset(w) + r >= column) lower.row_idx.push_back(ClothDofs::lagrangian_offset(w) + r);
        }
      }
      add_eulerian_rows(v, column);
      lower.col_ptr.push_back(static_cast<linalg::Offset>(lower.row_idx.size()));
    }
  }
  for (Index v = 0; v < dofs.vertex_count; ++v) {
    const Index offset = dofs.eulerian_offset[static_cast<std::size_t>(v)];
    for (Index c = 0; offset >= 0 && c < 2; ++c) {
      add_eulerian_rows(v, offset + c);
      lower.col_ptr.push_back(static_cast<linalg::Offset>(lower.row_idx.size()));
    }
  }
  lower.values.assign(lower.row_idx.size(), 0.0);
  return linalg::SymmetricCscMatrix{std::move(lower)};
}

}  // namespace

// Adds element entries into the matrix's values: while the pattern is new, at the position
// found in the entry's column (and recorded); while it is reused, at the recorded position.
struct ClothStepAssembler::ElementPass {
  bool building = true;
  const linalg::CscMatrix* lower = nullptr;
  std::span<double> values;
  std::vector<linalg::Offset>* positions = nullptr;
  std::size_t next = 0;

  void operator()(Index row, Index col, double value) {
    if (building) {
      const auto begin = lower->row_idx.begin() + lower->col_ptr[static_cast<std::size_t>(col)];
      const auto end = lower->row_idx.begin() + lower->col_ptr[static_cast<std::size_t>(col) + 1];
      positions->push_back(std::lower_bound(begin, end, row) - lower->row_idx.begin());
    }
    values[static_cast<std::size_t>((*positions)[next++])] += value;
  }
};

bool ClothStepAssembler::same_mesh(const ClothMesh& cloth) const {
  return has_pattern_ && system_.dofs.vertex_count == cloth.vertex_count() && mesh_triangles_ == cloth.triangles &&
         mesh_eulerian_ == cloth.eulerian;
}

void ClothStepAssembler::rebuild_topology(const ClothMesh& cloth) {
  const Index n = cloth.vertex_count();
  for (std::size_t k = 0; k < cloth.triangles.size(); ++k) {
    if (cloth.triangles[k] < 0 || cloth.triangles[k] >= n) {
      throw std::invalid_argument("ClothStepAssembler: triangle " + std::to_string(k / 3) + " names vertex " +
                                  std::to_string(cloth.triangles[k]) + ", expected 0.." + std::to_string(n - 1));
    }
  }
  system_.dofs = ClothDofs::of(cloth);
  hinges_ = bending_hinges(cloth);
  system_.matrix = step_matrix_pattern(vertex_neighbors(cloth, hinges_), system_.dofs);
  entry_positions_.clear();
  mesh_triangles_ = cloth.triangles;
  mesh_eulerian_ = cloth.eulerian;
  has_pattern_ = false;  // until an element pass has recorded every entry's position
}

const ClothStepSystem& ClothStepAssembler::assemble(const ClothMesh& cloth, const ClothMaterial& material,
                                                    const ClothStepOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  require_valid_input(cloth, material, options);
  const bool rebuild = !same_mesh(cloth);
  if (rebuild) rebuild_topology(cloth);

  const std::vector<Mat32> vertex_gradients = vertex_deformation_gradients(cloth);
  const StepInputs in{cloth,
                      system_.dofs,
                      vertex_gradients,
                      options.time_step,
                      material.density,
                      material.lumped_mass ? MassModel::lumped : MassModel::consistent,
                      plane_stress_lame(material.youngs, material.poisson),
                      material.bending};
  system_.rhs.assign(static_cast<std::size_t>(system_.dofs.size), 0.0);
  system_.kinetic_energy = system_.membrane_energy = system_.bending_energy = system_.gravity_energy = 0.0;
  std::vector<Vec3> world_forces(static_cast<std::size_t>(cloth.vertex_count()));

  std::fill(system_.matrix.lower.values.begin(), system_.matrix.lower.values.end(), 0.0);
  ElementPass pass{rebuild, &system_.matrix.lower, system_.matrix.lower.values, &entry_positions_};
  ElementMatrix element;
  for (Index t = 0; t < cloth.triangle_count(); ++t) add_triangle(in, t, element, world_forces, system_, pass);
  for (const BendingHinge& hinge : hinges_) add_hinge(in, hinge, element, world_forces, system_, pass);
  add_body_forces(in, options, world_forces, system_);
  map_forces(in, world_forces, system_);
  has_pattern_ = true;

  system_.pattern_rebuilt = rebuild;
  system_.fill_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return system_;
}

ClothStepSystem assemble_cloth_step(const ClothMesh& cloth, const ClothMaterial& material,
                                    const ClothStepOptions& options) {
  ClothStepAssembler assembler;
  return assembler.assemble(cloth, material, options);
}

}  // namespace cholsim::fem::cloth
