// Projective dynamics with localized collisions (seed 004) against the alternatives for the
// polluted global step, on the elbow (self-contact, N_c ≈ 3.5 %) and lips (N_c ≈ 1.5 %)
// scenes at 50K–650K tets. Everything is measured in this process on this machine:
//   P1  solver part of one inner iteration (ΔS + dense potrf + potrs, 3 RHS) against a full
//       sparse refactorization + solve of K + WᵀCW;
//   P2  the whole inner iteration (detection, local step on E_c, right-hand side, Schur) against
//       the same full refactorization + solve;
//   P3  an exact solve by the Schur path (forward + inner + backward) against Jacobi-PCG to a
//       relative residual of 1e-8 and against 100 Jacobi-PCG iterations, both warm-started from
//       the previous frame's positions (the paper's 2–4× is its inner loop against 100 PCG
//       iterations, GPU against GPU);
//   P4  the same exact solve against CG preconditioned by the collision-free factor of K (to
//       1e-8) and against CHOLMOD's update of that factor by the active springs (rank p) + solve;
//   P5  a frame with collisions (1 outer + J inner) against the same frame without collisions
//       (local step, right-hand side and one solve with the full factor of K);
//   P6  the fill increase of the constrained order, and forward + backward (3 RHS) against an
//       unconstrained solve with the full factor of K;
//   P7  the inner iteration at a fixed collision-region size (proxies cut to the 50K scene's
//       |N_c|; springs on as many of them as the size with the fewest proxies has: the same m
//       and p in the Schur system at every size) from 50K to 650K tets;
//   P9  Fig. 4's untangle test: the elbow bent with collisions off, then on; outer iterations
//       until the deepest proxy is within the tolerance, J = 1 against J = 5.
// The springs of P1–P4 are those of the animation's last frame (every proxy that collides
// there). Times are medians of --repeat runs. Output: Markdown tables on stdout, progress on
// stderr. Options: bench_pd --help.
#include <cholmod.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "bench/bench_statistics.hpp"
#include "bench/cholmod_reference.hpp"
#include "factor/analysis/symbolic.hpp"
#include "factor/numeric/cholesky_factor.hpp"
#include "fem/pd/pd_global_solvers.hpp"
#include "fem/pd/pd_scenes.hpp"
#include "fem/pd/projective_dynamics.hpp"
#include "linalg/blas_kernels.hpp"

namespace {

using cholsim::linalg::Index;
namespace fem = cholsim::fem;
namespace bench = cholsim::bench;
namespace linalg = cholsim::linalg;
namespace factor = cholsim::factor;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage = R"(usage: bench_pd [options]

Seed 004's Schur-complement collision handling against full refactorization, Jacobi-PCG,
factor-preconditioned CG and CHOLMOD update/downdate, on the elbow and lips scenes.
Markdown tables on stdout (targets P1-P7 and P9 of the issue), progress on stderr.

  --scenes LIST    of elbow, lips, surgery (default elbow,lips: the issue's tables)
  --sizes LIST     tet counts, e.g. 50k,100k,250k,650k (the default)
  --inner J        inner iterations per outer iteration in the animation (default 3)
  --repeat R       repetitions of each timed solve, medians reported (default 5)
  --threads T      threads (default 2)
  --no-untangle    skip P9
  --only-p5        only P5 and P6 (the animation, then frames with and without collisions
                   alternating, R of each), no baselines, P7 or P9
  --only-p7        only P7 (the fixed-region inner iteration), no animation or baselines
  --help, -h       this text
)";

struct Arguments {
  std::vector<std::string> scenes{"elbow", "lips"};
  std::vector<std::string> sizes{"50k", "100k", "250k", "650k"};
  int inner = 3;
  int repeat = 5;
  int threads = 2;
  bool untangle = true;
  bool only_p5 = false;
  bool only_p7 = false;
};

Index tet_count(const std::string& text) {
  const double scale = !text.empty() && (text.back() == 'k' || text.back() == 'K') ? 1e3 : 1.0;
  const std::string digits = scale > 1.0 ? text.substr(0, text.size() - 1) : text;
  return static_cast<Index>(std::llround(bench::parse_number("--sizes", digits) * scale));
}

Arguments parse(int argc, char** argv) {
  return bench::parse_command_line("bench_pd", [&] {
    Arguments arguments;
    for (bench::ArgumentCursor cursor(argc, argv); cursor.next();) {
      const std::string flag = cursor.flag();
      if (bench::is_help_flag(flag)) bench::exit_with_usage(kUsage);
      else if (flag == "--scenes") arguments.scenes = bench::parse_list<std::string>(cursor.value());
      else if (flag == "--sizes") arguments.sizes = bench::parse_list<std::string>(cursor.value());
      else if (flag == "--inner") arguments.inner = bench::parse_positive("--inner", cursor.value());
      else if (flag == "--repeat") arguments.repeat = bench::parse_positive("--repeat", cursor.value());
      else if (flag == "--threads") arguments.threads = bench::parse_positive("--threads", cursor.value());
      else if (flag == "--no-untangle") arguments.untangle = false;
      else if (flag == "--only-p5") arguments.only_p5 = true;
      else if (flag == "--only-p7") arguments.only_p7 = true;
      else throw bench::unknown_option(flag);
    }
    return arguments;
  });
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median_of(int repeat, const std::function<double()>& run) {
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) times.push_back(run());
  return bench::median(times);
}

void progress(const std::string& line) { std::fprintf(stderr, "bench_pd: %s\n", line.c_str()); }

std::string ms(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, seconds < 0.01 ? "%.2f" : "%.1f", 1e3 * seconds);
  return text;
}

std::string ratio(double value) {
  char text[32];
  std::snprintf(text, sizeof text, value < 0.1 ? "%.4f" : "%.2f", value);
  return text;
}

const char* verdict(bool holds) { return holds ? "yes" : "**no**"; }

// The animation of one scene at one size with the Schur path, and everything measured on its
// last frame.
struct SceneRun {
  std::string scene;
  Index tets = 0;
  Index nodes = 0;
  Index prone_nodes = 0;
  double prone_fraction = 0.0;
  Index springs = 0;
  double fill_increase = 0.0;
  // Medians, seconds.
  double schur_inner_solve = 0.0;   // automatic: Woodbury or ΔS + potrf + potrs
  double schur_dense_solve = 0.0;   // seed 004 §4.4: ΔS + potrf + potrs
  double inner_iteration = 0.0;     // per inner iteration in the animation's collision frames
  double forward = 0.0;
  double backward = 0.0;
  double full_refactor_solve = 0.0;
  Index full_reanalyses = 0;
  double pcg_converged = 0.0;
  std::int64_t pcg_iterations = 0;
  double pcg_100 = 0.0;
  double factor_pcg = 0.0;
  std::int64_t factor_pcg_iterations = 0;
  double cholmod_updown_solve = 0.0;
  double frame_with_collisions = 0.0;
  fem::PdPhaseTimes frame_with_phases;  // of the median collision frame
  Index frame_with_springs = 0;
  double frame_without = 0.0;
  double unconstrained_solve = 0.0;
};

// The system of the last frame: x's right-hand side split as Algorithm 1 splits it.
struct LastFrameSystem {
  linalg::DenseMatrix b_outer;
  linalg::DenseMatrix b_inner;
  linalg::DenseMatrix warm_start;  // the previous frame's free positions
};

LastFrameSystem last_frame_system(fem::PdModel& model, const fem::PdSimulation& simulation,
                                  std::span<const double> previous_positions) {
  const Index n = model.free_count();
  LastFrameSystem system{linalg::DenseMatrix(n, 3), linalg::DenseMatrix(n, 3), linalg::DenseMatrix(n, 3)};
  model.local_step(simulation.positions());
  const auto all = model.all_elements();
  model.add_element_forces(model.incidence(all), system.b_outer.view());
  model.add_constant_forces({}, system.b_outer.view());
  model.add_spring_forces(model.attachment_springs(simulation.frame()), system.b_outer.view());
  model.add_spring_forces(simulation.collision_springs(), system.b_inner.view());
  for (Index i = 0; i < n; ++i) {
    const Index node = model.free_nodes()[static_cast<std::size_t>(i)];
    for (Index c = 0; c < 3; ++c) system.warm_start(i, c) = previous_positions[static_cast<std::size_t>(3 * node + c)];
  }
  return system;
}

// One inner solve of `kind` on the last frame's system: seconds of the solve itself.
double time_inner_solve(const fem::PdModel& model, std::span<const Index> prone_nodes, fem::PdOptions options,
                        fem::PdSolver kind, const LastFrameSystem& system, std::span<const fem::SpringRow> springs,
                        int repeat, fem::PdFrameStats* last_stats = nullptr) {
  options.solver = kind;
  fem::PdSetupStats setup;
  auto solver = fem::make_pd_global_solver(model, prone_nodes, options, setup);
  fem::PdFrameStats stats;
  solver->begin_outer(system.b_outer.view(), stats.times);
  return median_of(repeat, [&] {
    linalg::DenseMatrix x = system.warm_start;
    fem::PdFrameStats one;
    solver->solve_inner(system.b_inner.view(), springs, x.view(), one);
    if (last_stats != nullptr) *last_stats = one;
    return one.times.schur + one.times.full_solve;
  });
}

// CHOLMOD's simplicial LDLᵀ of K, updated by the springs' columns √k·w (rank p), then solved
// for 3 right-hand sides: the low-rank-update route of seed 004 §4.1 that the paper rejects.
double time_cholmod_update(const fem::PdModel& model, std::span<const fem::SpringRow> springs,
                           const LastFrameSystem& system, int repeat) {
  namespace reference = cholsim::reference;
  reference::CholmodCommon common;
  common.get()->supernodal = CHOLMOD_SIMPLICIAL;
  reference::CholmodMatrix k(model.matrix());
  cholmod_factor* base = cholmod_l_analyze(&k.sparse, common.get());
  cholmod_l_factorize(&k.sparse, base, common.get());
  const auto n = static_cast<std::size_t>(model.free_count());
  // C (n × p) in the factor's permuted row order.
  std::vector<SuiteSparse_long> inverse_perm(n);
  const auto* perm = static_cast<const SuiteSparse_long*>(base->Perm);
  for (std::size_t i = 0; i < n; ++i) inverse_perm[static_cast<std::size_t>(perm[i])] = static_cast<SuiteSparse_long>(i);
  linalg::Triplets triplets;
  for (std::size_t s = 0; s < springs.size(); ++s) {
    for (int t = 0; t < springs[s].terms; ++t) {
      const Index free = model.free_index(springs[s].nodes[static_cast<std::size_t>(t)]);
      if (free < 0) continue;
      triplets.add(static_cast<Index>(inverse_perm[static_cast<std::size_t>(free)]), static_cast<Index>(s),
                   std::sqrt(springs[s].stiffness) * springs[s].weights[static_cast<std::size_t>(t)]);
    }
  }
  const linalg::CscMatrix c_matrix = linalg::csc_from_triplets(static_cast<Index>(n), static_cast<Index>(springs.size()), triplets);
  std::vector<SuiteSparse_long> c_ptr(c_matrix.col_ptr.begin(), c_matrix.col_ptr.end());
  std::vector<SuiteSparse_long> c_idx(c_matrix.row_idx.begin(), c_matrix.row_idx.end());
  cholmod_sparse c{};
  c.nrow = n;
  c.ncol = springs.size();
  c.nzmax = c_idx.size();
  c.p = c_ptr.data();
  c.i = c_idx.data();
  c.x = const_cast<double*>(c_matrix.values.data());
  c.stype = 0;
  c.itype = CHOLMOD_LONG;
  c.xtype = CHOLMOD_REAL;
  c.dtype = CHOLMOD_DOUBLE;
  c.sorted = 1;
  c.packed = 1;
  linalg::DenseMatrix b = system.b_outer;
  for (Index col = 0; col < 3; ++col) {
    for (Index i = 0; i < b.rows(); ++i) b(i, col) += system.b_inner(i, col);
  }
  cholmod_dense rhs{};
  rhs.nrow = n;
  rhs.ncol = 3;
  rhs.nzmax = 3 * n;
  rhs.d = n;
  rhs.x = b.data();
  rhs.xtype = CHOLMOD_REAL;
  rhs.dtype = CHOLMOD_DOUBLE;
  const double seconds = median_of(repeat, [&] {
    cholmod_factor* factor = cholmod_l_copy_factor(base, common.get());
    const auto start = Clock::now();
    cholmod_l_updown(1, &c, factor, common.get());
    cholmod_dense* x = cholmod_l_solve(CHOLMOD_A, factor, &rhs, common.get());
    const double elapsed = seconds_since(start);
    cholmod_l_free_dense(&x, common.get());
    cholmod_l_free_factor(&factor, common.get());
    return elapsed;
  });
  cholmod_l_free_factor(&base, common.get());
  return seconds;
}

// A collision-free frame: local step on every element, the right-hand side, one solve with
// the full factor of K (3 RHS) — what a frame costs when nothing can collide.
class CollisionFreeFrame {
 public:
  CollisionFreeFrame(fem::PdModel& model, int threads) : model_(&model), full_(factor::analyze(model.matrix())) {
    factor::FactorOptions options;
    options.threads = threads;
    full_.factorize(model.matrix(), options);
    const auto all = model.all_elements();
    incidence_ = model.incidence(all);
  }

  /// Seconds of one frame at `positions`; `solve_seconds` receives the solve's share.
  double run(std::span<const double> positions, double frame, double* solve_seconds) {
    const auto start = Clock::now();
    model_->local_step(positions);
    linalg::DenseMatrix b(model_->free_count(), 3);
    model_->add_element_forces(incidence_, b.view());
    model_->add_constant_forces({}, b.view());
    model_->add_spring_forces(model_->attachment_springs(frame), b.view());
    const auto solve_start = Clock::now();
    full_.solve(b.view());
    *solve_seconds = seconds_since(solve_start);
    return seconds_since(start);
  }

 private:
  fem::PdModel* model_;
  factor::Factor full_;
  fem::ElementIncidence incidence_;
};

// P1–P4's solvers of the last frame's polluted system, each in the same code as the Schur path.
void measure_baselines(SceneRun& run, const fem::PdModel& model, std::span<const Index> prone, const fem::PdOptions& options,
                       const LastFrameSystem& system, std::span<const fem::SpringRow> springs, const Arguments& arguments) {
  fem::PdFrameStats full_stats;
  run.full_refactor_solve = time_inner_solve(model, prone, options, fem::PdSolver::full, system, springs,
                                             std::min(arguments.repeat, 3), &full_stats);
  run.full_reanalyses = full_stats.reanalyses;
  fem::PdFrameStats pcg_stats;
  run.pcg_converged = time_inner_solve(model, prone, options, fem::PdSolver::pcg, system, springs,
                                       std::min(arguments.repeat, 3), &pcg_stats);
  run.pcg_iterations = pcg_stats.cg_iterations;
  fem::PdOptions hundred = options;
  hundred.pcg_tolerance = 0.0;
  hundred.pcg_max_iterations = 100;
  run.pcg_100 = time_inner_solve(model, prone, hundred, fem::PdSolver::pcg, system, springs, arguments.repeat);
  fem::PdFrameStats factor_pcg_stats;
  run.factor_pcg = time_inner_solve(model, prone, options, fem::PdSolver::factor_pcg, system, springs,
                                    arguments.repeat, &factor_pcg_stats);
  run.factor_pcg_iterations = factor_pcg_stats.cg_iterations;
  if (!springs.empty()) run.cholmod_updown_solve = time_cholmod_update(model, springs, system, std::min(arguments.repeat, 3));
}

SceneRun measure_scene(const std::string& name, Index target_tets, const Arguments& arguments) {
  SceneRun run;
  run.scene = name;
  const fem::PdScene scene = fem::make_pd_scene(name, target_tets);
  fem::PdOptions options;
  options.inner_iterations = arguments.inner;
  options.model.threads = arguments.threads;
  fem::PdSimulation simulation(scene, options);
  const fem::PdSetupStats& setup = simulation.setup();
  run.tets = setup.elements;
  run.nodes = setup.nodes;
  run.prone_nodes = setup.prone_nodes;
  run.prone_fraction = static_cast<double>(setup.prone_nodes) / static_cast<double>(setup.nodes);
  run.fill_increase = setup.fill_increase;
  progress(name + " " + std::to_string(run.tets) + " tets: animating " + std::to_string(scene.default_frames) +
           " frames (J = " + std::to_string(arguments.inner) + ")...");
  std::vector<double> previous(simulation.positions().begin(), simulation.positions().end());
  std::vector<double> inner_per_iteration;
  for (int frame = 1; frame <= scene.default_frames; ++frame) {
    if (frame == scene.default_frames) previous.assign(simulation.positions().begin(), simulation.positions().end());
    const fem::PdFrameStats stats = simulation.step();
    if (stats.active_springs > 0) inner_per_iteration.push_back(stats.times.inner / stats.inner_iterations);
  }
  run.springs = static_cast<Index>(simulation.collision_springs().size());
  run.inner_iteration = inner_per_iteration.empty() ? 0.0 : bench::median(inner_per_iteration);

  fem::PdModel model(scene, options.model);
  const LastFrameSystem system = last_frame_system(model, simulation, previous);
  const auto springs = simulation.collision_springs();
  const auto prone = simulation.prone_nodes();
  progress("  solves on the last frame (" + std::to_string(run.springs) + " springs)...");
  if (!arguments.only_p5) {
    run.schur_inner_solve = time_inner_solve(model, prone, options, fem::PdSolver::schur, system, springs, arguments.repeat);
    fem::PdOptions dense = options;
    dense.schur_update = fem::PdSchurUpdate::dense;
    run.schur_dense_solve = time_inner_solve(model, prone, dense, fem::PdSolver::schur, system, springs, arguments.repeat);
  }
  {
    options.solver = fem::PdSolver::schur;
    fem::PdSetupStats schur_setup;
    auto solver = fem::make_pd_global_solver(model, prone, options, schur_setup);
    std::vector<double> forwards, backwards;
    for (int r = 0; r < arguments.repeat; ++r) {
      fem::PdFrameStats stats;
      linalg::DenseMatrix x = system.warm_start;
      solver->begin_outer(system.b_outer.view(), stats.times);
      solver->solve_inner(system.b_inner.view(), springs, x.view(), stats);
      solver->end_outer(x.view(), stats.times);
      forwards.push_back(stats.times.forward);
      backwards.push_back(stats.times.backward);
    }
    run.forward = bench::median(forwards);
    run.backward = bench::median(backwards);
  }
  if (!arguments.only_p5) measure_baselines(run, model, prone, options, system, springs, arguments);
  // P5 and P6 on the final pose, alternating a collision frame of the simulation with a
  // collision-free frame of the same state, so that both see the same machine.
  CollisionFreeFrame without(model, arguments.threads);
  std::vector<double> with_times, without_times, solve_times;
  std::vector<fem::PdFrameStats> with_frames;
  for (int r = 0; r < arguments.repeat; ++r) {
    with_frames.push_back(simulation.step());
    with_times.push_back(with_frames.back().times.total);
    double solve = 0.0;
    without_times.push_back(without.run(simulation.positions(), simulation.frame(), &solve));
    solve_times.push_back(solve);
  }
  run.frame_with_collisions = bench::median(with_times);
  const auto median_frame = std::min_element(with_frames.begin(), with_frames.end(), [&](const auto& a, const auto& b) {
    return std::abs(a.times.total - run.frame_with_collisions) < std::abs(b.times.total - run.frame_with_collisions);
  });
  run.frame_with_phases = median_frame->times;
  run.frame_with_springs = median_frame->active_springs;
  run.frame_without = bench::median(without_times);
  run.unconstrained_solve = bench::median(solve_times);
  return run;
}

// P7's scene at one size: the proxies cut to the first ones (in the scene's order, nearest the
// joint first) whose tets hold at most `region_nodes` collision-prone nodes.
fem::PdScene scene_with_region(const std::string& name, Index target_tets, Index region_nodes) {
  fem::PdScene scene = fem::make_pd_scene(name, target_tets);
  std::vector<fem::EmbeddedPoint> kept;
  for (const fem::EmbeddedPoint& proxy : scene.proxies) {
    kept.push_back(proxy);
    fem::PdScene trial;
    trial.mesh = scene.mesh;
    trial.proxies = kept;
    if (static_cast<Index>(fem::collision_prone_nodes(trial).size()) > region_nodes) {
      kept.pop_back();
      break;
    }
  }
  scene.proxies = kept;
  scene.excision = {};
  return scene;
}

// P7: the inner iteration on `scene` (its collision region cut by scene_with_region), its first
// `spring_count` proxies held by springs at their rest positions (the same count at every
// size): detection, local step on E_c, right-hand side on N_c, Schur solve — Algorithm 1's
// steps 4.1–4.5, none of which should grow with the mesh. One object per size, so that the
// sizes can be timed in turns (below).
class FixedRegionInnerIteration {
 public:
  FixedRegionInnerIteration(const fem::PdScene& scene, std::size_t spring_count, const Arguments& arguments)
      : scene_(scene), options_(pd_options(arguments)), simulation_(scene_, options_), model_(scene_, options_.model),
        solver_(fem::make_pd_global_solver(model_, simulation_.prone_nodes(), options_, setup_)),
        detector_(scene_, simulation_.prone_elements(), model_.mean_edge_length()),
        incidence_(model_.incidence(simulation_.prone_elements())), b_outer_(model_.free_count(), 3),
        b_inner_(model_.free_count(), 3), x_(model_.free_count(), 3) {
    for (const fem::EmbeddedPoint& proxy : std::span(scene_.proxies).first(spring_count)) {
      const linalg::Vec3 rest = fem::embedded_position(scene_.mesh, proxy, scene_.mesh.positions);
      springs_.push_back(fem::spring_to_target(scene_.mesh, proxy, rest, scene_.proxy_stiffness));
    }
    fem::PdFrameStats stats;
    solver_->begin_outer(b_outer_.view(), stats.times);
  }

  [[nodiscard]] Index prone_nodes() const { return simulation_.setup().prone_nodes; }
  [[nodiscard]] Index tet_count() const { return scene_.mesh.tet_count(); }
  [[nodiscard]] std::size_t proxy_count() const { return scene_.proxies.size(); }

  /// Seconds of one inner iteration.
  double time_once() {
    const auto start = Clock::now();
    detector_.detect(scene_.mesh.positions);
    model_.local_step(scene_.mesh.positions, simulation_.prone_elements());
    for (Index node : incidence_.nodes) {
      for (Index c = 0; c < 3; ++c) b_inner_(model_.free_index(node), c) = 0.0;
    }
    model_.add_element_forces(incidence_, b_inner_.view());
    model_.add_spring_forces(springs_, b_inner_.view());
    fem::PdFrameStats one;
    solver_->solve_inner(b_inner_.view(), springs_, x_.view(), one);
    return seconds_since(start);
  }

 private:
  static fem::PdOptions pd_options(const Arguments& arguments) {
    fem::PdOptions options;
    options.model.threads = arguments.threads;
    options.inner_iterations = 1;
    return options;
  }

  fem::PdScene scene_;
  fem::PdOptions options_;
  fem::PdSimulation simulation_;
  fem::PdModel model_;
  fem::PdSetupStats setup_;
  std::unique_ptr<fem::PdGlobalSolver> solver_;
  fem::PdCollisionDetector detector_;
  fem::ElementIncidence incidence_;
  std::vector<fem::SpringRow> springs_;
  linalg::DenseMatrix b_outer_, b_inner_, x_;
};

/// Median seconds of an inner iteration per size, the sizes taken in turns (one iteration of
/// each, `rounds` times): a 0.1 ms iteration timed in a block of its own caught whatever the
/// VM was doing meanwhile (21–30 % apart between sizes, in either order, run to run);
/// alternating exposes every size to the same disturbances.
std::vector<double> alternating_medians(std::vector<std::unique_ptr<FixedRegionInnerIteration>>& sizes, int rounds) {
  std::vector<std::vector<double>> times(sizes.size());
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < sizes.size(); ++i) times[i].push_back(sizes[i]->time_once());
  }
  std::vector<double> medians;
  for (const std::vector<double>& size_times : times) medians.push_back(bench::median(size_times));
  return medians;
}

// P9 (Fig. 4): the deepest proxy after each frame's solve, at a held pose.
double deepest_after_solve(const fem::PdSimulation& simulation, fem::PdCollisionDetector& probe) {
  fem::PdDetectionStats after;
  probe.update_safe_positions(simulation.positions());
  probe.detect(simulation.positions(), &after);
  return after.deepest_penetration;
}

// The elbow scene with its forearm stopping at `frame`: the pose then held.
fem::PdScene held_at(fem::PdScene scene, int frame) {
  for (fem::RigidBone& bone : scene.bones) {
    if (bone.degrees_per_frame != 0.0) bone.max_degrees = std::abs(bone.degrees_per_frame) * frame;
  }
  return scene;
}

// The first frame with a collision spring when the elbow bends with collisions on.
int first_contact_frame(const fem::PdScene& scene, int threads) {
  fem::PdOptions options;
  options.model.threads = threads;
  fem::PdSimulation simulation(scene, options);
  for (int frame = 1; frame <= scene.default_frames; ++frame) {
    if (simulation.step().active_springs > 0) return frame;
  }
  return scene.default_frames;
}

// Outer iterations (frames at the held pose, one outer iteration each) until the deepest
// proxy is within `tolerance`, after bending to the pose with collisions off; -1 when 200 do
// not reach it. `depths` receives the deepest after each iteration.
int untangle_iterations(const fem::PdScene& scene, int bend_frames, int inner, int threads, double tolerance,
                        std::vector<double>* depths) {
  fem::PdOptions options;
  options.inner_iterations = inner;
  options.model.threads = threads;
  options.collisions = false;
  fem::PdSimulation simulation(scene, options);
  for (int frame = 0; frame < bend_frames; ++frame) simulation.step();
  simulation.set_collisions(true);
  fem::PdCollisionDetector probe(scene, simulation.prone_elements(), simulation.model().mean_edge_length());
  depths->push_back(deepest_after_solve(simulation, probe));
  for (int iteration = 1; iteration <= 200; ++iteration) {
    simulation.step();
    depths->push_back(deepest_after_solve(simulation, probe));
    if (depths->back() <= tolerance) return iteration;
  }
  return -1;
}

void untangle_table(const Arguments& arguments) {
  const Index size = tet_count(arguments.sizes.front());
  const fem::PdScene full_bend = fem::make_pd_scene("elbow", size);
  // Fig. 4 bends "to a sharp angle with collisions disabled": here 20° past the first contact,
  // where the two sides overlap by centimetres but have not passed through each other.
  const int contact = first_contact_frame(full_bend, arguments.threads);
  const int bend = contact + 8;
  const fem::PdScene scene = held_at(full_bend, bend);
  // The depth the contact settles at with collisions on all along: the penalty's own depth.
  fem::PdOptions options;
  options.model.threads = arguments.threads;
  fem::PdSimulation settled(scene, options);
  for (int frame = 0; frame < bend + 30; ++frame) settled.step();
  fem::PdCollisionDetector probe(scene, settled.prone_elements(), settled.model().mean_edge_length());
  const double settled_depth = deepest_after_solve(settled, probe);
  const double tolerance = std::max(2.0 * settled_depth, 0.05 * settled.model().mean_edge_length());
  std::printf("\n### P9: untangling the elbow bent with collisions off (Fig. 4), %ld tets\n\n", static_cast<long>(scene.mesh.tet_count()));
  std::printf("Bent with collisions off to frame %d (first contact with collisions on: frame %d; %.1f° flexion), then\n"
              "collisions on at that pose. Tolerance %.3f mm: twice the deepest proxy with collisions on all along\n"
              "(%.3f mm after 30 more frames), or 5 %% of the mean edge if larger.\n\n",
              bend, contact, 20.0 + 2.5 * bend, 1e3 * tolerance, 1e3 * settled_depth);
  std::printf("| J | outer iterations to the tolerance | deepest before, after 1, 5, 10, 20, 50, 100, 200 iterations (mm) |\n|---:|---:|---|\n");
  std::map<int, int> counts;
  for (int inner : {1, 3, 5}) {
    progress("P9 J = " + std::to_string(inner) + "...");
    std::vector<double> depths;
    counts[inner] = untangle_iterations(scene, bend, inner, arguments.threads, tolerance, &depths);
    std::string curve;
    for (std::size_t at : {0, 1, 5, 10, 20, 50, 100, 200}) {
      if (at < depths.size()) curve += (curve.empty() ? "" : ", ") + ms(depths[at]);
    }
    std::printf("| %d | %d | %s |\n", inner, counts[inner], curve.c_str());
  }
  const bool holds = counts[1] > 0 && counts[5] > 0 && 2 * counts[5] <= counts[1];
  std::printf("\nP9 (J = 5 within half the outer iterations of J = 1): %s\n", verdict(holds));
}

void print_baseline_tables(const std::vector<SceneRun>& runs, const Arguments& arguments) {
  std::printf("\n### P1, P2: one inner iteration against a full sparse refactorization + solve\n\n");
  std::printf("| scene | tets | nodes | N_c | N_c %% | springs | Schur solve (ms) | dense refactor, seed 004 (ms) | inner iteration (ms) | full refactor + solve (ms) | P1 ratio | target | holds | P2 ratio | holds |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|\n");
  for (const SceneRun& r : runs) {
    const double p1 = r.schur_inner_solve / r.full_refactor_solve;
    const double target = r.prone_fraction > 0.025 ? 0.10 : 0.02;
    const double p2 = r.inner_iteration / r.full_refactor_solve;
    std::printf("| %s | %ld | %ld | %ld | %.2f | %ld | %s | %s | %s | %s%s | %s | ≤ %.2f | %s | %s | %s |\n", r.scene.c_str(),
                static_cast<long>(r.tets), static_cast<long>(r.nodes), static_cast<long>(r.prone_nodes),
                100.0 * r.prone_fraction, static_cast<long>(r.springs), ms(r.schur_inner_solve).c_str(),
                ms(r.schur_dense_solve).c_str(), ms(r.inner_iteration).c_str(), ms(r.full_refactor_solve).c_str(),
                r.full_reanalyses > 0 ? " (re-analysed)" : "", ratio(p1).c_str(), target, verdict(p1 <= target),
                ratio(p2).c_str(), verdict(p2 <= 0.05));
  }
  std::printf("\n### P3, P4: the Schur path against iterative and update solvers of the same polluted system\n\n");
  std::printf("Schur per solve: forward + inner solve + backward (one exact solve). Schur per inner iteration:\n"
              "the inner solve plus (forward + backward) / J, J = %d — what each inner iteration of Algorithm 1\n"
              "costs, where every other solver must solve the whole system again. Ratios: other / Schur.\n\n",
              arguments.inner);
  std::printf("| scene | tets | springs | Schur per solve (ms) | per inner it. (ms) | Jacobi-PCG 1e-8 (ms, it.) | x solve / x it. | 100 PCG it. (ms) | x solve / x it. | factor-PCG 1e-8 (ms, it.) | x solve / x it. | CHOLMOD update + solve (ms) | x solve / x it. |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const SceneRun& r : runs) {
    const double exact = r.forward + r.schur_inner_solve + r.backward;
    const double per_iteration = r.schur_inner_solve + (r.forward + r.backward) / arguments.inner;
    const auto both = [&](double other, double target) {
      return ratio(other / exact) + " " + verdict(other / exact >= target) + " / " + ratio(other / per_iteration) + " " +
             verdict(other / per_iteration >= target);
    };
    std::printf("| %s | %ld | %ld | %s | %s | %s (%ld) | %s | %s | %s | %s (%ld) | %s | %s | %s |\n", r.scene.c_str(),
                static_cast<long>(r.tets), static_cast<long>(r.springs), ms(exact).c_str(), ms(per_iteration).c_str(),
                ms(r.pcg_converged).c_str(), static_cast<long>(r.pcg_iterations), both(r.pcg_converged, 10.0).c_str(),
                ms(r.pcg_100).c_str(), both(r.pcg_100, 4.0).c_str(), ms(r.factor_pcg).c_str(),
                static_cast<long>(r.factor_pcg_iterations), both(r.factor_pcg, 5.0).c_str(),
                r.springs > 0 ? ms(r.cholmod_updown_solve).c_str() : "-",
                r.springs >= 100 ? both(r.cholmod_updown_solve, 3.0).c_str() : "(< 100 springs)");
  }
  std::printf("\nTargets: Jacobi-PCG ≥ 10×, 100 PCG iterations ≥ 4×, factor-PCG ≥ 5×, CHOLMOD update ≥ 3× once ≥ 100 proxies change.\n");
}

void print_frame_tables(const std::vector<SceneRun>& runs) {
  std::printf("\n### P5, P6: frames with and without collisions; the constrained order's cost\n\n");
  std::printf("| scene | tets | frame with collisions (ms) | frame without (ms) | P5 ratio | holds (≤ 1.5) | fill increase | fwd + bwd (ms) | unconstrained solve (ms) | P6 ratio | holds (≤ 1.3) |\n");
  std::printf("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|\n");
  for (const SceneRun& r : runs) {
    const double p5 = r.frame_with_collisions / r.frame_without;
    const double p6 = (r.forward + r.backward) / r.unconstrained_solve;
    std::printf("| %s | %ld | %s | %s | %s | %s | +%.1f %% | %s | %s | %s | %s |\n", r.scene.c_str(), static_cast<long>(r.tets),
                ms(r.frame_with_collisions).c_str(), ms(r.frame_without).c_str(), ratio(p5).c_str(), verdict(p5 <= 1.5),
                100.0 * r.fill_increase, ms(r.forward + r.backward).c_str(), ms(r.unconstrained_solve).c_str(),
                ratio(p6).c_str(), verdict(p6 <= 1.3));
  }
  std::printf("\nShares of the frames above (ms, %% of the frame). With collisions: the median frame, 1 outer + J inner "
              "iterations; without: the local step and right-hand side over all elements, then one solve with the "
              "unconstrained factor.\n\n");
  std::printf("| scene | tets | springs | local step | right-hand side | detection | forward | Schur solves | backward | "
              "other | without: local step + rhs | without: solve |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const SceneRun& r : runs) {
    const fem::PdPhaseTimes& t = r.frame_with_phases;
    const auto share = [&](double seconds, double of) {
      char text[48];
      std::snprintf(text, sizeof text, "%s (%.0f %%)", ms(seconds).c_str(), 100.0 * seconds / of);
      return std::string(text);
    };
    const double other = t.total - t.local_step - t.right_hand_side - t.detection - t.forward - t.schur - t.backward;
    std::printf("| %s | %ld | %ld | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.scene.c_str(),
                static_cast<long>(r.tets), static_cast<long>(r.frame_with_springs), share(t.local_step, t.total).c_str(),
                share(t.right_hand_side, t.total).c_str(), share(t.detection, t.total).c_str(),
                share(t.forward, t.total).c_str(), share(t.schur, t.total).c_str(), share(t.backward, t.total).c_str(),
                share(other, t.total).c_str(), share(r.frame_without - r.unconstrained_solve, r.frame_without).c_str(),
                share(r.unconstrained_solve, r.frame_without).c_str());
  }
}

void print_tables(const std::vector<SceneRun>& runs, const Arguments& arguments) {
  if (!arguments.only_p5) print_baseline_tables(runs, arguments);
  print_frame_tables(runs);
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  const Arguments arguments = parse(argc, argv);
  if (!arguments.only_p7) {
    std::vector<SceneRun> runs;
    for (const std::string& scene : arguments.scenes) {
      for (const std::string& size : arguments.sizes) runs.push_back(measure_scene(scene, tet_count(size), arguments));
    }
    print_tables(runs, arguments);
  }
  if (arguments.only_p5) return 0;

  std::printf("\n### P7: inner iteration at a fixed collision-region size\n\n");
  std::printf("The region: the first proxies whose tets hold at most the smallest mesh's N_c collision-prone nodes "
              "(m, the order of S); of those, as many hold springs at every size as the size with the fewest proxies "
              "has (p, the springs of S + W·C·Wᵀ).\n\n");
  for (const std::string& scene : arguments.scenes) {
    Index region = 0;
    std::vector<fem::PdScene> scenes;
    std::size_t fewest_proxies = std::numeric_limits<std::size_t>::max();
    for (const std::string& size : arguments.sizes) {
      if (region == 0) {
        region = static_cast<Index>(fem::collision_prone_nodes(fem::make_pd_scene(scene, tet_count(size))).size());
      }
      progress("P7 " + scene + " " + size + " at |N_c| <= " + std::to_string(region) + "...");
      scenes.push_back(scene_with_region(scene, tet_count(size), region));
      fewest_proxies = std::min(fewest_proxies, scenes.back().proxies.size());
    }
    std::vector<std::unique_ptr<FixedRegionInnerIteration>> iterations;
    for (const fem::PdScene& cut : scenes) {
      iterations.push_back(std::make_unique<FixedRegionInnerIteration>(cut, fewest_proxies, arguments));
    }
    const std::vector<double> medians = alternating_medians(iterations, arguments.repeat * 40);
    std::vector<std::pair<Index, double>> rows;
    std::vector<Index> regions;
    for (std::size_t i = 0; i < iterations.size(); ++i) {
      rows.emplace_back(iterations[i]->tet_count(), medians[i]);
      regions.push_back(iterations[i]->prone_nodes());
    }
    double mean = 0.0;
    for (const auto& row : rows) mean += row.second / static_cast<double>(rows.size());
    double worst = 0.0;
    std::printf("| %s | ", scene.c_str());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      worst = std::max(worst, std::abs(rows[i].second / mean - 1.0));
      std::printf("%ldK tets, N_c %ld, %zu proxies, %zu springs: %s ms | ", static_cast<long>(rows[i].first / 1000),
                  static_cast<long>(regions[i]), iterations[i]->proxy_count(), fewest_proxies,
                  ms(rows[i].second).c_str());
    }
    std::printf("largest deviation from the mean %.0f %% | holds (±20 %%): %s |\n", 100.0 * worst, verdict(worst <= 0.2));
  }

  if (arguments.untangle && !arguments.only_p7 && std::find(arguments.scenes.begin(), arguments.scenes.end(), "elbow") != arguments.scenes.end()) {
    untangle_table(arguments);
  }
  return 0;
}
