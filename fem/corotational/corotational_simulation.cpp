#include "fem/corotational/corotational_simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "factor/update/changed_supernodes.hpp"
#include "factor/update/update_scheduling.hpp"
#include "fem/contact/penalty_contact.hpp"
#include "fem/corotational/node_rotations.hpp"
#include "fem/corotational/selective_damping.hpp"
#include "fem/corotational/warp_canceling.hpp"
#include "fem/elements/corotational_element.hpp"
#include "linalg/assembly_pattern.hpp"
#include "linalg/parallel_loops.hpp"
#include "linalg/polar_decomposition.hpp"
#include "solvers/cg/conjugate_gradient.hpp"

namespace cholsim::fem {

namespace {

constexpr Index kDofsPerNode = 3;
constexpr std::size_t kElementDofs = 12;

/// Seconds since construction (elapsed) and since the previous lap (lap).
class Stopwatch {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }
  [[nodiscard]] double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_ = start_;
};

void check_finite_state(std::span<const double> values, const char* what) {
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (!std::isfinite(values[k])) {
      throw std::invalid_argument(std::string("CorotationalSimulation: ") + what + " of node " +
                                  std::to_string(k / 3) + " (component " + std::to_string(k % 3) +
                                  ") is not finite");
    }
  }
}

void check_options(const CorotationalOptions& options) {
  if (!(options.time_step > 0.0) || !std::isfinite(options.time_step)) {
    throw std::invalid_argument("CorotationalSimulation: time_step must be positive and finite");
  }
  if (options.mass_damping < 0.0 || options.stiffness_damping < 0.0) {
    throw std::invalid_argument("CorotationalSimulation: Rayleigh damping coefficients must be ≥ 0");
  }
  if (options.contact.stiffness < 0.0 || options.contact.friction < 0.0 || options.contact.damping_ratio < 0.0) {
    throw std::invalid_argument("CorotationalSimulation: contact stiffness, friction and damping must be ≥ 0");
  }
  if (!(options.contact.implicit_block_tolerance >= 0.0)) {
    throw std::invalid_argument("CorotationalSimulation: contact.implicit_block_tolerance must be ≥ 0");
  }
  if (options.contact.implicit && options.method == CorotationalMethod::stiffness_warping) {
    throw std::invalid_argument(
        "CorotationalSimulation: implicit contact changes the matrix, and stiffness warping never refactors it; "
        "use exact, cg or wc");
  }
  if (!(options.warp_canceling.tau >= 0.0)) {
    throw std::invalid_argument("CorotationalSimulation: warp_canceling.tau must be ≥ 0");
  }
  const WarpCancelingOptions& wc = options.warp_canceling;
  if ((wc.budget_fraction && !(*wc.budget_fraction >= 0.0)) || (wc.budget_seconds && !(*wc.budget_seconds >= 0.0))) {
    throw std::invalid_argument("CorotationalSimulation: warp_canceling budgets must be ≥ 0");
  }
  if (!(wc.damping_threshold > 0.0)) {
    throw std::invalid_argument("CorotationalSimulation: warp_canceling.damping_threshold must be positive");
  }
  for (int c = 0; c < 3; ++c) {
    if (!std::isfinite(options.gravity[c])) throw std::invalid_argument("CorotationalSimulation: gravity must be finite");
  }
  if (!(options.cg_tolerance > 0.0)) {
    throw std::invalid_argument("CorotationalSimulation: cg_tolerance must be positive");
  }
}

bool uses_direct_solver(CorotationalMethod method) { return method != CorotationalMethod::conjugate_gradient; }
bool uses_node_rotations(CorotationalMethod method) {
  return method == CorotationalMethod::stiffness_warping || method == CorotationalMethod::warp_canceling;
}

}  // namespace

struct CorotationalSimulation::State {
  ElasticBody body;
  CorotationalOptions options;
  int threads = 1;
  double time = 0.0;
  std::vector<double> positions;
  std::vector<double> velocities;
  double contact_stiffness = 0.0;
  /// The nodes inside an obstacle at this step's start (one search serves forces and blocks).
  std::vector<NodeContact> contacts;
  /// Implicit contact: the Δt²·k·nnᵀ block each node's spring has in A now (in A's frame: for
  /// warp-canceling, rotated back by the node's rotation), zero for nodes out of contact.
  std::vector<Mat3> contact_blocks;
  std::vector<Index> contact_columns;  ///< user columns the last update_contact_blocks changed

  linalg::AssemblyPattern pattern;
  linalg::SymmetricCscMatrix matrix;  ///< A = M + ΔtC + Δt²K on the pattern
  std::vector<Mat3> element_rotations;
  std::vector<double> element_forces;  ///< 12 per element: the corotated elastic force
  std::vector<Mat3> node_rotations;    ///< identity unless a warping method fits them
  std::unique_ptr<NodeRotationFitter> node_fitter;
  std::vector<double> right_hand_side;
  std::vector<double> solution;

  std::shared_ptr<const factor::Symbolic> symbolic;
  std::unique_ptr<factor::Factor> factor;
  FactorSummary summary;

  // Warp-canceling bookkeeping (seed 000 §4).
  std::vector<ElementFrame> assembled_frames;  ///< the eq. 5 frame each element has in A
  std::vector<Index> element_home;             ///< warp_canceling.hpp: element → home supernode
  std::vector<std::size_t> home_offsets;       ///< elements homed in s: home_elements[offsets[s]..]
  std::vector<Index> home_elements;
  std::vector<Index> supernode_parent;
  std::vector<double> supernode_badness;

  std::vector<double> element_errors;
  std::vector<double> element_badness;
  std::vector<std::uint8_t> element_updated;

  [[nodiscard]] Index elements() const { return body.element_count(); }
  [[nodiscard]] Index nodes() const { return body.node_count(); }
  [[nodiscard]] CorotationalMethod method() const { return options.method; }
  /// A = mass_scale·M + stiffness_scale·K̂ for C = αM + βK̂.
  [[nodiscard]] double mass_scale() const { return 1.0 + options.mass_damping * options.time_step; }
  [[nodiscard]] double stiffness_scale() const {
    return options.time_step * options.time_step + options.stiffness_damping * options.time_step;
  }
  [[nodiscard]] factor::FactorOptions factor_options(bool retain) const {
    factor::FactorOptions o;
    o.threads = options.threads;
    o.retain_update_blocks = retain;
    return o;
  }

  std::array<Mat3, 4> element_node_rotations(Index e) const {
    const auto nodes = body.element_nodes(e);
    return {node_rotations[static_cast<std::size_t>(nodes[0])], node_rotations[static_cast<std::size_t>(nodes[1])],
            node_rotations[static_cast<std::size_t>(nodes[2])], node_rotations[static_cast<std::size_t>(nodes[3])]};
  }

  /// The eq. 3 / eq. 5 frame element e gets when (re)assembled now.
  ElementFrame current_frame(Index e) const {
    const Mat3& rotation = element_rotations[static_cast<std::size_t>(e)];
    switch (method()) {
      case CorotationalMethod::exact:
      case CorotationalMethod::conjugate_gradient:
        return corotational_frame(rotation);
      case CorotationalMethod::stiffness_warping:
        return corotational_frame(Mat3::identity());  // A at rest (§3.3)
      case CorotationalMethod::warp_canceling:
        return warp_canceling_frame(rotation, element_node_rotations(e));
    }
    return corotational_frame(rotation);
  }

  // --- element kernels ------------------------------------------------------------------
  void compute_element_rotations_and_forces() {
    linalg::parallel_chunks(elements(), threads, [&](Index begin, Index end) {
      for (Index e = begin; e < end; ++e) {
        const auto k = static_cast<std::size_t>(e);
        const Mat3 deformation = deformation_gradient(body, e, positions);
        element_rotations[k] = linalg::polar_rotation(deformation);
        const ElementVector force = corotated_elastic_force(isotropic_tet(body, e), element_rotations[k], deformation);
        std::copy(force.begin(), force.end(), element_forces.begin() + static_cast<std::ptrdiff_t>(kElementDofs * k));
      }
    });
  }

  void fit_node_rotations() {
    if (options.warp_canceling.identity_node_rotations && method() == CorotationalMethod::warp_canceling) return;
    node_fitter->fit(body.rest.positions, positions, node_rotations, threads);
  }

  // --- assembly ---------------------------------------------------------------------------
  /// A from scratch with the frames in assembled_frames.
  void assemble_all() {
    std::span<double> values = matrix.lower.values;
    std::fill(values.begin(), values.end(), 0.0);
    for (Index node = 0; node < nodes(); ++node) {
      for (Index c = 0; c < kDofsPerNode; ++c) {
        const Index dof = kDofsPerNode * node + c;
        // Sorted lower storage: a column's first entry is its diagonal.
        values[static_cast<std::size_t>(matrix.lower.col_ptr[static_cast<std::size_t>(dof)])] +=
            mass_scale() * body.node_masses[static_cast<std::size_t>(node)];
      }
    }
    for (Index e = 0; e < elements(); ++e) {
      const auto k = static_cast<std::size_t>(e);
      const ElementMatrix element = rotate_element_matrix(isotropic_tet(body, e), assembled_frames[k], stiffness_scale());
      pattern.scatter_add(e, element.data(), values);
    }
  }

  /// Replaces the frames of `changed` elements by their current ones, adding the difference
  /// of their element matrices into A.
  void reassemble_elements(std::span<const Index> changed) {
    std::span<double> values = matrix.lower.values;
    for (const Index e : changed) {
      const auto k = static_cast<std::size_t>(e);
      const ElementFrame frame = current_frame(e);
      const IsotropicTet tet = isotropic_tet(body, e);
      const ElementMatrix old_matrix = rotate_element_matrix(tet, assembled_frames[k], stiffness_scale());
      ElementMatrix difference = rotate_element_matrix(tet, frame, stiffness_scale());
      for (std::size_t i = 0; i < difference.size(); ++i) difference[i] -= old_matrix[i];
      pattern.scatter_add(e, difference.data(), values);
      assembled_frames[k] = frame;
    }
  }

  /// The Δt²·k·nnᵀ block a contact's spring has in A, in A's frame (Rᵢᵀ·B·Rᵢ, as A is solved
  /// as R·A·Rᵀ).
  [[nodiscard]] Mat3 contact_block(const NodeContact& touching) const {
    const Vec3& n = touching.proximity.normal;
    const Mat3 block = (options.time_step * options.time_step * contact_stiffness) * linalg::outer(n, n);
    const Mat3& r = node_rotations[static_cast<std::size_t>(touching.node)];
    return linalg::transpose(r) * block * r;
  }

  /// Adds `block` to node i's diagonal block of A (lower storage: column 3i + a holds rows
  /// 3i + a .. 3i + 2 first, the node's own block being dense).
  void add_to_node_block(std::size_t i, const Mat3& block) {
    std::span<double> values = matrix.lower.values;
    for (int a = 0; a < 3; ++a) {
      const auto first = static_cast<std::size_t>(matrix.lower.col_ptr[3 * i + static_cast<std::size_t>(a)]);
      for (int b = a; b < 3; ++b) values[first + static_cast<std::size_t>(b - a)] += block(b, a);
    }
  }

  /// Brings A's contact blocks up to this step's `contacts` (implicit contact), listing the
  /// user columns whose entries changed in contact_columns. After assemble_all (`rebuilt`),
  /// every block is added anew.
  void update_contact_blocks(bool rebuilt) {
    contact_columns.clear();
    if (!options.contact.implicit) return;
    const double tolerance = method() == CorotationalMethod::warp_canceling ? options.contact.implicit_block_tolerance : 0.0;
    auto touching = contacts.begin();  // in node order: walked beside the nodes
    for (std::size_t i = 0; i < contact_blocks.size(); ++i) {
      if (rebuilt) contact_blocks[i] = Mat3{};
      Mat3 wanted;
      if (touching != contacts.end() && static_cast<std::size_t>(touching->node) == i) wanted = contact_block(*touching++);
      const double change = linalg::frobenius_norm(wanted - contact_blocks[i]);
      if (change == 0.0 || change <= tolerance * linalg::frobenius_norm(wanted)) continue;
      add_to_node_block(i, wanted - contact_blocks[i]);
      contact_blocks[i] = wanted;
      for (Index c = 0; c < kDofsPerNode; ++c) contact_columns.push_back(kDofsPerNode * static_cast<Index>(i) + c);
    }
  }

  void refresh_all_frames() {
    for (Index e = 0; e < elements(); ++e) assembled_frames[static_cast<std::size_t>(e)] = current_frame(e);
  }

  void require_factor_ok(const char* phase) const {
    if (!factor->ok()) {
      throw std::runtime_error(std::string("CorotationalSimulation: ") + phase + " failed at t = " +
                               std::to_string(time) + ": " + factor->status().message);
    }
  }

  // --- setup ------------------------------------------------------------------------------
  void build_warp_canceling_maps() {
    std::vector<Index> dofs(kElementDofs * static_cast<std::size_t>(elements()));
    for (Index e = 0; e < elements(); ++e) {
      const auto nodes_of = body.element_nodes(e);
      for (std::size_t a = 0; a < 4; ++a) {
        for (std::size_t c = 0; c < 3; ++c) {
          dofs[kElementDofs * static_cast<std::size_t>(e) + 3 * a + c] = kDofsPerNode * nodes_of[a] + static_cast<Index>(c);
        }
      }
    }
    const factor::ElementSupernodeMap map(*symbolic, dofs, static_cast<Index>(kElementDofs));
    element_home = element_home_supernodes(map);
    const auto supernodes = static_cast<std::size_t>(symbolic->supernode_count());
    home_offsets.assign(supernodes + 1, 0);
    for (const Index s : element_home) ++home_offsets[static_cast<std::size_t>(s) + 1];
    for (std::size_t s = 0; s < supernodes; ++s) home_offsets[s + 1] += home_offsets[s];
    home_elements.resize(element_home.size());
    std::vector<std::size_t> next(home_offsets.begin(), home_offsets.end() - 1);
    for (Index e = 0; e < elements(); ++e) home_elements[next[static_cast<std::size_t>(element_home[static_cast<std::size_t>(e)])]++] = e;
    supernode_parent = factor::supernode_parents(*symbolic);
    supernode_badness.assign(supernodes, 0.0);
  }

  std::span<const Index> elements_homed_in(Index s) const {
    return {home_elements.data() + home_offsets[static_cast<std::size_t>(s)],
            home_elements.data() + home_offsets[static_cast<std::size_t>(s) + 1]};
  }

  void set_up() {
    check_options(options);
    threads = linalg::resolve_thread_count(options.threads);
    const auto n = static_cast<std::size_t>(nodes());
    const auto m = static_cast<std::size_t>(elements());
    positions = body.rest.positions;
    velocities.assign(3 * n, 0.0);
    right_hand_side.assign(3 * n, 0.0);
    solution.assign(3 * n, 0.0);
    contact_stiffness = options.contact.stiffness > 0.0
                            ? options.contact.stiffness
                            : default_contact_stiffness(body.node_masses, options.time_step);
    pattern = linalg::AssemblyPattern(nodes(), kDofsPerNode, 4, body.rest.tets);
    matrix = pattern.zero_matrix();
    contact_blocks.assign(n, Mat3{});
    element_rotations.assign(m, Mat3::identity());
    element_forces.assign(kElementDofs * m, 0.0);
    node_rotations.assign(n, Mat3::identity());
    if (uses_node_rotations(method())) node_fitter = std::make_unique<NodeRotationFitter>(body.rest);
    assembled_frames.assign(m, corotational_frame(Mat3::identity()));
    element_errors.assign(m, 0.0);
    element_badness.assign(m, 0.0);
    element_updated.assign(m, method() == CorotationalMethod::stiffness_warping ? 0 : 1);
    assemble_all();  // at rest every rotation is the identity: all methods start exact

    if (!uses_direct_solver(method())) return;
    factor::AnalyzeOptions analyze_options;
    analyze_options.dofs_per_node = kDofsPerNode;
    symbolic = factor::analyze(matrix, analyze_options);
    factor = std::make_unique<factor::Factor>(symbolic);
    factor->factorize(matrix, factor_options(method() == CorotationalMethod::warp_canceling));
    require_factor_ok("the initial factorization");
    if (method() == CorotationalMethod::warp_canceling) {
      // The first factorization touches fresh memory, so its per-supernode times (the cost
      // model's seed, seed 000 §4.4) overstate every later update by up to 4× and a budget
      // given as a fraction of them buys far more than that fraction. A second, warm
      // factorization re-seeds the model with representative times.
      factor->factorize(matrix, factor_options(true));
      require_factor_ok("the initial factorization");
    }
    summary.full_factor_seconds = factor->stats().seconds;
    summary.supernodes = symbolic->supernode_count();
    summary.nnz_l = symbolic->stats().nnz_l;
    update_summary_bytes();
    if (method() == CorotationalMethod::warp_canceling) build_warp_canceling_maps();
  }

  void update_summary_bytes() {
    summary.factor_bytes = factor->stats().factor_bytes;
    summary.retained_update_bytes = factor->stats().retained_update_bytes;
  }

  // --- one step ---------------------------------------------------------------------------
  void estimate_errors(StepStatistics& stats) {
    const double scale = stiffness_scale();
    linalg::parallel_chunks(elements(), threads, [&](Index begin, Index end) {
      for (Index e = begin; e < end; ++e) {
        const auto k = static_cast<std::size_t>(e);
        element_errors[k] = stale_element_error(isotropic_tet(body, e), scale, element_rotations[k], assembled_frames[k],
                                                element_node_rotations(e), gather_element(body, e, velocities));
      }
    });
    supernode_badness = home_supernode_badness(element_home, element_errors, symbolic->supernode_count());
    for (std::size_t e = 0; e < element_errors.size(); ++e) {
      stats.max_element_error = std::max(stats.max_element_error, element_errors[e]);
      element_badness[e] = supernode_badness[static_cast<std::size_t>(element_home[e])];
    }
  }

  /// §4.4 selective damping of the elements left stale with error above the threshold.
  Index damp_stale_elements(std::span<const char> marked) {
    const WarpCancelingOptions& wc = options.warp_canceling;
    if (wc.damping == SelectiveDamping::none) return 0;
    Index damped = 0;
    std::vector<double> node_factor;
    if (wc.damping == SelectiveDamping::velocity_scaling) node_factor.assign(static_cast<std::size_t>(nodes()), 1.0);
    std::vector<Index> group;
    std::vector<Index> stamp(static_cast<std::size_t>(nodes()), -1);
    for (Index s = 0; s < symbolic->supernode_count(); ++s) {
      const auto sk = static_cast<std::size_t>(s);
      if (marked[sk] || !(supernode_badness[sk] > wc.damping_threshold)) continue;
      group.clear();
      for (const Index e : elements_homed_in(s)) {
        const double error = element_errors[static_cast<std::size_t>(e)];
        if (!(error > wc.damping_threshold)) continue;
        ++damped;
        for (const Index node : body.element_nodes(e)) {
          const auto nk = static_cast<std::size_t>(node);
          if (wc.damping == SelectiveDamping::velocity_scaling) {
            // The factor shrinks as the error grows (§4.4); shared nodes take the strongest.
            node_factor[nk] = std::min(node_factor[nk], wc.damping_threshold / error);
          } else if (stamp[nk] != s) {
            stamp[nk] = s;
            group.push_back(node);
          }
        }
      }
      if (!group.empty()) {
        damp_toward_rigid_motion(group, 1.0 - wc.damping_threshold / supernode_badness[sk], body.node_masses,
                                 positions, velocities);
      }
    }
    if (!node_factor.empty()) scale_node_velocities(node_factor, velocities);
    return damped;
  }

  void update_warp_canceling(StepStatistics& stats, Stopwatch& watch) {
    estimate_errors(stats);
    const factor::UpdateSchedule schedule =
        schedule_updates(supernode_parent, supernode_badness, factor->scheduling_costs(), options.warp_canceling);
    std::vector<Index> changed_elements;
    std::vector<Index> changed_supernodes;
    std::fill(element_updated.begin(), element_updated.end(), 0);
    for (Index s = 0; s < symbolic->supernode_count(); ++s) {
      if (!schedule.marked[static_cast<std::size_t>(s)]) continue;
      changed_supernodes.push_back(s);
      for (const Index e : elements_homed_in(s)) {
        changed_elements.push_back(e);
        element_updated[static_cast<std::size_t>(e)] = 1;
      }
    }
    stats.damped_elements = damp_stale_elements(schedule.marked);
    stats.timings.error_estimation = watch.lap();

    stats.updated_elements = static_cast<Index>(changed_elements.size());
    // Rebuilding A costs less than a difference update once a quarter of it changes.
    const bool rebuild = 4 * changed_elements.size() > static_cast<std::size_t>(elements());
    if (rebuild) {
      for (const Index e : changed_elements) assembled_frames[static_cast<std::size_t>(e)] = current_frame(e);
      assemble_all();
    } else {
      reassemble_elements(changed_elements);
    }
    update_contact_blocks(rebuild);
    if (!contact_columns.empty()) {
      const std::vector<char> touched = factor::ChangedEntries::columns(contact_columns).marked_supernodes(*symbolic);
      for (Index s = 0; s < symbolic->supernode_count(); ++s) {
        if (touched[static_cast<std::size_t>(s)] && !schedule.marked[static_cast<std::size_t>(s)]) changed_supernodes.push_back(s);
      }
    }
    stats.timings.matrix_update = watch.lap();
    if (changed_supernodes.empty()) return;
    factor->refactorize(factor::ChangedEntries::supernodes(std::move(changed_supernodes)), matrix,
                        factor_options(true));
    require_factor_ok("the incremental refactorization");
    stats.timings.factor_update = watch.lap();
    stats.updated_supernodes = factor->stats().recomputed_supernodes;
    const double full_flops = symbolic->stats().flops;
    stats.recomputed_flop_fraction = full_flops > 0.0 ? factor->stats().recomputed_flops / full_flops : 0.0;
  }

  void update_exact_matrix(StepStatistics& stats, Stopwatch& watch) {
    refresh_all_frames();
    assemble_all();
    update_contact_blocks(true);
    stats.updated_elements = elements();
    stats.timings.matrix_update = watch.lap();
    if (method() != CorotationalMethod::exact) return;
    factor->factorize(matrix, factor_options(false));
    require_factor_ok("the factorization");
    stats.timings.factor_update = watch.lap();
    stats.updated_supernodes = symbolic->supernode_count();
    stats.recomputed_flop_fraction = 1.0;
  }

  /// b = M·v + Δt·(f_ext + f_els) of eq. 2; contact forces from the step's start state.
  void assemble_right_hand_side(StepStatistics& stats, Stopwatch& watch) {
    std::vector<double>& b = right_hand_side;
    std::fill(b.begin(), b.end(), 0.0);
    for (Index e = 0; e < elements(); ++e) {
      const auto nodes_of = body.element_nodes(e);
      const double* force = element_forces.data() + kElementDofs * static_cast<std::size_t>(e);
      for (std::size_t a = 0; a < 4; ++a) {
        for (std::size_t c = 0; c < 3; ++c) b[3 * static_cast<std::size_t>(nodes_of[a]) + c] += force[3 * a + c];
      }
    }
    stats.timings.right_hand_side = watch.lap();
    add_penalty_contact_forces(contacts, options.contact, contact_stiffness, options.time_step, body.node_masses,
                               velocities, b);
    stats.timings.collisions += watch.lap();
    const double dt = options.time_step;
    const Vec3 g = options.gravity;
    for (std::size_t i = 0; i < static_cast<std::size_t>(nodes()); ++i) {
      const double m = body.node_masses[i];
      for (std::size_t c = 0; c < 3; ++c) {
        b[3 * i + c] = m * velocities[3 * i + c] + dt * (b[3 * i + c] + m * g[static_cast<int>(c)]);
      }
    }
    stats.timings.right_hand_side += watch.lap();
  }

  void rotate_nodes(std::span<double> values, bool transpose_rotation) const {
    for (std::size_t i = 0; i < static_cast<std::size_t>(nodes()); ++i) {
      const Vec3 v{values[3 * i], values[3 * i + 1], values[3 * i + 2]};
      const Vec3 r = transpose_rotation ? linalg::transpose(node_rotations[i]) * v : node_rotations[i] * v;
      values[3 * i] = r.x;
      values[3 * i + 1] = r.y;
      values[3 * i + 2] = r.z;
    }
  }

  void solve(StepStatistics& stats) {
    // The direct methods solve in place; CG starts from the last velocity (a warm start).
    solution = method() == CorotationalMethod::conjugate_gradient ? velocities : right_hand_side;
    switch (method()) {
      case CorotationalMethod::exact:
        factor->solve(solution);
        break;
      case CorotationalMethod::conjugate_gradient: {
        solvers::ConjugateGradientOptions cg;
        cg.relative_tolerance = options.cg_tolerance;
        cg.max_iterations = options.cg_max_iterations;
        const auto result = solvers::conjugate_gradient(solvers::symmetric_operator(matrix),
                                                        solvers::jacobi_preconditioner(matrix), right_hand_side,
                                                        solution, cg);
        stats.cg_iterations = result.iterations;
        stats.cg_converged = result.converged;
        break;
      }
      case CorotationalMethod::stiffness_warping:
      case CorotationalMethod::warp_canceling:
        // Eq. 4: R·A·Rᵀ·v = b  ⇔  v = R·A⁻¹·(Rᵀ·b).
        rotate_nodes(solution, true);
        factor->solve(solution);
        rotate_nodes(solution, false);
        break;
    }
  }

  StepStatistics step() {
    StepStatistics stats;
    Stopwatch watch;
    find_contacts(options.obstacles, time, positions, contacts);  // the step's start state
    stats.contact_nodes = static_cast<Index>(contacts.size());
    stats.timings.collisions = watch.lap();
    compute_element_rotations_and_forces();
    stats.timings.element_rotations = watch.lap();
    if (uses_node_rotations(method())) fit_node_rotations();
    stats.timings.node_rotations = watch.lap();

    switch (method()) {
      case CorotationalMethod::exact:
      case CorotationalMethod::conjugate_gradient:
        update_exact_matrix(stats, watch);
        break;
      case CorotationalMethod::stiffness_warping:
        break;
      case CorotationalMethod::warp_canceling:
        update_warp_canceling(stats, watch);
        break;
    }
    assemble_right_hand_side(stats, watch);
    solve(stats);
    check_finite_state(solution, "the new velocity");
    velocities = solution;
    for (std::size_t k = 0; k < positions.size(); ++k) positions[k] += options.time_step * velocities[k];
    time += options.time_step;
    stats.timings.solve = watch.lap();
    stats.timings.total = watch.elapsed();
    return stats;
  }

  /// After set_state the matrix of warp-canceling corotation is brought up to date with the
  /// new pose (the §4.2 error only sees velocities, so a pose change at rest would go unseen).
  void resynchronize_matrix() {
    if (method() != CorotationalMethod::warp_canceling) return;
    compute_element_rotations_and_forces();
    fit_node_rotations();
    refresh_all_frames();
    assemble_all();
    find_contacts(options.obstacles, time, positions, contacts);
    update_contact_blocks(true);
    factor->refactorize(factor::ChangedEntries::all(), matrix, factor_options(true));
    require_factor_ok("the refactorization after set_state");
    std::fill(element_updated.begin(), element_updated.end(), 1);
  }
};

CorotationalSimulation::CorotationalSimulation(ElasticBody body, CorotationalOptions options)
    : state_(std::make_unique<State>()) {
  state_->body = std::move(body);
  state_->options = std::move(options);
  state_->set_up();
}

CorotationalSimulation::~CorotationalSimulation() = default;
CorotationalSimulation::CorotationalSimulation(CorotationalSimulation&&) noexcept = default;
CorotationalSimulation& CorotationalSimulation::operator=(CorotationalSimulation&&) noexcept = default;

StepTimings& StepTimings::operator+=(const StepTimings& other) {
  element_rotations += other.element_rotations;
  node_rotations += other.node_rotations;
  error_estimation += other.error_estimation;
  matrix_update += other.matrix_update;
  factor_update += other.factor_update;
  right_hand_side += other.right_hand_side;
  solve += other.solve;
  collisions += other.collisions;
  total += other.total;
  return *this;
}

StepStatistics& StepStatistics::operator+=(const StepStatistics& other) {
  timings += other.timings;
  updated_elements += other.updated_elements;
  updated_supernodes += other.updated_supernodes;
  recomputed_flop_fraction += other.recomputed_flop_fraction;
  cg_iterations += other.cg_iterations;
  cg_converged = cg_converged && other.cg_converged;
  max_element_error = std::max(max_element_error, other.max_element_error);
  damped_elements += other.damped_elements;
  contact_nodes = std::max(contact_nodes, other.contact_nodes);
  return *this;
}

StepStatistics CorotationalSimulation::step() { return state_->step(); }

void CorotationalSimulation::set_state(std::span<const double> positions, std::span<const double> velocities) {
  const std::size_t expected = 3 * static_cast<std::size_t>(state_->nodes());
  if (positions.size() != expected || velocities.size() != expected) {
    throw std::invalid_argument("CorotationalSimulation::set_state: expected " + std::to_string(expected) +
                                " positions and velocities, got " + std::to_string(positions.size()) + " and " +
                                std::to_string(velocities.size()));
  }
  check_finite_state(positions, "position");
  check_finite_state(velocities, "velocity");
  state_->positions.assign(positions.begin(), positions.end());
  state_->velocities.assign(velocities.begin(), velocities.end());
  state_->resynchronize_matrix();
}

double CorotationalSimulation::time() const { return state_->time; }
std::span<const double> CorotationalSimulation::positions() const { return state_->positions; }
std::span<const double> CorotationalSimulation::velocities() const { return state_->velocities; }
std::span<const double> CorotationalSimulation::element_errors() const { return state_->element_errors; }
std::span<const double> CorotationalSimulation::element_badness() const { return state_->element_badness; }
std::span<const std::uint8_t> CorotationalSimulation::element_updated() const { return state_->element_updated; }
const ElasticBody& CorotationalSimulation::body() const { return state_->body; }
const CorotationalOptions& CorotationalSimulation::options() const { return state_->options; }

FactorSummary CorotationalSimulation::factor_summary() const {
  if (state_->factor) state_->update_summary_bytes();
  return state_->summary;
}

}  // namespace cholsim::fem
