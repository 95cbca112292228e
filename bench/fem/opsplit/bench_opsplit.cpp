// Operator-splitting corotated FEM (seed 003) against the exact corotated FEM (seed 000's
// reference: per-element SVD rotations, A = M + Δt²K reassembled and fully refactored every
// step; fem::CorotationalSimulation with CorotationalMethod::exact), in the shape of seed 003
// Tables 1–3:
//   Table 1  per-step time vs mesh size (≈ 6K, 16K, 55K, 170K, 330K tets) with the speedup;
//   Table 2  per-step time for E ∈ {1e5, 5e5, 1e6, 1e7} Pa on the ≈ 16K-tet mesh (Δt = 10 ms);
//   Table 3  per-step time for Δt ∈ {5, 10, 16, 33} ms on the same mesh (E = 1e6 Pa).
// Scene (both methods alike): a procedural bar (structured Kuhn tets, 3:1:1, 0.9 m long),
// ν = 0.33, ρ = 1000 kg/m³, gravity, started spinning at 2 rad/s about z so every element
// rotates; no fixed vertices (CorotationalSimulation has none), no obstacles. Operator
// splitting runs one volume sweep per step (the paper's setting). Seed 003's armadillo is
// replaced by bars of the same tet counts.
// Times are medians and minima of the measured steps after one untimed warm-up step (the
// minimum is the estimate least disturbed by other processes on a shared machine; phases are
// medians); setup (analysis, first factorization) is reported apart and not part of a step.
// The sweep spreads (the issue's ±10% target) are given for both; a sweep steps its four
// operator-splitting simulations in turn, so machine-speed drift reaches every value alike.
//
// With --newton, a last table adds the third method of the issue on the Table 1 meshes: the
// fixed-corotated energy minimized by Newton's method (fem/fixed_corotated_newton, relative
// gradient tolerance 1e-6, definiteness-fixed Hessians refactored every iteration).
//
// Options: bench_opsplit --help (kUsage below).
// Output: Markdown tables on stdout, progress on stderr.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_arguments.hpp"
#include "bench/bench_models.hpp"
#include "bench/bench_statistics.hpp"
#include "bench/fem/opsplit/fastcorot_peer_table.hpp"
#include "fem/corotational/corotational_simulation.hpp"
#include "fem/elements/elastic_body.hpp"
#include "fem/materials/fixed_corotated_newton.hpp"
#include "fem/opsplit/operator_splitting.hpp"
#include "linalg/blas_kernels.hpp"
#include "linalg/polar_decomposition_batch.hpp"
#include "linalg/generators.hpp"

namespace {

using cholsim::linalg::Index;
namespace fem = cholsim::fem;
namespace bench = cholsim::bench;

constexpr const char* kUsage = R"(usage: bench_opsplit [options]

Operator-splitting corotated FEM (seed 003) against the exact corotated FEM on spinning bars,
in the shape of seed 003 Tables 1-3: per-step time vs mesh size (Table 1), vs Young's modulus
and vs time step on the 16k mesh (Tables 2 and 3). Markdown tables on stdout, progress on
stderr.

  --sizes LIST       Table 1 meshes, of 6k,16k,55k,170k,330k tets (default all five)
  --steps N          measured operator-splitting steps per run, after one warm-up step
                     (default 20)
  --exact-steps N    measured steps of the exact method, and of Newton with --newton (default 3)
  --threads T        threads for both methods (default 2)
  --solve-precision P  how the operator-splitting step's copy of L is stored: auto (the
                     default of fem::OperatorSplittingOptions: double where it fits in L2), single
                     or double
  --element-precision P  arithmetic of the operator-splitting step's element passes (F, APD,
                     forces, volume constraints): double (the default) or single
  --rotation-warm-start W  where each step's APD starts (fem::RotationWarmStart): previous (the
                     default, seed 003's) or extrapolated (the last step's rotation taken again)
  --device D         where the operator-splitting step's solve runs: cpu (default) or gpu
                     (factor::GpuSolveFactor, L in double precision on the GPU)
  --no-sweeps        skip Tables 2 and 3 (the Young's modulus and time-step sweeps)
  --no-exact         skip the exact corotated FEM (no exact columns or speedups)
  --newton           add a table for Newton on the fixed-corotated energy, on the --sizes meshes
  --peer             only the table against the official seed-003 code (FastCorotatedFEM, built
                     by bench/peers/fastcorot/build_fastcorot_peer.sh), one thread, --steps
                     steps a run: armadillo_4k (its demo), armadillo (cholsim opsplit's default),
                     tetgen bunnies of 16k, 55k and 170k tets, 100 bodies of armadillo_4k
  --peer-scenes LIST  those scenes (armadillo_4k, armadillo, bunny<N>k, bodies<N>)
  --peer-runs R      alternating peer/cholsim runs per scene (default 5)
  --peer-binary P    the peer (default: build/peers/fastcorot_peer beside build/bench)
  --help, -h         this text
)";

/// Cells (nx, ny, nz) of the bars standing in for seed 003's armadillo resolutions.
const auto& kMeshSizes = cholsim::bench::opsplit_bar_cells;
const std::vector<std::string> kSizeOrder = {"6k", "16k", "55k", "170k", "330k"};

struct Settings {
  std::vector<std::string> sizes = kSizeOrder;
  int steps = 20;
  int exact_steps = 3;
  int threads = 2;
  bool sweeps = true;
  bool exact = true;
  bool newton = false;
  bool peer = false;
  std::vector<std::string> peer_scenes = {"armadillo_4k", "armadillo", "bunny16k", "bunny55k", "bunny170k",
                                          "bodies100"};
  int peer_runs = 5;
  std::string peer_binary = bench::default_peer_binary().string();
  cholsim::factor::TiledSolveFactor::Precision solve_precision = fem::OperatorSplittingOptions{}.solve_precision;
  cholsim::factor::FactorDevice solve_device = cholsim::factor::FactorDevice::cpu;
  fem::ElementPrecision element_precision = fem::ElementPrecision::double_values;
  fem::RotationWarmStart rotation_warm_start = fem::RotationWarmStart::previous;
};

struct Scene {
  std::string size = "16k";
  double youngs = 1e6;
  double time_step = 0.01;
};

fem::ElasticBody make_body(const Scene& scene) {
  const std::array<Index, 3> cells = kMeshSizes.at(scene.size);
  fem::Material material;
  material.youngs_modulus = scene.youngs;
  material.poisson_ratio = 0.33;
  material.density = 1000.0;
  return fem::make_elastic_body(cholsim::linalg::structured_tet_box(cells[0], cells[1], cells[2], 0.9 / static_cast<double>(cells[0])),
                                material, "bar " + scene.size);
}

/// Rest positions and the spin ω × (x − centre), ω = 2 rad/s about z.
std::vector<double> spin_velocities(const std::vector<double>& positions) {
  double cx = 0.0, cy = 0.0;
  const std::size_t nodes = positions.size() / 3;
  for (std::size_t v = 0; v < nodes; ++v) {
    cx += positions[3 * v];
    cy += positions[3 * v + 1];
  }
  cx /= static_cast<double>(nodes);
  cy /= static_cast<double>(nodes);
  std::vector<double> velocities(positions.size(), 0.0);
  for (std::size_t v = 0; v < nodes; ++v) {
    velocities[3 * v] = -2.0 * (positions[3 * v + 1] - cy);
    velocities[3 * v + 1] = 2.0 * (positions[3 * v] - cx);
  }
  return velocities;
}

using cholsim::bench::median;

struct Measurement {
  double step_seconds = 0.0;   ///< median per step
  double min_step_seconds = 0.0;
  double setup_seconds = 0.0;  ///< analysis + first factorization (+ assembly)
  std::string breakdown;       ///< median phases
  Index tets = 0;
};

/// Runs warm-up + `steps` steps of `step`, which returns its own step time.
std::vector<double> time_steps(int steps, const std::function<double()>& step) {
  (void)step();  // warm-up: first APD from the identity, first-touch of the work arrays
  std::vector<double> seconds;
  for (int k = 0; k < steps; ++k) seconds.push_back(step());
  return seconds;
}

/// One operator-splitting simulation of a scene: set up, warmed up by one step, then
/// stepped and measured one step at a time (so several can be stepped in turn).
class OpsplitRun {
 public:
  OpsplitRun(const Scene& scene, const Settings& settings) {
    fem::OperatorSplittingOptions options;
    options.time_step = scene.time_step;
    options.volume_iterations = 1;
    options.threads = settings.threads;
    options.solve_precision = settings.solve_precision;
    options.solve_device = settings.solve_device;
    options.element_precision = settings.element_precision;
    options.rotation_warm_start = settings.rotation_warm_start;
    const auto start = std::chrono::steady_clock::now();
    sim_ = std::make_unique<fem::OperatorSplittingSimulation>(make_body(scene), options);
    setup_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::vector<double> x(sim_->positions().begin(), sim_->positions().end());
    sim_->set_state(x, spin_velocities(x));
    (void)sim_->step();  // warm-up: first APD from the identity, first-touch of the work arrays
  }

  void step() {
    const fem::OperatorSplittingStepStatistics s = sim_->step();
    // Elements per APD block: one 64-byte vector of the element passes' arithmetic.
    const double lanes = sim_->options().element_precision == fem::ElementPrecision::single_values
                             ? cholsim::linalg::ApdBlockOf<float>::kLanes
                             : cholsim::linalg::ApdBlockOf<double>::kLanes;
    const double blocks = std::ceil(static_cast<double>(sim_->body().element_count()) / lanes);
    iterations_.push_back(static_cast<double>(s.rotation_iterations) / blocks);
    fallbacks_.push_back(static_cast<double>(s.rotation_fallbacks));
    rotations_.push_back(s.timings.rotations);
    rhs_.push_back(s.timings.right_hand_side);
    solve_.push_back(s.timings.solve);
    volume_.push_back(s.timings.volume_constraints);
    totals_.push_back(s.timings.total);
  }

  [[nodiscard]] Measurement measurement() const {
    Measurement m;
    m.setup_seconds = setup_seconds_;
    m.tets = sim_->body().element_count();
    m.step_seconds = median(totals_);
    m.min_step_seconds = *std::min_element(totals_.begin(), totals_.end());
    char text[200];
    std::snprintf(text, sizeof text, "APD %.2f (%.1f it/block, %.0f scalar) / rhs %.2f / solve %.2f / volume %.2f ms",
                  1e3 * median(rotations_), median(iterations_), median(fallbacks_), 1e3 * median(rhs_),
                  1e3 * median(solve_), 1e3 * median(volume_));
    m.breakdown = text;
    return m;
  }

 private:
  std::unique_ptr<fem::OperatorSplittingSimulation> sim_;
  double setup_seconds_ = 0.0;
  std::vector<double> rotations_, rhs_, solve_, volume_, iterations_, fallbacks_, totals_;
};

/// The scenes of a sweep stepped in turn, one step each per round: a drift of the machine's
/// speed over the run (10–30% over minutes on the shared VM) then reaches every parameter
/// value alike instead of whichever ran during the slow minute.
std::vector<Measurement> run_operator_splitting_interleaved(const std::vector<Scene>& scenes, const Settings& settings) {
  std::vector<OpsplitRun> runs;
  for (const Scene& scene : scenes) runs.emplace_back(scene, settings);
  for (int k = 0; k < settings.steps; ++k) {
    for (OpsplitRun& run : runs) run.step();
  }
  std::vector<Measurement> measurements;
  for (const OpsplitRun& run : runs) measurements.push_back(run.measurement());
  return measurements;
}

/// The exact corotated FEM on a scene, set up and warmed up by one step, then stepped and
/// measured one step at a time (so it can step in turn with an operator-splitting run).
class ExactRun {
 public:
  ExactRun(const Scene& scene, const Settings& settings) {
    fem::CorotationalOptions options;
    options.method = fem::CorotationalMethod::exact;
    options.time_step = scene.time_step;
    options.threads = settings.threads;
    fem::ElasticBody body = make_body(scene);
    const auto start = std::chrono::steady_clock::now();
    sim_ = std::make_unique<fem::CorotationalSimulation>(std::move(body), options);
    setup_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::vector<double> x(sim_->positions().begin(), sim_->positions().end());
    sim_->set_state(x, spin_velocities(x));
    (void)sim_->step();  // warm-up, as for operator splitting
  }

  void step() {
    const fem::StepStatistics s = sim_->step();
    factor_.push_back(s.timings.factor_update);
    assemble_.push_back(s.timings.matrix_update);
    totals_.push_back(s.timings.total);
  }

  [[nodiscard]] Measurement measurement() const {
    Measurement m;
    m.setup_seconds = setup_seconds_;
    m.tets = sim_->body().element_count();
    m.step_seconds = median(totals_);
    m.min_step_seconds = *std::min_element(totals_.begin(), totals_.end());
    char text[160];
    std::snprintf(text, sizeof text, "assemble %.1f / factorize %.1f ms", 1e3 * median(assemble_), 1e3 * median(factor_));
    m.breakdown = text;
    return m;
  }

 private:
  std::unique_ptr<fem::CorotationalSimulation> sim_;
  double setup_seconds_ = 0.0;
  std::vector<double> factor_, assemble_, totals_;
};

Measurement run_exact(const Scene& scene, const Settings& settings) {
  ExactRun run(scene, settings);
  for (int k = 0; k < settings.exact_steps; ++k) run.step();
  return run.measurement();
}

Measurement run_newton(const Scene& scene, const Settings& settings) {
  fem::FixedCorotatedNewtonOptions options;
  options.time_step = scene.time_step;
  options.relative_tolerance = 1e-6;
  options.threads = settings.threads;
  fem::ElasticBody body = make_body(scene);
  const auto start = std::chrono::steady_clock::now();
  fem::FixedCorotatedNewtonSimulation sim(std::move(body), options);
  Measurement m;
  m.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.tets = sim.body().element_count();
  const std::vector<double> x(sim.positions().begin(), sim.positions().end());
  sim.set_state(x, spin_velocities(x));
  std::vector<double> iterations, assemble, factorize;
  const std::vector<double> totals = time_steps(settings.exact_steps, [&] {
    const fem::FixedCorotatedNewtonStatistics s = sim.step();
    iterations.push_back(s.iterations);
    assemble.push_back(s.assemble_seconds);
    factorize.push_back(s.factorize_seconds);
    return s.total_seconds;
  });
  m.step_seconds = median(totals);
  m.min_step_seconds = *std::min_element(totals.begin(), totals.end());
  char text[160];
  std::snprintf(text, sizeof text, "%.1f Newton it / assemble %.1f / factorize+solve %.1f ms", median(iterations),
                1e3 * median(assemble), 1e3 * median(factorize));
  m.breakdown = text;
  return m;
}

void progress(const std::string& line) { std::fprintf(stderr, "bench_opsplit: %s\n", line.c_str()); }

void print_row(const std::string& label, const Measurement& ours, const Measurement* exact) {
  std::printf("| %s | %lld | %.3f (%.3f) | %s |", label.c_str(), static_cast<long long>(ours.tets),
              1e3 * ours.step_seconds, 1e3 * ours.min_step_seconds, ours.breakdown.c_str());
  if (exact != nullptr) {
    std::printf(" %.1f (%.1f) | %.0fx (%.0fx) | %s |", 1e3 * exact->step_seconds, 1e3 * exact->min_step_seconds,
                exact->step_seconds / ours.step_seconds, exact->min_step_seconds / ours.min_step_seconds,
                exact->breakdown.c_str());
  } else {
    std::printf(" - | - | - |");
  }
  std::printf(" %.2f s |\n", ours.setup_seconds);
  std::fflush(stdout);
}

void print_header(const std::string& first) {
  std::printf("| %s | tets | opsplit ms/step median (min) | opsplit phases | exact ms/step median (min) | speedup median (min) "
              "| exact phases | opsplit setup |\n",
              first.c_str());
  std::printf("|---|---|---|---|---|---|---|---|\n");
}

/// Runs the exact method on a scene whose operator-splitting measurement is `ours` and
/// prints the row.
void print_row_with_exact(const std::string& label, const Scene& scene, const Measurement& ours,
                          const Settings& settings) {
  Measurement exact;
  if (settings.exact) {
    progress(label + ": exact corotated FEM...");
    exact = run_exact(scene, settings);
  }
  print_row(label, ours, settings.exact ? &exact : nullptr);
}

/// Runs one scene with both methods and prints its row; returns opsplit's measurement. The two
/// step in turn — each exact step followed by an equal share of the operator-splitting steps —
/// so both medians come from the same minutes of a machine whose speed drifts by 10–40%
/// (measured one after the other, the speedup at 55K moved between 82× and 115×).
Measurement measure_row(const std::string& label, const Scene& scene, const Settings& settings) {
  progress(label + (settings.exact ? ": operator splitting and exact corotated FEM, stepped in turn..."
                                   : ": operator splitting..."));
  OpsplitRun ours(scene, settings);
  if (!settings.exact) {
    for (int k = 0; k < settings.steps; ++k) ours.step();
    print_row(label, ours.measurement(), nullptr);
    return ours.measurement();
  }
  ExactRun exact(scene, settings);
  for (int round = 0; round < settings.exact_steps; ++round) {
    exact.step();
    const int share = settings.steps * (round + 1) / settings.exact_steps - settings.steps * round / settings.exact_steps;
    for (int k = 0; k < share; ++k) ours.step();
  }
  const Measurement exact_measurement = exact.measurement();
  print_row(label, ours.measurement(), &exact_measurement);
  return ours.measurement();
}

/// A sweep's rows: operator splitting interleaved over the scenes, then each exact run.
std::vector<Measurement> measure_sweep(const std::vector<std::string>& labels, const std::vector<Scene>& scenes,
                                       const Settings& settings) {
  progress("sweep: operator splitting, " + std::to_string(scenes.size()) + " scenes stepped in turn...");
  const std::vector<Measurement> ours = run_operator_splitting_interleaved(scenes, settings);
  for (std::size_t k = 0; k < scenes.size(); ++k) print_row_with_exact(labels[k], scenes[k], ours[k], settings);
  return ours;
}

/// Prints the largest deviation from the mean of a sweep's opsplit times (the ±10% target),
/// for the medians and for the minima.
void print_spread(const std::vector<Measurement>& rows) {
  const auto spread = [&](double Measurement::*field, const char* name) {
    std::vector<double> times;
    for (const Measurement& m : rows) times.push_back(m.*field);
    const auto [low, high] = std::minmax_element(times.begin(), times.end());
    double mean = 0.0;
    for (double t : times) mean += t / static_cast<double>(times.size());
    std::printf("opsplit spread of the %s over the sweep: %.3f .. %.3f ms, max deviation from the mean %.1f%%\n",
                name, 1e3 * *low, 1e3 * *high, 100.0 * std::max(*high - mean, mean - *low) / mean);
  };
  std::printf("\n");
  spread(&Measurement::step_seconds, "medians");
  spread(&Measurement::min_step_seconds, "minima");
}

Settings parse(int argc, char** argv) {
  Settings s;
  for (bench::ArgumentCursor arguments(argc, argv); arguments.next();) {
    const std::string& arg = arguments.flag();
    const auto value = [&arguments] { return arguments.value(); };
    if (bench::is_help_flag(arg)) {
      bench::exit_with_usage(kUsage);
    } else if (arg == "--sizes") {
      s.sizes.clear();
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ',');) {
        if (kMeshSizes.count(item) == 0) throw std::invalid_argument("unknown size " + item + " (6k,16k,55k,170k,330k)");
        s.sizes.push_back(item);
      }
    } else if (arg == "--steps") {
      s.steps = bench::parse_positive(arg, value());
    } else if (arg == "--exact-steps") {
      s.exact_steps = bench::parse_positive(arg, value());
    } else if (arg == "--threads") {
      s.threads = bench::parse_positive(arg, value());
    } else if (arg == "--solve-precision") {
      const std::string precision = value();
      using Precision = cholsim::factor::TiledSolveFactor::Precision;
      if (precision != "auto" && precision != "single" && precision != "double") {
        throw std::invalid_argument("--solve-precision is auto, single or double, not '" + precision + "'");
      }
      s.solve_precision = precision == "single"   ? Precision::single_values
                          : precision == "double" ? Precision::double_values
                                                  : Precision::automatic;
    } else if (arg == "--element-precision") {
      const std::string precision = value();
      if (precision != "single" && precision != "double") {
        throw std::invalid_argument("--element-precision is single or double, not '" + precision + "'");
      }
      s.element_precision = precision == "single" ? fem::ElementPrecision::single_values : fem::ElementPrecision::double_values;
    } else if (arg == "--rotation-warm-start") {
      const std::string warm_start = value();
      if (warm_start != "previous" && warm_start != "extrapolated") {
        throw std::invalid_argument("--rotation-warm-start is previous or extrapolated, not '" + warm_start + "'");
      }
      s.rotation_warm_start =
          warm_start == "extrapolated" ? fem::RotationWarmStart::extrapolated : fem::RotationWarmStart::previous;
    } else if (arg == "--device") {
      const std::string device = value();
      if (device != "cpu" && device != "gpu") throw std::invalid_argument("--device is cpu or gpu, not '" + device + "'");
      s.solve_device = device == "gpu" ? cholsim::factor::FactorDevice::gpu : cholsim::factor::FactorDevice::cpu;
    } else if (arg == "--no-sweeps") {
      s.sweeps = false;
    } else if (arg == "--no-exact") {
      s.exact = false;
    } else if (arg == "--newton") {
      s.newton = true;
    } else if (arg == "--peer") {
      s.peer = true;
    } else if (arg == "--peer-scenes") {
      s.peer_scenes.clear();
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ',');) s.peer_scenes.push_back(item);
    } else if (arg == "--peer-runs") {
      s.peer_runs = bench::parse_positive(arg, value());
    } else if (arg == "--peer-binary") {
      s.peer_binary = value();
    } else {
      throw bench::unknown_option(arg);
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  cholsim::linalg::use_faster_blas_kernels(argv);
  const Settings settings = bench::parse_command_line("bench_opsplit", [&] { return parse(argc, argv); });
  if (settings.peer) {
    bench::print_peer_table(settings.peer_scenes, settings.peer_binary, settings.peer_runs, settings.steps,
                            settings.rotation_warm_start);
    return 0;
  }
  std::printf("# Operator splitting (seed 003) vs exact corotated FEM, %d threads, E = 1e6 Pa, nu = 0.33, "
              "dt = 10 ms unless varied, %s, element passes in %s precision\n\n## Table 1: per-step time vs mesh size\n\n",
              settings.threads,
              settings.solve_device == cholsim::factor::FactorDevice::gpu ? "solve on the GPU (L in double precision)"
              : settings.solve_precision == cholsim::factor::TiledSolveFactor::Precision::single_values ? "L copy in single precision"
              : settings.solve_precision == cholsim::factor::TiledSolveFactor::Precision::double_values
                  ? "L copy in double precision"
                  : "L copy in double precision where it fits in L2, else single",
              settings.element_precision == fem::ElementPrecision::single_values ? "single" : "double");
  print_header("mesh");
  std::vector<Measurement> table1;
  for (const std::string& size : settings.sizes) {
    Scene scene;
    scene.size = size;
    table1.push_back(measure_row(size, scene, settings));
  }
  if (settings.newton) {
    std::printf("\n## Newton on the fixed-corotated energy, same meshes (--exact-steps steps)\n\n");
    std::printf("| mesh | tets | Newton ms/step median (min) | phases | opsplit ms/step median | opsplit speedup |\n");
    std::printf("|---|---|---|---|---|---|\n");
    for (std::size_t k = 0; k < settings.sizes.size(); ++k) {
      Scene scene;
      scene.size = settings.sizes[k];
      progress(scene.size + ": Newton, fixed corotated...");
      const Measurement newton = run_newton(scene, settings);
      std::printf("| %s | %lld | %.1f (%.1f) | %s | %.3f | %.0fx |\n", scene.size.c_str(),
                  static_cast<long long>(newton.tets), 1e3 * newton.step_seconds, 1e3 * newton.min_step_seconds,
                  newton.breakdown.c_str(), 1e3 * table1[k].step_seconds, newton.step_seconds / table1[k].step_seconds);
      std::fflush(stdout);
    }
  }
  if (!settings.sweeps) return 0;

  std::printf("\n## Table 2: per-step time vs Young's modulus (16k mesh, dt = 10 ms)\n\n");
  print_header("E [Pa]");
  std::vector<std::string> labels;
  std::vector<Scene> scenes;
  for (double youngs : {1e5, 5e5, 1e6, 1e7}) {
    scenes.emplace_back().youngs = youngs;
    char label[32];
    std::snprintf(label, sizeof label, "%.0e", youngs);
    labels.emplace_back(label);
  }
  print_spread(measure_sweep(labels, scenes, settings));

  std::printf("\n## Table 3: per-step time vs time step (16k mesh, E = 1e6 Pa)\n\n");
  print_header("dt [ms]");
  labels.clear();
  scenes.clear();
  for (double dt_ms : {5.0, 10.0, 16.0, 33.0}) {
    scenes.emplace_back().time_step = dt_ms / 1000.0;
    labels.push_back(std::to_string(static_cast<int>(dt_ms)));
  }
  print_spread(measure_sweep(labels, scenes, settings));
  return 0;
}
