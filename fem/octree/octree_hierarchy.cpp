#include "fem/octree/octree_hierarchy.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cholsim::fem::octree {

using linalg::Index;
using linalg::Mat3;
using linalg::Vec3;

struct OctreeHierarchy::Level {
  OctreeMesh mesh;
  std::unique_ptr<OctreeElasticOperator> op;
  OctreeTransfer to_coarser;                 ///< empty on the coarsest level
  std::vector<Index> coarse_element_of;      ///< this level's elements → the next level's
  std::vector<double> restriction_scratch;   ///< a residual without its held nodes (hold_nodes)
  /// This level's elements made Galerkin around the finer levels' held nodes (hold_nodes, cut),
  /// in increasing order: over a finer element with a held node or made Galerkin itself.
  std::vector<Index> galerkin_elements;
};

namespace {

double volume_ratio(const OctreeMesh& fine, Index fine_element, const OctreeMesh& coarse, Index coarse_element) {
  const double ratio = fine.element_size(fine_element) / coarse.element_size(coarse_element);
  return ratio * ratio * ratio;
}

/// A point located in `mesh` with its weights there.
EmbeddedPoint embedded_in(const OctreeMesh& mesh, const ElementPoint& where) {
  return {where.element, conforming_weights(mesh, where)};
}

/// Masses of a coarse level: the fine masses restricted with the transfer's weights (§7.3).
std::vector<double> restrict_masses(const OctreeTransfer& transfer, const OctreeMesh& coarse,
                                    std::span<const double> fine_mass, int threads) {
  std::vector<double> fine(3 * fine_mass.size(), 0.0);
  for (std::size_t node = 0; node < fine_mass.size(); ++node) fine[3 * node] = fine_mass[node];
  std::vector<double> restricted(static_cast<std::size_t>(3 * coarse.node_count()));
  transfer.restrict_to(coarse, fine, restricted, threads);
  std::vector<double> mass(static_cast<std::size_t>(coarse.node_count()));
  for (std::size_t node = 0; node < mass.size(); ++node) mass[node] = restricted[3 * node];
  return mass;
}

/// Held nodes of the next coarser level: those that some held fine node reaches through the
/// prolongation and (`cut`) no free one does: their prolonged values would all be zeroed.
std::vector<std::uint8_t> held_on_coarser(const OctreeTransfer& transfer, const OctreeMesh& coarse,
                                          std::span<const std::uint8_t> fine_held, bool cut) {
  std::vector<std::uint8_t> reached(static_cast<std::size_t>(coarse.node_count()), 0);  // bit 0 held, bit 1 free
  for (std::size_t n = 0; n < fine_held.size(); ++n) {
    const ElementNodes& nodes = coarse.conforming_nodes[static_cast<std::size_t>(transfer.coarse_element[n])];
    for (int k = 0; k < 8; ++k) {
      if (transfer.weights[n][k] != 0.0f) reached[static_cast<std::size_t>(nodes[k])] |= fine_held[n] != 0 ? 1 : 2;
    }
  }
  for (std::uint8_t& flag : reached) flag = (cut ? flag == 1 : (flag & 1) != 0) ? 1 : 0;
  return reached;
}

/// The coarse elements over the fine elements that touch a held node (`fine_held` per fine node)
/// or are themselves Galerkin (`fine_galerkin`, increasing), in increasing order.
std::vector<Index> galerkin_elements_over(const OctreeMesh& fine, std::span<const std::uint8_t> fine_held,
                                          std::span<const Index> fine_galerkin, std::span<const Index> coarse_element_of) {
  std::vector<Index> elements;
  for (Index e = 0; e < fine.element_count(); ++e) {
    const ElementNodes& nodes = fine.conforming_nodes[static_cast<std::size_t>(e)];
    const bool touches_held = std::any_of(nodes.begin(), nodes.end(), [&](Index n) {
      return fine_held[static_cast<std::size_t>(n)] != 0;
    });
    if (touches_held || std::binary_search(fine_galerkin.begin(), fine_galerkin.end(), e)) {
      elements.push_back(coarse_element_of[static_cast<std::size_t>(e)]);
    }
  }
  // coarse_element_of is non-decreasing, so the coarse elements come sorted.
  elements.erase(std::unique(elements.begin(), elements.end()), elements.end());
  return elements;
}

/// Scalar weights of the cut prolongation P̃ from coarse element c's conforming nodes to fine
/// element e's: q[b][s] for fine slot b and coarse slot s, zero rows for held fine nodes (`held`
/// per fine node; empty: none).
using SlotWeights = std::array<std::array<double, 8>, 8>;
SlotWeights cut_slot_weights(const OctreeMesh& fine, Index e, const OctreeMesh& coarse, Index c,
                             const OctreeTransfer& transfer, std::span<const std::uint8_t> held) {
  SlotWeights q{};
  const ElementNodes& coarse_nodes = coarse.conforming_nodes[static_cast<std::size_t>(c)];
  for (int b = 0; b < 8; ++b) {
    const auto n = static_cast<std::size_t>(fine.conforming_nodes[static_cast<std::size_t>(e)][b]);
    if (!held.empty() && held[n] != 0) continue;
    const ElementNodes& sources = coarse.conforming_nodes[static_cast<std::size_t>(transfer.coarse_element[n])];
    for (int k = 0; k < 8; ++k) {
      if (transfer.weights[n][k] == 0.0f) continue;
      const auto slot = std::find(coarse_nodes.begin(), coarse_nodes.end(), sources[k]);
      if (slot == coarse_nodes.end()) {
        throw std::logic_error("octree hierarchy: fine node " + std::to_string(n) + " is prolonged from outside coarse element " +
                               std::to_string(c));
      }
      q[b][slot - coarse_nodes.begin()] += transfer.weights[n][k];
    }
  }
  return q;
}

/// block += Qᵀ·K·Q with Q = q ⊗ I₃ (K and block 24×24, node-major).
void add_galerkin_product(const SlotWeights& q, const HexMatrix& k, HexMatrix& block) {
  HexMatrix kq{};  // K·Q
  for (int r = 0; r < 24; ++r) {
    for (int c = 0; c < 8; ++c) {
      for (int t = 0; t < 8; ++t) {
        if (q[c][t] == 0.0) continue;
        for (int j = 0; j < 3; ++j) kq[24 * r + 3 * t + j] += k[24 * r + 3 * c + j] * q[c][t];
      }
    }
  }
  for (int b = 0; b < 8; ++b) {
    for (int s = 0; s < 8; ++s) {
      if (q[b][s] == 0.0) continue;
      for (int i = 0; i < 3; ++i) {
        for (int col = 0; col < 24; ++col) block[24 * (3 * s + i) + col] += q[b][s] * kq[24 * (3 * b + i) + col];
      }
    }
  }
}

}  // namespace

std::vector<Lame> coarsen_lame(const OctreeMesh& fine, std::span<const Lame> fine_lame, const OctreeMesh& coarse,
                               std::span<const Index> coarse_element_of) {
  std::vector<Lame> lame(static_cast<std::size_t>(coarse.element_count()));
  for (Index e = 0; e < fine.element_count(); ++e) {
    const Index c = coarse_element_of[e];
    const double share = volume_ratio(fine, e, coarse, c);
    lame[c].mu += share * fine_lame[e].mu;
    lame[c].lambda += share * fine_lame[e].lambda;
  }
  return lame;
}

std::vector<std::uint8_t> merged_children(const OctreeMesh& fine, const OctreeMesh& coarse,
                                          std::span<const Index> coarse_element_of) {
  std::vector<std::uint8_t> children(static_cast<std::size_t>(coarse.element_count()), 0);
  for (Index e = 0; e < fine.element_count(); ++e) {
    const Index c = coarse_element_of[e];
    const double h = coarse.element_size(c);
    if (fine.element_size(e) > 0.75 * h) continue;  // the same element on both levels
    const Vec3 offset = fine.element_origin(e) - coarse.element_origin(c);
    int child = 0;
    for (int k = 0; k < 3; ++k) child |= (offset[k] > 0.25 * h ? 1 : 0) << k;
    children[c] |= static_cast<std::uint8_t>(1 << child);
  }
  return children;
}

std::vector<Mat3> coarsen_deformation_gradients(const OctreeMesh& fine, std::span<const Mat3> fine_f,
                                                const OctreeMesh& coarse, std::span<const Index> coarse_element_of,
                                                int threads) {
  // Morton order survives coarsening: the fine elements of a coarse element are consecutive
  // (Algorithm 4), so each coarse element averages its own range, in parallel.
  std::vector<Mat3> coarse_f(static_cast<std::size_t>(coarse.element_count()));
  linalg::parallel_chunks(coarse.element_count(), threads, [&](Index first, Index last) {
    auto e = static_cast<Index>(std::lower_bound(coarse_element_of.begin(), coarse_element_of.end(), first) -
                                coarse_element_of.begin());
    for (Index c = first; c < last; ++c) {
      Mat3 sum;
      double weight = 0.0;
      for (; e < fine.element_count() && coarse_element_of[e] == c; ++e) {
        const double share = volume_ratio(fine, e, coarse, c);
        sum += share * fine_f[e];
        weight += share;
      }
      coarse_f[c] = (1.0 / weight) * sum;
    }
  });
  return coarse_f;
}

OctreeHierarchy::OctreeHierarchy(const BalancedOctree& tree, const Lame& lame, double density,
                                 const OctreeLevelsOptions& options)
    : direct_coarsest_(options.direct_coarsest),
      held_coarse_nodes_(options.held_coarse_nodes),
      smoother_(options.cycle.smoother),
      threads_(options.threads) {
  auto finest = std::make_unique<Level>();
  finest->mesh = make_octree_mesh(tree, 0, threads_);
  std::vector<Lame> finest_lame(static_cast<std::size_t>(finest->mesh.element_count()), lame);
  finest->op = std::make_unique<OctreeElasticOperator>(finest->mesh, std::move(finest_lame),
                                                       lumped_masses(finest->mesh, density), threads_);
  levels_.push_back(std::move(finest));
  // A tree of depth d has levels 0 … d (level d: one element of the whole grid).
  while (level_count() < options.max_levels && level_count() <= tree.depth &&
         levels_.back()->mesh.node_count() > options.coarsest_nodes) {
    Level& fine = *levels_.back();
    auto coarse = std::make_unique<Level>();
    coarse->mesh = make_octree_mesh(tree, level_count(), threads_);
    if (coarse->mesh.node_count() >= fine.mesh.node_count()) break;  // nothing left to coarsen
    fine.to_coarser = make_transfer(fine.mesh, coarse->mesh, threads_);
    fine.coarse_element_of = coarse_elements_of(fine.mesh, coarse->mesh, threads_);
    coarse->op = std::make_unique<OctreeElasticOperator>(
        coarse->mesh, coarsen_lame(fine.mesh, fine.op->lame(), coarse->mesh, fine.coarse_element_of),
        restrict_masses(fine.to_coarser, coarse->mesh, fine.op->nodal_mass(), threads_), threads_);
    if (options.merged_coarse_elements) {
      coarse->op->set_merged_children(merged_children(fine.mesh, coarse->mesh, fine.coarse_element_of));
    }
    levels_.push_back(std::move(coarse));
  }
  build_cycle(options);
}

OctreeHierarchy::~OctreeHierarchy() = default;

void OctreeHierarchy::set_smoother_data(solvers::MultigridLevel& level, const OctreeElasticOperator& op) const {
  if (smoother_ == solvers::Smoother::block_jacobi_3x3) {
    level.block_diagonal = op.smoother_block_diagonal();
  } else {
    level.diagonal = op.smoother_diagonal();
  }
}

const OctreeMesh& OctreeHierarchy::mesh(int level) const { return levels_[level]->mesh; }
OctreeElasticOperator& OctreeHierarchy::op(int level) { return *levels_[level]->op; }
const OctreeElasticOperator& OctreeHierarchy::op(int level) const { return *levels_[level]->op; }

void OctreeHierarchy::build_cycle(const OctreeLevelsOptions& options) {
  std::vector<solvers::MultigridLevel> cycle_levels;
  for (int l = 0; l < level_count(); ++l) {
    Level* level = levels_[l].get();
    solvers::MultigridLevel entry;
    entry.unknowns = level->op->unknowns();
    entry.apply = [op = level->op.get()](std::span<const double> x, std::span<double> y) { op->apply(x, y); };
    set_smoother_data(entry, *level->op);
    if (l + 1 < level_count()) {
      const OctreeMesh* coarse = &levels_[l + 1]->mesh;
      const int threads = threads_;
      // With held nodes the transfers are P̃ = D·P·D_c and P̃ᵀ (hold_nodes). A coarse level's held
      // rows are the identity's, so a restricted residual zero there keeps its correction zero
      // there too, and D_c needs applying on restriction only.
      const OctreeElasticOperator* coarse_op = levels_[l + 1]->op.get();
      entry.restrict_to_coarser = [level, coarse, coarse_op, threads](std::span<const double> fine,
                                                                     std::span<double> coarse_values) {
        std::span<const double> free_part = fine;
        if (level->op->has_held_nodes()) {
          std::copy(fine.begin(), fine.end(), level->restriction_scratch.begin());
          level->op->zero_held(level->restriction_scratch);
          free_part = level->restriction_scratch;
        }
        level->to_coarser.restrict_to(*coarse, free_part, coarse_values, threads);
        coarse_op->zero_held(coarse_values);
      };
      entry.prolong_from_coarser = [level, coarse, threads](std::span<const double> coarse_values, std::span<double> fine) {
        level->to_coarser.prolong(*coarse, coarse_values, fine, threads);
        level->op->zero_held(fine);
      };
    }
    cycle_levels.push_back(std::move(entry));
  }
  solvers::VCycleOptions cycle_options = options.cycle;
  cycle_options.threads = threads_;
  cycle_ = std::make_unique<solvers::VCycle>(std::move(cycle_levels), cycle_options);
}

void OctreeHierarchy::hold_nodes(std::span<const Index> finest_nodes) {
  std::vector<std::uint8_t> held(static_cast<std::size_t>(mesh(0).node_count()), 0);
  for (const Index node : finest_nodes) {
    if (node < 0 || node >= mesh(0).node_count()) {
      throw std::invalid_argument("octree hierarchy: held node " + std::to_string(node) + " of " +
                                  std::to_string(mesh(0).node_count()) + " nodes");
    }
    held[static_cast<std::size_t>(node)] = 1;
  }
  const bool cut = held_coarse_nodes_ == OctreeLevelsOptions::HeldCoarseNodes::cut;
  for (int l = 0; l < level_count(); ++l) {
    Level& level = *levels_[static_cast<std::size_t>(l)];
    level.galerkin_elements.clear();
    if (l > 0) {
      const Level& fine = *levels_[static_cast<std::size_t>(l) - 1];
      if (cut) level.galerkin_elements = galerkin_elements_over(fine.mesh, held, fine.galerkin_elements, fine.coarse_element_of);
      held = held_on_coarser(fine.to_coarser, level.mesh, held, cut);
    }
    level.op->set_held_nodes(held);
    level.restriction_scratch.assign(level.op->has_held_nodes() ? static_cast<std::size_t>(level.op->unknowns()) : 0, 0.0);
  }
}

void OctreeHierarchy::correct_for_held_nodes(int l) {
  // Level l's elements over the cut are made Galerkin: G_c = Σ over c's children of
  // P̃ᵀ(K_e + C_e)P̃, a sum of positive semi-definite terms, so the level stays definite however
  // its re-discretized elements differ from PᵀAP; the correction stored is G_c − K_c.
  const Level& fine = *levels_[static_cast<std::size_t>(l) - 1];
  const OctreeElasticOperator& fine_op = *fine.op;
  const std::span<const ElementCorrection> fine_corrections = fine_op.corrections();  // by element, increasing
  const std::vector<Index>& coarse_of = fine.coarse_element_of;                         // non-decreasing (Morton order)
  std::vector<ElementCorrection> corrections;
  corrections.reserve(levels_[static_cast<std::size_t>(l)]->galerkin_elements.size());
  for (const Index c : levels_[static_cast<std::size_t>(l)]->galerkin_elements) {
    HexMatrix galerkin{};
    const auto first = std::lower_bound(coarse_of.begin(), coarse_of.end(), c);
    const auto last = std::upper_bound(first, coarse_of.end(), c);
    for (auto child = first; child != last; ++child) {
      const auto e = static_cast<Index>(child - coarse_of.begin());
      HexMatrix k = fine_op.stiffness_matrix(e);
      const auto found = std::lower_bound(fine_corrections.begin(), fine_corrections.end(), e,
                                          [](const ElementCorrection& a, Index element) { return a.element < element; });
      if (found != fine_corrections.end() && found->element == e) {
        for (std::size_t i = 0; i < k.size(); ++i) k[i] += found->matrix[i];
      }
      add_galerkin_product(cut_slot_weights(fine.mesh, e, mesh(l), c, fine.to_coarser, fine_op.held_nodes()), k, galerkin);
    }
    const HexMatrix own = op(l).stiffness_matrix(c);
    for (std::size_t i = 0; i < galerkin.size(); ++i) galerkin[i] -= own[i];
    corrections.push_back({c, galerkin});
  }
  op(l).set_corrections(std::move(corrections));
}

void OctreeHierarchy::embed_points(std::span<const Vec3> rest_points) {
  std::vector<ElementPoint> points;
  points.reserve(rest_points.size());
  for (std::size_t p = 0; p < rest_points.size(); ++p) {
    const std::optional<ElementPoint> where = locate_point(mesh(0), rest_points[p]);
    if (!where) {
      throw std::invalid_argument("embedded point " + std::to_string(p) + " at (" + std::to_string(rest_points[p].x) +
                                  ", " + std::to_string(rest_points[p].y) + ", " + std::to_string(rest_points[p].z) +
                                  ") lies outside the octree");
    }
    points.push_back(*where);
  }
  points_ = std::move(points);
}

const ElementPoint& OctreeHierarchy::located(Index p) const {
  if (p < 0 || p >= embedded_point_count()) {
    throw std::invalid_argument("octree hierarchy: point " + std::to_string(p) + " of " +
                                std::to_string(embedded_point_count()) + " embedded points");
  }
  return points_[static_cast<std::size_t>(p)];
}

void OctreeHierarchy::locate_springs(std::span<const EmbeddedSpring> springs) {
  spring_where_.clear();
  for (const EmbeddedSpring& spring : springs) spring_where_.push_back(located(spring.point));
}

void OctreeHierarchy::place_springs(int level, std::span<const EmbeddedSpring> springs) {
  spring_at_.clear();
  for (const ElementPoint& where : spring_where_) spring_at_.push_back(embedded_in(mesh(level), where));
  op(level).set_springs(springs, spring_at_);
}

void OctreeHierarchy::move_to_coarser(int level, std::span<ElementPoint> where) const {
  const Level& fine = *levels_[static_cast<std::size_t>(level)];
  const OctreeMesh& coarse = levels_[static_cast<std::size_t>(level) + 1]->mesh;
  for (ElementPoint& point : where) {
    // The coarse element holds the fine one (§7.1): the same grid point, in its own ξ.
    const Octant& f = fine.mesh.elements[static_cast<std::size_t>(point.element)];
    const Index element = fine.coarse_element_of[static_cast<std::size_t>(point.element)];
    const Octant& c = coarse.elements[static_cast<std::size_t>(element)];
    const double fine_size = octant_size(f), coarse_size = octant_size(c);
    const auto local = [&](double xi, std::uint16_t fine_anchor, std::uint16_t coarse_anchor) {
      return std::clamp((fine_anchor + fine_size * xi - coarse_anchor) / coarse_size, 0.0, 1.0);
    };
    point = {element, Vec3{local(point.xi.x, f.x, c.x), local(point.xi.y, f.y, c.y), local(point.xi.z, f.z, c.z)}};
  }
}

EmbeddedPoint OctreeHierarchy::embedded_point(Index p, int level) const {
  if (level < 0 || level >= level_count()) throw std::out_of_range("octree hierarchy: no level " + std::to_string(level));
  ElementPoint where = located(p);
  for (int l = 0; l < level; ++l) move_to_coarser(l, std::span(&where, 1));
  return embedded_in(mesh(level), where);
}

Vec3 OctreeHierarchy::point_position(Index p, std::span<const double> x) const {
  return op(0).point_position(embedded_in(mesh(0), located(p)), x);
}

void OctreeHierarchy::set_finest_springs(std::span<const EmbeddedSpring> springs) {
  locate_springs(springs);
  place_springs(0, springs);
}

void OctreeHierarchy::prepare(std::span<const EmbeddedSpring> springs, double mass_scale) {
  locate_springs(springs);
  for (int l = 0; l < level_count(); ++l) {
    Level& level = *levels_[l];
    if (l > 0) {
      const Level& fine = *levels_[l - 1];
      level.op->linearize(coarsen_deformation_gradients(fine.mesh, fine.op->deformation_gradients(), level.mesh,
                                                        fine.coarse_element_of, threads_));
      move_to_coarser(l - 1, spring_where_);
    }
    place_springs(l, springs);
    level.op->set_mass_scale(mass_scale);
    if (l > 0) correct_for_held_nodes(l);
    set_smoother_data(cycle_->level(l), *level.op);
  }
  cycle_->check_levels();  // the new diagonals must still be positive (the cycle's own checks)
  if (!direct_coarsest_) return;
  const linalg::SymmetricCscMatrix& coarsest = levels_.back()->op->assemble();
  if (coarse_solver_) {
    coarse_solver_->refactor(coarsest);
  } else {
    coarse_solver_ = std::make_unique<solvers::DirectCoarseSolver>(coarsest, threads_, 3);
    cycle_->set_coarse_solver([solver = coarse_solver_.get()](std::span<const double> b, std::span<double> x) {
      solver->solve(b, x);
    });
  }
}

std::size_t OctreeHierarchy::memory_bytes() const {
  std::size_t bytes = cycle_->memory_bytes() + coarsest_factor_bytes() + points_.capacity() * sizeof(ElementPoint) +
                      spring_where_.capacity() * sizeof(ElementPoint) + spring_at_.capacity() * sizeof(EmbeddedPoint);
  for (const auto& level : levels_) {
    bytes += level->mesh.memory_bytes() + level->op->memory_bytes() + level->to_coarser.memory_bytes() +
             level->coarse_element_of.capacity() * sizeof(Index) + level->restriction_scratch.capacity() * sizeof(double) +
             level->galerkin_elements.capacity() * sizeof(Index);
  }
  return bytes;
}

std::size_t OctreeHierarchy::coarsest_factor_bytes() const { return coarse_solver_ ? coarse_solver_->factor_bytes() : 0; }

}  // namespace cholsim::fem::octree
